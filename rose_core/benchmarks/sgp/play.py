"""Playing an episode: a solver's texts in, a per-step log out.

The solver sees the board and sends a text; `step_board` classifies it and moves the board (or not). Every
text counts as a step, invalid ones included; the episode ends when the board equals the goal (solved) or
after `step_cap` steps (iVISPAR: 20). Each step logs the text, the canonical command, the outcome, d_t (the
exact A* distance to the goal after it), the board, and how long the solver took.

An `EpisodeLog` is one line of an episode-log file (agents, `run-model`, or logs written elsewhere and
imported by `logs.read_logs`, which replays them through this same engine).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from .actions import Outcome
from .board import Board
from .readers import Reader, StepOutcome, read_step
from .records import Episode
from .search import astar_distance

STEP_CAP = 20
EndReason = Literal["solved", "step_cap"]


@dataclass(frozen=True)
class StepLog:
    t: int                       # 1-based step number
    action: str                  # what the solver sent (a command, or a model's whole reply)
    command: str | None          # the canonical command parsed from it (None: illegal)
    outcome: StepOutcome         # under the ivispar reader also "unclassified" (see `readers`)
    d: int                       # A* distance to the goal after this step
    state: dict[str, Any]        # the board after this step
    ms: float | None = None      # time the solver took for this step
    extra: dict[str, Any] = field(default_factory=dict)   # e.g. a model's raw API response
    moves: tuple[Outcome, ...] | None = None   # ivispar reader: each engine move's class (a repeat moves n times)

    def move_outcomes(self) -> tuple[str, ...]:
        """The classes this step counts in: its outcome, or under the ivispar reader one per engine move."""
        return (self.outcome,) if self.moves is None else self.moves

    def to_json(self) -> dict[str, Any]:
        d = {"t": self.t, "action": self.action, "command": self.command, "outcome": self.outcome, "d": self.d,
             "state": self.state, "ms": self.ms}
        if self.moves is not None:
            d["moves"] = list(self.moves)
        d.update(self.extra)
        return d


@dataclass(frozen=True)
class EpisodeLog:
    """One solver's play of one episode (`sample` tells repeated plays of a stochastic solver apart)."""

    episode_id: str
    solver: str
    sample: int
    step_cap: int
    c1: int
    n_geoms: int
    steps: tuple[StepLog, ...]
    solved: bool
    dataset_hash: str | None = None
    modality: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def end(self) -> EndReason | None:
        if self.solved:
            return "solved"
        return "step_cap" if len(self.steps) >= self.step_cap else None

    def distances(self) -> list[int]:
        """d_0 … d_T (d_0 = c1)."""
        return [self.c1] + [s.d for s in self.steps]

    def to_json(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "solver": self.solver, "sample": self.sample,
                "modality": self.modality, "step_cap": self.step_cap, "dataset_hash": self.dataset_hash,
                "c1": self.c1, "n_geoms": self.n_geoms, "solved": self.solved,
                "steps": [s.to_json() for s in self.steps], **({"meta": self.meta} if self.meta else {})}


@dataclass(frozen=True)
class PlayView:
    """What a solver may see before its next step: the board, the goal, the steps so far."""

    episode: Episode
    board: Board
    goal: Board
    history: tuple[StepLog, ...]

    @property
    def t(self) -> int:
        return len(self.history)


# A policy returns the text of its next action, and optionally extra fields to keep in the step's log.
Policy = Callable[[PlayView], "str | tuple[str, dict[str, Any]]"]


class Replay:
    """The engine's state between steps: feed texts one by one (`send`), read the log (`log`)."""

    def __init__(self, episode: Episode, step_cap: int = STEP_CAP, reader: Reader = "strict"):
        if step_cap < 1:
            raise ValueError("step_cap must be at least 1")
        self.episode, self.step_cap, self.reader = episode, step_cap, reader
        self.goal = episode.goal_board()
        self.board = episode.start_board()
        self.d = astar_distance(self.board, self.goal)
        if self.d != episode.c1:
            raise ValueError(f"{episode.episode_id}: start is {self.d} moves from the goal, the episode says c1 = {episode.c1}")
        self.steps: list[StepLog] = []

    @property
    def done(self) -> bool:
        return self.d == 0 or len(self.steps) >= self.step_cap

    def send(self, text: str, ms: float | None = None, extra: dict[str, Any] | None = None) -> StepLog:
        if self.done:
            raise ValueError(f"{self.episode.episode_id}: the episode is over (solved or at the step cap)")
        s = read_step(self.reader, self.board, text, self.goal, self.d)
        self.board, self.d = s.board, s.distance
        log = StepLog(len(self.steps) + 1, text, s.command, s.outcome, s.distance, s.board.to_state(), ms,
                      extra or {}, None if self.reader == "strict" else s.moves)
        self.steps.append(log)
        return log

    def view(self) -> PlayView:
        return PlayView(self.episode, self.board, self.goal, tuple(self.steps))

    def log(self, solver: str, sample: int = 0, dataset_hash: str | None = None, modality: str | None = None,
            meta: dict[str, Any] | None = None) -> EpisodeLog:
        return EpisodeLog(self.episode.episode_id, solver, sample, self.step_cap, self.episode.c1,
                          self.episode.n_geoms, tuple(self.steps), self.d == 0, dataset_hash, modality, meta or {})


def play_episode(episode: Episode, policy: Policy, solver: str, sample: int = 0, step_cap: int = STEP_CAP,
                 dataset_hash: str | None = None, modality: str | None = None, meta: dict[str, Any] | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> EpisodeLog:
    """Run `policy` on `episode` until solved or at the step cap."""
    r = Replay(episode, step_cap)
    while not r.done:
        t0 = clock()
        out = policy(r.view())
        text, extra = (out, {}) if isinstance(out, str) else out
        r.send(text, round(1000 * (clock() - t0), 3), extra)
    return r.log(solver, sample, dataset_hash, modality, meta)
