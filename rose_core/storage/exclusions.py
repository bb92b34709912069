"""The `participant_exclusions` table (migration 12): participants excluded by hand, with a reason, who and when.

An exclusion is lifted by stamping it revoked (who, when), never by deleting it: the audit trail of every
decision stays. At most one exclusion of a participant stands at a time (a unique partial index)."""
from __future__ import annotations

from dataclasses import dataclass

from .connection import Connection


@dataclass(frozen=True)
class Exclusion:
    """One decision: excluded (reason, by, at), and lifted (revoked_by, revoked_at) or still standing."""

    exclusion_id: int
    participant_id: str
    study_id: str
    reason: str
    excluded_by: str
    excluded_at: float
    revoked_by: str | None
    revoked_at: float | None


def _exclusion(row) -> Exclusion:
    return Exclusion(*(row[k] for k in ("exclusion_id", "participant_id", "study_id", "reason", "excluded_by",
                                        "excluded_at", "revoked_by", "revoked_at")))


def standing(conn: Connection, participant_id: str) -> Exclusion | None:
    """The participant's exclusion in force, or None."""
    row = conn.execute("SELECT * FROM participant_exclusions WHERE participant_id = ? AND revoked_at IS NULL",
                       (participant_id,)).fetchone()
    return _exclusion(row) if row else None


def insert_exclusion(conn: Connection, participant_id: str, study_id: str, reason: str, by: str, t: float) -> None:
    """A new standing exclusion (the caller checked that none stands: the unique index refuses a second)."""
    conn.execute("INSERT INTO participant_exclusions(participant_id, study_id, reason, excluded_by, excluded_at) "
                 "VALUES (?,?,?,?,?)", (participant_id, study_id, reason, by, t))


def revoke(conn: Connection, participant_id: str, by: str, t: float) -> int:
    """Lift the participant's standing exclusion; rows changed (0: none stood)."""
    return conn.execute("UPDATE participant_exclusions SET revoked_by = ?, revoked_at = ? "
                        "WHERE participant_id = ? AND revoked_at IS NULL", (by, t, participant_id)).rowcount


def history(conn: Connection, study_id: str) -> list[Exclusion]:
    """Every exclusion decision of a study, standing and lifted, in the order they were made."""
    return [_exclusion(r) for r in conn.execute(
        "SELECT * FROM participant_exclusions WHERE study_id = ? ORDER BY excluded_at, exclusion_id", (study_id,))]


def standing_reasons(conn: Connection) -> dict[str, str]:
    """participant_id -> reason of every standing exclusion (the analyses' manual exclusion rule)."""
    return {r[0]: r[1] for r in conn.execute(
        "SELECT participant_id, reason FROM participant_exclusions WHERE revoked_at IS NULL")}
