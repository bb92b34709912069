"""The `studies` table: a study's row (its config as JSON) and, created with it, its run of human responses."""
from __future__ import annotations

from typing import Any, Sequence

from . import study_versions
from .connection import Connection


def insert_study(conn: Connection, study: Any) -> None:
    """The study, its first version and its run (human responses of a study form one run, solver kind 'human')."""
    conn.execute("INSERT INTO studies(study_id, name, dataset_hash, config, created_at, active, version) "
                 "VALUES (?,?,?,?,?,?,?)", (study.study_id, study.name, study.dataset_hash, study.config.to_json(),
                                            study.created_at, int(study.active), study.version))
    study_versions.insert_version(conn, study.study_id, study.version, study.name, study.config.to_json(),
                                  study.created_at)
    conn.execute("INSERT INTO runs(run_id, solver_kind, solver_name, study_id, format, dataset_hash, imported_at) "
                 "VALUES (?, 'human', ?, ?, 'participant-app', ?, ?)",
                 (study.run_id, f"Human ({study.name})", study.study_id, study.dataset_hash, study.created_at))


def study_row(conn: Connection, study_id: str) -> Any:
    """The study's row (None: no such study); `instrument.config.load_study` makes it a `Study`."""
    return conn.execute("SELECT * FROM studies WHERE study_id = ?", (study_id,)).fetchone()


def study_rows(conn: Connection) -> list[Any]:
    """Every study's row, newest first (`instrument.config.load_studies`)."""
    return list(conn.execute("SELECT * FROM studies ORDER BY created_at DESC, study_id"))


def update_settings(conn: Connection, study_id: str, name: str, config_json: str, version: int, at: float) -> None:
    """A new version of the study's settings (the caller checked what may change), kept in study_versions too."""
    conn.execute("UPDATE studies SET name = ?, config = ?, version = ? WHERE study_id = ?",
                 (name, config_json, version, study_id))
    conn.execute("UPDATE runs SET solver_name = ? WHERE run_id = ?", (f"Human ({name})", f"study:{study_id}"))
    study_versions.insert_version(conn, study_id, version, name, config_json, at)


def set_active(conn: Connection, study_id: str, active: bool) -> None:
    conn.execute("UPDATE studies SET active = ? WHERE study_id = ?", (int(active), study_id))


def study_names(conn: Connection, study_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(study_id, name) of these studies, by id."""
    return [(r[0], r[1]) for r in conn.execute(
        f"SELECT study_id, name FROM studies WHERE study_id IN ({','.join('?' * len(study_ids))}) ORDER BY study_id",
        list(study_ids)).fetchall()]


def completion_secret(conn: Connection, study_id: str, new: str) -> str | None:
    """The study's completion secret, stored as `new` if it has none yet (two first uses at once agree: the first
    one written stays). None: no such study."""
    row = conn.execute("SELECT completion_secret FROM studies WHERE study_id = ?", (study_id,)).fetchone()
    if row is None or row[0] is not None:      # read first: every picture-check screen asks, one first use writes
        return None if row is None else row[0]
    conn.execute("UPDATE studies SET completion_secret = ? WHERE study_id = ? AND completion_secret IS NULL",
                 (new, study_id))
    row = conn.execute("SELECT completion_secret FROM studies WHERE study_id = ?", (study_id,)).fetchone()
    return None if row is None else row[0]
