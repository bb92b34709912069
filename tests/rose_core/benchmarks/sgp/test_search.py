import random

import pytest

from rose_core.benchmarks.sgp import (
    ALL_GEOMS, Board, astar_distance, astar_path, bfs_distance, interference, legal_moves, manhattan,
)

from .helpers import board


def _random_pair(rng: random.Random, size: int, n: int) -> tuple[Board, Board]:
    cells = [(c, r) for r in range(size) for c in range(size)]
    geoms = rng.sample(ALL_GEOMS, n)
    return (Board.of(size, dict(zip(geoms, rng.sample(cells, n)))),
            Board.of(size, dict(zip(geoms, rng.sample(cells, n)))))


@pytest.mark.parametrize("size, n", [(2, 1), (2, 2), (3, 2), (3, 4), (3, 6), (3, 7), (4, 2), (4, 3)])
def test_astar_equals_bfs_on_small_boards(size, n):
    rng = random.Random(f"astar-bfs-{size}-{n}")
    for _ in range(12 if size > 2 else 6):
        start, goal = _random_pair(rng, size, n)
        d = astar_distance(start, goal)
        assert d == bfs_distance(start, goal)
        assert d >= manhattan(start, goal)
        path = astar_path(start, goal)
        assert len(path) == d
        b = start
        for mv in path:
            assert mv in legal_moves(b)
            b = b.moved(mv.index, mv.to)
        assert b == goal


def test_a_legal_move_changes_the_distance_by_exactly_one():
    rng = random.Random("parity")
    for _ in range(20):
        start, goal = _random_pair(rng, 3, 5)
        d = astar_distance(start, goal)
        for mv in legal_moves(start):
            assert abs(astar_distance(start.moved(mv.index, mv.to), goal) - d) == 1


def test_interference_counts_the_detour():
    # the sphere must pass the cube standing on its goal row: 2 extra moves → c2 = 1
    start, goal = board(3, blue_sphere="A1", red_cube="B1"), board(3, blue_sphere="C1", red_cube="B1")
    assert manhattan(start, goal) == 2
    assert astar_distance(start, goal) == 4 == bfs_distance(start, goal)
    assert interference(start, goal) == 1
    assert interference(goal, goal) == 0


def test_path_is_deterministic():
    start, goal = _random_pair(random.Random(5), 4, 6)
    assert astar_path(start, goal) == astar_path(start, goal)
