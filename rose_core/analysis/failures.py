"""Share of responses per solver, template and primary failure kind (the scorer's precedence)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..benchmarks.rose.records import TEMPLATE_LABEL

_KEYS = ["solver", "template", "failure"]


def failure_table(df: pd.DataFrame) -> pd.DataFrame:
    """Share of responses (%) per solver, template and primary failure kind (a missing failure is a pass; passes
    are left out of the table).

    Each distinct (solver, template, failure) is counted over integer codes, then the group-by runs over one row per
    distinct triple with its count: a group-by and merge over 100,000 rows of text cost a cold page more than the
    table, and grouping the few distinct rows keeps its rows, order and column types those of a group-by over all."""
    failure = df["failure"]
    if failure.dtype.kind == "f":   # no failure text at all (every value missing): typed as a float, not text
        failure = failure.astype(object)
    # Codes of the columns as they are (a missing failure is a code of its own, filled as a pass in the few rows
    # below; a failure stored as the text "pass" is a second row of the same triple, summed by the group-by).
    codes = [pd.factorize(col, use_na_sentinel=False)[0].astype(np.int64) for col in (df["solver"], df["template"],
                                                                                    failure)]
    sizes = [int(c.max()) + 1 if len(c) else 0 for c in codes]
    flat = (codes[0] * sizes[1] + codes[1]) * sizes[2] + codes[2]
    _, first, n = np.unique(flat, return_index=True, return_counts=True)
    few = df[["solver", "template"]].iloc[first].assign(failure=failure.iloc[first].fillna("pass"),
                                                           n=n.astype(np.int64))
    out = few.groupby(_KEYS)["n"].sum().reset_index()
    out["total"] = out.groupby(["solver", "template"])["n"].transform("sum")
    out["share"] = 100 * out["n"] / out["total"]
    out["label"] = out["template"].map(TEMPLATE_LABEL)
    return out[out["failure"] != "pass"]
