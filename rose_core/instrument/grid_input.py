"""What the click-grid component sends and receives, checked on the server (nothing from the browser is trusted).

The CONTRACT with `ui/click_grid.js`: `component_data()` is everything the browser gets for an item (no
gold); the browser sends its state on every change (`grid`: new events only, seq ≥ `ack_seq`) and the answer
once (`submit`). Events are stored once, idempotent by (participant, view, seq); `restore()` rebuilds the
selection, the count field and the item's timers from them after a reload.
"""
from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from ..benchmarks.rose.records import Cell, Layout, Output
from .config import StudyError

EventType = Literal["click", "unclick", "undo", "clear", "count_input", "focus", "blur", "hidden", "visible"]
EVENT_TYPES: frozenset[str] = frozenset(EventType.__args__)  # type: ignore[attr-defined]
ACTION_TYPES = frozenset({"click", "unclick", "undo", "clear", "count_input"})
CELL_TYPES = frozenset({"click", "unclick", "undo"})   # the events that name a cell (r, c); no other does
MAX_EVENTS = 2000          # per message
MAX_SEQ = 20_000           # per view: bounds what one item can store
MAX_VALUE = 64
MAX_MS = 24 * 3600 * 1000.0   # a client time beyond a day is absurd for one item: stored as NULL
MAX_VIEWPORT = 20_000
DPR_RANGE = (0.1, 16.0)
# The words the items' own instructions use ("then press DONE"; "enter the number and submit", "then press SUBMIT"):
# DONE ends a click answer, SUBMIT sends one with a number. With Continue between pages, Undo and Clear, that is the
# participant side's whole vocabulary (docs/running-a-study.md, "The pages around the item").
SUBMIT_LABEL: dict[str, str] = {"count": "SUBMIT", "click": "DONE", "click_submit": "SUBMIT"}
COUNT_LABEL: dict[str, str] = {"count": "Number of odd cells:",
                               "click_submit": "Number of odd cells outside the excluded area:"}
_COUNT = re.compile(r"\d{1,6}")


@dataclass(frozen=True)
class GridEvent:
    seq: int
    type: str
    r: int | None = None
    c: int | None = None
    value: str | None = None
    t: float | None = None          # client ms since the item was first shown
    active_ms: float | None = None


@dataclass(frozen=True)
class GridState:
    view_id: str
    events: tuple[GridEvent, ...]
    selection: tuple[Cell, ...]
    count: str | None
    active_ms: float | None
    first_action_ms: float | None


@dataclass(frozen=True)
class GridSubmit:
    view_id: str
    selection: tuple[Cell, ...]
    count: int | None
    count_text: str | None
    events: tuple[GridEvent, ...]
    first_action_ms: float | None
    active_ms: float | None
    client_total_ms: float | None
    viewport: tuple[int, int] | None
    dpr: float | None
    focus_lost: bool


@dataclass
class Restore:
    selection: list[list[int]] = field(default_factory=list)
    count: str | None = None
    next_seq: int = 0
    active_ms: float = 0.0
    first_action_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"selection": self.selection, "count": self.count, "next_seq": self.next_seq,
                "active_ms": self.active_ms, "first_action_ms": self.first_action_ms}


def _err(what: str) -> StudyError:
    return StudyError(f"malformed message from the browser: {what}")


def _short(v: Any) -> str:
    """A value for an error message, never long (a crafted 13 MB string must not be echoed back)."""
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _int(v: Any, what: str, lo: int, hi: int) -> int:
    """A whole number the browser sent as a JSON integer (2.0 or "2" is not a cell number)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise _err(f"{what}: expected a whole number, got {_short(v)}")
    if not lo <= v <= hi:
        raise _err(f"{what}: expected {lo}..{hi}, got {_short(v)}")
    return v


def _ms(v: Any, what: str) -> float | None:
    """A client time in ms. The page's clock is secondary and never trusted: anything but a finite number in
    0..MAX_MS (null, NaN, Infinity, negative, absurd, text) is kept as NULL rather than refusing the answer."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) and 0 <= v <= MAX_MS else None


def _str(v: Any, what: str, n: int = MAX_VALUE) -> str | None:
    if v is None:
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if not math.isfinite(v):
            raise _err(f"{what}: expected text, got {_short(v)}")
        v = str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else str(v)
    if not isinstance(v, str) or len(v) > n:
        raise _err(f"{what}: expected text of at most {n} characters")
    return v


def _view(payload: Any) -> str:
    if not isinstance(payload, dict):
        raise _err(f"expected an object, got {type(payload).__name__}")
    v = payload.get("view_id")
    if not isinstance(v, str) or not 1 <= len(v) <= 64:
        raise _err("view_id: expected 1-64 characters")
    return v


def _cells(v: Any, rows: int, cols: int) -> tuple[Cell, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or len(v) > rows * cols:
        raise _err(f"selection: expected a list of at most {rows * cols} cells"
                   + (f", got {len(v)}" if isinstance(v, list) else ""))
    out = []
    for i, rc in enumerate(v):
        if not isinstance(rc, (list, tuple)) or len(rc) != 2:
            raise _err(f"selection[{i}]: expected [row, column]")
        cell = (_int(rc[0], f"selection[{i}] row", 1, rows), _int(rc[1], f"selection[{i}] column", 1, cols))
        if cell in out:
            raise _err(f"selection[{i}]: cell R{cell[0]},C{cell[1]} listed twice")
        out.append(cell)
    return tuple(out)


def _events(v: Any, rows: int, cols: int) -> tuple[GridEvent, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or len(v) > MAX_EVENTS:
        raise _err(f"events: expected a list of at most {MAX_EVENTS}"
                   + (f", got {len(v)}" if isinstance(v, list) else ""))
    out = []
    for i, e in enumerate(v):
        if not isinstance(e, dict):
            raise _err(f"events[{i}]: expected an object")
        typ = e.get("type")
        if typ not in EVENT_TYPES:
            raise _err(f"events[{i}].type: expected one of {sorted(EVENT_TYPES)}, got {_short(typ)}")
        seq = _int(e.get("seq"), f"events[{i}].seq", 0, MAX_SEQ)
        r = None if e.get("r") is None else _int(e.get("r"), f"events[{i}].r", 1, rows)
        c = None if e.get("c") is None else _int(e.get("c"), f"events[{i}].c", 1, cols)
        if typ in CELL_TYPES and (r is None or c is None):
            raise _err(f"events[{i}]: a {typ} needs r and c")
        if typ not in CELL_TYPES and (r is not None or c is not None):
            raise _err(f"events[{i}]: a {typ} names no cell")
        if typ == "undo" and e.get("value") not in ("click", "unclick"):
            raise _err(f"events[{i}].value: an undo names the action it undid, 'click' or 'unclick'")
        out.append(GridEvent(seq, typ, r, c, _str(e.get("value"), f"events[{i}].value"),
                             _ms(e.get("t"), f"events[{i}].t"), _ms(e.get("active_ms"), f"events[{i}].active_ms")))
    return tuple(out)


def _count_text(v: Any) -> str | None:
    s = _str(v, "count", 16)
    return None if s is None or s.strip() == "" else s.strip()


def parse_state(payload: Any, rows: int, cols: int) -> GridState:
    """The `grid` state of one change: new events plus the current selection and number field."""
    view = _view(payload)
    sel = payload.get("selection")
    return GridState(view, _events(payload.get("events"), rows, cols), _cells(sel, rows, cols),
                     _count_text(payload.get("count")), _ms(payload.get("active_ms"), "active_ms"),
                     _ms(payload.get("first_action_ms"), "first_action_ms"))


def parse_submit(payload: Any, rows: int, cols: int) -> GridSubmit:
    """The answer (DONE / SUBMIT). A count that is not a whole number is refused, not stored as something else."""
    view = _view(payload)
    text = _count_text(payload.get("count"))
    if text is not None and not _COUNT.fullmatch(text):
        raise _err(f"count: expected a whole number 0-999999, got {text!r}")
    focus_lost = payload.get("focus_lost")
    if focus_lost is not None and not isinstance(focus_lost, bool):
        raise _err(f"focus_lost: expected true or false, got {_short(focus_lost)}")
    return GridSubmit(
        view, _cells(payload.get("selection"), rows, cols),
        None if text is None else int(text), text, _events(payload.get("events"), rows, cols),
        _ms(payload.get("first_action_ms"), "first_action_ms"), _ms(payload.get("active_ms"), "active_ms"),
        _ms(payload.get("client_total_ms"), "client_total_ms"), _viewport(payload.get("viewport")),
        _dpr(payload.get("dpr")), bool(focus_lost))


def _viewport(v: Any) -> tuple[int, int] | None:
    """[width, height] in CSS pixels; like the client times, secondary: anything out of bounds is NULL."""
    if (isinstance(v, list) and len(v) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= MAX_VIEWPORT for x in v)):
        return v[0], v[1]
    return None


def _dpr(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v) if DPR_RANGE[0] <= v <= DPR_RANGE[1] else None


def apply_event(selection: list[Cell], type: str, cell: Cell | None, value: str | None) -> list[Cell]:
    """The selection after one event, exactly as ui/click_grid.js applies it (the one definition: the
    session's restore and the drill-down replay both use it). An undo names the action it undid in
    `value`, so no history is needed: undoing a click removes the cell, undoing an unclick puts it back."""
    if type == "click" or (type == "undo" and value == "unclick"):
        return selection if cell is None or cell in selection else selection + [cell]
    if type == "unclick" or (type == "undo" and value == "click"):
        return [x for x in selection if x != cell]
    if type == "clear":
        return []
    return selection


def replay(events: Sequence[GridEvent]) -> tuple[list[Cell], str | None]:
    """Selection and number field after these events (in seq order)."""
    sel: list[Cell] = []
    count = None
    for e in events:
        if e.type == "count_input":
            count = e.value
        else:
            sel = apply_event(sel, e.type, None if e.r is None else (e.r, e.c), e.value)
    return sel, count


def restore(events: Sequence[GridEvent]) -> Restore:
    """What the component needs after a reload, from the stored events of the view."""
    if not events:
        return Restore()
    sel, count = replay(events)
    actions = [e.t for e in events if e.type in ACTION_TYPES and e.t is not None]
    active = [e.active_ms for e in events if e.active_ms is not None]
    return Restore([list(c) for c in sel], count, max(e.seq for e in events) + 1,
                   max(active) if active else 0.0, min(actions) if actions else None)


def png_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def component_data(view_id: str, image: bytes | str, layout: Layout, mode: Output, instruction: str, progress: str,
                   ack_seq: int, restored: Restore, refusals: int = 0, pending: bool = False) -> dict[str, Any]:
    """Everything the browser gets for one item (the CONTRACT; tests read it to prove no gold is in it).

    `image` is the instance's PNG bytes (sent inline as a data URL) or a URL that serves exactly those bytes
    (the page registers them once per item with Streamlit's media files, so a rerun sends a short URL).
    After DONE / SUBMIT the browser keeps the answer locked until the server replies: `refusals` (how many of this
    view's answers the server could not take) going up unlocks it; `pending` says the server holds the answer and
    sends it again itself (storage failing), so the browser neither unlocks nor offers to send it again."""
    return {
        "view_id": view_id, "mode": mode, "image": image if isinstance(image, str) else png_data_url(image),
        "width": layout.width, "height": layout.height, "rows": layout.rows, "cols": layout.cols,
        "cells": layout.cell_boxes(), "submit_label": SUBMIT_LABEL[mode], "count_label": COUNT_LABEL.get(mode, ""),
        "instruction": instruction, "progress": progress, "ack_seq": ack_seq, "restore": restored.to_json(),
        "refusals": refusals, "pending": pending,
    }
