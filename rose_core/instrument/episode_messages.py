"""What the SGP board component sends (its CONTRACT with ui/sgp_board.js), read defensively: nothing a browser
sends is trusted. A message is refused whole (a `StudyError` naming the field, nothing stored) for a wrong type,
an unknown field or input, a sequence number or time out of range; repeats of stored moves are not errors (the
session skips them)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Sequence

from .config import StudyConfig, StudyError

MoveInput = Literal["click", "keyboard", "typed"]
MAX_COMMAND_CHARS = 200
MAX_SUBMISSION_CHARS = 2000               # sgp_several_moves: one typed line of several comma-separated moves
MAX_MOVES_PER_MESSAGE = 50
MAX_SEQ = 100_000
MAX_MS = 7 * 24 * 3600 * 1000.0
MESSAGE_FIELDS = frozenset({"view_id", "moves", "give_up", "active_ms", "first_action_ms"})
MOVE_FIELDS = frozenset({"seq", "text", "input", "t", "active_ms", "click"})


@dataclass(frozen=True)
class BoardMove:
    seq: int
    text: str
    input: MoveInput
    t: float | None
    active_ms: float | None
    click: tuple[str, str, float, float] | None = None  # a board click: (piece's cell, cell clicked, x, y in px)


@dataclass(frozen=True)
class BoardMessage:
    view_id: str
    moves: tuple[BoardMove, ...]
    give_up: int | None                   # the seq at which the participant gave up (no-cap studies only)


def _err(what: str) -> StudyError:
    return StudyError(f"malformed message from the browser: {what}")


def _ms(v: Any, what: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= MAX_MS:
        raise _err(f"{what}: expected a number of milliseconds, got {v!r}"[:200])
    return float(v)


def _seq(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SEQ:
        raise _err(f"{what}: expected a whole number 0..{MAX_SEQ}, got {v!r}"[:200])
    return v


def _known(d: dict, fields: frozenset[str], what: str) -> None:
    extra = sorted(str(k)[:40] for k in d if k not in fields)
    if extra:
        raise _err(f"{what}: unknown field(s) {', '.join(extra[:5])}")


def _click(v: Any, what: str) -> tuple[str, str, float, float] | None:
    """A move made on the board image: the chosen piece's cell, the cell clicked and the click in image pixels
    (checked against the board by `SgpItem.click_move` before the move is applied)."""
    if v is None:
        return None
    if not isinstance(v, dict) or set(v) != {"from", "to", "x", "y"}:
        raise _err(f"{what}: expected an object with from, to, x and y")
    cells = [v["from"], v["to"]]
    if any(not isinstance(c, str) or not 2 <= len(c) <= 3 for c in cells):
        raise _err(f"{what}: from and to: expected cell names such as B3")
    xy = [v["x"], v["y"]]
    if any(isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n) or not 0 <= n <= 10_000
           for n in xy):
        raise _err(f"{what}: x and y: expected image pixels 0..10000")
    return cells[0], cells[1], float(xy[0]), float(xy[1])


def parse_board_message(payload: Any, allowed: Sequence[str], max_chars: int = MAX_COMMAND_CHARS) -> BoardMessage:
    """The board component's state: the moves the server has not acknowledged yet (each a command string, as
    a model would write it, however the participant made it), checked field by field."""
    if not isinstance(payload, dict):
        raise _err(f"expected an object, got {type(payload).__name__}")
    _known(payload, MESSAGE_FIELDS, "message")
    view = payload.get("view_id")
    if not isinstance(view, str) or not 1 <= len(view) <= 64:
        raise _err("view_id: expected 1-64 characters")
    raw = payload.get("moves")
    raw = [] if raw is None else raw
    if not isinstance(raw, list) or len(raw) > MAX_MOVES_PER_MESSAGE:
        raise _err(f"moves: expected a list of at most {MAX_MOVES_PER_MESSAGE}")
    _ms(payload.get("active_ms"), "active_ms")
    _ms(payload.get("first_action_ms"), "first_action_ms")
    moves = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict):
            raise _err(f"moves[{i}]: expected an object")
        _known(m, MOVE_FIELDS, f"moves[{i}]")
        text = m.get("text")
        if not isinstance(text, str) or len(text) > max_chars:
            raise _err(f"moves[{i}].text: expected text of at most {max_chars} characters")
        how = m.get("input")
        if not isinstance(how, str) or how not in allowed:
            raise _err(f"moves[{i}].input: expected one of {', '.join(allowed)}, got {how!r}"[:200])
        click = _click(m.get("click"), f"moves[{i}].click")
        if click is not None and how != "click":
            raise _err(f"moves[{i}].click: only a click move has a click")
        moves.append(BoardMove(_seq(m.get("seq"), f"moves[{i}].seq"), text, how, _ms(m.get("t"), f"moves[{i}].t"),
                               _ms(m.get("active_ms"), f"moves[{i}].active_ms"), click))
    seqs = [m.seq for m in moves]
    if seqs != sorted(set(seqs)):
        raise _err("moves: expected increasing sequence numbers")
    give_up = payload.get("give_up")
    return BoardMessage(view, tuple(moves), None if give_up is None else _seq(give_up, "give_up"))


def allowed_inputs(cfg: StudyConfig) -> tuple[str, ...]:
    """Typed studies take typed commands only; the board's buttons also work from the keyboard (accessibility),
    so a click study records keyboard moves too, and a keyboard study clicks."""
    return ("typed",) if cfg.sgp_input == "typed" else ("click", "keyboard")
