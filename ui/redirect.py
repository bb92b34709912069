"""Send the participant on to the completion URL (Prolific's, usually) after a short pause."""
from __future__ import annotations

import streamlit as st

_JS = """
export default function (component) {
  const { data, parentElement } = component;
  if (parentElement.dataset.redirecting === data.url) return;
  parentElement.dataset.redirecting = data.url;
  setTimeout(() => { window.location.assign(data.url); }, data.delay_ms);
}
"""
_COMPONENT = st.components.v2.component("rose_redirect", js=_JS)


def redirect(url: str, delay_ms: int = 4000) -> None:
    _COMPONENT(key="redirect", data={"url": url, "delay_ms": delay_ms}, height=0)
