"""The perception-to-action gap (ROSE spec: Counting Avg = mean(G-Cnt, L-Cnt), Action Avg = mean(L-Clk, V-Clk,
Excl-CS), gap = their difference), also restricted to scenes whose global count was right."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..benchmarks.rose.metrics import ACTION, COUNTING
from ..benchmarks.rose.records import TEMPLATE_LABEL
from .tables import published_rows, summarize_frame


def _majority_correct_scenes(df: pd.DataFrame) -> set[str]:
    t1 = df[df["template"] == "T1"].groupby("scene_id")["passed"].mean()
    return set(t1[t1 >= 0.5].index)


def gap_table(df: pd.DataFrame, conditioned: bool = False) -> pd.DataFrame:
    """Counting Avg, Action Avg and their gap per solver; conditioned=True keeps only scenes whose T1
    answer was correct (for pooled humans: answered correctly by at least half of them)."""
    rows = []
    for solver, g in df.groupby("solver", sort=False):
        if conditioned:
            keep = _majority_correct_scenes(g)
            g = g[g["scene_id"].isin(keep)]
        s = summarize_frame(g)
        rows.append({"solver": solver, "kind": g["solver_kind"].iloc[0] if len(g) else "",
                     "scenes": g["scene_id"].nunique(), "Counting Avg": s.counting_avg,
                     "Action Avg": s.action_avg, "gap": s.gap})
    return pd.DataFrame(rows)


def published_gap() -> pd.DataFrame:
    pub = published_rows()
    c = pub[[TEMPLATE_LABEL[t] for t in COUNTING]].mean(axis=1)
    a = pub[[TEMPLATE_LABEL[t] for t in ACTION]].mean(axis=1)
    return pd.DataFrame({"solver": pub["solver"], "kind": "published", "scenes": np.nan,
                         "Counting Avg": c, "Action Avg": a, "gap": c - a})


