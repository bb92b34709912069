"""An SGP episode as the instrument's `EpisodeItem`: start, one move at a time, the scored result.

A participant's move is the command string a model writes (`move red cube up`, or any text ending in
`action: move …`), applied by the engine's `apply_action` with the same outcome classes, the same goal test
and, by default, the same step cap as the models (every move counts, invalid ones included). The result is
the episode's `ItemResult`: the move transcript, the canonical commands, and the per-step record (outcome,
d_t) in `parsed`, solved = passed.

What the board component needs from an episode is here too (`geoms`, `hit_cells`, `click_move`, images and
text of a state), so the instrument never reaches into the renderer's internals.
"""
from __future__ import annotations

import functools
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Sequence

from ..items import EpisodeEnd, ItemResult, ItemShape, Move, StepOutcome
from .actions import OUTCOMES, apply_action, parse_action
from .board import DIRECTIONS, SHAPE_2D, StateKind, board_from_state, coord, in_bounds
from .render import CellHit, Modality, cell_at, hit_map, render_png, render_text, text_lines
from .search import astar_distance

if TYPE_CHECKING:
    from .dataset import SgpDataset
    from .records import Episode

@functools.lru_cache(maxsize=4096)
def _hits(state_json: str, modality: str) -> tuple[CellHit, ...]:
    """A board's hit map, drawn once however often it is shown or clicked (3D: ~10-20 ms a board)."""
    return tuple(hit_map(json.loads(state_json), modality))  # type: ignore[arg-type]


def _hit_map(state: dict[str, Any], modality: str) -> tuple[CellHit, ...]:
    return _hits(json.dumps(board_from_state(state).to_state(), sort_keys=True), modality)


@dataclass(frozen=True)
class SgpItem:
    """One episode under a study's (or run's) modality and step cap. `goal_state` is shown to participants
    (the goal is part of the task, as for models); nothing here is secret."""

    item_id: str                        # the episode id
    board_size: int
    c1: int                             # shortest path length (A*), start to goal
    num_geoms: int
    start_state: dict[str, Any] = field(repr=False)
    goal_state: dict[str, Any] = field(repr=False)
    modality: Modality = "2d"
    step_cap: int | None = 20           # None: no cap
    shape: ItemShape = "episode"

    # ---- the EpisodeItem interface
    def start(self) -> dict[str, Any]:
        return board_from_state(self.start_state).to_state()

    def step(self, state: dict[str, Any], move: Move, steps_taken: int) -> StepOutcome:
        """Apply one move (free text, parsed as a model's reply is) to `state`; the episode ends when the board
        is the goal, or when this move reaches the cap."""
        if self.step_cap is not None and steps_taken >= self.step_cap:
            raise ValueError(f"episode {self.item_id}: move {steps_taken + 1} is past the step cap {self.step_cap}")
        r = apply_action(state, move.text, self.goal_state)
        end: EpisodeEnd | None = None
        if r.distance == 0:
            end = "solved"
        elif self.step_cap is not None and steps_taken + 1 >= self.step_cap:
            end = "step_cap"
        return StepOutcome(r.state, r.outcome, r.valid, end)

    def distance(self, state: dict[str, Any]) -> int:
        """d: the A* distance from `state` to the goal."""
        return astar_distance(board_from_state(state), board_from_state(self.goal_state))

    def result(self, moves: Sequence[Move], outcomes: Sequence[StepOutcome], given_up: bool = False) -> ItemResult:
        """The episode's scored result. `parsed` keeps the per-step record the metrics need (d_0 = c1, then d_t
        after every move), so an analysis never has to replay the engine."""
        if len(moves) != len(outcomes):
            raise ValueError(f"{len(moves)} moves but {len(outcomes)} outcomes")
        steps, distances = [], [self.c1]
        for m, o in zip(moves, outcomes):
            p = parse_action(m.text)
            d = distances[-1] if o.outcome not in ("effective", "ineffective") else self.distance(o.state)
            distances.append(d)
            steps.append({"seq": m.seq, "command": m.text, "canonical": p.action.command() if p.action else None,
                          "outcome": o.outcome, "distance": d})
        solved = bool(outcomes) and outcomes[-1].end == "solved"
        end = "solved" if solved else ("failed" if given_up or not outcomes or outcomes[-1].end is None
                                       else outcomes[-1].end)
        counts = Counter(o.outcome for o in outcomes)
        parsed = {"steps": steps, "distances": distances, "end": end, "given_up": given_up, "c1": self.c1,
                  "num_geoms": self.num_geoms, "step_cap": self.step_cap, "modality": self.modality,
                  "outcomes": {k: counts.get(k, 0) for k in OUTCOMES}}
        protocol = "; ".join(s["canonical"] or "illegal" for s in steps)
        errors = tuple(k for k in OUTCOMES if k != "effective" and counts.get(k))
        return ItemResult("\n".join(m.text for m in moves), protocol, parsed, "illegal" not in counts, solved,
                          None if solved else ("given_up" if given_up else end), errors)

    # ---- what the board component shows
    @property
    def shape_names(self) -> Literal["2d", "3d"]:
        return "2d" if self.modality == "2d" else "3d"

    def geoms(self, state: dict[str, Any]) -> list[dict[str, str]]:
        """The pieces on `state`, named as the modality names them ("red square" in 2D, "red cube" otherwise),
        with the name a command uses and their chess coordinate."""
        b = board_from_state(state)
        out = []
        for g, c in zip(b.geoms, b.cells):
            shape = SHAPE_2D[g.shape] if self.shape_names == "2d" else g.shape
            out.append({"name": f"{g.color} {shape}", "command_name": f"{g.color} {shape}", "coord": coord(c),
                        "color": g.color, "shape": g.shape})
        return out

    def hit_cells(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        """Every cell's click polygon on the image of `state` (render.hit_map, back to front), for the board
        component's click targets and highlights; the text modality has none."""
        return [] if self.modality == "text" else [h.to_json() for h in _hit_map(state, self.modality)]

    def click_move(self, state: dict[str, Any], text: str, frm: str, to: str, point: tuple[float, float]) -> None:
        """Check a move made by clicking a piece and then a cell of the board image against the board itself:
        the command names the piece standing on `frm`, `to` is the cell next to it in the command's direction,
        and the click at image pixel `point` lands on `to` (within a pixel) by this board's own hit map. Raises ValueError
        saying what disagrees (nothing the browser names is taken on trust)."""
        if self.modality == "text":
            raise ValueError("a text board has no cells to click")
        p = parse_action(text)
        if p.action is None:
            raise ValueError(f"{text!r} is not a move ({p.error})")
        b = board_from_state(state)
        at = dict(zip((coord(c) for c in b.cells), b.geoms))
        if at.get(frm) != p.action.geom:
            raise ValueError(f"the {p.action.geom.name} is not on {frm}")
        dc, dr = DIRECTIONS[p.action.direction]
        col, row = ord(frm[0]) - 65 + dc, int(frm[1:]) - 1 + dr
        if not in_bounds((col, row), b.size) or coord((col, row)) != to:
            raise ValueError(f"{to} is not the cell {p.action.direction} of {frm}")
        hits = _hit_map(state, self.modality)
        hit = cell_at(hits, *point)
        # the browser sends the point rounded to 0.1 px: on a polygon's very edge, a pixel's leeway
        near = {cell_at(hits, point[0] + dx, point[1] + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
        if to not in near:
            raise ValueError(f"the click at ({point[0]:.0f}, {point[1]:.0f}) is on {hit or 'no cell'}, not {to}")

    def png(self, state: dict[str, Any], kind: StateKind = "active") -> bytes:
        if self.modality == "text":
            raise ValueError("the text modality has no image")
        return render_png(state, self.modality, kind)

    def text(self, state: dict[str, Any]) -> str:
        return "\n".join(text_lines(state, self.shape_names))

    def describe(self, state: dict[str, Any], kind: StateKind = "active") -> str:
        return render_text(state, kind)

    @property
    def instruction(self) -> str:
        return ("Move the pieces one step at a time until your board looks exactly like the goal. A piece moves "
                "up, down, left or right into a free cell.")


def episode_item(ep: "Episode", modality: Modality = "2d", step_cap: int | None = 20) -> SgpItem:
    """The item of one episode record under a modality and a step cap."""
    return SgpItem(ep.episode_id, ep.board_size, ep.c1, ep.n_geoms, ep.start_state(), ep.goal_state(), modality,
                   step_cap)


def sgp_item(ds: "SgpDataset", episode_id: str, modality: Modality = "2d", step_cap: int | None = 20) -> SgpItem:
    try:
        ep = ds.episodes[episode_id]
    except KeyError:
        raise KeyError(f"episode {episode_id!r} is not in the SGP dataset {ds.dataset_hash[:12]}") from None
    return episode_item(ep, modality, step_cap)
