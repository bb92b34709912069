"""The perception-to-action gap (ROSE spec: Counting Avg = mean(G-Cnt, L-Cnt), Action Avg = mean(L-Clk, V-Clk,
Excl-CS), gap = their difference), also restricted to scenes whose global count was right."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..benchmarks.rose.metrics import ACTION, COUNTING
from ..benchmarks.rose.records import TEMPLATE_LABEL
from ..common.stats import difference_interval, interval
from .tables import BOOT, SEED, Cores, core_of, published_rows, solver_core, units_of, with_n_types


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


def gap_table(df: pd.DataFrame, conditioned: bool = False, n_boot: int = BOOT, seed: int = SEED,
              cores: Cores | None = None) -> pd.DataFrame:
    """Counting Avg, Action Avg and their gap per solver, with n and 95% intervals from the main table's own
    resampling (`tables.row_resamples`: the same units, stream and draws as the solver's main row);
    conditioned=True keeps only scenes whose T1 answer was correct (for pooled humans: answered correctly by at
    least half of them) and resamples the units within those scenes (the scenes kept are the observed ones).
    `cores`: where a solver's `SolverCore` comes from when not conditioned (default: computed here)."""
    rows = []
    for solver, g in df.groupby("solver", sort=False):
        kind = g["solver_kind"].iloc[0]
        if conditioned:
            g = g[["solver_kind", "participant_id", "template", "subset", "scene_id", "passed", "valid"]].assign(
                unit=units_of(g))
            g = g[_majority_correct_scenes(g)]
            core = solver_core(str(solver), g, n_boot, seed)
        else:
            core = core_of(cores, str(solver), g, n_boot, seed)
        s, rs = core.summary, core.resamples
        row = {"solver": solver, "kind": kind, **core.n,
               "Counting Avg": s.counting_avg, "Action Avg": s.action_avg, "gap": s.gap}
        for name, parts in (("Counting Avg", COUNTING), ("Action Avg", ACTION)):
            rates = [s.pass_rate[TEMPLATE_LABEL[t]] for t in parts]
            row[f"{name} lo"], row[f"{name} hi"] = (interval(rs.stats[name], row[name], rs.n_units, rates)
                                                    if rs.stats else (np.nan, np.nan))
        ok = bool(rs.stats) and s.gap is not None
        row["gap lo"], row["gap hi"] = difference_interval(rs.stats["gap"], s.counting_avg, s.action_avg, rs.n_units,
                                                           rs.n_units) if ok else (np.nan, np.nan)
        if kind == "human" and row["participants"] is None:
            row["participants"] = 0
        rows.append(row)
    return with_n_types(pd.DataFrame(rows))


def published_gap() -> pd.DataFrame:
    pub = published_rows()
    c = pub[[TEMPLATE_LABEL[t] for t in COUNTING]].mean(axis=1)
    a = pub[[TEMPLATE_LABEL[t] for t in ACTION]].mean(axis=1)
    return pd.DataFrame({"solver": pub["solver"], "kind": "published", "scenes": pd.NA,
                         "Counting Avg": c, "Action Avg": a, "gap": c - a})


