"""The participant components' one registration: a Streamlit components-v2 element (inline JS/CSS, no iframe,
no build) whose script is `component_base.js` (one live item per view, `data` as JSON bytes, DOM helpers, the
view's clocks) followed by the component's own, and `data` sent as UTF-8 JSON bytes."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

_HERE = Path(__file__).parent


def register(name: str, stem: str):
    """The component `name` from `ui/<stem>.js` and `ui/<stem>.css`. Plain DOM (no shadow root): every class is
    prefixed per component, and the click grid's CSS also trims Streamlit's page padding."""
    js = (_HERE / "component_base.js").read_text() + "\n" + (_HERE / f"{stem}.js").read_text()
    return st.components.v2.component(name, js=js, css=(_HERE / f"{stem}.css").read_text(), isolate_styles=False)


def encode_data(data: dict[str, Any]) -> bytes:
    """`data` as the UTF-8 JSON the component parses. Streamlit forwards bytes untouched, whereas a dict is
    sniffed value by value for dataframes and serialized twice (payload and identity): 1.4 ms of every
    click's rerun on the development machine, against ~0.1 ms for this."""
    return json.dumps(data).encode()
