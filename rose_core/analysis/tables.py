"""The ROSE main table: per-solver PASS rates with their intervals, the paper's published rows, the table as
shown, and one row per stored run."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..benchmarks.rose.metrics import ACTION, COUNTING, Summary, mean_of_rates, rate
from ..benchmarks.rose.records import GROUPS, MAIN_TEMPLATES, SUBSET_GROUP, TEMPLATE_LABEL
from ..storage.connection import Store
from .frame import responses_frame
from ..common.stats import solver_rng, wilson

REFERENCE_DIR = Path(__file__).resolve().parent.parent.parent / "data" / "reference"
LABELS = [TEMPLATE_LABEL[t] for t in MAIN_TEMPLATES]


def _codes(values: pd.Series, of: dict[str, int]) -> np.ndarray:
    """Each value's position in `of` (-1 for a value not in it, or missing): distinct values are looked up once."""
    codes, uniques = pd.factorize(values)
    lookup = np.array([of.get(u, -1) for u in uniques] + [-1], dtype=np.int64)
    return lookup[codes]                       # code -1 (missing) picks the trailing -1


_T_INDEX = {t: k for k, t in enumerate(TEMPLATE_LABEL)}          # every template, main ones first
_MAIN_INDEX = {t: k for k, t in enumerate(MAIN_TEMPLATES)}
_GROUP_INDEX = {s: GROUPS.index(g) for s, g in SUBSET_GROUP.items()}
assert list(_T_INDEX)[:len(MAIN_TEMPLATES)] == list(MAIN_TEMPLATES)   # a main template's code is its _MAIN_INDEX


@dataclass(frozen=True)
class _Counts:
    """One frame's responses counted per template (n, passed, valid) and per (group, main template) (n, passed),
    by integer codes: a group-by over text columns cost a cold page more than the statistics."""

    n: np.ndarray        # per template of TEMPLATE_LABEL
    passed: np.ndarray
    valid: np.ndarray
    group_n: np.ndarray  # GROUPS x MAIN_TEMPLATES
    group_passed: np.ndarray

    @staticmethod
    def of(df: pd.DataFrame, t: np.ndarray | None = None, grp: np.ndarray | None = None) -> "_Counts":
        """`t`, `grp`: the frame's template and group codes (`_T_INDEX`, `_GROUP_INDEX`), when already at hand."""
        t = _codes(df["template"], _T_INDEX) if t is None else t
        known = t >= 0
        passed = df["passed"].to_numpy()
        size = len(_T_INDEX)
        n = np.bincount(t[known], minlength=size)
        p = np.bincount(t[known], weights=passed[known], minlength=size)
        v = np.bincount(t[known], weights=df["valid"].to_numpy()[known], minlength=size)
        grp = _codes(df["subset"], _GROUP_INDEX) if grp is None else grp
        in_group = known & (t < len(MAIN_TEMPLATES)) & (grp >= 0)
        flat = grp[in_group] * len(MAIN_TEMPLATES) + t[in_group]
        width = len(GROUPS) * len(MAIN_TEMPLATES)
        gn = np.bincount(flat, minlength=width).reshape(len(GROUPS), -1)
        gp = np.bincount(flat, weights=passed[in_group], minlength=width).reshape(len(GROUPS), -1)
        return _Counts(n, p.astype(np.int64), v.astype(np.int64), gn, gp.astype(np.int64))


def summarize_frame(df: pd.DataFrame, counts: "_Counts | None" = None) -> Summary:
    """`metrics.summarize` for a frame, by counts over integer codes instead of a Python loop (same
    definitions; a test checks both agree)."""
    c = counts if counts is not None else _Counts.of(df)
    cnt = {t: (int(c.n[k]), int(c.passed[k]), int(c.valid[k])) for t, k in _T_INDEX.items()}
    rates = {t: rate(p, n) for t, (n, p, _) in cnt.items()}
    groups = {}
    for gi, gname in enumerate(GROUPS):
        present = bool(c.group_n[gi].any())
        groups[gname] = mean_of_rates(rate(int(c.group_passed[gi, k]), int(c.group_n[gi, k]))
                                      for k in range(len(MAIN_TEMPLATES))) if present else None
    main_n = sum(cnt[t][0] for t in MAIN_TEMPLATES)
    counting, action = mean_of_rates(rates[t] for t in COUNTING), mean_of_rates(rates[t] for t in ACTION)
    return Summary(
        n={TEMPLATE_LABEL[t]: cnt[t][0] for t in TEMPLATE_LABEL},
        pass_rate={TEMPLATE_LABEL[t]: rates[t] for t in TEMPLATE_LABEL},
        valid_rate={TEMPLATE_LABEL[t]: rate(cnt[t][2], cnt[t][0]) for t in TEMPLATE_LABEL},
        groups=groups, avg=mean_of_rates(rates[t] for t in MAIN_TEMPLATES),
        pooled=rate(sum(cnt[t][1] for t in MAIN_TEMPLATES), main_n),
        valid=rate(sum(cnt[t][2] for t in MAIN_TEMPLATES), main_n),
        counting_avg=counting, action_avg=action, gap=None if counting is None or action is None else counting - action)


def _bootstrap_means(g: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    """95% percentile intervals of Avg and Glyph/Emoji/Pixel, resampling units (participants or scenes), from a
    solver's frame (`solver_row` hands `_resampled_means` the codes it already has)."""
    main = g[g["template"].isin(MAIN_TEMPLATES)]
    codes, n_units = _unit_codes(main["unit"].to_numpy(dtype=object))
    return _resampled_means(codes, n_units, _codes(main["template"], _MAIN_INDEX),
                            _codes(main["subset"], _GROUP_INDEX) + 1, main["passed"].to_numpy(),
                            main["subset"].to_numpy(), n_boot, rng)


def _unit_codes(units: np.ndarray) -> tuple[np.ndarray, int]:
    """Units coded in sorted order, as a categorical codes them (the resamples draw these codes: changing the
    order would move every interval); factorized directly, without building the categorical's text index."""
    codes, uniques = pd.factorize(units, sort=True)
    return codes.astype(np.int64), len(uniques)


def _resampled_means(codes: np.ndarray, n_units: int, t_idx: np.ndarray, g_idx: np.ndarray, passed: np.ndarray,
                     subsets: np.ndarray, n_boot: int, rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    """`_bootstrap_means` of the main responses' codes: units (`_unit_codes`), templates (`_MAIN_INDEX`), groups
    (`_GROUP_INDEX` + 1; 0 for a subset of no group, refused), outcomes and subsets (their column's own values, named
    as such when refused)."""
    if n_units < 2:
        return {}
    cols = [(grp, t) for grp in (None, *GROUPS) for t in MAIN_TEMPLATES]
    if (g_idx == 0).any():   # a subset of no group: never counted into another group's resamples
        raise ValueError(f"bootstrap: subset {subsets[int(np.argmax(g_idx == 0))]!r} belongs to no group "
                         f"of {GROUPS}")
    passed = passed.astype(float)
    width = len(cols)
    flat = np.concatenate([codes * width + t_idx, codes * width + g_idx * 5 + t_idx])  # overall and per group
    P = np.bincount(flat, weights=np.concatenate([passed, passed]), minlength=n_units * width).reshape(n_units, width)
    N = np.bincount(flat, minlength=n_units * width).reshape(n_units, width)
    # Each resample draws units with replacement: how often each unit is drawn is multinomial, so the
    # resampled sums are one matrix product (memory n_boot x units, not n_boot x units x metrics).
    draws = rng.integers(0, n_units, size=(n_boot, n_units))
    draws += (np.arange(n_boot) * n_units)[:, None]          # in place: each resample's own range of counts
    W = np.bincount(draws.ravel(), minlength=n_boot * n_units).reshape(n_boot, n_units)
    del draws
    # Outcomes 0/1 (a frame's are): every product and partial sum is then a whole number no larger than n_units × the
    # largest count of one unit (all are non-negative). Below 2**24 single precision holds each exactly, in whatever
    # order the product adds them, and reads half the memory: one product of both sums. Otherwise (fractional
    # outcomes, huge counts) each sum in double precision, as before.
    if bool((P == np.rint(P)).all()) and int(N.max(initial=0)) * n_units < 2 ** 24:
        sums = (W.astype(np.float32) @ np.concatenate([P, N], axis=1).astype(np.float32)).astype(np.float64)
        Ps, Ns = sums[:, :width], sums[:, width:]
    else:
        W = W.astype(float)
        Ps, Ns = W @ P, W @ N.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        R = 100 * Ps / Ns
    out = {}
    for k, gname in enumerate((None, *GROUPS)):
        block = R[:, k * 5:(k + 1) * 5]
        ok = ~np.isnan(block).any(axis=1)
        if ok.sum() >= n_boot // 2:
            means = block[ok].mean(axis=1)
            out["Avg" if gname is None else gname] = (float(np.percentile(means, 2.5)),
                                                     float(np.percentile(means, 97.5)))
    return out


def published_rows() -> pd.DataFrame:
    """The paper's published rows (data/reference), with the Avg recomputed beside the printed one."""
    pub = pd.read_csv(REFERENCE_DIR / "rose_v0_1_published.csv")
    pub["solver"] = pub["model"] + " (published)"
    pub["kind"] = "published"
    pub["Avg (mean of templates)"] = pub[LABELS].mean(axis=1)
    return pub.drop(columns=["model"])


BOOT = 1000   # bootstrap resamples: the dashboards' and `report`'s default
SEED = 0      # base seed of every solver's bootstrap stream


def solver_row(solver: str, g: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> dict:
    """One solver's main-table row from that solver's responses only (see `main_table`)."""
    # each column coded once, for the counts and the bootstrap (the main templates come first in `_T_INDEX`)
    tcode, gcode = _codes(g["template"], _T_INDEX), _codes(g["subset"], _GROUP_INDEX)
    c = _Counts.of(g, tcode, gcode)
    s = summarize_frame(g, c)
    is_main = (tcode >= 0) & (tcode < len(MAIN_TEMPLATES))
    units, n_units = _unit_codes(g["unit"].to_numpy(dtype=object)[is_main])
    row: dict = {"solver": solver, "kind": g["solver_kind"].iloc[0], "responses": int(is_main.sum()),
                 "units": n_units}
    for t in MAIN_TEMPLATES:
        lab, k = TEMPLATE_LABEL[t], _T_INDEX[t]
        row[lab] = s.pass_rate[lab]
        row[f"{lab} lo"], row[f"{lab} hi"] = wilson(int(c.passed[k]), int(c.n[k]))
    for gname in GROUPS:
        row[gname] = s.groups[gname]
    row["Avg"] = s.avg
    row["Avg (mean of templates)"] = s.avg
    row["pooled"] = s.pooled
    main_k = [_T_INDEX[t] for t in MAIN_TEMPLATES]
    row["pooled lo"], row["pooled hi"] = wilson(int(c.passed[main_k].sum()), row["responses"])
    row["VALID"] = s.valid
    row["VALID lo"], row["VALID hi"] = wilson(int(c.valid[main_k].sum()), row["responses"])
    intervals = _resampled_means(units, n_units, tcode[is_main], gcode[is_main] + 1, g["passed"].to_numpy()[is_main],
                                 g["subset"].to_numpy()[is_main], n_boot, solver_rng(seed, solver))
    for name, (lo, hi) in intervals.items():
        row[f"{name} lo"], row[f"{name} hi"] = lo, hi
    return row


def main_rows(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """The measured solvers' rows, in order of first appearance (the frame's response order)."""
    return pd.DataFrame([solver_row(str(solver), g, n_boot, seed) for solver, g in df.groupby("solver", sort=False)])


def with_published(rows: pd.DataFrame, published: bool = True) -> pd.DataFrame:
    return pd.concat([rows, published_rows()], ignore_index=True) if published else rows.reset_index(drop=True)


def main_table(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED, published: bool = True) -> pd.DataFrame:
    """Per solver: the five template PASS rates, Glyph/Emoji/Pixel, Avg, pooled rate and VALID, each with a
    95% interval: Wilson (1927) score intervals for rates over instances; a nonparametric percentile
    bootstrap (Efron & Tibshirani 1993) over participants (humans) or scenes (models, agents) for the means
    of template rates, each solver with its own seeded stream (`solver_rng`). The dashboards assemble the
    same table from per-solver cached `solver_row`s; a test checks both agree exactly."""
    return with_published(main_rows(df, n_boot, seed), published)


def table_columns(table: pd.DataFrame, with_intervals: bool = True) -> pd.DataFrame:
    """The main table as shown: 'value [lo, hi]' strings per metric (one decimal, `formats`), MISSING for no
    value."""
    from .formats import fmt_rate, fmt_rate_ci

    metrics = LABELS + list(GROUPS) + ["Avg", "pooled", "VALID"]
    out = table[["solver", "kind"]].copy()
    for m in metrics:
        vals = table[m] if m in table else pd.Series(np.nan, index=table.index)
        if with_intervals:
            lo = table[f"{m} lo"] if f"{m} lo" in table else pd.Series(np.nan, index=table.index)
            hi = table[f"{m} hi"] if f"{m} hi" in table else pd.Series(np.nan, index=table.index)
            out[m] = [fmt_rate_ci(v, a, b) for v, a, b in zip(vals, lo, hi)]
        else:
            out[m] = [fmt_rate(v) for v in vals]
    if "Avg (mean of templates)" in table:
        out["Avg (mean of templates)"] = table["Avg (mean of templates)"].map(fmt_rate)
    return out


def run_summaries(store: Store) -> pd.DataFrame:
    """One row per run: solver, kind, n, per-template PASS, Glyph/Emoji/Pixel, Avg, pooled, VALID, gap."""
    df = responses_frame(store)
    rows = []
    for (run_id, kind, name), g in df.groupby(["run_id", "solver_kind", "solver_name"], sort=False):
        s = summarize_frame(g)
        rows.append({"run": run_id, "solver": name, "kind": kind, "responses": len(g), **s.pass_rate, **s.groups,
                     "Avg": s.avg, "pooled": s.pooled, "VALID": s.valid, "Counting Avg": s.counting_avg,
                     "Action Avg": s.action_avg, "gap": s.gap})
    return pd.DataFrame(rows)
