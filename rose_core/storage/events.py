"""Events of a view (clicks, count input, focus…): inserted once, idempotent by (participant, view, seq)."""
from __future__ import annotations

from typing import Any, Sequence

from .connection import Connection

_INSERT = ("INSERT OR IGNORE INTO events(participant_id, instance_id, view_id, seq, type, row, col, value, "
           "client_ts, active_ms, server_ts) VALUES (?,?,?,?,?,?,?,?,?,?,?)")


def insert_events(conn: Connection, participant_id: str, instance_id: str, view_id: str,
                  events: Sequence[Any], server_ts: float) -> int:
    """Store the events not stored yet (each with the fields of `instrument.grid_input.GridEvent`); a repeated seq is ignored (the first one stays). Returns rows added."""
    before = conn.total_changes
    conn.executemany(_INSERT, [(participant_id, instance_id, view_id, e.seq, e.type, e.r, e.c, e.value, e.t,
                                e.active_ms, server_ts) for e in events])
    return conn.total_changes - before


def view_events(conn: Connection, participant_id: str, view_id: str) -> list[tuple]:
    """A view's stored events in seq order, as (seq, type, row, col, value, client_ts, active_ms): the fields of
    `instrument.grid_input.GridEvent`, which the caller builds."""
    return [(r["seq"], r["type"], r["row"], r["col"], r["value"], r["client_ts"], r["active_ms"])
            for r in conn.execute("SELECT seq, type, row, col, value, client_ts, active_ms FROM events "
                                  "WHERE participant_id = ? AND view_id = ? ORDER BY seq",
                                  (participant_id, view_id))]


def view_event_count(conn: Connection, participant_id: str, view_id: str) -> int:
    return conn.execute("SELECT count(*) FROM events WHERE participant_id = ? AND view_id = ?",
                        (participant_id, view_id)).fetchone()[0]


_EXPORT = """
SELECT e.participant_id, p.external_id, p.study_id, e.instance_id, e.view_id, e.seq, e.type, e.row, e.col, e.value,
       e.client_ts AS client_ms_since_shown, e.active_ms, e.server_ts, p.end_reason, x.reason AS excluded_reason,
       x.excluded_by, x.excluded_at
FROM events e JOIN participants p USING (participant_id)
LEFT JOIN participant_exclusions x ON x.participant_id = p.participant_id AND x.revoked_at IS NULL
WHERE p.origin = 'participant' {where} ORDER BY e.participant_id, e.server_ts, e.seq
"""


def export_query(study_id: str | None = None) -> tuple[str, tuple]:
    """The SELECT of the events experimenters export (every study's, or one's) with its parameters, with the
    participant's external id, study, end reason and standing exclusion; counted participants only (never a
    preview's, a simulation's or a test's)."""
    return _EXPORT.format(where="AND p.study_id = ?" if study_id else ""), (study_id,) if study_id else ()


def instance_events(conn: Connection, participant_id: str, instance_id: str) -> list[dict[str, Any]]:
    """A participant's stored events on one instance, unordered, as dicts (view_id, seq, type, row, col, value,
    client_ts, server_ts): the drill-down's replay orders them."""
    return [dict(r) for r in conn.execute(
        "SELECT view_id, seq, type, row, col, value, client_ts, server_ts FROM events "
        "WHERE participant_id = ? AND instance_id = ?", (participant_id, instance_id))]


def delete_of_origin(conn: Connection, study_id: str, origin: str) -> int:
    """Inside the caller's transaction: the events of the study's participants of this origin. Rows deleted."""
    from .participants import OF_ORIGIN

    return conn.execute(f"DELETE FROM events WHERE participant_id IN ({OF_ORIGIN})", (study_id, origin)).rowcount


def action_counts(conn: Connection, participant_id: str, types: Sequence[str]) -> dict[str, int]:
    """view_id -> how many stored events of these types (the participant's actions: clicks, typing) it has."""
    return dict(conn.execute(
        f"SELECT view_id, count(*) FROM events WHERE participant_id = ? AND type IN ({', '.join('?' * len(types))}) "
        "GROUP BY view_id", (participant_id, *types)).fetchall())
