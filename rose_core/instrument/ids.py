"""Where new ids come from: random in the app, a counter in tests (so fixtures are deterministic)."""
from __future__ import annotations

import hashlib
import itertools
import secrets
import time
from typing import Callable, Protocol

Clock = Callable[[], float]


class Ids(Protocol):
    def study_id(self) -> str: ...
    def participant_id(self) -> str: ...


class RandomIds:
    """The app's ids: unguessable, so a participant cannot address another's records."""

    def study_id(self) -> str:
        return f"s{secrets.token_hex(4)}"

    def participant_id(self) -> str:
        return f"p{secrets.token_hex(6)}"


class SequentialIds:
    """Deterministic ids for tests and fixtures: s-<prefix>-0001, p-<prefix>-0001, …"""

    def __init__(self, prefix: str = "t"):
        self.prefix = prefix
        self._s = itertools.count(1)
        self._p = itertools.count(1)

    def study_id(self) -> str:
        return f"s-{self.prefix}-{next(self._s):04d}"

    def participant_id(self) -> str:
        return f"p-{self.prefix}-{next(self._p):04d}"


class FakeClock:
    """A clock tests move by hand (server timing without sleeping)."""

    def __init__(self, t: float = 1_700_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def system_clock() -> float:
    return time.time()


def stable_hash(*parts: str) -> str:
    """A tie-break / id that depends only on its inputs (sha1 of the parts)."""
    return hashlib.sha1(":".join(parts).encode()).hexdigest()


def view_id_for(participant_id: str, kind: str, attempt: int, position: int) -> str:
    """Stable per assignment (a reload gets the same view), and says nothing about the item's kind."""
    return "v" + stable_hash(participant_id, kind, str(attempt), str(position))[:20]
