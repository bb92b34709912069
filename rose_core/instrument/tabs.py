"""Which browser tabs are connected, as far as one server process can know.

A Streamlit process knows only the sessions connected to itself. Behind a proxy with several app processes
(README: Several app processes), a participant's tab lives in exactly one of them, and the others must not take
it for a closed tab (that would give its held item away while the participant is still looking at it). So a tab's
id carries the process that serves it, `PROCESS/SESSION`, and a process answers "connected?" only for its own
tabs: for another process's tab (or one from before this process started) the answer is None, "not known here".
What None means is the session's choice: a new tab of the same participant may take over (that is also how a
participant whose process died continues elsewhere), but a hold is only released early for a tab known closed;
otherwise the study's silence limit applies.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Callable


def new_process_id() -> str:
    """Unique per process start (a restarted process is another process: its predecessor's tabs are gone)."""
    return secrets.token_hex(6)


@dataclass(frozen=True)
class ProcessTabs:
    """This process's id and its runtime's registry of connected sessions (`connected(session_id)`)."""

    process_id: str
    connected: Callable[[str], bool]

    def client_id(self, session_id: str) -> str:
        return f"{self.process_id}/{session_id}"

    def live(self, client_id: str) -> bool | None:
        """True/False for a tab of this process; None for any other tab (another process's, or an id stored
        before ids named their process)."""
        owner, sep, session = client_id.partition("/")
        if not sep or owner != self.process_id:
            return None
        return bool(self.connected(session))
