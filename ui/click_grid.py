"""The participant's answer widget: a Streamlit components-v2 element (inline JS/CSS, no iframe, no build).

It shows the instance's own PNG with buttons laid exactly over the saved cell
boxes (percentages of the image size, so any zoom keeps them aligned). Only the
image, the layout, the mode and labels are sent: never the gold answer.
"""
from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Literal

import streamlit as st

from rose_core.records import Layout

_HERE = Path(__file__).parent
_COMPONENT = st.components.v2.component(
    "rose_click_grid", js=(_HERE / "click_grid.js").read_text(), css=(_HERE / "click_grid.css").read_text(),
    isolate_styles=False,
)

Mode = Literal["count", "click", "click_submit"]
SUBMIT_LABEL = {"count": "Submit", "click": "DONE", "click_submit": "SUBMIT"}


def grid_data(view_id: str, png: bytes, layout: Layout, mode: Mode, count_label: str = "") -> dict[str, Any]:
    """Everything the browser gets for one item (tests read this to prove no gold is in it)."""
    return {
        "view_id": view_id, "mode": mode, "image": "data:image/png;base64," + base64.b64encode(png).decode(),
        "width": layout.width, "height": layout.height, "rows": layout.rows, "cols": layout.cols,
        "cells": layout.cell_boxes(), "submit_label": SUBMIT_LABEL[mode], "count_label": count_label,
    }


def click_grid(key: str, data: dict[str, Any]):
    """Mount the grid; the result has `.grid` (live selection + events) and `.submit` (final answer, once)."""
    return _COMPONENT(key=key, data=data, on_grid_change=lambda: None, on_submit_change=lambda: None,
                      width="stretch")
