"""The auxiliary board-state inference task: a solver sees one board (an image in the 2D or 3D modality, or the
text observation) and writes it as text; we score it against the truth.

Items: the start and the goal board of every episode of a build (`inference_items`), named
`<episode_id>:start` / `<episode_id>:goal`. Answers are JSON lines (`read_answers`, the format
`rose_core.runs.sgp_inference` writes and any other harness can): `item_id` (or `episode_id` and `board`), `response`, and
optionally `solver`, `modality`, `sample`, `dataset_hash`, `latency_s`; every problem is named by file:line and
nothing is returned unless the whole file passed.

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

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ...common.problems import ProblemsError, checked_records
from .board import COLOURS, SHAPE_FROM_2D, SHAPES, BoardError, board_from_state, coord, parse_coord, vocabulary

if TYPE_CHECKING:
    from .dataset import SgpDataset

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


def parse_board_text(text: str, size: int, words: tuple[tuple[str, ...], tuple[str, ...]] = (COLOURS, SHAPES)
                     ) -> tuple[list[Triplet], list[str]]:
    """The predicted triplets and one message per item that is not a valid triplet; `words` are the colour and
    shape words that name a geom (`board.vocabulary`: the paper's, or every word of the original's engine)."""
    colours, shapes = words
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
            if color not in colours or shape not in shapes:
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
    preds, problems = parse_board_text(text, b.size, vocabulary(b))
    pairs: list[tuple[Triplet, Triplet]] = []
    if truth and preds:
        # imported here: every module that reaches the SGP package (the study configuration does) paid ~0.5 s for it
        from scipy.optimize import linear_sum_assignment

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


def score_counts(truth_state: dict[str, Any], text: str) -> dict[str, int]:
    """The counts of `score_inference` as plain columns (`COUNT_COLUMNS`)."""
    sc = score_inference(truth_state, text)
    return {k: getattr(sc, k) for k in COUNT_COLUMNS}


COUNT_COLUMNS: tuple[str, ...] = ("truth", "predicted", "correct", "missed", "hallucinated", "coord_errors",
                                  "color_errors", "shape_errors", "format_errors")

# --------------------------------------------------------------------------------------------- the task's items

WhichBoard = Literal["start", "goal"]
BOARDS: tuple[WhichBoard, ...] = ("start", "goal")
MAX_RESPONSE_CHARS = 1_000_000


@dataclass(frozen=True)
class InferenceItem:
    """One board to write down: an episode's start or goal placement."""

    item_id: str                       # "<episode_id>:<board>"
    episode_id: str
    board: WhichBoard
    state: dict[str, Any]
    n_geoms: int


def inference_item(ds: "SgpDataset", episode_id: str, board: WhichBoard) -> InferenceItem:
    ep = ds.episodes[episode_id]
    state = ep.start_state() if board == "start" else ep.goal_state()
    return InferenceItem(f"{episode_id}:{board}", episode_id, board, state, ep.n_geoms)


def inference_items(ds: "SgpDataset", boards: tuple[WhichBoard, ...] = BOARDS) -> list[InferenceItem]:
    """Every episode's boards, in the build's episode order."""
    return [inference_item(ds, eid, b) for eid in ds.episodes for b in boards]


# --------------------------------------------------------------------------------------------- answers

class InferenceFileError(ProblemsError):
    """A board-state inference answer file that does not hold valid answers (problems by file:line)."""


@dataclass(frozen=True)
class InferenceAnswer:
    """One solver's written board for one item (`sample` tells repeated answers apart)."""

    solver: str
    modality: str
    item_id: str
    episode_id: str
    board: WhichBoard
    sample: int
    response: str
    ms: float | None = None


def _answer_of(obj: Any, ds: "SgpDataset", solver: str | None,
               modality: str | None) -> tuple[InferenceAnswer | None, str | None]:
    if not isinstance(obj, dict):
        return None, f"expected a JSON object, got {type(obj).__name__}"
    h = obj.get("dataset_hash")
    if h is not None and h != ds.dataset_hash:
        return None, f"dataset_hash {h!r} is not this build's ({ds.dataset_hash})"
    item = obj.get("item_id")
    if item is not None:
        if not isinstance(item, str) or item.count(":") != 1:
            return None, f"item_id: expected '<episode_id>:start' or '<episode_id>:goal', got {item!r}"
        eid, board = item.split(":")
    else:
        eid, board = obj.get("episode_id"), obj.get("board")
        if not isinstance(eid, str) or not isinstance(board, str):
            return None, "expected item_id, or episode_id and board"
    if board not in BOARDS:
        return None, f"board: expected start or goal, got {board!r}"
    if eid not in ds.episodes:
        return None, f"episode_id {eid!r} is not in this build"
    who = obj.get("solver", solver)
    if not isinstance(who, str) or not who.strip():
        return None, "solver: missing (give it on the line or pass a default solver name)"
    how = obj.get("modality", modality)
    if how not in ("2d", "3d", "text"):
        return None, f"modality: expected 2d, 3d or text (on the line or as a default), got {how!r}"
    sample = obj.get("sample", 0)
    if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
        return None, f"sample: expected a non-negative integer, got {sample!r}"
    text = obj.get("response")
    if not isinstance(text, str):
        return None, f"response: expected the reply's text (a string), got {type(text).__name__}"
    if len(text) > MAX_RESPONSE_CHARS:
        return None, f"response: {len(text):,} characters, more than {MAX_RESPONSE_CHARS:,}"
    lat = obj.get("latency_s")
    if lat is not None and (isinstance(lat, bool) or not isinstance(lat, (int, float)) or not math.isfinite(lat)
                            or lat < 0):
        return None, f"latency_s: expected a non-negative number of seconds, got {lat!r}"
    return InferenceAnswer(who.strip(), how, f"{eid}:{board}", eid, board, sample, text,  # type: ignore[arg-type]
                           None if lat is None else 1000.0 * lat), None


def read_answers(path: Path | str, ds: "SgpDataset", solver: str | None = None,
                 modality: str | None = None) -> list[InferenceAnswer]:
    """Every answer in a JSON-lines file, checked; raises `InferenceFileError` naming file:line otherwise
    (`problems.checked_records`). `solver` and `modality` are the defaults for lines that do not say."""
    def check(obj: dict) -> tuple[InferenceAnswer | None, list[str]]:
        a, err = _answer_of(obj, ds, solver, modality)
        return a, [] if err is None else [err]

    out, problems = checked_records(Path(path), check, lambda a: (a.solver, a.modality, a.item_id, a.sample),
                                    lambda a: f"{a.solver!r} ({a.modality}) answer to {a.item_id} sample {a.sample}")
    if problems:
        raise InferenceFileError(problems)
    if not out:
        raise InferenceFileError([f"{path}: no answers in the file"])
    return out


def scored_rows(answers: list[InferenceAnswer], ds: "SgpDataset") -> list[dict[str, Any]]:
    """One row per answer with its item and the scorer's counts: the metrics' input (`metrics.inference_table`)."""
    rows = []
    for a in answers:
        item = inference_item(ds, a.episode_id, a.board)
        rows.append({"solver": a.solver, "modality": a.modality, "episode_id": a.episode_id, "item_id": a.item_id,
                     "board": a.board, "sample": a.sample, "n_geoms": item.n_geoms,
                     **score_counts(item.state, a.response)})
    return rows
