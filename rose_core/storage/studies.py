"""The `studies` table: a study's row (its config as JSON) and, created with it, its run of human responses."""
from __future__ import annotations

from typing import Any, Sequence

from .connection import Connection


def insert_study(conn: Connection, study: Any) -> None:
    """The study and its run (human responses of a study form one run, solver kind 'human')."""
    conn.execute("INSERT INTO studies(study_id, name, dataset_hash, config, created_at, active) VALUES (?,?,?,?,?,?)",
                 (study.study_id, study.name, study.dataset_hash, study.config.to_json(), study.created_at,
                  int(study.active)))
    conn.execute("INSERT INTO runs(run_id, solver_kind, solver_name, study_id, format, dataset_hash, imported_at) "
                 "VALUES (?, 'human', ?, ?, 'participant-app', ?, ?)",
                 (study.run_id, f"Human ({study.name})", study.study_id, study.dataset_hash, study.created_at))


def study_row(conn: Connection, study_id: str) -> Any:
    """The study's row (None: no such study); `instrument.config.load_study` makes it a `Study`."""
    return conn.execute("SELECT * FROM studies WHERE study_id = ?", (study_id,)).fetchone()


def study_rows(conn: Connection) -> list[Any]:
    """Every study's row, newest first (`instrument.config.load_studies`)."""
    return list(conn.execute("SELECT * FROM studies ORDER BY created_at DESC, study_id"))


def set_active(conn: Connection, study_id: str, active: bool) -> None:
    conn.execute("UPDATE studies SET active = ? WHERE study_id = ?", (int(active), study_id))


def set_config(conn: Connection, study_id: str, config_json: str) -> None:
    """Replace the study's stored configuration (its texts edited: `instrument.texts.update_texts`)."""
    conn.execute("UPDATE studies SET config = ? WHERE study_id = ?", (config_json, study_id))


def study_names(conn: Connection, study_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(study_id, name) of these studies, by id."""
    return [(r[0], r[1]) for r in conn.execute(
        f"SELECT study_id, name FROM studies WHERE study_id IN ({','.join('?' * len(study_ids))}) ORDER BY study_id",
        list(study_ids)).fetchall()]
