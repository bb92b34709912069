"""The ROSE bridge controls: G-Cnt -> G-Clk -> V-Clk and matched local count-to-click (mL-Cnt / L-Clk / L-Clk† /
Fail†), with McNemar's exact test on the paired answers (same solver unit, same scene)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .answers import AnalysisInputError
from .tables import REFERENCE_DIR

PAIR_KEY = ["participant_id", "scene_id"]


def paired(g: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Pairs of answers to templates a and b by the same unit (participant; '' for a run) on the same scene.

    Refuses (AnalysisInputError) when a unit answered one scene's template twice: a pair must be one trial
    against one trial, never a silently chosen one of several."""
    sides = []
    for t in (a, b):
        side = g[g["template"] == t]
        dup = side.duplicated(PAIR_KEY, keep=False)
        if dup.any():
            first = side.loc[dup, PAIR_KEY].iloc[0]
            raise AnalysisInputError(
                f"McNemar pairs {a} vs {b}: {int(dup.sum())} answers to {t} repeat a (unit, scene), e.g. unit "
                f"{first['participant_id']!r} on scene {first['scene_id']!r} (solver {g['solver'].iloc[0]!r}); "
                "each unit must answer a scene's template once")
        sides.append(side[PAIR_KEY + ["passed"]])
    return sides[0].merge(sides[1], on=PAIR_KEY, suffixes=("_a", "_b"))


def mcnemar_p(pairs: pd.DataFrame) -> float | None:
    """McNemar's test (McNemar 1947) of paired binary outcomes, always in its exact form: a two-sided binomial
    test of the discordant pairs against p = 1/2 (statsmodels `mcnemar(exact=True)`). No difference at all
    (b = c) gives p = 1.0; the chi-square approximation, with or without continuity correction, does not.
    None when there is no pair; refuses outcomes that are not 0/1 or are missing."""
    from statsmodels.stats.contingency_tables import mcnemar

    if pairs.empty:
        return None
    for col in ("passed_a", "passed_b"):
        v = pairs[col]
        if v.isna().any() or not v.isin([0, 1, True, False]).all():
            got = sorted(map(str, v.unique()))[:5]
            raise AnalysisInputError(f"McNemar: {col} must be 0/1 for every pair (got {got})")
    a, b = pairs["passed_a"].astype(bool), pairs["passed_b"].astype(bool)
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    return float(mcnemar(table, exact=True).pvalue)


def bridge_table(df: pd.DataFrame) -> pd.DataFrame:
    """G-Cnt -> G-Clk -> V-Clk (each template's PASS over all its answers) and matched local count-to-click
    (mL-Cnt and L-Clk over the pairs: same unit, same scene), with exact McNemar p-values of the paired differences
    (ROSE spec, bridge controls)."""
    rows = []
    for solver, g in df.groupby("solver", sort=False):
        def pass_of(t: str, g: pd.DataFrame = g) -> float:
            return 100 * g.loc[g["template"] == t, "passed"].mean() if (g["template"] == t).any() else np.nan

        ml = paired(g, "mL-Cnt", "T3")
        given = ml[ml["passed_a"] == 1]
        cnt_clk, clk_v = paired(g, "T1", "G-Clk"), paired(g, "G-Clk", "T4")
        rows.append({
            "solver": solver, "kind": g["solver_kind"].iloc[0],
            "G-Cnt": pass_of("T1"), "G-Clk": pass_of("G-Clk"), "V-Clk": pass_of("T4"),
            # each p beside the pairs it rests on: the rates are over every answer, a p over the pairs only
            "p(G-Cnt vs G-Clk)": mcnemar_p(cnt_clk), "pairs(G-Cnt, G-Clk)": len(cnt_clk),
            "p(G-Clk vs V-Clk)": mcnemar_p(clk_v), "pairs(G-Clk, V-Clk)": len(clk_v),
            # matched: both sides on the same (unit, scene) pairs, the trials of L-Clk† and the McNemar p
            "mL-Cnt": 100 * ml["passed_a"].mean() if len(ml) else np.nan,
            "L-Clk": 100 * ml["passed_b"].mean() if len(ml) else np.nan,
            "L-Clk†": 100 * given["passed_b"].mean() if len(given) else np.nan,
            "Fail†": 100 * (1 - given["passed_b"].mean()) if len(given) else np.nan,
            "pairs": len(ml), "p(mL-Cnt vs L-Clk)": mcnemar_p(ml),
        })
    return pd.DataFrame(rows)


def published_bridges() -> pd.DataFrame:
    pub = pd.read_csv(REFERENCE_DIR / "rose_v0_1_bridges.csv")
    return pub.rename(columns={"model": "solver", "L-Clk-given-mL-Cnt-correct": "L-Clk†",
                               "Fail-given-mL-Cnt-correct": "Fail†"}).assign(
        solver=lambda d: d["solver"] + " (published)", kind="published")
