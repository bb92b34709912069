"""The ROSE main table: per-solver PASS rates with their intervals, the paper's published rows, the table as
shown, and one row per stored run."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..benchmarks.rose.metrics import ACTION, COUNTING, Summary, mean_of_rates, rate
from ..benchmarks.rose.records import GROUPS, MAIN_TEMPLATES, SUBSET_GROUP, TEMPLATE_LABEL
from ..storage.connection import Store
from .frame import responses_frame
from ..common.stats import N_COLUMNS, interval, resampled, sample_size, solver_rng, unit_codes, unit_sums

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


# Per unit, the sums a resample needs (`row_resamples`): per main template passed / answered / valid, then per
# (group, main template) passed / answered. Column k of each block is the main template of `_MAIN_INDEX` k.
_T = len(MAIN_TEMPLATES)
_PASSED, _N, _VALID, _GPASSED = 0, _T, 2 * _T, 3 * _T
_GN = _GPASSED + len(GROUPS) * _T
_WIDTH = _GN + len(GROUPS) * _T


@dataclass(frozen=True)
class RowResamples:
    """One solver's bootstrap over its units (participants for humans, scenes for models and agents; `unit_of`):
    each resample's template rates, group means, Avg, pooled and VALID, and the Counting / Action means and their
    gap, all from the same resampled units, so every cell of the row (and the gap table) rests on one rule."""

    n_units: int
    stats: dict[str, np.ndarray]    # name -> (n_boot,) resampled values (NaN where a resample has none), read-only


def row_resamples(g: pd.DataFrame, n_boot: int, rng: np.random.Generator,
                  tcode: np.ndarray | None = None, gcode: np.ndarray | None = None) -> RowResamples:
    """Resample whole units with replacement (`stats.resampled`) and recompute every statistic of the row
    from the resampled units' sums. Refuses a main response whose subset belongs to no group (it would be counted
    into no group's resamples without a word)."""
    tcode = _codes(g["template"], _T_INDEX) if tcode is None else tcode
    gcode = _codes(g["subset"], _GROUP_INDEX) if gcode is None else gcode
    main = (tcode >= 0) & (tcode < _T)
    codes, n_units = unit_codes(units_of(g))
    if n_units < 2:
        return RowResamples(n_units, {})
    if (gcode[main] < 0).any():
        bad = g["subset"].to_numpy()[main][int(np.argmax(gcode[main] < 0))]
        raise ValueError(f"bootstrap: subset {bad!r} belongs to no group of {GROUPS}")
    t, grp, u = tcode[main], gcode[main], codes[main]
    passed = g["passed"].to_numpy()[main].astype(float)
    valid = g["valid"].to_numpy()[main].astype(float)
    one = np.ones(len(t))
    cols = np.concatenate([_PASSED + t, _N + t, _VALID + t, _GPASSED + grp * _T + t, _GN + grp * _T + t])
    sums = unit_sums(np.tile(u, 5), n_units, cols, _WIDTH, np.concatenate([passed, one, valid, passed, one]))
    S = resampled(sums, n_boot, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        R = 100 * S[:, _PASSED:_N] / S[:, _N:_VALID]
        stats = {TEMPLATE_LABEL[tm]: R[:, k] for tm, k in _MAIN_INDEX.items()}
        for gi, gname in enumerate(GROUPS):
            gp = S[:, _GPASSED + gi * _T:_GPASSED + (gi + 1) * _T]
            gn = S[:, _GN + gi * _T:_GN + (gi + 1) * _T]
            stats[gname] = (100 * gp / gn).mean(axis=1)      # NaN when a resample drew no answer to one template
        stats["Avg"] = R.mean(axis=1)
        stats["pooled"] = 100 * S[:, _PASSED:_N].sum(axis=1) / S[:, _N:_VALID].sum(axis=1)
        stats["VALID"] = 100 * S[:, _VALID:_GPASSED].sum(axis=1) / S[:, _N:_VALID].sum(axis=1)
        stats["Counting Avg"] = R[:, [_MAIN_INDEX[x] for x in COUNTING]].mean(axis=1)
        stats["Action Avg"] = R[:, [_MAIN_INDEX[x] for x in ACTION]].mean(axis=1)
        stats["gap"] = stats["Counting Avg"] - stats["Action Avg"]
    for v in stats.values():   # shared by a solver's analyses (`SolverCore`): read-only
        v.setflags(write=False)
    return RowResamples(n_units, stats)


def units_of(g: pd.DataFrame) -> np.ndarray:
    """Each row's resampling unit (`stats.unit_of`): the frame's `unit` column, or, for a frame built without it,
    the participant for a human answer and the scene otherwise (as `frame` defines it)."""
    if "unit" in g:
        return g["unit"].to_numpy(dtype=object)
    human = g["solver_kind"].to_numpy(dtype=object) == "human"
    return np.where(human, g["participant_id"].to_numpy(dtype=object), g["scene_id"].to_numpy(dtype=object))


def n_fields(g: pd.DataFrame) -> dict[str, int | None]:
    """The solver's n (`stats.sample_size`: participants for humans, scenes and responses for everyone)."""
    kind = str(g["solver_kind"].iloc[0]) if len(g) else ""
    return sample_size(kind, g["participant_id"].to_numpy(dtype=object), g["scene_id"].to_numpy(dtype=object))


def with_n_types(table: pd.DataFrame) -> pd.DataFrame:
    """n columns as integers that may be absent (a published row, a model's participants): Int64, never 88.0."""
    for col in N_COLUMNS:
        if col in table:
            table[col] = table[col].astype("Int64")
    return table


def published_rows() -> pd.DataFrame:
    """The paper's published rows (data/reference), with the Avg recomputed beside the printed one."""
    pub = pd.read_csv(REFERENCE_DIR / "rose_v0_1_published.csv")
    pub["solver"] = pub["model"] + " (published)"
    pub["kind"] = "published"
    pub["Avg (mean of templates)"] = pub[LABELS].mean(axis=1)
    return pub.drop(columns=["model"])


BOOT = 1000   # bootstrap resamples: the dashboards' and `report`'s default
SEED = 0      # base seed of every solver's bootstrap stream


@dataclass(frozen=True)
class SolverCore:
    """A solver's main-template rows counted, summarised, sized and resampled on its own stream: what its main row,
    gap row and human − model row each need, computed once (`solver_core`; the dashboards keep one per solver's
    rows: computing it in each row costs a new database's Results page about 0.2 s)."""

    solver: str                      # whose stream (`solver_rng(seed, solver)`) the resamples are drawn on
    n_boot: int
    seed: int
    counts: _Counts
    summary: Summary                 # of the main-template rows (every main template's rate, Avg, the gap)
    n: dict[str, int | None]         # `n_fields` of the main-template rows
    resamples: RowResamples


Cores = Callable[[str, pd.DataFrame], SolverCore]   # (solver, its rows) -> its core: `solver_core`, or a cached one


def solver_core(solver: str, g: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> SolverCore:
    """The core of `g`'s main-template rows (`g`: one solver's rows; other templates' rows are left out here)."""
    tcode = _codes(g["template"], _T_INDEX)
    is_main = (tcode >= 0) & (tcode < _T)
    main = g[is_main]
    tcode, gcode = tcode[is_main], _codes(main["subset"], _GROUP_INDEX)
    c = _Counts.of(main, tcode, gcode)
    for v in (c.n, c.passed, c.valid, c.group_n, c.group_passed):   # shared by a solver's analyses: read-only
        v.setflags(write=False)
    return SolverCore(solver, n_boot, seed, c, summarize_frame(main, c), n_fields(main),
                      row_resamples(main, n_boot, solver_rng(seed, solver), tcode, gcode))


def core_of(cores: Cores | None, solver: str, g: pd.DataFrame, n_boot: int, seed: int) -> SolverCore:
    """`g`'s core from `cores` (default: computed here), refused when it was drawn with other resamples or on
    another solver's stream: its intervals would pass for the caller's n_boot and seed without a word."""
    if cores is None:
        return solver_core(solver, g, n_boot, seed)
    core = cores(solver, g)
    if (core.solver, core.n_boot, core.seed) != (solver, n_boot, seed):
        raise ValueError(f"{solver}: the core handed over was drawn for {core.solver!r} with n_boot={core.n_boot}, "
                         f"seed={core.seed}; asked for n_boot={n_boot}, seed={seed}")
    return core


def solver_row(solver: str, g: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED,
               cores: Cores | None = None) -> dict:
    """One solver's main-table row from that solver's responses only (see `main_table`). `cores`: where its
    `SolverCore` comes from (default: computed here)."""
    core = core_of(cores, solver, g, n_boot, seed)
    c, s, rs = core.counts, core.summary, core.resamples
    row: dict = {"solver": solver, "kind": g["solver_kind"].iloc[0], **core.n}
    for t in MAIN_TEMPLATES:
        row[TEMPLATE_LABEL[t]] = s.pass_rate[TEMPLATE_LABEL[t]]
    for gname in GROUPS:
        row[gname] = s.groups[gname]
    row["Avg"] = s.avg
    row["Avg (mean of templates)"] = s.avg
    row["pooled"] = s.pooled
    row["VALID"] = s.valid
    parts = {"Avg": [row[x] for x in LABELS],
             **{gname: [rate(int(c.group_passed[gi, k]), int(c.group_n[gi, k])) for k in range(_T)]
                for gi, gname in enumerate(GROUPS)}}
    for name in (*LABELS, *GROUPS, "Avg", "pooled", "VALID"):
        lo, hi = interval(rs.stats[name], row[name], rs.n_units, parts.get(name)) if rs.stats else (np.nan, np.nan)
        row[f"{name} lo"], row[f"{name} hi"] = lo, hi
    return row


def main_rows(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED, cores: Cores | None = None) -> pd.DataFrame:
    """The measured solvers' rows, in order of first appearance (the frame's response order)."""
    return with_n_types(pd.DataFrame([solver_row(str(solver), g, n_boot, seed, cores)
                                      for solver, g in df.groupby("solver", sort=False)]))


def with_published(rows: pd.DataFrame, published: bool = True) -> pd.DataFrame:
    out = pd.concat([rows, published_rows()], ignore_index=True) if published else rows.reset_index(drop=True)
    return with_n_types(out)


def main_table(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED, published: bool = True) -> pd.DataFrame:
    """Per solver: n (participants, scenes, responses), the five template PASS rates, Glyph/Emoji/Pixel, Avg,
    pooled rate and VALID, each with a 95% interval from ONE rule: a percentile bootstrap over the solver's units,
    whole participants for humans (their answers cluster by person: Davison & Hinkley 1997, sec. 3.8; Field &
    Welsh 2007) and whole scenes for models and agents, each solver with its own seeded stream (`solver_rng`);
    at 0 or 100 % (no spread to resample) Wilson's interval over the units (`stats.interval`). The dashboards
    assemble the same table from per-solver cached `solver_row`s; a test checks both agree exactly."""
    return with_published(main_rows(df, n_boot, seed), published)


N_NOTE = ("n: participants · responses for humans (ppl), scenes · responses for models and agents (sc); the "
          "CSV of `report --out` holds each as an integer column.")
INTERVALS_NOTE = ("Brackets: 95 % intervals from one rule for every cell of a row: an expanded percentile bootstrap "
                  "(Hesterberg 2015) over whole participants (humans) or whole scenes (models, agents), each solver "
                  "on its own seeded stream; a rate or mean at 0 or 100 % with no spread to resample gets Wilson's "
                  "interval over those units.")
SHOWN_FIRST = ["Avg", *LABELS]                 # the dashboards' main table: Avg right after the solver and n
SHOWN_MORE = [*GROUPS, "pooled", "VALID"]       # the second table: groups, pooled rate, validity


def n_text(row: pd.Series) -> str:
    """A row's n as shown in one narrow column: "8 ppl · 152" (participants · responses) for humans, "40 sc · 200"
    (scenes · responses) for models and agents, MISSING for a published row."""
    from .display import MISSING, fmt_count, is_missing

    if is_missing(row.get("responses")):
        return MISSING
    if not is_missing(row.get("participants")):
        return f"{fmt_count(row['participants'])} ppl · {fmt_count(row['responses'])}"
    return f"{fmt_count(row['scenes'])} sc · {fmt_count(row['responses'])}"


def with_n(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its n as one text column (`n_text`) right after the solver, for a page to show."""
    out = table.copy()
    out.insert(1 if "solver" in out else 0, "n", [n_text(r) for _, r in out.iterrows()] if len(out) else [])
    return out


def table_columns(table: pd.DataFrame, with_intervals: bool = True,
                  metrics: list[str] | None = None) -> pd.DataFrame:
    """The main table as shown: solver, n (`n_text`), then 'value [lo, hi]' strings per metric (one decimal,
    `display`; by default Avg and the templates first, then the groups, pooled and VALID), MISSING for no value."""
    from .display import fmt_rate, fmt_rate_ci

    metrics = SHOWN_FIRST + SHOWN_MORE if metrics is None else metrics
    out = table[["solver"]].copy()
    out["n"] = [n_text(r) for _, r in table.iterrows()] if len(table) else []
    for m in metrics:
        vals = table[m] if m in table else pd.Series(np.nan, index=table.index)
        if with_intervals:
            lo = table[f"{m} lo"] if f"{m} lo" in table else pd.Series(np.nan, index=table.index)
            hi = table[f"{m} hi"] if f"{m} hi" in table else pd.Series(np.nan, index=table.index)
            out[m] = [fmt_rate_ci(v, a, b) for v, a, b in zip(vals, lo, hi)]
        else:
            out[m] = [fmt_rate(v) for v in vals]
    if "Avg (mean of templates)" in table and "pooled" in metrics:
        out["Avg (mean of templates)"] = table["Avg (mean of templates)"].map(fmt_rate)
    out["kind"] = table["kind"]
    return out


def run_summaries(store: Store, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per run: solver, kind, n, per-template PASS, Glyph/Emoji/Pixel, Avg, pooled, VALID, gap. `frame`:
    `store`'s responses frame already read (the dashboards hold one); else it is read."""
    df = responses_frame(store) if frame is None else frame
    rows = []
    for (run_id, kind, name), g in df.groupby(["run_id", "solver_kind", "solver_name"], sort=False):
        s = summarize_frame(g)
        rows.append({"run": run_id, "solver": name, "kind": kind, "responses": len(g), **s.pass_rate, **s.groups,
                     "Avg": s.avg, "pooled": s.pooled, "VALID": s.valid, "Counting Avg": s.counting_avg,
                     "Action Avg": s.action_avg, "gap": s.gap})
    return pd.DataFrame(rows)
