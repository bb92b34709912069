"""One decoder for what the database stores about an answer: the scorer's parsed record (clicks and count) and
a grid cell from an answer or an event. Every analysis reads answers through here, so a stored "1.0", a
missing count or an unreadable record is handled once, the same way everywhere."""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any

from ..benchmarks.rose.records import Cell


class AnalysisInputError(ValueError):
    """An analysis was given inputs that do not line up (different trials, repeated trials, non-binary
    outcomes): it refuses rather than compute a number that looks right."""


@dataclass(frozen=True)
class Answer:
    clicks: tuple[Cell, ...]   # as written, in order (a repeat stays a repeat)
    count: int | None          # COUNT(n) / SUBMIT(n); None for DONE
    readable: bool             # False when the stored record could not be decoded

    @property
    def cells(self) -> frozenset[Cell]:
        return frozenset(self.clicks)

    def says(self) -> tuple:
        """What the answer says whatever its terminal: DONE, COUNT(0) and SUBMIT(0) all say "nothing"."""
        if not self.readable:
            return ("?",)
        clicks = tuple(sorted(self.cells))
        return clicks, len(clicks) if self.count is None else self.count


def as_int(v: Any) -> int | None:
    """An integer from what SQLite or pandas hands back: 3, 3.0, "3", "3.0" -> 3; None/NaN/non-integral -> None."""
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    if math.isnan(f) or not f.is_integer():
        return None
    return int(f)


def decode_cell(row: Any, col: Any) -> Cell | None:
    r, c = as_int(row), as_int(col)
    return None if r is None or c is None else (r, c)


def decode_answer(parsed: str | None) -> Answer:
    """The scorer's stored `parsed` JSON ({"clicks": [[r, c], …], "count": n, …}).

    Memoized by the stored text (an `Answer` is immutable): 100,000 human answers hold a few thousand
    distinct records, and the participant table decodes every one of them on a cold dashboard."""
    if isinstance(parsed, str):
        return _decode_text(parsed)
    return _decode(parsed)


@functools.lru_cache(maxsize=1 << 16)
def _decode_text(parsed: str) -> Answer:
    return _decode(parsed)


def _decode(parsed: Any) -> Answer:
    try:
        p = json.loads(parsed) if parsed else {}
        if not isinstance(p, dict):
            raise ValueError
        clicks = tuple(cell for cell in (decode_cell(*c) for c in p.get("clicks") or []) if cell is not None)
        return Answer(clicks, as_int(p.get("count")), True)
    except (TypeError, ValueError):
        return Answer((), None, False)
