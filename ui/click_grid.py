"""The participant's answer widget: a Streamlit components-v2 element (inline JS/CSS, no iframe, no build).

It shows the item's instruction and progress above the instance's own PNG, with buttons laid exactly
over the saved cell boxes (percentages of the image size, so any zoom keeps them aligned), and sizes
the image so the whole item fits the viewport. Only the image, the layout, the mode, labels and what
the server already stored for this view are sent: never the gold answer.

Browser -> server (docs/architecture.md, "One click"):
- state ``grid`` on every change: ``{"view_id", "events", "selection", "count", "active_ms",
  "first_action_ms"}`` where ``events`` are only those with ``seq >= ack_seq`` (deltas; the server
  stores them idempotently by ``seq`` and sends the new ``ack_seq`` back in ``data``);
- trigger ``submit`` once per press: ``{"view_id", "selection", "count", "events", "first_action_ms",
  "active_ms", "client_total_ms", "viewport", "dpr", "focus_lost"}``.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

import streamlit as st

from rose_core.benchmarks.rose.records import Layout
from rose_core.instrument.grid_input import SUBMIT_LABEL, Restore, component_data, png_data_url
from ui.components import encode_data, register

_COMPONENT = register("rose_click_grid", "click_grid")

Mode = Literal["count", "click", "click_submit"]


def empty_restore() -> dict[str, Any]:
    """What a view with nothing stored restores to."""
    return {"selection": [], "count": None, "next_seq": 0, "active_ms": 0.0, "first_action_ms": None}


def _check_restore(restore: dict[str, Any], layout: Layout) -> dict[str, Any]:
    """The server's own record of this view; refuse a malformed one rather than show a wrong selection."""
    out = {**empty_restore(), **restore}
    unknown = set(out) - set(empty_restore())
    if unknown:
        raise ValueError(f"restore: unknown fields {sorted(unknown)}")
    cells = []
    for cell in out["selection"]:
        if (not isinstance(cell, (list, tuple)) or len(cell) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in cell)):
            raise ValueError(f"restore.selection: expected [row, column] integer pairs, got {cell!r}")
        r, c = cell
        if not (1 <= r <= layout.rows and 1 <= c <= layout.cols):
            raise ValueError(f"restore.selection: cell {[r, c]} is outside the {layout.rows}x{layout.cols} grid")
        cells.append([r, c])
    out["selection"] = cells
    if out["count"] is not None and not isinstance(out["count"], str):
        raise ValueError(f"restore.count: expected a string or None, got {out['count']!r}")
    if not isinstance(out["next_seq"], int) or isinstance(out["next_seq"], bool) or out["next_seq"] < 0:
        raise ValueError(f"restore.next_seq: expected an integer >= 0, got {out['next_seq']!r}")
    for name in ("active_ms", "first_action_ms"):
        v = out[name]
        if v is None and name == "first_action_ms":
            continue
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
            raise ValueError(f"restore.{name}: expected a number of milliseconds >= 0, got {v!r}")
        out[name] = float(v)
    return out


def grid_data(view_id: str, png: bytes, layout: Layout, mode: Mode, count_label: str = "", *,
              instruction: str = "", progress: str = "", ack_seq: int = 0,
              restore: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything the browser gets for one item (tests read this to prove no gold is in it).

    `ack_seq` is the number of this view's events the server has stored (the browser sends only
    events with seq >= ack_seq); `restore` is the stored selection, count and timers, used only when the
    view is (re)mounted, e.g. after a reload (the browser numbers on from max(restore.next_seq, ack_seq)).
    """
    if mode not in SUBMIT_LABEL:
        raise ValueError(f"mode: expected one of {sorted(SUBMIT_LABEL)}, got {mode!r}")
    if not isinstance(ack_seq, int) or ack_seq < 0:
        raise ValueError(f"ack_seq: expected an integer >= 0, got {ack_seq!r}")
    if mode != "click" and not count_label:
        raise ValueError(f"count_label: a {mode!r} item needs the number field's label")
    data = component_data(view_id, png, layout, mode, instruction, progress, ack_seq,
                          Restore(**_check_restore(restore or {}, layout)))
    return {**data, "count_label": count_label}


def image_url(png: bytes, coordinates: str = "rose_click_grid.image") -> str:
    """A URL that serves exactly these PNG bytes, for the component's `image`.

    Registered with Streamlit's media file manager (content-addressed, kept while this session's current run
    shows it; fragment reruns keep it), so each rerun sends a short URL instead of the whole image again and
    the browser fetches the image once per item. Without a server runtime (bare mode, AppTest) the PNG goes
    inline as a data URL."""
    from streamlit import runtime

    if not runtime.exists():
        return png_data_url(png)
    url = runtime.get_instance().media_file_mgr.add(png, "image/png", coordinates)
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{url}" if base else url


def element_data(element) -> dict[str, Any]:
    """The data a sent component element carries (a `BidiComponent` proto, as a protocol-level client reads it):
    the inverse of `encode_data`, and plain JSON for components that send a dict."""
    return json.loads(element.bytes if element.WhichOneof("data") == "bytes" else element.json)


def click_grid(key: str, data: dict[str, Any], *, on_grid: Callable[[], None] | None = None,
               on_submit: Callable[[], None] | None = None):
    """Mount the grid; the result has `.grid` (live selection + unacknowledged events) and `.submit`
    (the final answer, for one rerun).

    The callbacks run before the rerun the browser caused, with the new value in
    ``st.session_state[key]``: storing events there lets this rerun already send the new `ack_seq`.
    """
    return _COMPONENT(key=key, data=encode_data(data), on_grid_change=on_grid or (lambda: None),
                      on_submit_change=on_submit or (lambda: None), width="stretch")
