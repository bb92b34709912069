"""The ROSE bridge controls: G-Cnt -> G-Clk -> V-Clk and matched local count-to-click (mL-Cnt / L-Clk / L-Clk† /
Fail†), with McNemar's exact test on the paired answers (same solver unit, same scene)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .answers import AnalysisInputError
from ..common.stats import interval, resampled, solver_rng, unit_codes, unit_sums
from .tables import BOOT, REFERENCE_DIR, SEED, n_fields, units_of, with_n_types

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
    if pairs.empty:
        return None
    return _mcnemar(pairs["passed_a"], pairs["passed_b"])


def _mcnemar(first: pd.Series | np.ndarray, second: pd.Series | np.ndarray) -> float | None:
    """`mcnemar_p` of two aligned outcome vectors (pair k at position k in both)."""
    from statsmodels.stats.contingency_tables import mcnemar

    if len(first) == 0:
        return None
    for col, v in (("passed_a", first), ("passed_b", second)):
        v = np.asarray(v)
        # 0/1 (True/False, 1.0) only: a missing outcome (None, NaN) equals neither
        if v.dtype.kind != "b" and not bool(((v == 0) | (v == 1)).all()):
            got = sorted(map(str, pd.Series(v).unique()))[:5]
            raise AnalysisInputError(f"McNemar: {col} must be 0/1 for every pair (got {got})")
    a, b = np.asarray(first).astype(bool), np.asarray(second).astype(bool)
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    return float(mcnemar(table, exact=True).pvalue)


class _Pairs:
    """One solver's answers keyed by (unit, scene) as integer codes, to pair two templates' answers without a
    merge per pair of templates (`paired` computes the same pairs as a frame)."""

    def __init__(self, g: pd.DataFrame):
        self.g = g
        unit, _ = pd.factorize(g[PAIR_KEY[0]], use_na_sentinel=False)   # a merge pairs missing keys too
        scene, scenes = pd.factorize(g[PAIR_KEY[1]], use_na_sentinel=False)
        self.key = unit.astype(np.int64) * max(1, len(scenes)) + scene
        self._template, names = pd.factorize(g["template"])   # compared as codes: a missing template is none
        self._code = {t: k for k, t in enumerate(names)}
        self.passed = g["passed"].to_numpy()

    def of(self, t: str) -> np.ndarray:
        """Which answers are to template t."""
        return self._template == self._code.get(t, -2)

    def outcomes(self, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
        """(template a's outcome, template b's) on each pair that answered both, or what `paired` refuses."""
        first, second, _ = self.paired_rows(a, b)
        return self.passed[first], self.passed[second]

    def paired_rows(self, a: str, b: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The row positions of template a's and template b's answer on each pair that answered both (and the
        pairs' keys), or what `paired` refuses."""
        sides = []
        for t in (a, b):
            on = self.of(t)
            key = self.key[on]
            if len(np.unique(key)) < len(key):
                paired(self.g, a, b)                     # refuses, naming the repeated trial
            sides.append((key, np.flatnonzero(on)))
        keys, ia, ib = np.intersect1d(sides[0][0], sides[1][0], assume_unique=True, return_indices=True)
        return sides[0][1][ia], sides[1][1][ib], keys


def _share(x: np.ndarray) -> float:
    """100 × the mean of 0/1 outcomes (as pandas' mean computes it: the sum over the count), NaN for none."""
    return 100 * (x.sum(dtype=np.float64) / len(x)) if len(x) else np.nan


BRIDGE_RATES = ("G-Cnt", "G-Clk", "V-Clk", "mL-Cnt", "L-Clk", "L-Clk†", "Fail†")


def _bridge_resamples(pairs: _Pairs, units: np.ndarray, n_units: int, ml: tuple[np.ndarray, np.ndarray],
                      n_boot: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every bridge rate recomputed in each resample of whole units (participants; scenes for a run), the main
    table's rule (`tables.row_resamples`): per unit the sums each rate is a ratio of, then one matrix product."""
    cols, vals, codes = [], [], []
    for k, t in enumerate(("T1", "G-Clk", "T4")):                 # G-Cnt, G-Clk, V-Clk: passed / answered
        on = pairs.of(t)
        codes += [units[on], units[on]]
        cols += [np.full(on.sum(), 2 * k), np.full(on.sum(), 2 * k + 1)]
        vals += [pairs.passed[on].astype(float), np.ones(on.sum())]
    first, second = ml
    a, b, u = pairs.passed[first].astype(float), pairs.passed[second].astype(float), units[first]
    for k, v in enumerate((a, b, np.ones(len(a)), a * b)):       # mL-Cnt, L-Clk, pairs, both right
        codes.append(u)
        cols.append(np.full(len(u), 6 + k))
        vals.append(v)
    sums = unit_sums(np.concatenate(codes), n_units, np.concatenate(cols).astype(np.int64), 10, np.concatenate(vals))
    S = resampled(sums, n_boot, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = {name: 100 * S[:, 2 * k] / S[:, 2 * k + 1] for k, name in enumerate(("G-Cnt", "G-Clk", "V-Clk"))}
        out["mL-Cnt"], out["L-Clk"] = 100 * S[:, 6] / S[:, 8], 100 * S[:, 7] / S[:, 8]
        out["L-Clk†"] = 100 * S[:, 9] / S[:, 6]
        out["Fail†"] = 100 - out["L-Clk†"]
    return out


def bridge_table(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """G-Cnt -> G-Clk -> V-Clk (each template's PASS over all its answers) and matched local count-to-click
    (mL-Cnt and L-Clk over the pairs: same unit, same scene), with exact McNemar p-values of the paired differences
    (ROSE spec, bridge controls), n, and a 95% interval for every rate from a bootstrap of whole units
    (participants; scenes for a run), each solver on its own seeded stream: the main table's rule."""
    rows = []
    for solver, g in df.groupby("solver", sort=False):
        pairs = _Pairs(g)
        units, n_units = unit_codes(units_of(g))

        def pass_of(t: str) -> float:
            return _share(pairs.passed[pairs.of(t)])

        first, second, _ = pairs.paired_rows("mL-Cnt", "T3")
        ml_a, ml_b = pairs.passed[first], pairs.passed[second]
        given = ml_b[ml_a == 1]
        cnt_clk, clk_v = pairs.outcomes("T1", "G-Clk"), pairs.outcomes("G-Clk", "T4")
        row = {
            "solver": solver, "kind": g["solver_kind"].iloc[0], **n_fields(g),
            "G-Cnt": pass_of("T1"), "G-Clk": pass_of("G-Clk"), "V-Clk": pass_of("T4"),
            # each p beside the pairs it rests on: the rates are over every answer, a p over the pairs only
            "p(G-Cnt vs G-Clk)": _mcnemar(*cnt_clk), "pairs(G-Cnt, G-Clk)": len(cnt_clk[0]),
            "p(G-Clk vs V-Clk)": _mcnemar(*clk_v), "pairs(G-Clk, V-Clk)": len(clk_v[0]),
            # matched: both sides on the same (unit, scene) pairs, the trials of L-Clk† and the McNemar p
            "mL-Cnt": _share(ml_a), "L-Clk": _share(ml_b),
            "L-Clk†": _share(given),
            "Fail†": 100 * (1 - given.sum(dtype=np.float64) / len(given)) if len(given) else np.nan,
            "pairs": len(ml_a), "p(mL-Cnt vs L-Clk)": _mcnemar(ml_a, ml_b),
        }
        rs = _bridge_resamples(pairs, units, n_units, (first, second), n_boot, solver_rng(seed, str(solver))) \
            if n_units >= 2 else {}
        for name in BRIDGE_RATES:
            value = None if np.isnan(row[name]) else float(row[name])
            row[f"{name} lo"], row[f"{name} hi"] = interval(rs[name], value, n_units) if rs else (np.nan, np.nan)
        rows.append(row)
    return with_n_types(pd.DataFrame(rows))


def published_bridges() -> pd.DataFrame:
    pub = pd.read_csv(REFERENCE_DIR / "rose_v0_1_bridges.csv")
    return pub.rename(columns={"model": "solver", "L-Clk-given-mL-Cnt-correct": "L-Clk†",
                               "Fail-given-mL-Cnt-correct": "Fail†"}).assign(
        solver=lambda d: d["solver"] + " (published)", kind="published")
