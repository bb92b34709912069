"""SGP results: the episodes participants played, as the benchmark's own `EpisodeLog`s, beside the reference
agents' plays of the same episodes, measured by the benchmark's metric functions (`benchmarks.sgp.metrics`), so
humans, agents and models share one definition of solved rate, step deviation, regret and outcome counts.

Participants' episodes come from `episode_results` + `episode_steps` (every move with its outcome, d_t and
board). Before any figure: the study filters, then the same pre-registrable exclusions as ROSE studies where an
episode study has them (median time per episode too short; a streak of episodes played with the very same
moves; SGP studies have no attention checks, and participants screened out in practice never reach the main
episodes), then only episodes played under the comparison's step cap (a play under another cap, or none, has
another regret curve and is counted, not mixed in).
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..benchmarks.sgp.agents import agent_policy
from ..benchmarks.sgp.inference import score_counts
from ..benchmarks.sgp.metrics import (
    BOOT, GROUP, SEED, _bootstrap_mean, check_pooling, episodes_frame, heatmap, inference_table, outcome_counts, reader_figures,
    regret_curve, steps_frame, summary_table,
)
from ..benchmarks.sgp.play import EpisodeLog, StepLog, play_episode
from ..storage.connection import Store
from ..storage import episodes
from ..common.stats import interval, percentile_bounds, resampled, solver_rng, unit_codes, unit_sums

HUMAN = "Human"

@dataclass(frozen=True)
class SgpExclusions:
    too_fast_ms: float | None = 1500.0   # median time per main episode below this (server clock)
    streak: int | None = 10              # this many episodes in a row played with the very same moves

    def describe(self) -> str:
        parts = []
        if self.too_fast_ms:
            parts.append(f"median time per episode < {self.too_fast_ms / 1000:g} s")
        if self.streak:
            parts.append(f"≥ {self.streak} episodes in a row with the same moves")
        return "; ".join(parts) if parts else "none"


def human_episodes(store: Store) -> pd.DataFrame:
    """Every finished main episode of every participant, with its moves (`moves`: the stored step rows)."""
    with store.connect() as conn:
        res = episodes.human_results_frame(conn)
        steps = episodes.main_steps(conn)
    by_view: dict[tuple, list] = defaultdict(list)
    for s in steps:
        by_view[(s["run_id"], s["participant_id"], s["view_id"])].append(s)
    res["study_id"] = res["study_id"].fillna("").astype(object)
    res["moves"] = [by_view.get((r, p, v), []) for r, p, v in zip(res["run_id"], res["participant_id"], res["view_id"])]
    return res


def _longest_streak(values: list) -> int:
    best = run = 0
    prev = object()
    for v in values:
        run = run + 1 if v == prev else 1
        prev = v
        best = max(best, run)
    return best


PARTICIPANT_COLUMNS = ["participant_id", "study_id", "study", "modality", "external_id", "source",
                       "practice_attempts", "practice_passed", "end_reason", "episodes", "solved_pct",
                       "median_episode_s", "longest_streak",
                       "excluded"]


def sgp_participants(store: Store, dataset_hash: str | None = None, studies: tuple[str, ...] = ()) -> pd.DataFrame:
    """Every participant of the SGP studies (on this build, or all; all studies, or these), whether or not they
    reached a main episode: who, practice, how they ended. The SGP counterpart of ROSE's
    `selection.participant_table` people."""
    from ..storage import episodes
    from ..instrument.config import load_studies

    with store.connect() as conn:
        chosen = [s for s in load_studies(conn) if s.config.benchmark == "sgp" and (not studies or s.study_id in studies)
                  and (dataset_hash is None or s.dataset_hash == dataset_hash)]
        rows = [{"study_id": s.study_id, "study": s.name, "modality": s.config.sgp_modality, **r}
                for s in sorted(chosen, key=lambda s: s.study_id)
                for r in episodes.participants_summary(conn, s.run_id, s.study_id)]
    cols = PARTICIPANT_COLUMNS[:9]
    return pd.DataFrame([{k: r[k] for k in cols} for r in rows], columns=cols)


def participant_exclusions(df: pd.DataFrame, rules: SgpExclusions, people: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per participant (of `people`, else of those with episodes in `df`): main episodes in `df`, solved %,
    median time per episode (server clock), longest streak of episodes played with the very same moves, and why
    (if) excluded. A participant without an episode here has nothing to exclude."""
    rows = []
    for (pid, study), g in df.sort_values(["submitted_at", "result_id"]).groupby(["participant_id", "study_id"]):
        med = float(g["total_ms"].median())
        streak = _longest_streak(list(g["response"]))
        why = [w for w, hit in (("too fast", bool(rules.too_fast_ms) and med < rules.too_fast_ms),
                                ("streak", bool(rules.streak) and streak >= rules.streak)) if hit]
        rows.append({"participant_id": pid, "study_id": study, "episodes": len(g),
                     "solved_pct": 100.0 * float(g["passed"].mean()), "median_episode_s": med / 1000,
                     "longest_streak": streak, "excluded": ", ".join(why)})
    stats = pd.DataFrame(rows, columns=["participant_id", "study_id", *PARTICIPANT_COLUMNS[9:]])
    if people is None:
        return stats
    out = people.merge(stats, on=["participant_id", "study_id"], how="left")
    out["episodes"] = out["episodes"].fillna(0).astype(int)
    out["longest_streak"] = out["longest_streak"].fillna(0).astype(int)
    out["excluded"] = out["excluded"].fillna("")
    return out[PARTICIPANT_COLUMNS]


def to_logs(df: pd.DataFrame, ds) -> list[EpisodeLog]:
    """Participants' episodes as the benchmark's `EpisodeLog`s (solver "Human", their modality; `sample` numbers
    the players of one episode, so each play is one row of the metrics' frames)."""
    seen: dict[tuple[str, str], int] = defaultdict(int)
    logs = []
    for r in df.itertuples(index=False):
        ep = ds.episodes[r.episode_id]
        steps = tuple(StepLog(m["seq"] + 1, m["command"], _canonical(r.parsed, m["seq"]), m["outcome"],
                              m["distance"], json.loads(m["state"]), m["client_ms"]) for m in r.moves)
        if len(steps) != r.steps:
            raise ValueError(f"{r.participant_id} {r.episode_id}: {len(steps)} stored moves, the result says {r.steps}")
        k = (r.episode_id, r.modality)
        logs.append(EpisodeLog(r.episode_id, HUMAN, seen[k], int(r.step_cap), ep.c1, ep.n_geoms, steps,
                               bool(r.passed), r.dataset_hash, r.modality,
                               {"participant_id": r.participant_id, "study_id": r.study_id}))
        seen[k] += 1
    return logs


def _canonical(parsed: str, seq: int) -> str | None:
    return json.loads(parsed)["steps"][seq]["canonical"]


@dataclass(frozen=True)
class SgpSelection:
    logs: list[EpisodeLog]               # the participants' plays that enter the figures
    participants: pd.DataFrame           # every participant of the chosen studies, with exclusion reasons
    n_excluded: int
    other_cap: int                       # episodes left out: played under another step cap (or none)
    rules: SgpExclusions


def select_human(df: pd.DataFrame, ds, rules: SgpExclusions, step_cap: int, studies: tuple[str, ...] = (),
                 modalities: tuple[str, ...] = (), people: pd.DataFrame | None = None) -> SgpSelection:
    """Filters, then exclusions, then the step cap: which participants' episodes enter the comparison.
    `people` (`sgp_participants`): the participant table then lists everyone of the chosen studies, also those
    without an episode in the selection."""
    df = df[df["dataset_hash"] == ds.dataset_hash]
    if studies:
        df = df[df["study_id"].isin(studies)]
    if modalities:
        df = df[df["modality"].isin(modalities)]
    if people is not None and studies:
        people = people[people["study_id"].isin(studies)]
    if people is not None and modalities:
        people = people[people["modality"].isin(modalities)]
    parts = participant_exclusions(df, rules, people)
    out = set(parts.loc[parts["excluded"] != "", "participant_id"])
    df = df[~df["participant_id"].isin(out)]
    same = df["step_cap"].notna() & (df["step_cap"] == step_cap)
    return SgpSelection(to_logs(df[same], ds), parts, len(out), int((~same).sum()), rules)


def agent_logs(ds, episode_ids: tuple[str, ...], samples: int, seed: int, step_cap: int) -> list[EpisodeLog]:
    """The optimal agent once per episode and the random agent `samples` times (seeded per episode and sample),
    each through the benchmark's own play loop."""
    logs = []
    for eid in episode_ids:
        ep = ds.episodes[eid]
        logs.append(play_episode(ep, agent_policy("optimal", seed, eid, 0), AGENT_SOLVERS[0], 0, step_cap,
                                 ds.dataset_hash))
        logs += [play_episode(ep, agent_policy("random", seed, eid, s), AGENT_SOLVERS[1], s, step_cap, ds.dataset_hash)
                 for s in range(samples)]
    return logs


AGENT_SOLVERS = ("optimal (agent)", "random (agent)")


@dataclass(frozen=True)
class ModelSelection:
    logs: list[EpisodeLog]               # the model plays that enter the figures, beside the participants'
    other_cap: int                       # plays left out: another step cap than the compared one
    other_episodes: int                  # plays left out: episodes the comparison does not cover


def select_models(runs: dict[str, list[EpisodeLog]], step_cap: int, episode_ids: tuple[str, ...]) -> ModelSelection:
    """Model plays (each run's episode logs, by file name, checked by `benchmarks.sgp.logs.read_logs`) for the
    human comparison: the same step cap and the same episodes as the participants' row, the rest counted. A log
    whose solver takes the participants' or an agent's name is refused: its row would be mistaken for theirs; so
    are plays of one solver under different protocols or settings (`check_pooling`), as `sgp score` refuses."""
    check_pooling(runs)
    logs = [lg for got in runs.values() for lg in got]
    taken = sorted({lg.solver for lg in logs} & {HUMAN, *AGENT_SOLVERS})
    if taken:
        raise ValueError(f"model logs name their solver {', '.join(map(repr, taken))}, the name of the "
                         "participants' or an agent's row: give the model's own name")
    keep = set(episode_ids)
    same = [lg for lg in logs if lg.step_cap == step_cap]
    return ModelSelection([lg for lg in same if lg.episode_id in keep], len(logs) - len(same),
                          sum(lg.episode_id not in keep for lg in same))


@dataclass(frozen=True)
class SgpResults:
    """What the SGP results page, the bundle and scripts show: the participants' selection, the episodes the
    reference agents played (the participants' episodes; the whole build when none), and the tables
    (`results_tables`), None when nobody played an episode of the selection and the whole build was not asked."""

    selection: SgpSelection
    agent_episodes: tuple[str, ...]
    played: bool                          # participants played episodes of this selection
    tables: dict[str, pd.DataFrame] | None
    models: ModelSelection | None = None  # model runs' plays beside the participants (`select_models`)


AgentPlays = Callable[[Any, tuple[str, ...], int, int, int], list[EpisodeLog]]


def sgp_results(store: Store, ds, step_cap: int = 20, rules: SgpExclusions = SgpExclusions(),
                studies: tuple[str, ...] = (), modalities: tuple[str, ...] = (), samples: int = 3, seed: int = 0,
                n_boot: int = BOOT, boot_seed: int = SEED, whole_build: bool = True,
                agents: AgentPlays = agent_logs, models: dict[str, list[EpisodeLog]] | None = None) -> SgpResults:
    """SGP's one analysis entry point (ROSE's: `analysis.report.report_data`): participants' main episodes of
    this build after filters, exclusions and the step cap, beside the optimal and random agents on the same
    episodes (`samples` random plays each, seeded by `seed`), measured by the benchmark's metric functions.
    `agents`: how the agents' plays are obtained (the page passes its cached `agent_logs`); `models`: model runs'
    episode logs by file name, compared on the same episodes and step cap (`select_models`: raises ValueError for
    a run that takes a reserved name or pools different protocols)."""
    sel = select_human(human_episodes(store), ds, rules, step_cap, studies, modalities,
                       sgp_participants(store, ds.dataset_hash))
    played = tuple(sorted({lg.episode_id for lg in sel.logs}))
    episodes = played or tuple(ds.episodes)
    chosen = select_models(models, step_cap, episodes) if models else None
    if not played and not whole_build:
        return SgpResults(sel, episodes, False, None, chosen)
    logs = sel.logs + (chosen.logs if chosen else []) + agents(ds, episodes, samples, seed, step_cap)
    starts = {eid: ep.start_board() for eid, ep in ds.episodes.items()}
    return SgpResults(sel, episodes, bool(played), results_tables(logs, n_boot, boot_seed, starts), chosen)


# --------------------------------------------------------------------------- figures

def results_tables(logs: list[EpisodeLog], n_boot: int = BOOT, seed: int = SEED,
                   starts: dict | None = None) -> dict[str, pd.DataFrame]:
    """Everything the results page shows, from the benchmark's metric functions: the summary per solver and
    modality (`SUMMARY_DEFINITION`: solved % and mean step deviation with their 95 % intervals, over episodes
    for agents and models, over participants for the human rows (`with_participant_intervals`), outcome counts, and
    with `starts` (each episode's start board) the illegal commands per play as each reader counts them), the
    regret curve with a 95 % band, and the per-play frame the heatmaps pivot."""
    episodes = episodes_frame(logs)
    steps = steps_frame(logs)
    people = {(lg.solver, lg.modality or "-", lg.episode_id, lg.sample): lg.meta.get("participant_id")
              for lg in logs if lg.solver == HUMAN}
    curve = regret_curve(steps).merge(regret_band(steps, n_boot, seed, people), on=[*GROUP, "t"])
    summary = with_participant_intervals(summary_table(logs, n_boot, seed), episodes, logs, n_boot, seed)
    if starts is not None:
        summary = summary.merge(reader_figures(logs, starts), on=list(GROUP))
    return {"summary": summary, "episodes": episodes, "regret": curve, "outcomes": outcome_counts(episodes)}


SUMMARY_DEFINITION = (
    "Solved (%): share of plays whose board reached the goal; deviation: mean A* distance left at t = c1 "
    "(after as many moves as the shortest path has). Agents and models: 95% Wilson interval over plays and 95% "
    "percentile bootstrap over episodes (their unit is the episode). Human rows: both intervals (and the regret "
    "band) from one cluster bootstrap over participants (resamples of whole people, 95% expanded percentile interval; Wilson's over "
    "participants when every resample repeats a 0 or 100% rate), the rule of ROSE's human cells: one person's plays "
    "are not independent. participants: people behind a human row (none for an agent or model); plays and "
    "episodes: plays and distinct episodes the row rests on")


def with_participant_intervals(summary: pd.DataFrame, episodes: pd.DataFrame, logs: list[EpisodeLog],
                               n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """The human rows' solved % and step deviation intervals from one cluster bootstrap over participants (the rule
    of every human cell of a ROSE row, `common.stats`): a Wilson interval over plays or a bootstrap over episodes
    treats one person's plays as independent, so three people solving 3/3, 0/3, 3/3 would get [35, 88] where
    resampling people gives about [0, 100]. Adds `participants` (Int64; none for agents and models, whose
    intervals stay over episodes). `episodes`: `episodes_frame(logs)`, one row per log in order."""
    out = summary.copy()
    people = pd.Series([lg.meta.get("participant_id") if lg.solver == HUMAN else None for lg in logs],
                       index=episodes.index, dtype=object)
    out["participants"] = pd.array([None] * len(out), dtype="Int64")
    for i, r in out[out["solver"] == HUMAN].iterrows():
        mine = (episodes["solver"] == HUMAN) & (episodes["modality"] == r["modality"])
        who = people[mine]
        if who.isna().any():
            raise ValueError(f"{HUMAN} ({r['modality']}): a play without its participant id; its interval "
                             "cannot resample people")
        g = episodes[mine]
        codes, n_units = unit_codes(who.to_numpy())
        values = np.concatenate([g["solved"].to_numpy(float), np.ones(len(g)), g["d_at_c1"].to_numpy(float)])
        sums = unit_sums(np.tile(codes, 3), n_units, np.repeat(np.arange(3), len(g)), 3, values)
        S = resampled(sums, n_boot, solver_rng(seed, f"participants|{HUMAN}|{r['modality']}"))
        with np.errstate(invalid="ignore", divide="ignore"):
            solved, deviation = 100.0 * S[:, 0] / S[:, 1], S[:, 2] / S[:, 1]
        out.loc[i, ["lo", "hi"]] = interval(solved, float(r["solved_pct"]), n_units)
        out.loc[i, ["lo_dev", "hi_dev"]] = percentile_bounds(deviation, n_units)[0]
        out.loc[i, "participants"] = n_units
    return out


@dataclass(frozen=True)
class SgpBundleTable:
    """The paper bundle's SGP table: the participants' row per modality beside the agents (None and `note`
    when it cannot be made right)."""

    summary: pd.DataFrame | None
    note: str


def sgp_results_for_bundle(store: Store, n_boot: int = BOOT, seed: int = SEED, step_cap: int = 20,
                           samples: int = 3, agent_seed: int = 0) -> SgpBundleTable:
    """The SGP results page's summary under its defaults (every SGP study on the app's build, the default
    exclusions, the models' step cap 20; random agent 3 plays per episode, seed 0), for the paper bundle. Model
    runs are files, not stored, so the bundle carries the human row with the agents; the results page puts model
    logs beside it. None when no participant finished an episode, or the build is not the one they played."""
    from ..benchmarks.sgp.dataset import SgpDataset, SgpDatasetError, is_sgp_dataset, sgp_dataset_dir

    df = human_episodes(store)
    if df.empty:
        return SgpBundleTable(None, "no SGP participant episode stored")
    root = sgp_dataset_dir()
    if not is_sgp_dataset(root):
        return SgpBundleTable(None, f"the SGP build at {root} is missing: the participants' episodes cannot be "
                                    "scored (build it, or set ROSE_SGP_DATASET_DIR)")
    try:
        ds = SgpDataset.load(root)
    except SgpDatasetError as e:
        return SgpBundleTable(None, f"the SGP build at {root} cannot be read: {e}")
    other = sorted(set(df["dataset_hash"]) - {ds.dataset_hash})
    res = sgp_results(store, ds, step_cap, SgpExclusions(), samples=samples, seed=agent_seed, n_boot=n_boot,
                      boot_seed=seed, whole_build=False)
    sel, played = res.selection, res.agent_episodes
    if not res.played or res.tables is None:
        return SgpBundleTable(None, f"no participant episode on the SGP build {ds.dataset_hash[:12]} at step cap "
                                    f"{step_cap} ({sel.other_cap} under another cap"
                                    f"{', others on builds ' + ', '.join(h[:12] for h in other) if other else ''})")
    summary = res.tables["summary"].rename(
        columns={"lo": "solved_pct lo", "hi": "solved_pct hi", "lo_dev": "deviation lo", "hi_dev": "deviation hi"})
    note = (f"{len(sel.logs)} participant episodes on build {ds.dataset_hash[:12]}, exclusions: "
            f"{sel.rules.describe()} ({sel.n_excluded} participants excluded), {sel.other_cap} episodes under "
            f"another step cap left out; agents on the {len(played)} episodes the participants played (random: "
            f"{samples} plays per episode, seed {agent_seed})")
    if other:
        note += f"; episodes on other builds left out ({', '.join(h[:12] for h in other)})"
    return SgpBundleTable(summary, note)


def regret_band(steps: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED,
                people: dict[tuple, Any] | None = None) -> pd.DataFrame:
    """95 % percentile interval of the mean regret at every t, resampling episodes (their samples come along),
    as the metrics' step deviation does; the human rows (`people`: each human play's participant, by solver,
    modality, episode and sample) resample participants as their summary row does (`human_regret_band`)."""
    out = []
    for key, g in steps.groupby(list(GROUP), sort=False):
        if key[0] == HUMAN and people is not None:
            out.extend(human_regret_band(g, people, n_boot, seed).to_dict(orient="records"))
            continue
        rng = solver_rng(seed, "regret|" + "|".join(map(str, key)))
        for t, h in g.groupby("t", sort=True):
            lo, hi = _bootstrap_mean(h["regret"].to_numpy(float), h["episode_id"].to_numpy(), n_boot, rng)
            out.append({**dict(zip(GROUP, key)), "t": t, "regret_lo": lo, "regret_hi": hi})
    return pd.DataFrame(out, columns=[*GROUP, "t", "regret_lo", "regret_hi"])


def human_regret_band(g: pd.DataFrame, people: dict[tuple, Any], n_boot: int = BOOT,
                      seed: int = SEED) -> pd.DataFrame:
    """The human row's regret band: one resample of whole participants for the whole curve (the stream of its
    summary row), the mean regret at each t recomputed from the drawn people's plays, read as the expanded
    percentile interval (`common.stats`), as every human interval is."""
    who = pd.Series([people.get(k) for k in zip(g["solver"], g["modality"], g["episode_id"], g["sample"])],
                    dtype=object)
    if who.isna().any():
        raise ValueError(f"{HUMAN}: a play without its participant id; its regret band cannot resample people")
    key = (g["solver"].iloc[0], g["modality"].iloc[0])
    codes, n_units = unit_codes(who.to_numpy())
    ts = np.sort(g["t"].unique())
    col = np.searchsorted(ts, g["t"].to_numpy())
    width = len(ts)
    sums = unit_sums(np.tile(codes, 2), n_units, np.concatenate([col, col + width]), 2 * width,
                     np.concatenate([g["regret"].to_numpy(float), np.ones(len(g))]))
    S = resampled(sums, n_boot, solver_rng(seed, f"participants|{key[0]}|{key[1]}"))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = S[:, :width] / S[:, width:]
    bounds = percentile_bounds(means, n_units)
    return pd.DataFrame({"solver": key[0], "modality": key[1], "t": ts, "regret_lo": bounds[:, 0],
                         "regret_hi": bounds[:, 1]})


def group_heatmap(episodes: pd.DataFrame, solver: str, modality: str, value: str = "solved") -> pd.DataFrame:
    g = episodes[(episodes["solver"] == solver) & (episodes["modality"] == modality)]
    return heatmap(g, value)  # type: ignore[arg-type]


def heatmap_labels(episodes: pd.DataFrame, solver: str, modality: str, value: str = "solved") -> pd.DataFrame:
    """The heatmap's cell texts, aligned with `group_heatmap`: the value in the one number format (solved % one
    decimal, distances one decimal) and how many plays it comes from; an empty cell reads as MISSING, never NaN."""
    from .display import MISSING, fmt_number, fmt_rate

    hm = group_heatmap(episodes, solver, modality, value)
    g = episodes[(episodes["solver"] == solver) & (episodes["modality"] == modality)]
    n = g.pivot_table(index="n_geoms", columns="c1", values="episode_id", aggfunc="size").reindex_like(hm)
    f = fmt_rate if value == "solved" else fmt_number
    return pd.DataFrame([[MISSING if pd.isna(v) else f"{f(v)}<br>n={int(k)}" for v, k in zip(vr, kr)]
                         for vr, kr in zip(hm.to_numpy(), n.to_numpy())], index=hm.index, columns=hm.columns)


# --------------------------------------------------------------------------- board-state inference

INFERENCE_DEFINITION = (
    "boards: answers scored; exact: % of boards written exactly right (every geom correct, nothing hallucinated, "
    "no format error), 95% Wilson interval over boards; correct, missed, hallucinated, coord_errors, color_errors, "
    "shape_errors, format_errors: per 100 geoms on the true boards (matched by the Hungarian algorithm, a pair "
    "allowed when it shares colour or shape; a pair can count several mismatches), 95% percentile bootstrap "
    "over episodes (an episode's start and goal boards and repeated samples resampled together); '<class> per "
    "board': the same counts as the mean per board (iVISPAR's unit), same interval")


def inference_scored(store: Store, dataset_hash: str | None = None) -> pd.DataFrame:
    """Every stored board-state inference answer (of one build, or all), scored now against its stored truth
    by the benchmark's scorer: one row per answer with the scorer's counts."""
    from ..benchmarks.sgp.inference import COUNT_COLUMNS
    from ..storage import inference

    with store.connect() as conn:
        rows = inference.all_rows(conn)
    cols = ["dataset_hash", "solver", "solver_kind", "modality", "episode_id", "item_id", "board", "sample",
            "n_geoms", *COUNT_COLUMNS]
    out = [{**{k: r[k] for k in cols[:9]}, **score_counts(json.loads(r["truth"]), r["response"])}
           for r in rows if dataset_hash is None or r["dataset_hash"] == dataset_hash]
    return pd.DataFrame(out, columns=cols)


def inference_version(store: Store) -> tuple[int, float]:
    """Changes whenever an import stores or replaces answers: the results page's cache key."""
    from ..storage import inference

    with store.connect() as conn:
        return inference.version(conn)


def inference_results(scored: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """The inference table (`metrics.inference_table`) per build, solver and modality; empty when nothing is
    stored."""
    parts = [inference_table(g, n_boot, seed).assign(dataset_hash=h)
             for h, g in scored.groupby("dataset_hash", sort=True)]
    if not parts:
        return pd.DataFrame()
    t = pd.concat(parts, ignore_index=True)
    return t[["dataset_hash", *[c for c in t.columns if c != "dataset_hash"]]]


def inference_report(store: Store, n_boot: int = BOOT, seed: int = SEED) -> dict:
    """`report --json`'s "sgp_inference": the rows (NaN as null) and what they mean."""
    from .display import json_rows

    t = inference_results(inference_scored(store), n_boot, seed)
    return {"definition": INFERENCE_DEFINITION, "boot": n_boot, "seed": seed, "rows": json_rows(t)}


# --------------------------------------------------------------------------- the episode replay

def played_episodes(store: Store, run_id: str) -> pd.DataFrame:
    """A study's finished episodes (practice included), with the participant's external id, in the order played."""
    from ..storage import episodes

    with store.connect() as conn:
        return pd.DataFrame(episodes.export_rows(conn, "episode_results", run_id))


def replay(store: Store, run_id: str, participant_id: str, view_id: str) -> pd.DataFrame:
    """One episode, move by move: the command as sent, its outcome, d_t, how it was made, and when: seconds
    since the episode was put on screen on the server's clock (the page's own clock beside it)."""
    from ..instrument.policy import shown_at
    from ..instrument.ids import view_id_for
    from ..storage import episodes
    from ..storage import participants

    with store.connect() as conn:
        steps = episodes.view_steps(conn, run_id, participant_id, view_id)
        assigns = participants.participant_assignments(conn, participant_id)
    a = next((a for a in assigns if view_id_for(participant_id, a.kind, a.attempt, a.position) == view_id), None)
    t0 = shown_at(a, assigns) if a is not None else (steps[0].server_ts if steps else 0.0)
    return pd.DataFrame([{
        "step": s.seq + 1, "command": s.command, "outcome": s.outcome, "d_t": s.distance, "input": s.input,
        "server_s": round(s.server_ts - t0, 3), "page_s": None if s.client_ms is None else round(s.client_ms / 1000, 3),
        "ended": s.ended or "", "state": s.state} for s in steps],
        columns=["step", "command", "outcome", "d_t", "input", "server_s", "page_s", "ended", "state"])


__all__ = ["HUMAN", "AGENT_SOLVERS", "ModelSelection", "select_models", "SgpBundleTable", "sgp_results_for_bundle",
           "SgpExclusions", "SgpSelection", "human_episodes", "participant_exclusions", "to_logs",
           "PARTICIPANT_COLUMNS", "sgp_participants", "SgpResults", "sgp_results",
           "select_human", "agent_logs", "results_tables", "SUMMARY_DEFINITION", "with_participant_intervals", "regret_band",
           "human_regret_band", "group_heatmap", "heatmap_labels",
           "played_episodes", "replay",
           "INFERENCE_DEFINITION", "inference_scored", "inference_results", "inference_report", "inference_version"]
