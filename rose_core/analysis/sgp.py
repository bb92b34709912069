"""SGP results: the episodes humans played (from `episode_results`), their exclusions, and the reference agents
on the same episodes, in one frame the SGP results page and its tests read.

One row per finished main episode: solver, unit (participant for humans; episode × sample for agents), the
episode's parameters (number of geoms, c1), modality, step cap, solved, d_t after every step (d_0 = c1), and the
count of each outcome class. The figures are the benchmark's own metric functions over these rows
(`rose_core.benchmarks.sgp.metrics`), so humans and agents are measured by one definition.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..benchmarks.sgp.actions import OUTCOMES
from ..store import Store
from .tables import BOOT, SEED, solver_rng, wilson

HUMAN = "Human"


@dataclass(frozen=True)
class SgpExclusions:
    """The same pre-registrable exclusions as ROSE studies, where an episode study has them: a median time per
    main episode below a threshold, and a streak of episodes played with the very same moves. (SGP studies have
    no attention checks; participants screened out in practice never reach the main episodes.)"""

    too_fast_ms: float | None = 1500.0
    streak: int | None = 10

    def describe(self) -> str:
        parts = []
        if self.too_fast_ms:
            parts.append(f"median time per episode < {self.too_fast_ms / 1000:g} s")
        if self.streak:
            parts.append(f"≥ {self.streak} episodes in a row with the same moves")
        return "; ".join(parts) if parts else "none"


_SQL = """
SELECT e.result_id, e.run_id, r.solver_kind, r.solver_name, r.study_id, e.participant_id, e.episode_id, e.kind,
       e.sample, e.modality, e.step_cap, e.ended, e.steps, e.response, e.parsed, e.passed, e.valid, e.total_ms,
       e.first_action_ms, e.submitted_at
FROM episode_results e JOIN runs r USING (run_id)
WHERE e.kind = 'main'
ORDER BY e.result_id
"""


def rows_from_parsed(df: pd.DataFrame) -> pd.DataFrame:
    """Spread each result's `parsed` record into columns: num_geoms, c1, distances, and one count per outcome."""
    parsed = [json.loads(p) for p in df["parsed"]]
    out = df.copy()
    out["num_geoms"] = [p["num_geoms"] for p in parsed]
    out["c1"] = [p["c1"] for p in parsed]
    out["distances"] = [list(p["distances"]) for p in parsed]
    out["given_up"] = [bool(p.get("given_up")) for p in parsed]
    for k in OUTCOMES:
        out[k] = [int(p["outcomes"].get(k, 0)) for p in parsed]
    return out


def episode_frame(store: Store) -> pd.DataFrame:
    """Every finished main episode stored (participants', and any run stored in `episode_results`)."""
    with store.connect() as conn:
        df = pd.read_sql_query(_SQL, conn)
    df["study_id"] = df["study_id"].fillna("").astype(object)
    # Humans pooled per modality (what they saw is the condition); runs under their own names.
    df["solver"] = [f"{HUMAN} ({m})" if k == "human" else (n + " (agent)" if k == "agent" else n)
                    for k, n, m in zip(df["solver_kind"], df["solver_name"], df["modality"])]
    df["unit"] = [p if k == "human" else f"{e}#{s}" for k, p, e, s in
                  zip(df["solver_kind"], df["participant_id"], df["episode_id"], df["sample"])]
    return rows_from_parsed(df) if len(df) else df.assign(num_geoms=[], c1=[], distances=[], given_up=[],
                                                          **{k: [] for k in OUTCOMES})


def _longest_streak(values: list) -> int:
    best = run = 0
    prev = object()
    for v in values:
        run = run + 1 if v == prev else 1
        prev = v
        best = max(best, run)
    return best


def participant_exclusions(df: pd.DataFrame, rules: SgpExclusions) -> pd.DataFrame:
    """One row per participant of the frame's human episodes: episodes, median time, longest streak of identical
    move transcripts, and why (if) excluded."""
    h = df[df["solver_kind"] == "human"]
    if h.empty:
        return pd.DataFrame(columns=["participant_id", "study_id", "episodes", "median_episode_s", "longest_streak",
                                     "excluded"])
    rows = []
    for (pid, study), g in h.sort_values(["submitted_at", "result_id"]).groupby(["participant_id", "study_id"]):
        med = float(g["total_ms"].median())
        streak = _longest_streak(list(g["response"]))
        why = []
        if rules.too_fast_ms and med < rules.too_fast_ms:
            why.append("too fast")
        if rules.streak and streak >= rules.streak:
            why.append("streak")
        rows.append({"participant_id": pid, "study_id": study, "episodes": len(g), "median_episode_s": med / 1000,
                     "longest_streak": streak, "excluded": ", ".join(why)})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class SgpSelection:
    df: pd.DataFrame
    participants: pd.DataFrame
    rules: SgpExclusions
    n_excluded: int
    studies: tuple[str, ...]


def select_sgp(frame: pd.DataFrame, rules: SgpExclusions, studies: tuple[str, ...] = (),
               modalities: tuple[str, ...] = ()) -> SgpSelection:
    """Filters (human episodes of these studies; these modalities), then the exclusions."""
    df = frame
    if studies:
        df = df[(df["solver_kind"] != "human") | df["study_id"].isin(studies)]
    if modalities:
        df = df[df["modality"].isin(modalities)]
    parts = participant_exclusions(df, rules)
    out = set(parts.loc[parts["excluded"] != "", "participant_id"]) if len(parts) else set()
    df = df[~((df["solver_kind"] == "human") & df["participant_id"].isin(out))]
    return SgpSelection(df, parts, rules, len(out), studies)


# --------------------------------------------------------------------------- the episode replay

def played_episodes(store: Store, run_id: str) -> pd.DataFrame:
    """A study's finished episodes (practice included), with the participant's external id, newest last."""
    from ..storage import episodes as se

    with store.connect() as conn:
        df = pd.DataFrame(se.export_rows(conn, "episode_results", run_id))
    return df


def replay(store: Store, run_id: str, participant_id: str, view_id: str) -> pd.DataFrame:
    """One episode, move by move: the command as sent, its outcome, d_t, how it was made, and when: seconds
    since the episode was put on screen on the server's clock (the page's own clock beside it)."""
    from ..instrument.policy import shown_at
    from ..instrument.session import view_id_for
    from ..storage import episodes as se
    from ..storage import participants as sp

    with store.connect() as conn:
        steps = se.view_steps(conn, run_id, participant_id, view_id)
        assigns = sp.participant_assignments(conn, participant_id)
    a = next((a for a in assigns if view_id_for(participant_id, a.kind, a.attempt, a.position) == view_id), None)
    t0 = shown_at(a, assigns) if a is not None else (steps[0].server_ts if steps else 0.0)
    return pd.DataFrame([{
        "step": s.seq + 1, "command": s.command, "outcome": s.outcome, "d_t": s.distance, "input": s.input,
        "server_s": round(s.server_ts - t0, 3), "page_s": None if s.client_ms is None else round(s.client_ms / 1000, 3),
        "ended": s.ended or "", "state": s.state} for s in steps],
        columns=["step", "command", "outcome", "d_t", "input", "server_s", "page_s", "ended", "state"])


# --------------------------------------------------------------------------- figures per solver

def _cluster_boot(sums: np.ndarray, counts: np.ndarray, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    """Pooled means (sum / count) over resampled units: rows of `sums`/`counts` are units, columns quantities."""
    idx = rng.integers(0, len(sums), size=(n_boot, len(sums)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[idx].sum(axis=1) / counts[idx].sum(axis=1)


def summary_table(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """Per solver: episodes, units, solved rate [95 % Wilson], mean step deviation (d at t = c1) [95 % percentile
    bootstrap over units: participants for humans, episodes for agents], mean moves."""
    rows = []
    for solver, g in df.groupby("solver", sort=False):
        n, k = len(g), int(g["passed"].sum())
        lo, hi = wilson(k, n)
        dev = np.array([step_deviation(d, c) for d, c in zip(g["distances"], g["c1"])], dtype=float)
        units = g["unit"].astype("category").cat.codes.to_numpy()
        sums = np.bincount(units, weights=dev)[:, None]
        cnts = np.bincount(units).astype(float)[:, None]
        boot = _cluster_boot(sums, cnts, solver_rng(seed, "sgp:" + solver), n_boot)[:, 0]
        rows.append({"solver": solver, "episodes": n, "units": int(units.max()) + 1 if n else 0,
                     "solved %": 100 * k / n if n else np.nan, "solved lo": lo, "solved hi": hi,
                     "step deviation": float(dev.mean()) if n else np.nan,
                     "deviation lo": float(np.percentile(boot, 2.5)), "deviation hi": float(np.percentile(boot, 97.5)),
                     "mean moves": float(g["steps"].mean())})
    return pd.DataFrame(rows)


def regret_frame(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """Per solver and step t: mean regret over episodes, with a 95 % percentile bootstrap over units."""
    out = []
    for solver, g in df.groupby("solver", sort=False):
        horizon = int(max(len(d) for d in g["distances"])) - 1
        mat = np.array([regret_curve(d, c, horizon) for d, c in zip(g["distances"], g["c1"])], dtype=float)
        units = g["unit"].astype("category").cat.codes.to_numpy()
        sums = np.stack([np.bincount(units, weights=mat[:, t]) for t in range(horizon + 1)], axis=1)
        cnts = np.repeat(np.bincount(units).astype(float)[:, None], horizon + 1, axis=1)
        boot = _cluster_boot(sums, cnts, solver_rng(seed, "sgp-regret:" + solver), n_boot)
        for t in range(horizon + 1):
            out.append({"solver": solver, "t": t, "mean": float(mat[:, t].mean()),
                        "lo": float(np.percentile(boot[:, t], 2.5)), "hi": float(np.percentile(boot[:, t], 97.5)),
                        "episodes": len(g)})
    return pd.DataFrame(out, columns=["solver", "t", "mean", "lo", "hi", "episodes"])


def outcome_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Per solver: mean number of moves of each outcome class per episode."""
    if df.empty:
        return pd.DataFrame(columns=["solver", *OUTCOMES])
    return df.groupby("solver", sort=False)[list(OUTCOMES)].mean().reset_index()


def heatmap_frame(df: pd.DataFrame, metric: str = "solved rate") -> pd.DataFrame:
    """Number of geoms (rows) × c1 (columns): solved rate in % or mean step deviation."""
    if metric == "solved rate":
        vals = df.assign(v=100.0 * df["passed"])
    elif metric == "step deviation":
        vals = df.assign(v=[step_deviation(d, c) for d, c in zip(df["distances"], df["c1"])])
    else:
        raise ValueError(f"metric: expected 'solved rate' or 'step deviation', got {metric!r}")
    return vals.pivot_table(index="num_geoms", columns="c1", values="v", aggfunc="mean").sort_index()


# --------------------------------------------------------------------------- per-episode measures

def step_deviation(distances: list[int], c1: int) -> int:
    """iVISPAR's "step deviation from the optimal path": d at t = c1 (the board stays as it is after the last move)."""
    return int(distances[min(c1, len(distances) - 1)])


def regret_curve(distances: list[int], c1: int, horizon: int) -> list[int]:
    """regret_t = d_t − (c1 − t) for t = 0..horizon, not clamped; frozen once solved (its value when the goal was
    reached); after an unsolved episode's last move the board stays, so d_t stays."""
    out, frozen = [], None
    for t in range(horizon + 1):
        if frozen is not None:
            out.append(frozen)
            continue
        d = distances[min(t, len(distances) - 1)]
        out.append(int(d - (c1 - t)))
        if d == 0:
            frozen = out[-1]
    return out


# --------------------------------------------------------------------------- reference agents

def _agent_rows(ds, episode_ids: tuple[str, ...], samples: int, seed: int, cap: int) -> list[dict]:
    import random

    from ..benchmarks.sgp import astar_path, board_from_state, legal_moves
    from ..benchmarks.sgp.item import sgp_item
    from ..instrument.items import Move

    rows = []
    for eid in episode_ids:
        item = sgp_item(ds, eid, "text", cap)
        goal = board_from_state(item.goal_state)
        plans = [("optimal", 0, [f"move {m.geom.color} {m.geom.shape} {m.direction}"
                                 for m in astar_path(board_from_state(item.start()), goal)])]
        plans += [("random", k, None) for k in range(samples)]
        for name, sample, plan in plans:
            rng = random.Random(f"sgp-random:{seed}:{eid}:{sample}")
            state, moves, outs = item.start(), [], []
            while True:
                if plan is not None:
                    text = plan[len(moves)]
                else:
                    m = rng.choice(legal_moves(board_from_state(state)))
                    text = f"move {m.geom.color} {m.geom.shape} {m.direction}"
                out = item.step(state, Move(len(moves), text), len(moves))
                moves.append(Move(len(moves), text))
                outs.append(out)
                state = out.state
                if out.end:
                    break
            r = item.result(moves, outs)
            rows.append({"solver_kind": "agent", "solver": f"{name} (agent)", "unit": eid, "episode_id": eid,
                         "sample": sample, "modality": "-", "step_cap": cap, "participant_id": "", "study_id": "",
                         "passed": int(r.passed), "steps": len(moves), "response": r.response,
                         "parsed": json.dumps(r.parsed)})
    return rows


def agent_frame(ds, episode_ids: tuple[str, ...], samples: int = 5, seed: int = 0, cap: int = 20) -> pd.DataFrame:
    """The optimal agent (an A* path) and the random agent (uniform over the legal moves, each leading to a new
    board; `samples` seeded runs per episode) on these episodes, played by the same engine and cap as anyone."""
    return rows_from_parsed(pd.DataFrame(_agent_rows(ds, episode_ids, samples, seed, cap)))
