"""The `study_versions` table: every version of a study's settings (version 1 at creation, one more per edit)."""
from __future__ import annotations

from typing import Any

from .connection import Connection


def insert_version(conn: Connection, study_id: str, version: int, name: str, config_json: str, at: float) -> None:
    conn.execute("INSERT INTO study_versions(study_id, version, name, config, created_at) VALUES (?,?,?,?,?)",
                 (study_id, version, name, config_json, at))


def version_rows(conn: Connection, study_id: str) -> list[Any]:
    """The study's versions, oldest first (study_id, version, name, config, created_at)."""
    return list(conn.execute("SELECT * FROM study_versions WHERE study_id = ? ORDER BY version", (study_id,)))


def delete_study(conn: Connection, study_id: str) -> int:
    """Inside the caller's transaction, before the study's row goes (a foreign key)."""
    return conn.execute("DELETE FROM study_versions WHERE study_id = ?", (study_id,)).rowcount
