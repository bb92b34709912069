"""Seeded, deduplicated episode generation, as iVISPAR describes it (its own generator has no seed and a broken
duplicate check).

For each wanted (number of geoms, c1) the goal is placed first (distinct shape × colour pairs on distinct
cells), then the start is reached by a random walk of legal moves backwards from the goal, checking the exact
A* distance after every move, until it equals c1 with the wanted interference c2. A walk that has not got
there after `max_walk` moves is dropped and a new goal drawn. An episode whose (start, goal) pair is already
in the dataset is drawn again. Every random choice comes from a stream keyed by (seed, geoms, c1, index,
attempt), so one composition cell never shifts another.
"""
from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field

from .board import ALL_GEOMS, Board
from .records import Episode
from .search import astar_distance, interference, legal_moves

DEFAULT_SEED = 0


class GenerationError(ValueError):
    """Parameters that cannot give the wanted episodes (e.g. more geoms than the board allows)."""


@dataclass(frozen=True)
class BuildParams:
    """What a build makes: the paper's dataset by default (2–11 geoms × c1 2–11 × 3 = 300, c2 = 0, 4×4)."""

    seed: int = DEFAULT_SEED
    board_size: int = 4
    geoms: tuple[int, ...] = tuple(range(2, 12))
    c1: tuple[int, ...] = tuple(range(2, 12))
    per_cell: int = 3
    c2: int = 0
    max_walk: int = 400
    max_attempts: int = 2000
    geom_pool: tuple[str, ...] = field(default_factory=lambda: tuple(g.name for g in ALL_GEOMS))

    def check(self) -> None:
        cells = self.board_size ** 2
        if not (2 <= self.board_size <= 9):
            raise GenerationError(f"board size {self.board_size}: expected 2..9")
        if not self.geoms or min(self.geoms) < 1 or max(self.geoms) > min(len(self.geom_pool), cells - 2):
            raise GenerationError(f"geoms {list(self.geoms)}: each must be 1..{min(len(self.geom_pool), cells - 2)} "
                                  f"(distinct colour-shape pairs, and two free cells so every board can be solved)")
        if not self.c1 or min(self.c1) < 1:
            raise GenerationError(f"c1 {list(self.c1)}: shortest path lengths must be at least 1")
        if self.per_cell < 1 or self.c2 < 0:
            raise GenerationError("per_cell must be at least 1 and c2 at least 0")

    def to_json(self) -> dict:
        d = asdict(self)
        d["geoms"], d["c1"], d["geom_pool"] = list(self.geoms), list(self.c1), list(self.geom_pool)
        return d


def episode_id(n_geoms: int, c1: int, index: int) -> str:
    return f"sgp-g{n_geoms:02d}-c{c1:02d}-{index}"


def _rng(seed: int, *parts: object) -> random.Random:
    """A stream keyed by text: stable across Python versions and processes (no hash())."""
    return random.Random(":".join(["sgp", str(seed), *map(str, parts)]))


def _walk(goal: Board, c1: int, c2: int, max_walk: int, rng: random.Random) -> Board | None:
    """Walk back from the goal until the distance is c1 with interference c2; give up once the walk has
    gone past c1 (the distance moves by ±1 per move, so it met c1 on the way) or after max_walk moves.
    Giving up early keeps every A* call on a board at most c1 + 1 from the goal."""
    board = goal
    for _ in range(max_walk):
        mv = rng.choice(legal_moves(board))
        board = board.moved(mv.index, mv.to)
        d = astar_distance(board, goal)
        if d > c1:
            return None
        if d == c1 and interference(board, goal) == c2:
            return board
    return None


def generate_episode(params: BuildParams, n_geoms: int, c1: int, index: int, taken: set[str]) -> Episode:
    """One episode of (n_geoms, c1) whose (start, goal) pair is not in `taken` (which it joins)."""
    pool = [g for g in ALL_GEOMS if g.name in params.geom_pool]
    cells = [(c, r) for r in range(params.board_size) for c in range(params.board_size)]
    for attempt in range(params.max_attempts):
        rng = _rng(params.seed, n_geoms, c1, index, attempt)
        goal = Board.of(params.board_size, dict(zip(rng.sample(pool, n_geoms), rng.sample(cells, n_geoms))))
        start = _walk(goal, c1, params.c2, params.max_walk, rng)
        if start is None:
            continue
        key = json.dumps([start.to_state(), goal.to_state()], sort_keys=True)
        if key in taken:
            continue
        taken.add(key)
        return Episode.of(episode_id(n_geoms, c1, index), start, goal, c1, params.c2)
    raise GenerationError(f"no new episode with {n_geoms} geoms, c1 = {c1}, c2 = {params.c2} on a "
                          f"{params.board_size}x{params.board_size} board after {params.max_attempts} attempts")


def generate_episodes(params: BuildParams) -> list[Episode]:
    """The whole composition, in (geoms, c1, index) order; deterministic for the same parameters."""
    params.check()
    taken: set[str] = set()
    return [generate_episode(params, n, c1, k, taken)
            for n in params.geoms for c1 in params.c1 for k in range(params.per_cell)]
