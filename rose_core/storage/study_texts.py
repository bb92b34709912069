"""The `study_texts` table: the exact Markdown each page of a study showed, per text version (1 when the study
is created; each saved edit adds one), so a paper can print what participants read."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .connection import Connection


@dataclass(frozen=True)
class StoredText:
    study_id: str
    version: int
    key: str
    markdown: str
    stored_at: float


def insert_texts(conn: Connection, study_id: str, version: int, texts: dict[str, str], at: float) -> None:
    conn.executemany("INSERT INTO study_texts(study_id, version, key, markdown, stored_at) VALUES (?,?,?,?,?)",
                     [(study_id, version, k, v, at) for k, v in sorted(texts.items())])


def latest_version(conn: Connection, study_id: str) -> int:
    """The newest text version of the study, 0 when none is stored."""
    row = conn.execute("SELECT MAX(version) FROM study_texts WHERE study_id = ?", (study_id,)).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def texts_of(conn: Connection, study_ids: Sequence[str]) -> list[StoredText]:
    """Every stored text of these studies, by study, version and key."""
    if not study_ids:
        return []
    rows = conn.execute(f"SELECT study_id, version, key, markdown, stored_at FROM study_texts WHERE study_id IN "
                        f"({','.join('?' * len(study_ids))}) ORDER BY study_id, version, key", list(study_ids))
    return [StoredText(r[0], int(r[1]), r[2], r[3], float(r[4])) for r in rows]


def delete_study(conn: Connection, study_id: str) -> int:
    """Inside the caller's transaction, before the study's row goes (a foreign key)."""
    return conn.execute("DELETE FROM study_texts WHERE study_id = ?", (study_id,)).rowcount
