"""The `runs` table: one row per run (a model's, an agent's, a study's humans), which its responses belong to.

Imported model and agent runs (`runs.importer`, the block below): a run is stored with its responses in one
transaction (delete-and-insert when it replaces one), so a refused run leaves the database as it was. The refusals
are raised as the exceptions below, inside the transaction (it rolls back); the importer says them in its own words.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from .connection import Connection, Store, now
from .responses import ResponseRow, write_responses

# --------------------------------------------------------------------------- imported model and agent runs


class RunExists(Exception):
    """A run with this id is stored and the caller did not ask to replace it."""


class OtherBuildRuns(Exception):
    """The database holds runs scored against another dataset build: `others` lists (run_id, dataset_hash)."""

    def __init__(self, others: list[tuple[str, str]]):
        self.others = others
        super().__init__(f"runs of another dataset build: {others[:5]}")


class HumanRun(Exception):
    """Human runs belong to a study: they are never deleted as an imported run."""


class UnknownRun(Exception):
    """No run with this id is stored (never imported, or removed meanwhile: two tabs removing the same run)."""


@dataclass(frozen=True)
class ImportedRun:
    """One `runs` row of an imported model or agent run."""
    run_id: str
    solver_kind: str
    solver_name: str
    source_file: str
    format: str
    dataset_hash: str
    meta: dict[str, Any]


def run_exists(store: Store, run_id: str) -> bool:
    return bool(store.query("SELECT 1 AS x FROM runs WHERE run_id = ?", (run_id,)))


def store_run(store: Store, run: ImportedRun, rows: Sequence[ResponseRow], replace: bool) -> bool:
    """The one place an imported run is written: delete-and-insert in one transaction; True when a run was
    replaced. Raises RunExists or OtherBuildRuns (nothing written)."""
    with store.write() as c:
        exists = c.execute("SELECT 1 FROM runs WHERE run_id = ?", (run.run_id,)).fetchone()
        if exists and not replace:
            raise RunExists(run.run_id)
        # One database holds one build's verdicts (as `rescore` requires): the builds share instance ids, so
        # runs of two builds would sit in one table and be paired by id with no word of it.
        others = c.execute("SELECT r.run_id, r.dataset_hash FROM runs r WHERE r.run_id <> ? AND r.dataset_hash <> ? "
                           "AND EXISTS (SELECT 1 FROM responses x WHERE x.run_id = r.run_id) ORDER BY r.run_id",
                           (run.run_id, run.dataset_hash)).fetchall()
        if others:
            raise OtherBuildRuns([(r[0], r[1]) for r in others])
        if exists:
            c.execute("DELETE FROM responses WHERE run_id = ?", (run.run_id,))
            c.execute("DELETE FROM runs WHERE run_id = ?", (run.run_id,))
        c.execute("INSERT INTO runs(run_id, solver_kind, solver_name, source_file, format, dataset_hash, imported_at, "
                  "meta) VALUES (?,?,?,?,?,?,?,?)",
                  (run.run_id, run.solver_kind, run.solver_name, run.source_file, run.format, run.dataset_hash, now(),
                   json.dumps(run.meta)))
        write_responses(c, rows)
    return bool(exists)


def imported_run_metas(store: Store) -> list[dict[str, Any]]:
    """(run_id, meta) of every run that is not a study's humans: the import record each run keeps."""
    return store.query("SELECT run_id, meta FROM runs WHERE solver_kind != 'human'")


def list_runs(store: Store) -> list[dict]:
    """Every run with its response count, newest import first."""
    return store.query("SELECT r.*, (SELECT count(*) FROM responses x WHERE x.run_id = r.run_id) AS responses "
                       "FROM runs r ORDER BY r.imported_at DESC")


def delete_run(store: Store, run_id: str) -> None:
    """A model or agent run and its responses, in one transaction; raises HumanRun for a study's humans and
    UnknownRun when no such run is stored (nothing written)."""
    with store.write() as c:
        row = c.execute("SELECT solver_kind FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise UnknownRun(run_id)
        if row[0] == "human":
            raise HumanRun(run_id)
        c.execute("DELETE FROM responses WHERE run_id = ?", (run_id,))
        c.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))


# --------------------------------------------------------------------------- the dashboards' reads

# Every run's solver, by run id (a column read beside the responses: `RUN_SOLVERS_COLUMNS` names its kinds).
RUN_SOLVERS_SQL = "SELECT run_id, solver_kind, solver_name, study_id FROM runs ORDER BY run_id"
RUN_SOLVERS_COLUMNS = {"run_id": "text", "solver_kind": "text", "solver_name": "text", "study_id": "text"}


# --------------------------------------------------------------------------- the paper bundle's check


def other_dataset_builds(conn: Connection, dataset_hash: str, limit: int = 3,
                         skip_hashes: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Up to `limit` runs and studies scored against another dataset build than `dataset_hash`, as
    ('run <id>' or 'study <id>', their dataset hash); builds in `skip_hashes` (another benchmark's, such as the
    SGP studies' episode builds) are not counted."""
    hashes = (dataset_hash, *skip_hashes)
    marks = ", ".join("?" * len(hashes))
    return [(r[0], r[1]) for r in conn.execute(
        f"SELECT 'run ' || run_id, dataset_hash FROM runs WHERE dataset_hash NOT IN ({marks}) UNION ALL "
        f"SELECT 'study ' || study_id, dataset_hash FROM studies WHERE dataset_hash NOT IN ({marks}) "
        f"LIMIT {int(limit)}", (*hashes, *hashes)).fetchall()]
