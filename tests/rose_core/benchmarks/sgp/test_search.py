import random

import pytest

from rose_core.benchmarks.sgp import (
    ALL_GEOMS, Board, astar_distance, astar_path, bfs_distance, distance_after_move, interference, legal_moves,
    manhattan,
)

from .helpers import board


def _random_pair(rng: random.Random, size: int, n: int) -> tuple[Board, Board]:
    cells = [(c, r) for r in range(size) for c in range(size)]
    geoms = rng.sample(ALL_GEOMS, n)
    return (Board.of(size, dict(zip(geoms, rng.sample(cells, n)))),
            Board.of(size, dict(zip(geoms, rng.sample(cells, n)))))


@pytest.mark.parametrize("size, n, pairs", [(2, 1, 6), (2, 2, 6), (3, 2, 12), (3, 4, 12), (3, 6, 4), (3, 7, 2),
                                             (4, 2, 12), (4, 3, 12)])
def test_astar_equals_bfs_on_small_boards(size, n, pairs):
    """Random start/goal pairs; 3x3 with 7 geoms (two free cells) is where interference is densest and BFS
    explores up to 181,440 boards per pair."""
    rng = random.Random(f"astar-bfs-{size}-{n}")
    for _ in range(pairs):
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


def test_a_legal_move_changes_the_distance_by_exactly_one_and_the_bounded_search_knows_which_way():
    rng = random.Random("parity")
    for _ in range(20):
        start, goal = _random_pair(rng, 3, 5)
        d = bfs_distance(start, goal)
        for mv in legal_moves(start):
            moved = start.moved(mv.index, mv.to)
            truth = bfs_distance(moved, goal)
            assert abs(truth - d) == 1
            assert distance_after_move(moved, goal, d) == truth == astar_distance(moved, goal)


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
