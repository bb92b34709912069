"""The action grammar and what one action does to a board.

Grammar (iVISPAR): `move <colour> <shape> <direction>`, direction up/down/left/right; the 2D modality's
shape names (square, circle, triangle, hexagon) name the same geoms. A model writes free text ending with
`action: move …`: the command is the rest of the line after the LAST `action:`; a text without `action:` is
itself the command (a participant typing one). Case, surrounding markdown (`*`, backticks, quotes) and
trailing punctuation are ignored; anything else off the grammar is an illegal command.

Outcomes (iVISPAR's classes, as documented in shared/research/ivispar.md):
  effective      a legal move after which the A* distance to the goal is lower (by exactly 1)
  ineffective    a legal move after which the distance grows (by exactly 1: a move always changes the
                 distance by ±1, see `search`)
  occupied       the destination cell holds another geom
  out_of_bounds  the destination is off the board
  illegal        not the grammar, or no such geom on the board
The last three leave the board unchanged; every action counts as a step.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from .board import (
    COLOURS, DIRECTIONS, KNOWN_COLOURS, KNOWN_SHAPES, SHAPE_2D, SHAPE_FROM_2D, SHAPES, Board, Colour, Direction, Geom,
    Shape, board_from_state, in_bounds,
)
from .search import astar_distance, distance_after_move

Outcome = Literal["effective", "ineffective", "occupied", "out_of_bounds", "illegal"]
OUTCOMES: tuple[Outcome, ...] = ("effective", "ineffective", "occupied", "out_of_bounds", "illegal")
VALID_OUTCOMES: frozenset[str] = frozenset({"effective", "ineffective"})   # the board changed

_ACTION_MARK = re.compile(r"(?<![a-z])action\s*:", re.IGNORECASE)   # not the end of "interaction:"
_STRIP = "*`\"'_.,;:!?()[]{}<> \t"


@dataclass(frozen=True)
class Action:
    """A well-formed command: which geom, which way."""

    color: Colour
    shape: Shape
    direction: Direction

    @property
    def geom(self) -> Geom:
        return Geom(self.color, self.shape)

    def command(self) -> str:
        """The canonical command string (3D shape names): what every solver's move is stored as."""
        return f"move {self.color} {self.shape} {self.direction}"


@dataclass(frozen=True)
class ParsedAction:
    """The command found in a text, and its parse (`action` None: illegal, `error` says why)."""

    command: str
    action: Action | None
    error: str | None


def find_command(text: str) -> str:
    """The text after the last `action:` up to the end of its line; the whole text when there is none."""
    marks = list(_ACTION_MARK.finditer(text))
    if marks:
        lines = [ln for ln in text[marks[-1].end():].splitlines() if ln.strip(" \t*`")]
        text = lines[0] if lines else ""
    return text.strip(" \t*")


def parse_action(text: str) -> ParsedAction:
    """Parse free text (a model's reply or a typed command) into an `Action`, or say why it is illegal."""
    cmd = find_command(text)
    words = [w.strip(_STRIP).lower() for w in cmd.split()]
    words = [w for w in words if w]
    if not words:
        return ParsedAction(cmd, None, "no command" if not _ACTION_MARK.search(text) else "nothing after 'action:'")
    if len(words) != 4 or words[0] != "move":
        return ParsedAction(cmd, None, "expected 'move <colour> <shape> <direction>'")
    _, color, shape, direction = words
    shape = SHAPE_FROM_2D.get(shape, shape)
    # Words of geoms the original's engine knows parse (iVISPAR's own configs use them); on a board without
    # such a geom the move is still illegal ("there is no … on the board").
    if color not in KNOWN_COLOURS:
        return ParsedAction(cmd, None, f"unknown colour {color!r} (expected one of {', '.join(COLOURS)})")
    if shape not in KNOWN_SHAPES:
        return ParsedAction(cmd, None, f"unknown shape {shape!r} (expected one of {', '.join(SHAPES)} or "
                                       f"{', '.join(SHAPE_2D[s] for s in SHAPES)})")
    if direction not in DIRECTIONS:
        return ParsedAction(cmd, None, f"unknown direction {direction!r} (expected up, down, left or right)")
    return ParsedAction(cmd, Action(color, shape, direction), None)  # type: ignore[arg-type]


MOVE_SEPARATOR = ","   # iVISPAR's human interface split a typed line on commas, one command each


def split_moves(text: str) -> list[str]:
    """The commands of one typed submission, as iVISPAR's humans typed several: the text split on commas, each
    part stripped; blank parts (a trailing comma, two commas in a row) are not moves. Each part is then parsed
    on its own, strictly (`parse_action`), and counts as one step."""
    return [part.strip() for part in text.split(MOVE_SEPARATOR) if part.strip()]


def allowed_words(shape_names: Literal["2d", "3d"] = "3d") -> dict[str, list[str]]:
    """The words a typed command is made of, as the modality names the shapes (the 2D names in 2D): what a
    participant who types sees listed next to the field."""
    shapes = [SHAPE_2D[s] for s in SHAPES] if shape_names == "2d" else list(SHAPES)
    return {"verb": ["move"], "colours": list(COLOURS), "shapes": shapes, "directions": list(DIRECTIONS)}


@dataclass(frozen=True)
class BoardStep:
    """`step_board`'s result on `Board`s (the engine's fast path)."""

    board: Board
    outcome: Outcome
    parsed: ParsedAction
    distance: int          # A* distance from the resulting board to the goal
    error: str | None


def step_board(board: Board, text: str, goal: Board, distance_before: int | None = None) -> BoardStep:
    """Apply one action text to `board`; classify it against `goal`."""
    parsed = parse_action(text)
    before = astar_distance(board, goal) if distance_before is None else distance_before
    a = parsed.action
    if a is None:
        return BoardStep(board, "illegal", parsed, before, parsed.error)
    cell = board.cell_of(a.geom)
    if cell is None:
        return BoardStep(board, "illegal", parsed, before, f"there is no {a.geom.name} on the board")
    dc, dr = DIRECTIONS[a.direction]
    to = (cell[0] + dc, cell[1] + dr)
    if not in_bounds(to, board.size):
        return BoardStep(board, "out_of_bounds", parsed, before, f"{a.geom.name} cannot move {a.direction}: edge of the board")
    other = board.occupant(to)
    if other is not None:
        return BoardStep(board, "occupied", parsed, before, f"{a.geom.name} cannot move {a.direction}: {other.name} is there")
    new = board.moved(board.geoms.index(a.geom), to)
    after = distance_after_move(new, goal, before)
    return BoardStep(new, "effective" if after < before else "ineffective", parsed, after, None)


@dataclass(frozen=True)
class StepResult:
    """What one action did: the new state (JSON; unchanged unless effective/ineffective), its outcome class,
    the canonical command (None if illegal), the A* distance to the goal after it, and the reason an
    invalid action was refused."""

    state: dict[str, Any]
    outcome: Outcome
    command: str | None
    distance: int
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.outcome in VALID_OUTCOMES


def apply_action(state: dict[str, Any], text: str, goal: dict[str, Any]) -> StepResult:
    """Apply one action text (a command, or free text ending with `action: …`) to a JSON state.

    The goal is needed to tell effective from ineffective moves."""
    s = step_board(board_from_state(state), text, board_from_state(goal))
    cmd = s.parsed.action.command() if s.parsed.action else None
    return StepResult(s.board.to_state(), s.outcome, cmd, s.distance, s.error)
