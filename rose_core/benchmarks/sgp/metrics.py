"""iVISPAR's metrics as plain functions over tidy frames.

Definitions (shared/research/ivispar.md):
  * solved: the board reached the goal within the step cap; solved rate = share of plays, with a 95% Wilson
    interval (the project's `analysis.tables.wilson`);
  * d_t: the exact A* distance to the goal after t steps (d_0 = c1); invalid steps leave it unchanged; after
    the goal it stays 0;
  * regret_t = d_t − (c1 − t), not clamped, frozen once solved (an episode solved at step T keeps T − c1);
  * mean step deviation (iVISPAR's headline "deviation from the optimal path") = mean over plays of d at
    t = c1, which equals regret_{c1}; 95% percentile bootstrap interval resampling episodes (all samples of a
    drawn episode come along), each solver with its own seeded stream (`analysis.tables.solver_rng`);
  * outcome classes: per play, how many steps were effective, ineffective, occupied, out_of_bounds, illegal;
    averaged per play (under the ivispar reader per engine move, as the original counts, and a step that moved
    nothing and matched no class counts as `unclassified`, see `readers`);
  * heatmaps: any per-play figure (solved, d at c1, minimum distance reached) by number of geoms × c1.
A figure that cannot be computed is refused (`MetricsInputError`), never filled in.
"""
from __future__ import annotations

from typing import Iterable, Literal, Sequence

import numpy as np
import pandas as pd

from .actions import OUTCOMES
from .board import Board, board_from_state
from .play import EpisodeLog
from .readers import READERS, UNCLASSIFIED, counts_as_illegal, counts_as_unclassified

BOOT, SEED = 1000, 0
GROUP = ("solver", "modality")


class MetricsInputError(ValueError):
    """Inputs a metric cannot be computed on (named)."""


def episodes_frame(logs: Iterable[EpisodeLog]) -> pd.DataFrame:
    """One row per play: solver, modality, episode, sample, geoms, c1, steps, solved, d at c1, final and
    minimum distance, and the count of each outcome class."""
    rows = []
    for lg in logs:
        ds = lg.distances()
        if lg.end is None:
            raise MetricsInputError(f"{lg.solver} {lg.episode_id} sample {lg.sample}: incomplete episode "
                                    f"({len(lg.steps)} steps, neither solved nor at the cap {lg.step_cap})")
        outcomes = [o for s in lg.steps for o in s.move_outcomes()]
        rows.append({"solver": lg.solver, "modality": lg.modality or "-", "episode_id": lg.episode_id,
                     "sample": lg.sample, "n_geoms": lg.n_geoms, "c1": lg.c1, "step_cap": lg.step_cap,
                     "steps": len(lg.steps), "solved": lg.solved,
                     "d_at_c1": d_at(lg, lg.c1) if lg.c1 <= lg.step_cap else np.nan,
                     "d_final": ds[-1], "min_d": min(ds),
                     **{o: outcomes.count(o) for o in OUTCOMES},
                     UNCLASSIFIED: sum(s.outcome == UNCLASSIFIED for s in lg.steps)})
    df = pd.DataFrame(rows)
    if df.empty:
        raise MetricsInputError("no episode logs")
    dup = df.duplicated(["solver", "modality", "episode_id", "sample"])
    if dup.any():
        r = df[dup].iloc[0]
        raise MetricsInputError(f"{r['solver']} played {r['episode_id']} sample {r['sample']} twice")
    caps = df.groupby(list(GROUP))["step_cap"].unique()
    mixed = caps[caps.map(len) > 1]
    if len(mixed):
        key, v = mixed.index[0], sorted(int(c) for c in mixed.iloc[0])
        raise MetricsInputError(f"{' '.join(map(str, key))}: plays under different step caps {v}: one solved rate, "
                                "deviation or heatmap cannot pool them (score each cap as its own solver)")
    return df


def d_at(lg: EpisodeLog, t: int) -> int:
    """d_t of one play: frozen at 0 after the goal; refused past the step cap of an unsolved play."""
    ds = lg.distances()
    if t < len(ds):
        return ds[t]
    if lg.solved:
        return 0
    raise MetricsInputError(f"{lg.episode_id}: no d at t = {t}, the play stopped at the step cap {lg.step_cap}")


def regret(lg: EpisodeLog, t: int) -> int:
    """regret_t = d_t − (c1 − t), frozen once solved."""
    if lg.solved and t > len(lg.steps):
        t = len(lg.steps)
    return d_at(lg, t) - (lg.c1 - t)


def steps_frame(logs: Iterable[EpisodeLog]) -> pd.DataFrame:
    """One row per play and t = 0 … step cap: d_t and regret_t (frozen after the goal)."""
    rows = []
    for lg in logs:
        for t in range(lg.step_cap + 1):
            rows.append({"solver": lg.solver, "modality": lg.modality or "-", "episode_id": lg.episode_id,
                         "sample": lg.sample, "n_geoms": lg.n_geoms, "c1": lg.c1, "t": t, "d": d_at(lg, t),
                         "regret": regret(lg, t)})
    return pd.DataFrame(rows)


def _wilson(k: int, n: int) -> tuple[float, float]:
    from ...common.stats import wilson  # the project's one Wilson interval (statsmodels)

    return wilson(k, n)


def solved_rate(episodes: pd.DataFrame, by: Sequence[str] = GROUP) -> pd.DataFrame:
    """Per group: plays, solved, solved % with its 95% Wilson interval."""
    out = []
    for key, g in episodes.groupby(list(by), sort=False):
        k, n = int(g["solved"].sum()), len(g)
        lo, hi = _wilson(k, n)
        out.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))), "plays": n, "solved": k,
                    "solved_pct": 100.0 * k / n, "lo": lo, "hi": hi})
    return pd.DataFrame(out)


def bootstrap_ratio(num: np.ndarray, den: np.ndarray, units: np.ndarray, n_boot: int,
                    rng: np.random.Generator) -> tuple[float, float]:
    """95% percentile interval of sum(num) / sum(den), resampling units (episodes) with replacement: all rows of
    a drawn unit come along. NaN when there are fewer than two units (no interval from one)."""
    codes, uniq = pd.factorize(units)
    if len(uniq) < 2:
        return np.nan, np.nan
    nums = np.bincount(codes, weights=num, minlength=len(uniq))
    dens = np.bincount(codes, weights=den, minlength=len(uniq))
    draws = rng.integers(0, len(uniq), size=(n_boot, len(uniq)))
    ratios = nums[draws].sum(axis=1) / dens[draws].sum(axis=1)
    return float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))


def _bootstrap_mean(values: np.ndarray, units: np.ndarray, n_boot: int, rng: np.random.Generator) -> tuple[float, float]:
    """95% percentile interval of the mean, resampling units (episodes) with replacement."""
    return bootstrap_ratio(values, np.ones(len(values)), units, n_boot, rng)


def step_deviation(episodes: pd.DataFrame, by: Sequence[str] = GROUP, n_boot: int = BOOT,
                   seed: int = SEED) -> pd.DataFrame:
    """Per group: iVISPAR's mean step deviation from the optimal path (mean d at t = c1) with its interval."""
    from ...common.stats import solver_rng

    if episodes["d_at_c1"].isna().any():
        r = episodes[episodes["d_at_c1"].isna()].iloc[0]
        raise MetricsInputError(f"{r['episode_id']}: c1 = {r['c1']} is beyond the step cap {r['step_cap']}; "
                                "d at t = c1 is undefined")
    out = []
    for key, g in episodes.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        lo, hi = _bootstrap_mean(g["d_at_c1"].to_numpy(float), g["episode_id"].to_numpy(), n_boot,
                                 solver_rng(seed, "|".join(map(str, key))))
        out.append({**dict(zip(by, key)), "plays": len(g), "episodes": g["episode_id"].nunique(),
                    "deviation": float(g["d_at_c1"].mean()), "lo": lo, "hi": hi})
    return pd.DataFrame(out)


def regret_curve(steps: pd.DataFrame, by: Sequence[str] = GROUP) -> pd.DataFrame:
    """Per group and t: mean regret_t and mean d_t over plays."""
    plays_per_t = steps.groupby([*by, "t"]).size().groupby(list(by)).nunique()
    if (plays_per_t > 1).any():
        raise MetricsInputError("plays of one solver have different step caps: their regret curves do not line up")
    g = steps.groupby([*by, "t"], sort=False)
    return g.agg(plays=("regret", "size"), regret=("regret", "mean"), d=("d", "mean")).reset_index()


def outcome_counts(episodes: pd.DataFrame, by: Sequence[str] = GROUP) -> pd.DataFrame:
    """Per group: the mean number of steps of each outcome class per play (iVISPAR's error counts)."""
    return episodes.groupby(list(by), sort=False)[list(OUTCOMES)].mean().reset_index()


HeatValue = Literal["solved", "d_at_c1", "min_d"]


def heatmap(episodes: pd.DataFrame, value: HeatValue = "solved") -> pd.DataFrame:
    """One group's plays as a table of number of geoms (rows) × c1 (columns): solved % or mean distance."""
    groups = episodes.groupby(list(GROUP)).ngroups
    if groups != 1:
        raise MetricsInputError(f"a heatmap shows one solver and modality; the frame holds {groups}")
    v = episodes[value].astype(float) * (100.0 if value == "solved" else 1.0)
    return episodes.assign(v=v).pivot_table(index="n_geoms", columns="c1", values="v", aggfunc="mean")


def summary_table(logs: Sequence[EpisodeLog], n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """The headline table per solver and modality: solved % [95%], mean step deviation [95%], outcome counts."""
    ep = episodes_frame(logs)
    s = solved_rate(ep)
    d = step_deviation(ep, n_boot=n_boot, seed=seed)
    o = outcome_counts(ep)
    t = s.merge(d[[*GROUP, "episodes", "deviation", "lo", "hi"]], on=list(GROUP), suffixes=("", "_dev"))
    return t.merge(o, on=list(GROUP))


def reader_figures(logs: Iterable[EpisodeLog], starts: dict[str, Board]) -> pd.DataFrame:
    """Per solver and modality, the mean per play of illegal commands as each reader counts them, and of the
    ivispar reader's unclassified commands, side by side: each reply judged on the board it was sent on (the
    board the solver saw, whichever reader played the episode). A play without `sgp run-model`'s protocol
    object holds commands, not replies: the ivispar reader sends them to the engine as they are (as the
    original's agents do). `starts`: each episode's start board."""
    rows = []
    for lg in logs:
        board, command = starts[lg.episode_id], "protocol" not in lg.meta
        row = {"solver": lg.solver, "modality": lg.modality or "-", **{f"illegal_{r}": 0 for r in READERS},
               f"{UNCLASSIFIED}_ivispar": 0}
        for s in lg.steps:
            for r in READERS:
                row[f"illegal_{r}"] += counts_as_illegal(r, board, s.action, command)
            row[f"{UNCLASSIFIED}_ivispar"] += counts_as_unclassified(board, s.action, command)
            board = board_from_state(s.state)
        rows.append(row)
    if not rows:
        raise MetricsInputError("no episode logs")
    return pd.DataFrame(rows).groupby(list(GROUP), sort=False).mean().reset_index()


def check_pooling(runs: dict[str, Sequence[EpisodeLog]]) -> None:
    """Refuse to pool plays of one solver and modality made under different protocols or settings (the
    `protocol` object `sgp run-model` writes: protocol, reader, sampling, token limit, prompt digest): one
    solved rate over them would describe no run. `runs`: the plays of each run (file), by its name."""
    seen: dict[tuple[str, str], tuple[str, dict]] = {}
    for name, logs in runs.items():
        for lg in logs:
            key, mine = (lg.solver, lg.modality or "-"), lg.meta.get("protocol") or {}
            first, theirs = seen.setdefault(key, (name, mine))
            if mine != theirs:
                keys = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
                said = "; ".join(f"{k}: {theirs.get(k)!r} vs {mine.get(k)!r}" for k in keys)
                raise MetricsInputError(f"{key[0]} ({key[1]}): {first} and {name} hold plays under different "
                                        f"protocols or settings ({said}); one figure cannot pool them: score "
                                        "them apart, or under different solver names")


# The board-state inference task (`inference`): what each class counts, per 100 geoms on the true boards, and in
# the paper's unit, the mean count per board (`<class> per board`).
INFERENCE_CLASSES: tuple[str, ...] = ("correct", "missed", "hallucinated", "coord_errors", "color_errors",
                                      "shape_errors", "format_errors")
INFERENCE_PER_BOARD: tuple[str, ...] = tuple(f"{c} per board" for c in INFERENCE_CLASSES)


def inference_table(rows: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """Per solver and modality: boards answered, boards written exactly right (every geom correct, nothing
    hallucinated, no format error) as a % with its 95% Wilson interval, and each class (`INFERENCE_CLASSES`) per
    100 geoms on the true boards with a 95% percentile bootstrap interval resampling episodes (an episode's
    start and goal boards, and repeated samples, come along together), and beside it in iVISPAR's unit, the mean
    count per board (`<class> per board`, same resampling). `rows`: one per answer, with the
    scorer's counts (`inference.scored_rows`)."""
    from ...common.stats import solver_rng

    if rows.empty:
        raise MetricsInputError("no board-state inference answers")
    out = []
    for key, g in rows.groupby(list(GROUP), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        truth = g["truth"].to_numpy(float)
        if truth.sum() == 0:
            raise MetricsInputError(f"{key}: the true boards hold no geom")
        exact = (g["correct"] == g["truth"]) & (g["predicted"] == g["truth"]) & (g["format_errors"] == 0)
        lo, hi = _wilson(int(exact.sum()), len(g))
        row = {**dict(zip(GROUP, key)), "boards": len(g), "episodes": g["episode_id"].nunique(),
               "geoms": int(truth.sum()), "exact": 100.0 * exact.mean(), "exact lo": lo, "exact hi": hi}
        rng = solver_rng(seed, "inference|" + "|".join(map(str, key)))
        units = g["episode_id"].to_numpy()
        for c in INFERENCE_CLASSES:
            num = g[c].to_numpy(float)
            row[c] = 100.0 * num.sum() / truth.sum()
            lo, hi = bootstrap_ratio(num, truth, units, n_boot, rng)
            row[f"{c} lo"], row[f"{c} hi"] = 100.0 * lo, 100.0 * hi
        for c, pb in zip(INFERENCE_CLASSES, INFERENCE_PER_BOARD):
            num = g[c].to_numpy(float)
            row[pb] = float(num.mean())
            row[f"{pb} lo"], row[f"{pb} hi"] = _bootstrap_mean(num, units, n_boot, rng)
        out.append(row)
    return pd.DataFrame(out)
