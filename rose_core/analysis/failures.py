"""Share of responses per solver, template and primary failure kind (the scorer's precedence)."""
from __future__ import annotations

import pandas as pd

from ..benchmarks.rose.records import TEMPLATE_LABEL


def failure_table(df: pd.DataFrame) -> pd.DataFrame:
    """Share of responses (%) per solver, template and primary failure kind."""
    g = df[["solver", "template", "failure"]].copy()   # what it reads (a copy of every column cost more than the table)
    g["failure"] = g["failure"].fillna("pass")
    counts = g.groupby(["solver", "template", "failure"]).size().rename("n").reset_index()
    totals = g.groupby(["solver", "template"]).size().rename("total").reset_index()
    out = counts.merge(totals, on=["solver", "template"])
    out["share"] = 100 * out["n"] / out["total"]
    out["label"] = out["template"].map(TEMPLATE_LABEL)
    return out[out["failure"] != "pass"]


