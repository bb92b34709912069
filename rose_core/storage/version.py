"""The one data version of the stored responses, which every cache of them keys on (`data_version`).

Responses only grow, except where the version says so: a rescore rewrites verdicts in place (the verdicts
generation), and a run replaced or removed, or a database made anew at the same place, changes the runs' import
times (SQLite reuses the ids freed by a removed run, so counts and ids alone would not tell). Equal versions:
equal responses, runs and verdicts.

Read in one statement (one snapshot on either backend), ~40 ms at 200,000 responses on SQLite (two counts in one
scan of an index, a third over the previews' and tests' through the participants' index; the last id is the primary
key's end).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from .connection import Connection
from .participants import NEVER_ANALYSED

# Responses the analyses never read (previews' and tests' answers, `responses.ANALYSABLE`), counted through the
# participants' index: a participant marked as a test, or back, changes the counts below without a row written.
_HIDDEN = f"SELECT count(*) AS hidden FROM responses WHERE participant_id IN ({NEVER_ANALYSED})"
# A row per run, each carrying the counts (one row, of NULL run, when there is no run).
# Both counts in one scan of the participants' index (two scans cost PostgreSQL ~40 ms each at 205,840 rows).
_COUNTS = "SELECT count(*) AS every, count(*) FILTER (WHERE participant_id != '') AS theirs FROM responses"
VERSION_SQL = ("SELECT v.n, v.last, v.people, v.generation, runs.run_id, runs.solver_kind, runs.imported_at FROM (SELECT "
               "c.every - h.hidden AS n, "
               "(SELECT coalesce(max(response_id), 0) FROM responses) AS last, "
               "c.theirs - h.hidden AS people, "
               "(SELECT coalesce(max(CAST(value AS INTEGER)), 0) FROM meta WHERE key = 'verdicts_generation') "
               f"AS generation FROM ({_COUNTS}) AS c, ({_HIDDEN}) AS h) AS v LEFT JOIN runs ON 1 = 1 "
               "ORDER BY runs.run_id")
# How many analysable responses are stored after an id (a range of the primary key: no scan), read beside rows
# appended after a version's last id: with the version's count it tells whether an answer was committed below that
# id since (or a participant's rows left or joined the analysed ones).
NEWER_SQL = f"SELECT count(*) AS n FROM responses WHERE response_id > ? AND participant_id NOT IN ({NEVER_ANALYSED})"
VERSION_COLUMNS: dict[str, str] = {"n": "int", "last": "int", "people": "int", "generation": "int",
                                   "run_id": "text", "solver_kind": "text", "imported_at": "float"}


@dataclass(frozen=True)
class DataVersion:
    """What the stored responses are, without reading one: the count of the responses the analyses read (all but
    previews' and tests') and the last id of any, the count of those that are participants' (of every kind: their
    statistics read practice and attention items too), the verdicts generation, and each run's solver kind and
    import time."""

    rows: int
    last: int
    people: int
    generation: int
    runs: tuple[tuple[str, str, float], ...]     # (run id, solver kind, imported at), by run id

    @property
    def key(self) -> str:
        """The whole version as a short digest (a cache key, a file name's part)."""
        return hashlib.sha256(json.dumps([self.rows, self.last, self.people, self.generation,
                                          self.runs]).encode()).hexdigest()[:20]

    @property
    def stamps(self) -> dict[str, float]:
        """run id → import time."""
        return {r: t for r, _, t in self.runs}

    def of_runs(self, run_ids: Iterable[str]) -> tuple:
        """The share of the version that a part computed from these runs' rows depends on, beside those rows
        themselves: the verdicts generation and the runs' import times (-1 for a run no longer stored)."""
        stamps = self.stamps
        return (self.generation, tuple(sorted((str(r), stamps.get(str(r), -1.0)) for r in set(run_ids))))

    def people_part(self) -> tuple:
        """What the participants' own statistics depend on: their responses' count, the generation and the
        human runs' import times (a database made anew with as many participant responses is not the same data).
        A model run imported leaves it as it was."""
        return (self.people, self.generation, tuple((r, t) for r, k, t in self.runs if k == "human"))


def version_of(columns: Mapping[str, Sequence[Any]]) -> DataVersion:
    """The version from `VERSION_SQL`'s columns (as `data_version` reads them, or a column read beside rows)."""
    n, last, people, generation = (int(columns[c][0]) if len(columns[c]) else 0
                                   for c in ("n", "last", "people", "generation"))
    runs = tuple((str(r), str(k), float(t)) for r, k, t in zip(columns["run_id"], columns["solver_kind"],
                                                               columns["imported_at"]) if r is not None)
    return DataVersion(n, last, people, generation, runs)


def data_version(conn: Connection) -> DataVersion:
    """The data version now, on the caller's connection (no new one per rerun), in one statement."""
    rows = conn.execute(VERSION_SQL).fetchall()
    return version_of({c: [r[j] for r in rows] for j, c in enumerate(VERSION_COLUMNS)})
