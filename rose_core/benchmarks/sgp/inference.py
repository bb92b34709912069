"""The auxiliary board-state inference task: a solver writes the board as text; we score it against the truth.

The answer is the text after the last `board:` line marker (the whole text when there is none). Each
non-empty line (or comma/semicolon-separated item) must be one geom triplet `<colour> <shape> <coordinate>`,
optionally with `:` / `at` / `-` before the coordinate and a list bullet before it (the text observation's
own format, `red cube: A1`; `A1: red cube` is accepted too, and the 2D shape names). Anything else — an empty-cell mention, an unknown
colour or shape, a coordinate off the board, a line of prose — is one format error.

Matching (iVISPAR): predicted and true geoms are paired by the Hungarian algorithm
(`scipy.optimize.linear_sum_assignment`), a pair being allowed only when the two share colour or shape. The
cost prefers as many allowed pairs as possible, then the fewest mismatching attributes. A pair that agrees on
colour, shape and coordinate is correct; otherwise it counts one coordinate, colour and/or shape mismatch for
each attribute that differs. True geoms left unpaired are missed; predicted ones, hallucinated.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from .board import COLOURS, SHAPE_FROM_2D, SHAPES, BoardError, board_from_state, coord, parse_coord

_MARK = re.compile(r"^[ \t*#>`_]*board[ \t*`_]*:", re.IGNORECASE | re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s*")
_ITEM = re.compile(r"^([a-z]+)\s+([a-z]+)\s*(?::|-|\bat\b)?\s*([a-z][0-9]+)$")
_ITEM_COORD_FIRST = re.compile(r"^([a-z][0-9]+)\s*(?::|-)?\s*([a-z]+)\s+([a-z]+)$")
_NOT_ALLOWED = 100   # above any sum of real costs (≤ 3 per pair, ≤ 16 pairs): allowed pairs come first


@dataclass(frozen=True)
class Triplet:
    color: str
    shape: str
    coord: str


@dataclass(frozen=True)
class InferenceScore:
    truth: int
    predicted: int
    correct: int
    missed: int
    hallucinated: int
    coord_errors: int
    color_errors: int
    shape_errors: int
    format_errors: int
    format_problems: tuple[str, ...]
    pairs: tuple[tuple[Triplet, Triplet], ...]     # (true, predicted), matched

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["pairs"] = [[asdict(a), asdict(b)] for a, b in self.pairs]
        return d


def parse_board_text(text: str, size: int) -> tuple[list[Triplet], list[str]]:
    """The predicted triplets and one message per item that is not a valid triplet."""
    marks = list(_MARK.finditer(text))
    body = text[marks[-1].end():] if marks else text
    preds: list[Triplet] = []
    problems: list[str] = []
    for line in body.splitlines():
        for item in re.split(r"[,;]", line):
            raw = _BULLET.sub("", item).strip().strip("*`_\"'.").strip()
            if not raw:
                continue
            words = re.sub(r"[*`_\"']", "", raw).lower()
            m, m2 = _ITEM.match(words), _ITEM_COORD_FIRST.match(words)
            if m:
                color, shape, where = m.group(1), m.group(2), m.group(3)
            elif m2:
                where, color, shape = m2.group(1), m2.group(2), m2.group(3)
            else:
                problems.append(f"{raw!r}: not '<colour> <shape>: <coordinate>'")
                continue
            shape = SHAPE_FROM_2D.get(shape, shape)
            if color not in COLOURS or shape not in SHAPES:
                problems.append(f"{raw!r}: unknown colour or shape")
                continue
            try:
                cell = parse_coord(where, size)
            except BoardError:
                problems.append(f"{raw!r}: coordinate off the {size}x{size} board")
                continue
            preds.append(Triplet(color, shape, coord(cell)))
    return preds, problems


def _cost(t: Triplet, p: Triplet) -> int:
    if t.color != p.color and t.shape != p.shape:
        return _NOT_ALLOWED
    return (t.color != p.color) + (t.shape != p.shape) + (t.coord != p.coord)


def score_inference(truth_state: dict[str, Any], text: str) -> InferenceScore:
    """Score a predicted board (text) against the true state (JSON)."""
    b = board_from_state(truth_state)
    truth = [Triplet(g.color, g.shape, coord(c)) for g, c in zip(b.geoms, b.cells)]
    preds, problems = parse_board_text(text, b.size)
    pairs: list[tuple[Triplet, Triplet]] = []
    if truth and preds:
        cost = np.array([[_cost(t, p) for p in preds] for t in truth])
        rows, cols = linear_sum_assignment(cost)
        pairs = [(truth[i], preds[j]) for i, j in zip(rows, cols) if cost[i, j] < _NOT_ALLOWED]
    correct = sum(t == p for t, p in pairs)
    return InferenceScore(
        truth=len(truth), predicted=len(preds), correct=correct, missed=len(truth) - len(pairs),
        hallucinated=len(preds) - len(pairs),
        coord_errors=sum(t.coord != p.coord for t, p in pairs), color_errors=sum(t.color != p.color for t, p in pairs),
        shape_errors=sum(t.shape != p.shape for t, p in pairs), format_errors=len(problems),
        format_problems=tuple(problems), pairs=tuple(pairs))
