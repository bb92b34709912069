"""Crafted boards for the SGP tests, written the way a reader checks them: geom name → chess coordinate."""
from __future__ import annotations

from rose_core.benchmarks.sgp import Board, Geom, parse_coord


def board(size: int = 4, **where: str) -> Board:
    """board(red_cube="A1", blue_sphere="B2") → a Board."""
    placement = {}
    for name, c in where.items():
        color, shape = name.split("_")
        placement[Geom(color, shape)] = parse_coord(c, size)  # type: ignore[arg-type]
    return Board.of(size, placement)


def state(size: int = 4, **where: str) -> dict:
    return board(size, **where).to_state()
