"""The Sliding Geom Puzzle's board: geoms (shape × colour), chess coordinates and the JSON state.

A state is a plain JSON-able dict, because the dataset, the participant session, the episode logs and the
renderers all pass it around: `{"board_size": 4, "geoms": [{"color", "shape", "coord"}, …]}` with the geoms
in canonical order (colour, then shape, in the order of `KNOWN_COLOURS` and `KNOWN_SHAPES`, which start with
the paper's `COLOURS` and `SHAPES`). Coordinates are chess style,
as in iVISPAR: columns A… left to right, rows 1… bottom to top, "A1" is bottom-left; `up` is row + 1 and
`right` is column + 1. Inside the package a state is a `Board` (frozen; cells are 0-based (column, row)).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Shape = Literal["cube", "pyramid", "sphere", "cylinder", "cone", "prism"]
Colour = Literal["red", "green", "blue", "yellow", "cyan", "darkblue", "lightblue", "purple", "lime", "fuchsia",
                 "white", "silver", "grey", "black", "orange", "brown", "maroon", "olive", "navy", "teal", "aqua",
                 "magenta"]
Direction = Literal["up", "down", "left", "right"]
StateKind = Literal["active", "goal", "past"]

# The paper's 16 geoms: what `sgp build` draws from by default and what the prompts name.
SHAPES: tuple[Shape, ...] = ("cube", "pyramid", "sphere", "cylinder")
COLOURS: tuple[Colour, ...] = ("red", "green", "blue", "yellow")
# Everything else iVISPAR's engine can place, so its own configs (`ivispar_configs`) can be read: the two
# further bodies its level loader instantiates, and the colour names its loader parses (Unity's
# ColorUtility.TryParseHtmlString; hex colours are not names a command can say, so they stay out).
EXTRA_SHAPES: tuple[Shape, ...] = ("cone", "prism")
EXTRA_COLOURS: tuple[Colour, ...] = ("cyan", "darkblue", "lightblue", "purple", "lime", "fuchsia", "white", "silver",
                                     "grey", "black", "orange", "brown", "maroon", "olive", "navy", "teal", "aqua",
                                     "magenta")
KNOWN_SHAPES: tuple[Shape, ...] = SHAPES + EXTRA_SHAPES      # the paper's first: canonical order is unchanged
KNOWN_COLOURS: tuple[Colour, ...] = COLOURS + EXTRA_COLOURS
# The 2D schematic draws each 3D shape as a flat marker; prompts of the 2D modality use these names. The
# original's schematic has no marker of its own for cone and prism (it falls back to the sphere's circle);
# ours gives each a distinct one.
SHAPE_2D: dict[str, str] = {"cube": "square", "sphere": "circle", "pyramid": "triangle", "cylinder": "hexagon",
                            "cone": "star", "prism": "diamond"}
SHAPE_FROM_2D: dict[str, str] = {v: k for k, v in SHAPE_2D.items()}
DIRECTIONS: dict[str, tuple[int, int]] = {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}
MIN_BOARD, MAX_BOARD = 2, 9   # one letter and one digit per coordinate

Cell = tuple[int, int]   # (column, row), 0-based; (0, 0) is A1


class BoardError(ValueError):
    """A state or coordinate that is not a valid board (named field, what was expected)."""


@dataclass(frozen=True, order=True)
class Geom:
    """One piece: its identity is the (colour, shape) pair, unique on a board."""

    color: Colour
    shape: Shape

    @property
    def name(self) -> str:
        return f"{self.color} {self.shape}"

    def sort_key(self) -> tuple[int, int]:
        return KNOWN_COLOURS.index(self.color), KNOWN_SHAPES.index(self.shape)

    @property
    def is_paper(self) -> bool:
        """One of the paper's 16 geoms."""
        return self.color in COLOURS and self.shape in SHAPES


ALL_GEOMS: tuple[Geom, ...] = tuple(Geom(c, s) for c in COLOURS for s in SHAPES)          # the paper's 16
KNOWN_GEOMS: tuple[Geom, ...] = tuple(Geom(c, s) for c in KNOWN_COLOURS for s in KNOWN_SHAPES)


def coord(cell: Cell) -> str:
    """(column, row) 0-based → "A1"."""
    return f"{chr(ord('A') + cell[0])}{cell[1] + 1}"


def parse_coord(text: str, size: int) -> Cell:
    """"A1" (any case, surrounding spaces allowed) → (0, 0); refuses anything off an n×n board."""
    t = text.strip().upper()
    if len(t) != 2 or not t[0].isalpha() or not t[1].isdigit():
        raise BoardError(f"coordinate {text!r}: expected a column letter and a row digit, e.g. 'A1'")
    cell = (ord(t[0]) - ord("A"), int(t[1]) - 1)
    if not (0 <= cell[0] < size and 0 <= cell[1] < size):
        raise BoardError(f"coordinate {text!r} is off the {size}x{size} board (A1..{coord((size - 1, size - 1))})")
    return cell


def in_bounds(cell: Cell, size: int) -> bool:
    return 0 <= cell[0] < size and 0 <= cell[1] < size


@dataclass(frozen=True)
class Board:
    """A board: `geoms[i]` stands on `cells[i]`; geoms in canonical order, so equal boards are equal tuples."""

    size: int
    geoms: tuple[Geom, ...]
    cells: tuple[Cell, ...]

    @staticmethod
    def of(size: int, placement: dict[Geom, Cell]) -> Board:
        """A validated board from {geom: cell}."""
        if not (MIN_BOARD <= size <= MAX_BOARD):
            raise BoardError(f"board_size {size}: expected {MIN_BOARD}..{MAX_BOARD}")
        items = sorted(placement.items(), key=lambda kv: kv[0].sort_key())
        cells = [c for _, c in items]
        for g, c in items:
            if g.color not in KNOWN_COLOURS or g.shape not in KNOWN_SHAPES:
                raise BoardError(f"geom {g.name!r}: colour must be one of {KNOWN_COLOURS}, shape one of {KNOWN_SHAPES}")
            if not in_bounds(c, size):
                raise BoardError(f"{g.name} at {c} is off the {size}x{size} board")
        if len(set(cells)) != len(cells):
            dup = next(c for c in cells if cells.count(c) > 1)
            raise BoardError(f"two geoms on {coord(dup)}")
        return Board(size, tuple(g for g, _ in items), tuple(cells))

    def cell_of(self, geom: Geom) -> Cell | None:
        try:
            return self.cells[self.geoms.index(geom)]
        except ValueError:
            return None

    def occupant(self, cell: Cell) -> Geom | None:
        try:
            return self.geoms[self.cells.index(cell)]
        except ValueError:
            return None

    def placement(self) -> dict[Geom, Cell]:
        return dict(zip(self.geoms, self.cells))

    def moved(self, index: int, to: Cell) -> Board:
        """The board with geom `index` on `to` (no checks: callers checked legality)."""
        cells = list(self.cells)
        cells[index] = to
        return Board(self.size, self.geoms, tuple(cells))

    def free_cells(self) -> list[Cell]:
        taken = set(self.cells)
        return [(c, r) for r in range(self.size) for c in range(self.size) if (c, r) not in taken]

    def to_state(self) -> dict[str, Any]:
        return {"board_size": self.size,
                "geoms": [{"color": g.color, "shape": g.shape, "coord": coord(c)} for g, c in zip(self.geoms, self.cells)]}


def board_from_state(state: dict[str, Any]) -> Board:
    """The `Board` of a JSON state; every problem named (field, value, what was expected)."""
    if not isinstance(state, dict):
        raise BoardError(f"state: expected an object, got {type(state).__name__}")
    size = state.get("board_size")
    if not isinstance(size, int) or isinstance(size, bool):
        raise BoardError(f"board_size: expected an integer, got {size!r}")
    geoms = state.get("geoms")
    if not isinstance(geoms, list):
        raise BoardError(f"geoms: expected a list, got {type(geoms).__name__}")
    placement: dict[Geom, Cell] = {}
    for k, g in enumerate(geoms):
        if not isinstance(g, dict):
            raise BoardError(f"geoms[{k}]: expected an object with color, shape, coord")
        color, shape, where = g.get("color"), g.get("shape"), g.get("coord")
        if color not in KNOWN_COLOURS:
            raise BoardError(f"geoms[{k}].color: {color!r} is not one of {', '.join(KNOWN_COLOURS)}")
        if shape not in KNOWN_SHAPES:
            raise BoardError(f"geoms[{k}].shape: {shape!r} is not one of {', '.join(KNOWN_SHAPES)}")
        if not isinstance(where, str):
            raise BoardError(f"geoms[{k}].coord: expected a string like 'A1', got {where!r}")
        geom = Geom(color, shape)
        if geom in placement:
            raise BoardError(f"geoms[{k}]: {geom.name} appears twice (a colour-shape pair is unique)")
        try:
            placement[geom] = parse_coord(where, size)
        except BoardError as e:
            raise BoardError(f"geoms[{k}].coord: {e}") from None
    return Board.of(size, placement)


def vocabulary(board: Board) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The colour and shape words that name geoms when reading a solver's text about this board: the paper's
    when every geom is one of its 16 (so scores on the paper's boards stay what they were), else every word
    the original's engine knows."""
    if all(g.is_paper for g in board.geoms):
        return COLOURS, SHAPES
    return KNOWN_COLOURS, KNOWN_SHAPES


def same_geoms(a: Board, b: Board) -> None:
    """Refuse a pair of boards that do not hold the same geoms on the same board size."""
    if a.size != b.size:
        raise BoardError(f"board sizes differ: {a.size} vs {b.size}")
    if a.geoms != b.geoms:
        raise BoardError(f"the boards hold different geoms: {[g.name for g in a.geoms]} vs {[g.name for g in b.geoms]}")
