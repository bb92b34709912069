"""The one writer of `responses`: participants, run imports, agents and (later) episode benchmarks use it."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Sequence

from .connection import Connection, Store

ResponseKind = Literal["practice", "main", "attention"]


@dataclass(frozen=True)
class ResponseRow:
    """One `responses` row. Benchmark columns (template … errors) come from the item's scored result;
    participant columns stay empty for model and agent runs.

    Timing: `total_ms` is the server's assigned → answered time; `first_action_ms`, `active_ms` (page visible
    and focused) and `client_total_ms` are what the page measured, kept as secondary."""

    run_id: str
    instance_id: str
    template: str
    subset: str
    split: str
    scene_id: str
    response: str
    protocol: str | None
    parsed: str                      # JSON
    valid: int
    passed: int
    failure: str | None
    errors: str                      # JSON list
    submitted_at: float
    participant_id: str = ""
    kind: ResponseKind = "main"
    attempt: int = 0
    first_action_ms: float | None = None
    total_ms: float | None = None
    active_ms: float | None = None
    client_total_ms: float | None = None
    viewport_w: int | None = None
    viewport_h: int | None = None
    device_pixel_ratio: float | None = None
    focus_lost: int | None = None
    view_id: str | None = None
    scorer_version: str = field(kw_only=True)   # which scorer produced valid/passed/failure (the caller says)

    @staticmethod
    def scored(run_id: str, instance_id: str, template: str, subset: str, split: str, scene_id: str,
               response: str, protocol: str | None, parsed: dict, valid: bool, passed: bool, failure: str | None,
               errors: Sequence[str], submitted_at: float, *, scorer_version: str, **participant) -> ResponseRow:
        return ResponseRow(run_id, instance_id, template, subset, split, scene_id, response, protocol,
                           json.dumps(parsed), int(valid), int(passed), failure, json.dumps(list(errors)),
                           submitted_at, scorer_version=scorer_version, **participant)


_COLUMNS = [f.name for f in fields(ResponseRow)]
_INSERT = (f"INSERT INTO responses({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})")


def write_responses(conn: Connection, rows: Sequence[ResponseRow]) -> int:
    """Insert rows inside the caller's transaction (a whole run at once is fine: one executemany).

    A second row for the same (run, participant, instance, kind, attempt) raises IntegrityError (storage.connection), so
    the caller's transaction rolls back and nothing is half-stored."""
    conn.executemany(_INSERT, [tuple(getattr(r, c) for c in _COLUMNS) for r in rows])  # astuple deep-copies: 10x slower
    return len(rows)


def store_responses(store: Store, rows: Sequence[ResponseRow]) -> int:
    """`write_responses` in its own `BEGIN IMMEDIATE` transaction."""
    with store.write() as c:
        return write_responses(c, rows)


def response_of(conn: Connection, run_id: str, participant_id: str, instance_id: str, kind: str,
                attempt: int) -> Any:
    return conn.execute("SELECT * FROM responses WHERE run_id = ? AND participant_id = ? AND instance_id = ? "
                        "AND kind = ? AND attempt = ?", (run_id, participant_id, instance_id, kind, attempt)).fetchone()


def practice_round_passes(conn: Connection, participant_id: str, attempt: int) -> list[int]:
    return [r[0] for r in conn.execute("SELECT passed FROM responses WHERE participant_id = ? AND kind = 'practice' "
                                       "AND attempt = ?", (participant_id, attempt))]
