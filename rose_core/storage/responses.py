"""The `responses` table: its one writer (participants, run imports, agents) and its one reader.

Every read of response rows goes through `responses_query` (the SELECT, for `read_response_rows` and the
dashboards' column read, `main_responses_read`), with its columns named from one
list: `RESPONSE_COLUMNS` (the table's, typed in `RESPONSE_TYPES`), plus the run's (`RUN_COLUMNS`, joined from
`runs`) and the participant's (`PARTICIPANT_COLUMNS`, left-joined from `participants`).
"""
from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Sequence

from .columns import fetch_rows
from .connection import Connection, Store
from .participants import NEVER_ANALYSED, NOT_COUNTED, filling_target

ResponseKind = Literal["practice", "main", "attention"]


@dataclass(frozen=True)
class ResponseRow:
    """One `responses` row. Benchmark columns (template … errors) come from the item's scored result;
    participant columns stay empty for model and agent runs.

    Timing: `total_ms` is the server's assigned → answered time; `first_action_ms`, `active_ms` (page visible
    and focused) and `client_total_ms` are what the page measured, kept as secondary."""

    run_id: str
    instance_id: str
    template: str
    subset: str
    split: str
    scene_id: str
    response: str
    protocol: str | None
    parsed: str                      # JSON
    valid: int
    passed: int
    failure: str | None
    errors: str                      # JSON list
    submitted_at: float
    participant_id: str = ""
    kind: ResponseKind = "main"
    attempt: int = 0
    first_action_ms: float | None = None
    total_ms: float | None = None
    active_ms: float | None = None
    client_total_ms: float | None = None
    viewport_w: int | None = None
    viewport_h: int | None = None
    device_pixel_ratio: float | None = None
    focus_lost: int | None = None
    view_id: str | None = None
    scorer_version: str = field(kw_only=True)   # which scorer produced valid/passed/failure (the caller says)

    @staticmethod
    def scored(run_id: str, instance_id: str, template: str, subset: str, split: str, scene_id: str,
               response: str, protocol: str | None, parsed: dict, valid: bool, passed: bool, failure: str | None,
               errors: Sequence[str], submitted_at: float, *, scorer_version: str, **participant) -> ResponseRow:
        return ResponseRow(run_id, instance_id, template, subset, split, scene_id, response, protocol,
                           json.dumps(parsed), int(valid), int(passed), failure, json.dumps(list(errors)),
                           submitted_at, scorer_version=scorer_version, **participant)


_COLUMNS = [f.name for f in fields(ResponseRow)]
_INSERT = (f"INSERT INTO responses({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})")


def write_responses(conn: Connection, rows: Sequence[ResponseRow]) -> int:
    """Insert rows inside the caller's transaction (a whole run at once is fine: one executemany).

    A second row for the same (run, participant, instance, kind, attempt) raises IntegrityError (storage.connection), so
    the caller's transaction rolls back and nothing is half-stored."""
    conn.executemany(_INSERT, [tuple(getattr(r, c) for c in _COLUMNS) for r in rows])  # astuple deep-copies: 10x slower
    return len(rows)


def store_responses(store: Store, rows: Sequence[ResponseRow]) -> int:
    """`write_responses` in its own `BEGIN IMMEDIATE` transaction."""
    with store.write() as c:
        return write_responses(c, rows)


def rescore_responses(conn: Connection, updates: Sequence[tuple]) -> None:
    """Rewrite stored verdicts: each update is (protocol, parsed, valid, passed, failure, errors, scorer_version,
    response_id)."""
    conn.executemany("UPDATE responses SET protocol = ?, parsed = ?, valid = ?, passed = ?, failure = ?, errors = ?, "
                     "scorer_version = ? WHERE response_id = ?", updates)


# --------------------------------------------------------------------------- the one reader

def _kind_of(hint: Any) -> str:
    """'int', 'float' or 'text' for a `ResponseRow` field's type."""
    args = [a for a in typing.get_args(hint) if a is not type(None)] if isinstance(hint, types.UnionType) else [hint]
    return "int" if args[0] is int else "float" if args[0] is float else "text"


# The table's columns, in its order of meaning: the id, then what `ResponseRow` writes.
RESPONSE_COLUMNS: tuple[str, ...] = ("response_id", *_COLUMNS)
# Each column's kind, for readers that type their columns (the dashboards' frame): 'int', 'float' or 'text'.
RESPONSE_TYPES: dict[str, str] = {"response_id": "int",
                                  **{name: _kind_of(hint) for name, hint in typing.get_type_hints(ResponseRow).items()}}
# The run's columns a reader may ask for beside a response's (an inner join on `runs`), and the participant's (a
# left join: model and agent responses have none).
RUN_COLUMNS: tuple[str, ...] = ("solver_kind", "solver_name", "study_id", "dataset_hash")
PARTICIPANT_COLUMNS: tuple[str, ...] = ("external_id", "end_reason")
# A participant's standing exclusion by hand (`storage.exclusions`), left-joined like the participant's columns.
EXCLUSION_COLUMNS: dict[str, str] = {"excluded_reason": "x.reason", "excluded_by": "x.excluded_by",
                                     "excluded_at": "x.excluded_at"}
# Counted participants' rows only (never a preview's, a simulation's or a test's): model and agent rows have
# participant_id '', which is never in NOT_COUNTED.
COUNTED_ONLY = f"participant_id NOT IN ({NOT_COUNTED})"
# What the analyses' frame reads: everything but previews' and tests' rows (a dry run's simulated rows are dropped
# by the analyses unless asked for: `analysis.selection.counted`).
ANALYSABLE = f"participant_id NOT IN ({NEVER_ANALYSED})"
# What the experimenters' export holds (`instrument.exports`), in its order.
EXPORT_COLUMNS: tuple[str, ...] = (
    "response_id", "run_id", "solver_kind", "solver_name", "study_id", "participant_id", "external_id",
    "instance_id", "kind", "attempt", "template", "subset", "split", "scene_id", "response", "protocol", "parsed",
    "valid", "passed", "failure", "errors", "scorer_version", "first_action_ms", "total_ms", "active_ms",
    "client_total_ms", "viewport_w", "viewport_h", "device_pixel_ratio", "focus_lost", "view_id", "submitted_at",
    "end_reason", "excluded_reason", "excluded_by", "excluded_at")
_ORDERS = {"response_id": "r.response_id",
           "participant": "r.participant_id, r.submitted_at, r.response_id"}


def responses_query(columns: Sequence[str] = RESPONSE_COLUMNS, *, run_id: str | None = None,
                    participant_id: str | None = None, instance_id: str | None = None, kind: str | None = None,
                    attempt: int | None = None, study_id: str | None = None, solver_kind: str | None = None,
                    after_id: int | None = None, response_ids: Sequence[int] | None = None,
                    participants_only: bool = False, timed: bool = False, analysable: bool = False,
                    every_row: bool = False, main_only: bool = False,
                    order: Literal["response_id", "participant"] = "response_id") -> tuple[str, tuple]:
    """The SELECT of response rows and its parameters: `columns` (of `RESPONSE_COLUMNS`, `RUN_COLUMNS`,
    `PARTICIPANT_COLUMNS`, `EXCLUSION_COLUMNS`); of one run, participant, instance, kind, attempt; of the runs of
    one study or solver kind; after a response id; of these ids; of participants only (not model or agent runs);
    with a server time only (`total_ms` > 0); of main items only (`main_only`: written into the statement, not a
    parameter, for the dashboards' column read, which takes integer parameters only); ordered by response id or by
    participant then time.

    Never a preview's, a simulated or a test participant's row (`COUNTED_ONLY`), unless `participant_id` names
    that participant: their own session reads its answers back through here (practice feedback, a round's
    verdicts). `analysable`: the analyses' frame, which also reads a dry run's simulated rows (`ANALYSABLE`).
    `every_row`: no origin filter at all, previews', simulated and test participants' rows too (`rescore`, which
    keeps every stored verdict current, whoever's it is)."""
    unknown = [c for c in columns if c not in RESPONSE_TYPES and c not in RUN_COLUMNS
               and c not in PARTICIPANT_COLUMNS and c not in EXCLUSION_COLUMNS]
    if unknown:
        raise ValueError(f"not a column of a response: {', '.join(unknown)}")
    if every_row and analysable:
        raise ValueError("every_row and analysable are two different origin filters: ask for one")
    where: list[str] = ([] if participant_id is not None or every_row else [f"r.{ANALYSABLE}"] if analysable
                        else [f"r.{COUNTED_ONLY}"])
    params: list[Any] = []
    for name, value in (("run_id", run_id), ("participant_id", participant_id), ("instance_id", instance_id),
                        ("kind", kind), ("attempt", attempt)):
        if value is not None:
            where.append(f"r.{name} = ?")
            params.append(value)
    if solver_kind is not None:
        where.append("runs.solver_kind = ?")
        params.append(solver_kind)
    if main_only:
        where.append("r.kind = 'main'")
    if participants_only:
        where.append("r.participant_id != ''")
    if timed:
        where.append("r.total_ms IS NOT NULL AND r.total_ms > 0")
    if study_id is not None:
        where.append("runs.study_id = ?")
        params.append(study_id)
    if after_id is not None:
        where.append("r.response_id > ?")
        params.append(after_id)
    if response_ids is not None:
        where.append(f"r.response_id IN ({', '.join('?' * len(response_ids))})" if response_ids else "0 = 1")
        params += list(response_ids)
    run = any(c in RUN_COLUMNS for c in columns) or study_id is not None or solver_kind is not None
    person = any(c in PARTICIPANT_COLUMNS for c in columns)
    excluded = any(c in EXCLUSION_COLUMNS for c in columns)
    cols = ", ".join(f"runs.{c}" if c in RUN_COLUMNS else f"p.{c}" if c in PARTICIPANT_COLUMNS
                     else f"{EXCLUSION_COLUMNS[c]} AS {c}" if c in EXCLUSION_COLUMNS else f"r.{c}" for c in columns)
    sql = (f"SELECT {cols} FROM responses r"
           + (" JOIN runs USING (run_id)" if run else "")
           + (" LEFT JOIN participants p ON p.participant_id = r.participant_id" if person else "")
           + (" LEFT JOIN participant_exclusions x ON x.participant_id = r.participant_id AND x.revoked_at IS NULL"
              if excluded else "")
           + (f" WHERE {' AND '.join(where)}" if where else "")
           + f" ORDER BY {_ORDERS[order]}")
    return sql, tuple(params)


def read_response_rows(conn: Connection, columns: Sequence[str] = RESPONSE_COLUMNS, **filters: Any,
                       ) -> tuple[list[str], list[tuple]]:
    """(column names, rows as plain tuples) of the responses `responses_query` selects (its filters)."""
    return fetch_rows(conn, *responses_query(columns, **filters))


def main_responses_read(columns: Sequence[str], after_id: int = 0) -> tuple[str, tuple, dict[str, str]]:
    """The column read of the main responses stored after `after_id`: (sql, params, each column's kind) for
    `columns.read_columns`, the SELECT built by `responses_query` (its filters hold for this read too), `columns`
    of `RESPONSE_COLUMNS` (`response_id` among them) typed as `RESPONSE_TYPES` says, ordered by response id."""
    unknown = [c for c in columns if c not in RESPONSE_TYPES]
    if unknown or "response_id" not in columns:
        raise ValueError(f"not a column of the responses table: {', '.join(unknown) or 'response_id missing'}")
    sql, params = responses_query(columns, main_only=True, after_id=after_id, analysable=True)
    return sql, params, {c: RESPONSE_TYPES[c] for c in columns}


def main_answer_counts(conn: Connection, run_id: str, count_anonymous: bool = True) -> dict[str, int]:
    """Counted main responses per instance of one run; anonymous visitors' only when they fill the targets
    (`StudyConfig.anonymous_counts`, `participants.filling_target`)."""
    return dict(conn.execute("SELECT instance_id, count(*) FROM responses WHERE run_id = ? AND kind = 'main' "
                             f"AND {COUNTED_ONLY} AND participant_id IN ({filling_target(count_anonymous)}) "
                             "GROUP BY instance_id", (run_id,)).fetchall())


def response_of(conn: Connection, run_id: str, participant_id: str, instance_id: str, kind: str,
                attempt: int) -> Any:
    """The one stored response of (run, participant, instance, kind, attempt), a row readable by column name;
    None if there is none."""
    return conn.execute(*responses_query(RESPONSE_COLUMNS, run_id=run_id, participant_id=participant_id,
                                         instance_id=instance_id, kind=kind, attempt=attempt)).fetchone()


def practice_round_passes(conn: Connection, participant_id: str, attempt: int) -> list[int]:
    """The verdicts (1 PASS, 0 not) of a participant's practice round `attempt`."""
    return [r[0] for r in conn.execute(*responses_query(("passed",), participant_id=participant_id,
                                                        kind="practice", attempt=attempt))]


def delete_of_origin(conn: Connection, run_id: str, study_id: str, origin: str) -> int:
    """Inside the caller's transaction: the responses in the study's run of its participants of this origin (a
    dry run's simulated participants). Returns rows deleted."""
    from .participants import OF_ORIGIN

    return conn.execute(f"DELETE FROM responses WHERE run_id = ? AND participant_id IN ({OF_ORIGIN})",
                        (run_id, study_id, origin)).rowcount
