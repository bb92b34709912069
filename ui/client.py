"""This browser tab as the server process sees it: the address it connects from and its tab id.

The rules are in rose_core (`client_address`: whose `X-Forwarded-For` is believed; `instrument.tabs`: tab ids that
name their server process); this module only reads Streamlit's context for them.
"""
from __future__ import annotations

import functools
import logging

import streamlit as st

from rose_core.instrument.client_address import (
    TRUSTED_PROXIES_ENV, UVICORN_PROXY_ENV, TrustedProxies, client_address, trusted_proxies_from_env, uvicorn_rewrites_addresses,
)
from rose_core.instrument.tabs import Client, ProcessTabs, new_process_id, resumed_session, several_processes
from ui.uploads import is_connected

log = logging.getLogger("rose_studio.client")
PROCESS_ID = new_process_id()


@functools.lru_cache(maxsize=1)
def trusted_proxies() -> TrustedProxies:
    """ROSE_TRUSTED_PROXIES, read once per process (a bad value raises ProxyConfigError, every time)."""
    trusted = trusted_proxies_from_env()
    if uvicorn_rewrites_addresses():
        log.warning("%s is not set: the app server takes client addresses from X-Forwarded-For sent over loopback "
                    "before ROSE Studio sees them (%s is not in charge). Start with scripts/run.sh or "
                    "scripts/run-cluster.sh, or set %s= (empty).", UVICORN_PROXY_ENV, TRUSTED_PROXIES_ENV,
                    UVICORN_PROXY_ENV)
    return trusted


def address() -> str:
    """The browser's address; `LOOPBACK` when it connects over loopback (or there is no browser: a script run)."""
    headers = st.context.headers
    forwarded = headers.get_all("X-Forwarded-For") if headers is not None else []
    peer = st.context.ip_address
    return client_address(peer if isinstance(peer, str) and peer else None, forwarded, trusted_proxies())


def tab() -> Client | None:
    """This tab: its id (this process + its Streamlit session), its address, this process's registry of connected
    sessions (a closed tab's session leaves it at once, so its held item can go back to the pool), and the session
    it had before it reconnected, if it says so."""
    from streamlit import runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not runtime.exists() or not isinstance(ctx.session_id, str):
        return None
    tabs = ProcessTabs(PROCESS_ID, is_connected, alone=not several_processes())
    headers = st.context.headers
    resumes = resumed_session(headers.get("Sec-WebSocket-Protocol") if headers is not None else None)
    return Client(tabs.client_id(ctx.session_id), address(), tabs.live, resumes)


# The browser's own description of its window, sent once when shown and again after a resize (debounced, only when
# it changed): window size in CSS pixels, device pixel ratio, touch points, whether a finger is the main pointer.
# A claim: rose_core.instrument.device checks it and stores it; nothing the browser says is trusted beyond that.
_DEVICE_JS = """
const sent = new WeakMap(); // mount point -> the last value sent, so a rerun never sends the same claim again
function claim() {
  const coarse = !!(window.matchMedia && window.matchMedia("(pointer: coarse)").matches);
  return { viewport: [window.innerWidth, window.innerHeight], dpr: window.devicePixelRatio || 1,
           touch_points: Number(navigator.maxTouchPoints) || 0, coarse_pointer: coarse };
}
export default function (component) {
  const where = component.parentElement;
  const send = () => {
    const v = claim(), s = JSON.stringify(v);
    if (sent.get(where) === s) return;
    sent.set(where, s);
    component.setStateValue("device", v);
  };
  let timer = null;
  const later = () => { clearTimeout(timer); timer = setTimeout(send, 250); };
  send();
  window.addEventListener("resize", later);
  return () => { clearTimeout(timer); window.removeEventListener("resize", later); };
}
"""
_DEVICE = st.components.v2.component("rose_device_probe", js=_DEVICE_JS)

# While a participant is inside the study, leaving the page (Back, closing the tab, another address) asks first:
# the browser's own "Leave site?" dialog (beforeunload; browsers show it only after the page was used). Removed as
# soon as the element is (the end page has none), so the redirect to the platform never asks.
_GUARD_JS = """
function guard(e) { e.preventDefault(); e.returnValue = ""; return ""; }
export default function (component) {
  window.addEventListener("beforeunload", guard); // the same function twice is one listener
  return () => window.removeEventListener("beforeunload", guard);
}
"""
_GUARD = st.components.v2.component("rose_leave_guard", js=_GUARD_JS)


def device_probe(key: str, on_report) -> dict | None:
    """Mount the probe; `on_report()` runs (before the rerun) when the browser sends a new claim, which is then in
    `st.session_state[key]["device"]`. Returns the latest claim, or None before the first."""
    res = _DEVICE(key=key, data={}, on_device_change=on_report, height=0)
    return getattr(res, "device", None)


def leave_guard() -> None:
    """Ask before the participant leaves the page while the study is under way."""
    _GUARD(key="part_leave_guard", data={}, height=0)
