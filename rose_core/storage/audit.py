"""What a benchmark checks a database against after a run (bench/): responses and events stored per participant,
instances answered beyond their target, participants' end reasons, the stored verdicts and scorer versions.

Each count is over the whole database, or over one study's participants when `study_id` is given."""
from __future__ import annotations

from typing import Any, Iterator

from .connection import Connection, Store


def responses_per_participant(store: Store, study_id: str | None = None) -> dict[str, int]:
    """external id → responses stored (every kind)."""
    where, params = (" WHERE p.study_id = ?", (study_id,)) if study_id else ("", ())
    return {r["external_id"]: r["n"] for r in store.query(
        "SELECT p.external_id, count(*) AS n FROM responses r JOIN participants p USING (participant_id)"
        f"{where} GROUP BY p.external_id", params)}


def events_per_participant(store: Store) -> dict[str, int]:
    """external id → events stored."""
    return {r["external_id"]: r["n"] for r in store.query(
        "SELECT p.external_id, count(*) AS n FROM events e JOIN participants p USING (participant_id) "
        "GROUP BY p.external_id")}


def main_instances_over(store: Store, target: int, study_id: str | None = None) -> int:
    """Instances with more main responses than `target` (over the whole table, or from one study's participants)."""
    if study_id:
        return store.query("SELECT count(*) AS n FROM (SELECT r.instance_id FROM responses r JOIN participants p "
                           "USING (participant_id) WHERE p.study_id = ? AND r.kind = 'main' GROUP BY r.instance_id "
                           "HAVING count(*) > ?) AS o", (study_id, target))[0]["n"]
    return store.query("SELECT count(*) AS n FROM (SELECT instance_id FROM responses WHERE kind = 'main' "
                       "GROUP BY instance_id HAVING count(*) > ?) AS o", (target,))[0]["n"]


def event_count(store: Store, study_id: str | None = None) -> int:
    if study_id:
        return store.query("SELECT count(*) AS n FROM events e JOIN participants p USING (participant_id) "
                           "WHERE p.study_id = ?", (study_id,))[0]["n"]
    return store.query("SELECT count(*) AS n FROM events")[0]["n"]


def end_reasons(store: Store, study_id: str | None = None) -> dict[str, int]:
    """end reason ('-': none yet) → participants."""
    where, params = (" WHERE study_id = ?", (study_id,)) if study_id else ("", ())
    return {r["e"]: r["n"] for r in store.query(
        f"SELECT coalesce(end_reason, '-') AS e, count(*) AS n FROM participants{where} GROUP BY 1", params)}


def participant_ids(store: Store) -> list[str]:
    return [r["participant_id"] for r in store.query("SELECT participant_id FROM participants")]


def response_count(store: Store) -> int:
    return store.query("SELECT count(*) AS n FROM responses")[0]["n"]


def main_solver_count(store: Store) -> int:
    """Solvers with main responses: the humans as one, each model or agent by kind and name."""
    return store.query("SELECT count(DISTINCT CASE WHEN solver_kind = 'human' THEN 'human' ELSE solver_kind || "
                       "':' || solver_name END) AS n FROM runs WHERE run_id IN "
                       "(SELECT DISTINCT run_id FROM responses WHERE kind = 'main')")[0]["n"]


def scorer_versions(store: Store) -> tuple[int, int, Any]:
    """(responses, distinct scorer versions, the lowest version) over every stored response."""
    r = store.query("SELECT count(*) AS n, count(DISTINCT scorer_version) AS versions, "
                    "min(scorer_version) AS lowest FROM responses")[0]
    return r["n"], r["versions"], r["lowest"]


def verdicts(conn: Connection) -> Iterator[tuple]:
    """Every stored verdict with what it was computed from, in a fixed order (run, instance, id): for comparing the
    verdicts of two databases (or of one before and after a rescore)."""
    for row in conn.execute("SELECT response_id, instance_id, protocol, parsed, valid, passed, failure, errors "
                            "FROM responses ORDER BY run_id, instance_id, response_id"):
        yield tuple(row)


def fold_wal(path: str) -> None:
    """Move a SQLite file's write-ahead log into the file itself, so a copy of the one file is the whole database
    (the bench keeps a populated database and copies it for each run)."""
    import sqlite3

    with sqlite3.connect(path) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
