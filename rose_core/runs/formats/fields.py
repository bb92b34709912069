"""Reading one value out of a harness's record: the few rules every format applies the same way."""
from __future__ import annotations

from typing import Any


def unwrap(v: Any) -> Any:
    """The first leaf of nested lists (lmms-eval wraps responses and targets in lists of lists)."""
    while isinstance(v, list) and v:
        v = v[0]
    return v


def is_int(v: Any) -> bool:
    """An integer that is not a bool: positions are read only from real integers."""
    return isinstance(v, int) and not isinstance(v, bool)


def str_or_none(v: Any) -> str | None:
    """A string field, or None when absent or of another type (a check needs the harness's own text)."""
    return v if isinstance(v, str) else None
