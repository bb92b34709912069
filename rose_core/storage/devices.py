"""The `devices` table (schema migration 13): the device a participant's browser claims before consent.

One row per participant, the latest claim (`reports` counts how many were stored, `first_at` / `reported_at` say
when); `allowed` is whether that claim met the study's device policy. The values are what the browser said, never
trusted: rose_core.instrument.device checks their types and ranges before they reach here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .columns import read_frame
from .connection import Connection


@dataclass(frozen=True)
class DeviceRow:
    participant_id: str
    viewport_w: int | None
    viewport_h: int | None
    dpr: float | None
    touch_points: int | None
    coarse_pointer: bool | None
    allowed: bool
    reports: int
    first_at: float
    reported_at: float


def record_device(conn: Connection, participant_id: str, viewport: tuple[int, int] | None, dpr: float | None,
                  touch_points: int | None, coarse_pointer: bool | None, allowed: bool, t: float) -> None:
    """Store the latest claim (inside the caller's transaction): the first one inserts, later ones overwrite it."""
    w, h = viewport if viewport else (None, None)
    coarse = None if coarse_pointer is None else int(coarse_pointer)
    conn.execute("INSERT INTO devices(participant_id, viewport_w, viewport_h, dpr, touch_points, coarse_pointer, "
                 "allowed, reports, first_at, reported_at) VALUES (?,?,?,?,?,?,?,1,?,?) "
                 "ON CONFLICT(participant_id) DO UPDATE SET viewport_w = excluded.viewport_w, "
                 "viewport_h = excluded.viewport_h, dpr = excluded.dpr, touch_points = excluded.touch_points, "
                 "coarse_pointer = excluded.coarse_pointer, allowed = excluded.allowed, "
                 "reports = devices.reports + 1, reported_at = excluded.reported_at",
                 (participant_id, w, h, dpr, touch_points, coarse, int(allowed), t, t))


def _device(row: Any) -> DeviceRow:
    return DeviceRow(row["participant_id"], row["viewport_w"], row["viewport_h"], row["dpr"], row["touch_points"],
                     None if row["coarse_pointer"] is None else bool(row["coarse_pointer"]), bool(row["allowed"]),
                     row["reports"], row["first_at"], row["reported_at"])


def device_of(conn: Connection, participant_id: str) -> DeviceRow | None:
    row = conn.execute("SELECT * FROM devices WHERE participant_id = ?", (participant_id,)).fetchone()
    return _device(row) if row else None


def device_frame(conn: Connection, study_ids: list[str] | None = None) -> Any:
    """Every counted participant (origin 'participant') of these studies (all when None) with their claimed device,
    as a pandas DataFrame; a participant whose browser never reported has NULLs (`reported` 0)."""
    where, params = "p.origin = 'participant'", []
    if study_ids is not None:
        if not study_ids:
            where += " AND 1 = 0"
        else:
            where += f" AND p.study_id IN ({', '.join('?' for _ in study_ids)})"
            params = list(study_ids)
    return read_frame(conn, "SELECT p.participant_id, p.study_id, p.external_id, d.viewport_w, d.viewport_h, d.dpr, "
                            "d.touch_points, d.coarse_pointer, d.allowed, coalesce(d.reports, 0) AS reports "
                            "FROM participants p LEFT JOIN devices d ON d.participant_id = p.participant_id "
                            f"WHERE {where} ORDER BY p.study_id, p.participant_id", tuple(params))


def delete_of(conn: Connection, participants_sql: str, params: tuple) -> int:
    """Inside the caller's transaction: the rows of the participants `participants_sql` selects (a study being
    deleted, a dry run being cleared), before the participants themselves go (a foreign key)."""
    return conn.execute(f"DELETE FROM devices WHERE participant_id IN ({participants_sql})", params).rowcount
