"""Streamlit's upload endpoint, open only to a signed-in experimenter's session.

Streamlit serves `PUT /_stcore/upload_file/<session_id>/<file_id>` to any connected session, whether its page has
a file uploader or not, and keeps every file in memory until the session ends: a visitor who opened the sign-in
page could fill the process that serves every participant (six 150 MB uploads: 237 MB to 1,139 MB). Only the
Model runs page takes files, and only signed-in experimenters see it, so every other session's upload is refused
before its body is read (HTTP 400, nothing buffered). `server.maxUploadSize` (.streamlit/config.toml) bounds what
a signed-in experimenter's one file may take.

The endpoint asks the runtime whether the session in its path is active (`Runtime.is_active_session`), and that
is its only caller in Streamlit: the runtime's answer is narrowed here to "active and signed in". Anything else
that needs the runtime's own answer (which tabs are still connected: ui/client.py) asks `is_connected`.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

log = logging.getLogger("rose_studio.uploads")

_lock = threading.Lock()
_signed_in: set[str] = set()
_connected: list[Callable[[str], bool]] = []   # the runtime's own is_active_session, once installed


def install() -> None:
    """Narrow the runtime's upload check to signed-in sessions (once per process; later calls do nothing)."""
    from streamlit import runtime

    if not runtime.exists():
        return
    rt = runtime.get_instance()
    with _lock:
        if _connected:
            return
        original = rt.is_active_session
        _connected.append(original)

        def may_upload(session_id: str) -> bool:
            if not original(session_id):
                return False
            with _lock:
                allowed = session_id in _signed_in
            if not allowed:
                log.warning("upload refused: session %s is not a signed-in experimenter's", session_id)
            return allowed

        rt.is_active_session = may_upload  # the upload endpoint looks it up on each request


def allow(session_id: str) -> None:
    """This session signed in as the experimenter: it may upload. Sessions that ended are forgotten here."""
    with _lock:
        _signed_in.add(session_id)
        if _connected:
            _signed_in.intersection_update({s for s in _signed_in if _connected[0](s)})


def is_connected(session_id: str) -> bool:
    """The runtime's own answer: is this session connected to this process (signed in or not)?"""
    from streamlit import runtime

    with _lock:
        probe = _connected[0] if _connected else None
    if probe is None:
        return runtime.get_instance().is_active_session(session_id)
    return probe(session_id)
