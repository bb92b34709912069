"""Experimenter sign-in attempts: every attempt logged (when, from which client address and session, outcome),
and the failures that decide a lockout (policy: `rose_core.instrument.auth.GuessPolicy`)."""
from __future__ import annotations

from .connection import Connection
from typing import Literal

Outcome = Literal["ok", "wrong", "refused"]

_INSERT = ("INSERT INTO sign_in_attempts(attempt_id, attempted_at, client, session_id, outcome) "
           "VALUES (?, ?, ?, ?, ?)")
# Failures of one client address (or session) after its last successful sign-in and after `since`.
_FAILURES = {
    who: f"""SELECT count(*), max(attempted_at) FROM sign_in_attempts
             WHERE {who} = ? AND outcome = 'wrong' AND attempted_at > ?
               AND attempted_at > COALESCE((SELECT max(attempted_at) FROM sign_in_attempts
                                            WHERE {who} = ? AND outcome = 'ok'), ?)"""
    for who in ("client", "session_id")
}
# Failures against the one experimenter account, from any address or session, after its last success.
_ACCOUNT_FAILURES = """SELECT count(*), max(attempted_at) FROM sign_in_attempts
                       WHERE outcome = 'wrong' AND attempted_at > ?
                         AND attempted_at > COALESCE((SELECT max(attempted_at) FROM sign_in_attempts
                                                      WHERE outcome = 'ok'), ?)"""


def record_sign_in(conn: Connection, attempt_id: str, attempted_at: float, client: str, session_id: str,
                   outcome: Outcome) -> None:
    conn.execute(_INSERT, (attempt_id, attempted_at, client, session_id, outcome))


def failures_since(conn: Connection, who: Literal["client", "session_id"], key: str,
                   since: float) -> tuple[int, float | None]:
    """(failed attempts, time of the last one) for this client address or session."""
    n, last = conn.execute(_FAILURES[who], (key, since, key, since)).fetchone()
    return int(n), last



def account_failures_since(conn: Connection, since: float) -> tuple[int, float | None]:
    """(failed attempts, time of the last one) against the account, whatever address or session sent them: a
    guesser who changes address on every try is still counted."""
    n, last = conn.execute(_ACCOUNT_FAILURES, (since, since)).fetchone()
    return int(n), last
