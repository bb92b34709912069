"""Which browser tabs are connected, as far as one server process can know, and the tab a participant's
session serves (`Client`: its id, its address, that probe).

A Streamlit process knows only the sessions connected to itself. Behind a proxy with several app processes
(docs/deploying.md), a participant's tab lives in exactly one of them, and the others must not take
it for a closed tab (that would give its held item away while the participant is still looking at it). So a tab's
id carries the process that serves it, `PROCESS/SESSION`, and a process answers "connected?" only for its own
tabs: for another process's tab (or one from before this process started) the answer is None, "not known here".
With one app process (`ROSE_APP_PROCESSES` unset or 1: `scripts/run.sh`) any other tab id is a previous run's,
so its tab is gone: False. With several (`scripts/run-cluster.sh` sets it) it is None.
What None means is the session's choice: such a tab may be open, so a new tab of the same participant asks
"Continue here" and the holds wait for the study's silence limit. A tab that lost its process and reconnected
elsewhere says so itself: Streamlit's page sends its previous session id when it reconnects (`resumed_session`),
and the session lets that tab continue at once.
"""
from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from typing import Callable, Mapping

APP_PROCESSES_ENV = "ROSE_APP_PROCESSES"


def new_process_id() -> str:
    """Unique per process start (a restarted process is another process: its predecessor's tabs are gone)."""
    return secrets.token_hex(6)


@dataclass(frozen=True)
class Client:
    """The browser tab driving a participant: its id, the address it connects from, a probe saying whether a
    tab (any tab id) is still connected: True, False, or None when this server process cannot know (the tab is
    another process's: `ProcessTabs.live`), and `resumes`: the Streamlit session id this tab had
    before it reconnected, as the browser says (a tab that lost its server process and came back on another)."""

    client_id: str
    address: str | None = None
    live: Callable[[str], bool | None] = field(default=lambda _client_id: True, repr=False, compare=False)
    resumes: str | None = None

    def continues(self, tab_id: str) -> bool:
        """True when this tab is `tab_id` reconnected (its session id is the one the browser says it had)."""
        return self.resumes is not None and tab_id.rpartition("/")[2] == self.resumes


@dataclass(frozen=True)
class ProcessTabs:
    """This process's id, its runtime's registry of connected sessions (`connected(session_id)`), and whether it
    is the only app process on its database."""

    process_id: str
    connected: Callable[[str], bool]
    alone: bool = True

    def client_id(self, session_id: str) -> str:
        return f"{self.process_id}/{session_id}"

    def live(self, client_id: str) -> bool | None:
        """True/False for a tab of this process; for any other tab (another process's, or an id stored before ids
        named their process) False when this process is alone (it is a previous run's), else None."""
        owner, sep, session = client_id.partition("/")
        if not sep or owner != self.process_id:
            return False if self.alone else None
        return bool(self.connected(session))


def resumed_session(websocket_protocol: str | None) -> str | None:
    """The session id a reconnecting Streamlit page sends as the third entry of its websocket subprotocols
    (`streamlit, <xsrf token>, <last session id>`); None on a first connection."""
    entries = [e.strip() for e in (websocket_protocol or "").split(",")]
    return entries[2] if len(entries) >= 3 and entries[2] else None


def several_processes(env: Mapping[str, str] | None = None) -> bool:
    """`ROSE_APP_PROCESSES` > 1: other app processes share this database (a bad value counts as several: the
    careful reading, which never gives an open tab's item away)."""
    value = (os.environ if env is None else env).get(APP_PROCESSES_ENV, "1").strip() or "1"
    try:
        return int(value) > 1
    except ValueError:
        return True
