"""The time limit's countdown: a small badge fixed in the page's top right corner, "Time left 12:34".

It only displays: the seconds left come from the server (`ParticipantSession.deadline()`, server clock) at every
full run and are counted down in the browser from there; when they run out it says so, and the page's own timer
(`participant.py`) reruns the page, where the server ends the participant as timed out."""
from __future__ import annotations

import streamlit as st

_JS = """
export default function (component) {
  const { data, parentElement } = component;
  let el = parentElement.querySelector(".rose-countdown");
  if (!el) {
    el = document.createElement("div");
    el.className = "rose-countdown";
    el.setAttribute("role", "timer");
    el.setAttribute("data-testid", "rose-countdown");
    parentElement.appendChild(el);
  }
  const end = performance.now() + 1000 * Math.max(0, Number(data.seconds_left) || 0);
  const tick = () => {
    const left = Math.max(0, Math.ceil((end - performance.now()) / 1000));
    const m = Math.floor(left / 60), s = left % 60;
    el.textContent = left > 0 ? `Time left ${m}:${String(s).padStart(2, "0")}` : String(data.expired_text);
    el.dataset.left = String(left);
    el.classList.toggle("rose-countdown-low", left <= 120);
  };
  tick();
  const id = setInterval(tick, 1000);
  return () => clearInterval(id);
}
"""
_CSS = """
.rose-countdown { position: fixed; top: 0.6rem; right: 4.5rem; z-index: 999990; padding: 0.15rem 0.6rem;
  border: 1px solid #c8c8c8; border-radius: 0.4rem; background: #fff; color: #333; font-size: 0.9rem;
  font-variant-numeric: tabular-nums; font-family: sans-serif; }
.rose-countdown-low { border-color: #d9822b; color: #a34d00; font-weight: 600; }
"""
_COMPONENT = st.components.v2.component("rose_countdown", js=_JS, css=_CSS)
EXPIRED_TEXT = "Time is up"


def countdown(seconds_left: float) -> None:
    """Show the badge counting down from `seconds_left` (the server's figure)."""
    _COMPONENT(key="countdown", data={"seconds_left": float(seconds_left), "expired_text": EXPIRED_TEXT}, height=0)
