"""The one reader of `responses` (storage.responses): its column list, its query builder and its filters, on both
backends (the `populated_db` fixture: a study's participants, a model run and an agent run)."""
import sqlite3

import pandas as pd
import pytest

from rose_core.analysis import frame
from rose_core.storage import responses
from rose_core.storage.responses import (EXCLUSION_COLUMNS, EXPORT_COLUMNS, PARTICIPANT_COLUMNS, RESPONSE_COLUMNS,
                                         RESPONSE_TYPES, RUN_COLUMNS, ResponseRow, main_responses_read,
                                         read_response_rows, responses_query)
from rose_core.storage.schema import MIGRATIONS


def _table_columns() -> set[str]:
    conn = sqlite3.connect(":memory:")
    for step in sorted(MIGRATIONS):
        for sql in MIGRATIONS[step]:
            conn.execute(sql)
    return {r[1] for r in conn.execute("PRAGMA table_info(responses)")}


def test_the_column_list_is_the_tables():
    assert set(RESPONSE_COLUMNS) == _table_columns()
    assert list(RESPONSE_COLUMNS) == ["response_id", *(f for f in ResponseRow.__dataclass_fields__)]
    assert RESPONSE_TYPES["response_id"] == "int" and RESPONSE_TYPES["total_ms"] == "float"
    assert RESPONSE_TYPES["participant_id"] == "text" and RESPONSE_TYPES["viewport_w"] == "int"
    assert set(RESPONSE_TYPES) == set(RESPONSE_COLUMNS)


def test_the_dashboards_frame_reads_columns_of_the_one_list():
    """The dashboards' columnar read (analysis.frame) names and types its columns as the one list does."""
    known = set(RESPONSE_COLUMNS) | set(RUN_COLUMNS)
    assert set(frame._COLUMNS) <= known
    assert all(RESPONSE_TYPES[c] == "int" for c in frame._INTS)
    assert all(RESPONSE_TYPES[c] == "float" for c in frame._FLOATS)


def test_an_unknown_column_is_refused():
    with pytest.raises(ValueError, match="not a column of a response: nope"):
        responses_query(("response_id", "nope"))


def test_every_row_has_no_origin_filter_and_is_not_mixed_with_the_analyses_one():
    sql, _ = responses_query(("response_id",), every_row=True)
    assert "WHERE" not in sql                       # rescore's read: previews', simulated and tests' rows too
    assert "participant_id NOT IN" in responses_query(("response_id",))[0]
    with pytest.raises(ValueError, match="two different origin filters"):
        responses_query(("response_id",), every_row=True, analysable=True)


def _direct(conn, sql, params=()):
    return [tuple(r) for r in conn.execute(sql, params).fetchall()]


def test_every_column_and_row_as_stored(populated_db):
    with populated_db.connect() as conn:
        names, rows = read_response_rows(conn)
        assert names == list(RESPONSE_COLUMNS)
        assert rows and rows == _direct(conn, f"SELECT {', '.join(RESPONSE_COLUMNS)} FROM responses "
                                              "ORDER BY response_id")


def test_the_filters_select_as_written(populated_db):
    with populated_db.connect() as conn:
        study_id, run_id = _direct(conn, "SELECT study_id, run_id FROM runs WHERE solver_kind = 'human'")[0]
        _, rows = read_response_rows(conn, ("response_id", "total_ms"), kind="main", solver_kind="human", timed=True,
                                 study_id=study_id)
        assert rows and rows == _direct(
            conn, "SELECT r.response_id, r.total_ms FROM responses r JOIN runs USING (run_id) WHERE r.kind = 'main' "
                  "AND runs.solver_kind = 'human' AND r.total_ms > 0 AND runs.study_id = ? ORDER BY r.response_id",
            (study_id,))
        _, people = read_response_rows(conn, ("participant_id", "kind", "passed"), participants_only=True,
                                   order="participant")
        assert people == _direct(conn, "SELECT participant_id, kind, passed FROM responses WHERE participant_id != '' "
                                       "ORDER BY participant_id, submitted_at, response_id")
        assert {r[0] for r in people} and all(r[0] for r in people)
        first = rows[0][0]
        _, after = read_response_rows(conn, ("response_id",), after_id=first, kind="main")
        assert after and all(r[0] > first for r in after)
        _, some = read_response_rows(conn, ("response_id", "run_id"), response_ids=[r[0] for r in rows[:3]])
        assert [r[0] for r in some] == [r[0] for r in rows[:3]] and {r[1] for r in some} == {run_id}
        assert read_response_rows(conn, ("response_id",), response_ids=[])[1] == []
        assert len(read_response_rows(conn, ("response_id",), kind="main", solver_kind="human")[1]) == len(
            _direct(conn, "SELECT 1 FROM responses r JOIN runs USING (run_id) WHERE r.kind = 'main' "
                          "AND runs.solver_kind = 'human'"))


def test_the_export_columns_join_the_run_and_the_participant(populated_db):
    assert set(EXPORT_COLUMNS) == (set(RESPONSE_COLUMNS) | set(RUN_COLUMNS) - {"dataset_hash"} | set(PARTICIPANT_COLUMNS)
                                   | set(EXCLUSION_COLUMNS))
    with populated_db.connect() as conn:
        names, rows = read_response_rows(conn, EXPORT_COLUMNS)
        assert names == list(EXPORT_COLUMNS)
        df = pd.DataFrame(rows, columns=names)
        external = dict(_direct(conn, "SELECT participant_id, external_id FROM participants"))
        humans = df[df["solver_kind"] == "human"]
        machines = df[df["solver_kind"] != "human"]
        assert len(humans) and len(machines)
        assert list(humans["external_id"]) == [external[p] for p in humans["participant_id"]]
        assert machines["external_id"].isna().all()   # a model's response has no participant: a left join


def test_the_main_responses_read_as_columns(populated_db):
    """The dashboards' column read: the main responses after an id, each column whole, as the rows hold them, in
    the query `responses_query` builds; and the data version counts what is stored."""
    from rose_core.storage.columns import read_columns
    from rose_core.storage.version import data_version

    names = ("response_id", "run_id", "participant_id", "failure", "valid", "total_ms")
    with populated_db.connect() as conn:
        rows = _direct(conn, f"SELECT {', '.join(names)} FROM responses WHERE kind = 'main' ORDER BY response_id")
        every = _direct(conn, "SELECT response_id FROM responses ORDER BY response_id")
        people = _direct(conn, "SELECT response_id FROM responses WHERE participant_id != '' ORDER BY response_id")
        version = data_version(conn)
    assert rows and people and (version.rows, version.last, version.people) == (len(every), every[-1][0], len(people))
    for after in (0, rows[len(rows) // 2][0]):
        sql, params, kinds = main_responses_read(names, after)
        # main items written into the SELECT: the column read's one parameter is the id it reads after
        assert (sql, params) == responses_query(names, main_only=True, after_id=after, analysable=True)
        assert params == (after,) and "r.kind = 'main'" in sql
        cols, = read_columns(populated_db, [(sql, params, kinds)])
        want = [r for r in rows if r[0] > after]
        assert list(cols) == list(names)
        assert cols["response_id"].dtype == "int64" and cols["total_ms"].dtype == "float64"
        for j, c in enumerate(names):
            got = [None if isinstance(v, float) and v != v else v for v in cols[c].tolist()]
            assert got == [r[j] for r in want], c
    with pytest.raises(ValueError, match="solver_kind"):
        main_responses_read(("response_id", "solver_kind"))


def test_main_answer_counts(populated_db):
    with populated_db.connect() as conn:
        run_id = _direct(conn, "SELECT run_id FROM runs WHERE solver_kind = 'human'")[0][0]
        assert responses.main_answer_counts(conn, run_id) == dict(_direct(
            conn, "SELECT instance_id, count(*) FROM responses WHERE run_id = ? AND kind = 'main' GROUP BY instance_id",
            (run_id,)))
