"""Share of responses per solver, template and primary failure kind (the scorer's precedence)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..benchmarks.rose.records import TEMPLATE_LABEL

_KEYS = ["solver", "template", "failure"]


def failure_table(df: pd.DataFrame) -> pd.DataFrame:
    """Share of responses (%) per solver, template and primary failure kind: one row per (solver, template, failure)
    that occurs, in sorted order, as a group-by over the three columns gives it (a missing solver or template is left
    out, a missing failure is a pass), without its passes.

    Counted over integer codes (a group-by and merge over text columns cost a cold page more than the table)."""
    codes, uniques = [], []
    for col in _KEYS:
        values = df[col].fillna("pass") if col == "failure" else df[col]
        c, u = pd.factorize(values, sort=True)
        codes.append(c.astype(np.int64))
        uniques.append(np.asarray(u, dtype=object))   # the table's text typed as a group-by types it
    sizes = [len(u) for u in uniques]
    keep = (codes[0] >= 0) & (codes[1] >= 0)
    flat = (codes[0][keep] * sizes[1] + codes[1][keep]) * sizes[2] + codes[2][keep]
    n = np.bincount(flat, minlength=int(np.prod(sizes)))
    at = np.flatnonzero(n)                                   # sorted (solver, template, failure), as a group-by
    pair = at // sizes[2]
    totals = np.bincount(pair, weights=n[at], minlength=sizes[0] * sizes[1]).astype(np.int64)
    out = pd.DataFrame({"solver": uniques[0].take(pair // sizes[1]), "template": uniques[1].take(pair % sizes[1]),
                        "failure": uniques[2].take(at % sizes[2]), "n": n[at].astype(np.int64),
                        "total": totals[pair]})
    if out.empty:   # no rows: the columns typed as the frame's, as a group-by over none leaves them
        out = out.astype({c: df[c].dtype for c in _KEYS})
    out["share"] = 100 * out["n"] / out["total"]
    out["label"] = out["template"].map(TEMPLATE_LABEL)
    return out[out["failure"] != "pass"]
