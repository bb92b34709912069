"""The `questionnaire_answers` table: a participant's answers to the study's end questionnaire, one row per
question asked (answer NULL: not answered), stored once."""
from __future__ import annotations

from typing import Any, Sequence

from .connection import Connection


def insert_answers(conn: Connection, participant_id: str, answers: dict[str, str | None], at: float) -> bool:
    """Store the answers unless this participant's are stored already (then nothing: False)."""
    if conn.execute("SELECT 1 FROM questionnaire_answers WHERE participant_id = ? LIMIT 1",
                    (participant_id,)).fetchone():
        return False
    conn.executemany("INSERT INTO questionnaire_answers(participant_id, question, answer, answered_at) "
                     "VALUES (?,?,?,?)", [(participant_id, k, v, at) for k, v in sorted(answers.items())])
    return True


def answered(conn: Connection, participant_id: str) -> bool:
    return conn.execute("SELECT 1 FROM questionnaire_answers WHERE participant_id = ? LIMIT 1",
                        (participant_id,)).fetchone() is not None


def answer_count(conn: Connection, study_id: str) -> int:
    """How many participants of the study (any origin) stored their answers."""
    row = conn.execute("SELECT COUNT(DISTINCT q.participant_id) FROM questionnaire_answers q JOIN participants p "
                       "ON p.participant_id = q.participant_id WHERE p.study_id = ?", (study_id,)).fetchone()
    return int(row[0])


def answer_rows(conn: Connection, study_ids: Sequence[str]) -> list[Any]:
    """(study_id, participant_id, question, answer) of real participants only (origin 'participant')."""
    if not study_ids:
        return []
    return list(conn.execute(
        "SELECT p.study_id, q.participant_id, q.question, q.answer FROM questionnaire_answers q JOIN participants p "
        f"ON p.participant_id = q.participant_id WHERE p.origin = 'participant' AND p.study_id IN "
        f"({','.join('?' * len(study_ids))}) ORDER BY p.study_id, q.participant_id, q.question", list(study_ids)))


def delete_of(conn: Connection, participants_sql: str, params: tuple) -> int:
    """Inside the caller's transaction: the rows of the participants `participants_sql` selects (a study being
    deleted, a dry run being cleared), before the participants themselves go (a foreign key)."""
    return conn.execute(f"DELETE FROM questionnaire_answers WHERE participant_id IN ({participants_sql})", params).rowcount
