"""iVISPAR's Sliding Geom Puzzle (SGP): an interactive benchmark of multi-step episodes.

Board and state (`board`), exact search (`search`), the action grammar and outcomes (`actions`), the
observations (`render`). See shared/research/ivispar.md for what iVISPAR measures; this is the project's own
implementation.
"""
from .actions import (
    OUTCOMES, VALID_OUTCOMES, Action, BoardStep, Outcome, ParsedAction, StepResult, apply_action, find_command,
    parse_action, step_board,
)
from .board import (
    ALL_GEOMS, COLOURS, DIRECTIONS, SHAPE_2D, SHAPE_FROM_2D, SHAPES, Board, BoardError, Cell, Colour, Direction, Geom,
    Shape, StateKind, board_from_state, coord, parse_coord,
)
from .render import (
    BACKGROUND, GEOM_RGB, KIND_LABEL, MODALITIES, Modality, render, render_2d, render_3d, render_png, render_text,
    text_lines,
)
from .search import Move, SearchLimit, astar_distance, astar_path, bfs_distance, interference, legal_moves, manhattan

__all__ = [
    "OUTCOMES", "VALID_OUTCOMES", "Action", "BoardStep", "Outcome", "ParsedAction", "StepResult", "apply_action",
    "find_command", "parse_action", "step_board",
    "ALL_GEOMS", "COLOURS", "DIRECTIONS", "SHAPE_2D", "SHAPE_FROM_2D", "SHAPES", "Board", "BoardError", "Cell",
    "Colour", "Direction", "Geom", "Shape", "StateKind", "board_from_state", "coord", "parse_coord",
    "BACKGROUND", "GEOM_RGB", "KIND_LABEL", "MODALITIES", "Modality", "render", "render_2d", "render_3d",
    "render_png", "render_text", "text_lines",
    "Move", "SearchLimit", "astar_distance", "astar_path", "bfs_distance", "interference", "legal_moves", "manhattan",
]
