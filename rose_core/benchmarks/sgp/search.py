"""Exact shortest paths between boards: A* with the Manhattan heuristic, and BFS to check it.

One move slides one geom one cell into a free cell. The heuristic (sum over geoms of the Manhattan distance
to the geom's goal cell) is admissible and consistent (a move changes it by exactly 1), so A* returns the
exact distance. Every move changes the Manhattan sum by ±1, so every path to the goal has the parity of that
sum: a legal move changes the exact distance by exactly ±1, never 0. The dataset's interference is
c2 = (distance − Manhattan sum) / 2.

Searches run on position tuples (cell index `row * size + column` per geom, in the boards' canonical geom
order); distances are cached per (start, goal), because agents and the play engine ask about the same
boards again and again.
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from functools import lru_cache

from .board import DIRECTIONS, Board, Cell, Direction, Geom, same_geoms

Key = tuple[int, ...]
MAX_EXPANSIONS = 5_000_000   # a search beyond this is refused loudly instead of running for hours


class SearchLimit(RuntimeError):
    """A search expanded more boards than allowed: the distance is unknown, not guessed."""


@dataclass(frozen=True)
class Move:
    """One legal move: geom `index` of the board slides `direction` onto `to`."""

    index: int
    geom: Geom
    direction: Direction
    to: Cell


def legal_moves(board: Board) -> list[Move]:
    """Every move that lands on a free cell on the board, in a fixed order (geom, then up/down/left/right)."""
    taken = set(board.cells)
    out = []
    for i, (g, (c, r)) in enumerate(zip(board.geoms, board.cells)):
        for d, (dc, dr) in DIRECTIONS.items():
            to = (c + dc, r + dr)
            if 0 <= to[0] < board.size and 0 <= to[1] < board.size and to not in taken:
                out.append(Move(i, g, d, to))  # type: ignore[arg-type]
    return out


def manhattan(board: Board, goal: Board) -> int:
    same_geoms(board, goal)
    return sum(abs(a[0] - b[0]) + abs(a[1] - b[1]) for a, b in zip(board.cells, goal.cells))


def _key(board: Board) -> Key:
    return tuple(r * board.size + c for c, r in board.cells)


@lru_cache(maxsize=8)
def _neighbours(size: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per cell index: (direction number, neighbour index) for the in-bounds neighbours."""
    out = []
    for idx in range(size * size):
        c, r = idx % size, idx // size
        nb = []
        for k, (dc, dr) in enumerate(DIRECTIONS.values()):
            if 0 <= c + dc < size and 0 <= r + dr < size:
                nb.append((k, (r + dr) * size + c + dc))
        out.append(tuple(nb))
    return tuple(out)


def _heuristic_table(size: int, goal: Key) -> list[list[int]]:
    """h[i][cell] = Manhattan distance from cell to geom i's goal cell."""
    return [[abs(cell % size - g % size) + abs(cell // size - g // size) for cell in range(size * size)] for g in goal]


def _astar(size: int, start: Key, goal: Key, want_path: bool,
           bound: int | None = None) -> tuple[int, list[tuple[int, int]]] | None:
    """(distance, [(geom index, direction number), …]) by A*; ties on f prefer the deeper board. With a
    `bound`: None as soon as every board left has f > bound (f never decreases: the heuristic is consistent),
    i.e. when the distance is more than `bound`."""
    if start == goal:
        return 0, []
    nbs = _neighbours(size)
    h = _heuristic_table(size, goal)
    h0 = sum(h[i][p] for i, p in enumerate(start))
    g_of: dict[Key, int] = {start: 0}
    parent: dict[Key, tuple[Key, int, int]] = {}
    heap: list[tuple[int, int, Key]] = [(h0, 0, start)]
    expanded = 0
    n = len(start)
    while heap:
        f, neg_g, key = heapq.heappop(heap)
        if bound is not None and f > bound:
            return None
        g = -neg_g
        if g != g_of.get(key):
            continue  # a stale entry: this board was reached more cheaply since
        if key == goal:
            path: list[tuple[int, int]] = []
            if want_path:
                while key != start:
                    key, i, d = parent[key]
                    path.append((i, d))
                path.reverse()
            return g, path
        expanded += 1
        if expanded > MAX_EXPANSIONS:
            raise SearchLimit(f"A* expanded more than {MAX_EXPANSIONS:,} boards without reaching the goal")
        hk = f - g
        taken = set(key)
        for i in range(n):
            p = key[i]
            hi = h[i]
            for d, q in nbs[p]:
                if q in taken:
                    continue
                nk = key[:i] + (q,) + key[i + 1:]
                ng = g + 1
                if ng < g_of.get(nk, 1 << 30):
                    g_of[nk] = ng
                    if want_path:
                        parent[nk] = (key, i, d)
                    heapq.heappush(heap, (ng + hk - hi[p] + hi[q], -ng, nk))
    raise ValueError("the goal cannot be reached from this board")


_known: dict[tuple[int, Key, Key], int] = {}
CACHE_SIZE = 500_000


def _remember(k: tuple[int, Key, Key], d: int) -> int:
    if len(_known) >= CACHE_SIZE:
        _known.clear()
    _known[k] = d
    return d


def astar_distance(board: Board, goal: Board) -> int:
    """The exact number of moves from `board` to `goal` (A*, Manhattan heuristic; cached)."""
    same_geoms(board, goal)
    k = (board.size, _key(board), _key(goal))
    d = _known.get(k)
    if d is None:
        d = _remember(k, _astar(*k, False)[0])  # type: ignore[index]
    return d


def distance_after_move(moved: Board, goal: Board, before: int) -> int:
    """The exact distance of a board one legal move away from a board at distance `before`.

    It is before − 1 or before + 1 (see the module's note on parity), so one search bounded at before − 1
    decides it: found, it is before − 1; not found, before + 1. The bounded search never expands the last
    layer a full A* would for a move away from the goal."""
    same_geoms(moved, goal)
    k = (moved.size, _key(moved), _key(goal))
    d = _known.get(k)
    if d is None:
        found = _astar(*k, False, bound=before - 1) if before > 0 else None
        d = _remember(k, before - 1 if found is not None else before + 1)
    return d


def astar_path(board: Board, goal: Board) -> list[Move]:
    """One shortest sequence of moves from `board` to `goal`, deterministic for the same boards."""
    same_geoms(board, goal)
    _, steps = _astar(board.size, _key(board), _key(goal), True)  # type: ignore[misc]
    names = list(DIRECTIONS)
    out = []
    for i, d in steps:
        c, r = board.cells[i]
        dc, dr = DIRECTIONS[names[d]]
        mv = Move(i, board.geoms[i], names[d], (c + dc, r + dr))  # type: ignore[arg-type]
        out.append(mv)
        board = board.moved(i, mv.to)
    return out


def bfs_distance(board: Board, goal: Board, limit: int = 2_000_000) -> int:
    """The exact distance by breadth-first search: slow, heuristic-free; the reference A* is tested against."""
    same_geoms(board, goal)
    size, start, target = board.size, _key(board), _key(goal)
    if start == target:
        return 0
    nbs = _neighbours(size)
    seen = {start}
    frontier = deque([(start, 0)])
    while frontier:
        key, dist = frontier.popleft()
        taken = set(key)
        for i, p in enumerate(key):
            for _, q in nbs[p]:
                if q in taken:
                    continue
                nk = key[:i] + (q,) + key[i + 1:]
                if nk == target:
                    return dist + 1
                if nk not in seen:
                    if len(seen) >= limit:
                        raise SearchLimit(f"BFS visited more than {limit:,} boards")
                    seen.add(nk)
                    frontier.append((nk, dist + 1))
    raise ValueError("the goal cannot be reached from this board")


def interference(board: Board, goal: Board) -> int:
    """c2 = (exact distance − Manhattan sum) / 2: how much the geoms stand in each other's way."""
    d, m = astar_distance(board, goal), manhattan(board, goal)
    assert (d - m) % 2 == 0, "a distance with the wrong parity: the search is broken"
    return (d - m) // 2
