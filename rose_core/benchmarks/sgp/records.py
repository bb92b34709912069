"""An SGP episode as stored in `episodes.jsonl`: start and goal of every geom, the complexity, the images.

A plain dataclass that round-trips through JSON, like ROSE's records: the dataset, the play engine, the
participant session and the log importer read the same lines.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .board import Board, board_from_state, coord

IMAGE_KEYS: tuple[str, ...] = ("start_2d", "start_3d", "goal_2d", "goal_3d")


@dataclass(frozen=True)
class EpisodeGeom:
    shape: str
    color: str
    start: str      # chess coordinate
    goal: str


@dataclass(frozen=True)
class Episode:
    """One puzzle: move every geom from `start` to `goal`; `c1` is the exact shortest path length (A*), `c2` the
    interference ((c1 − Manhattan sum) / 2)."""

    episode_id: str
    board_size: int
    c1: int
    c2: int
    geoms: tuple[EpisodeGeom, ...]
    images: dict[str, str] = field(default_factory=dict)          # IMAGE_KEYS -> dataset-relative PNG path
    image_sha256: dict[str, str] = field(default_factory=dict)
    # Where an imported episode came from and what `sgp export-configs` needs to write it back as it was
    # (`ivispar_configs`); empty for generated episodes, and then absent from the JSON line, so generated
    # datasets keep their bytes and hash.
    source: dict[str, Any] = field(default_factory=dict)

    @property
    def n_geoms(self) -> int:
        return len(self.geoms)

    def _state(self, which: str) -> dict[str, Any]:
        return {"board_size": self.board_size,
                "geoms": [{"color": g.color, "shape": g.shape, "coord": getattr(g, which)} for g in self.geoms]}

    def start_state(self) -> dict[str, Any]:
        return self.start_board().to_state()

    def goal_state(self) -> dict[str, Any]:
        return self.goal_board().to_state()

    def start_board(self) -> Board:
        return board_from_state(self._state("start"))

    def goal_board(self) -> Board:
        return board_from_state(self._state("goal"))

    @staticmethod
    def of(episode_id: str, start: Board, goal: Board, c1: int, c2: int) -> Episode:
        gs = tuple(EpisodeGeom(g.shape, g.color, coord(start.cells[i]), coord(goal.cells[i]))
                   for i, g in enumerate(start.geoms))
        return Episode(episode_id, start.size, c1, c2, gs)

    def to_json(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "board_size": self.board_size, "n_geoms": self.n_geoms,
                "c1": self.c1, "c2": self.c2,
                "geoms": [{"shape": g.shape, "color": g.color, "start": g.start, "goal": g.goal} for g in self.geoms],
                "images": dict(self.images), "image_sha256": dict(self.image_sha256),
                **({"source": self.source} if self.source else {})}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Episode:
        gs = tuple(EpisodeGeom(g["shape"], g["color"], g["start"], g["goal"]) for g in d["geoms"])
        return Episode(d["episode_id"], d["board_size"], d["c1"], d["c2"], gs, dict(d.get("images", {})),
                       dict(d.get("image_sha256", {})), dict(d.get("source", {})))
