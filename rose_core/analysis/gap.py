"""The perception-to-action gap (ROSE spec: Counting Avg = mean(G-Cnt, L-Cnt), Action Avg = mean(L-Clk, V-Clk,
Excl-CS), gap = their difference), also restricted to scenes whose global count was right."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..benchmarks.rose.metrics import ACTION, COUNTING
from ..benchmarks.rose.records import TEMPLATE_LABEL
from .tables import published_rows, summarize_frame


def _majority_correct_scenes(df: pd.DataFrame) -> np.ndarray:
    """Whether each row's scene had its T1 answers right (for pooled humans: by at least half of them), by scene
    codes (a group-by over the text ids cost a cold page more than the table)."""
    scene, _ = pd.factorize(df["scene_id"])
    t1 = (df["template"] == "T1").to_numpy() & (scene >= 0)
    n = np.bincount(scene[t1], minlength=scene.max() + 1 if len(scene) else 0)
    right = np.bincount(scene[t1], weights=df["passed"].to_numpy()[t1], minlength=len(n))
    with np.errstate(invalid="ignore", divide="ignore"):
        keep = (n > 0) & (right / n >= 0.5)
    return np.append(keep, False)[scene]          # a missing scene (code -1) is never kept


def gap_table(df: pd.DataFrame, conditioned: bool = False) -> pd.DataFrame:
    """Counting Avg, Action Avg and their gap per solver; conditioned=True keeps only scenes whose T1
    answer was correct (for pooled humans: answered correctly by at least half of them)."""
    rows = []
    for solver, g in df.groupby("solver", sort=False):
        g = g[["solver_kind", "template", "subset", "scene_id", "passed", "valid"]]   # what it reads
        if conditioned:
            g = g[_majority_correct_scenes(g)]
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


