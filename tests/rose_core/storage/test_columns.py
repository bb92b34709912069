"""Whole columns read into Arrow (`storage.columns.read_columns`: ADBC on both backends, SQLite's in a reader
process) and the one data version (`storage.version`)."""
import math
import sqlite3

import numpy as np
import pytest

from rose_core.storage.columns import ColumnTypeError, fetch_rows, read_columns
from rose_core.storage.connection import Store

KINDS = {"k": "int", "n": "int", "t": "text", "u": "text", "f": "float", "g": "float"}


def _columns_table(store: Store, rows: list[tuple]) -> None:
    with store.write() as c:
        c.execute("CREATE TABLE cols (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, n INTEGER, t TEXT, u TEXT, "
                  "f REAL, g REAL)")
        c.executemany("INSERT INTO cols(k, n, t, u, f, g) VALUES (?, ?, ?, ?, ?, ?)", rows)


def _as_rows(store: Store, where: str = "", params: tuple = ()) -> list[tuple]:
    with store.connect() as c:
        return fetch_rows(c, f"SELECT k, n, t, u, f, g FROM cols {where} ORDER BY k", params)[1]


def _read(store: Store, where: str = "", params: tuple = (), kinds: dict | None = None) -> dict:
    kinds = kinds or KINDS
    return read_columns(store, [(f"SELECT {', '.join(kinds)} FROM cols {where} ORDER BY k", params, kinds)])[0]


def test_columns_are_the_rows_read_one_by_one(store):
    """Text with commas, quotes, control characters, non-ASCII and empty strings, NULL text and floats, floats whose
    short text form is not exact, rows stored out of key order: the same values, in the query's order."""
    tricky = [0.1, 1 / 3, 5e-324, 1.7976931348623157e308, 0.30000000000000004, 1e23, 123456789.12345679, -0.0]
    rows = [(k, k * 7 - 3, None if k % 5 == 0 else f"t{k % 4},'x' é\x1f\x1e", "" if k % 3 == 0 else f"u{k}",
             None if k % 4 == 0 else tricky[k % len(tricky)] * k, None if k % 2 else 2.0 ** -k)
            for k in (9, 3, 12, 1, 20, 7, 15, 2, 11, 18, 4, 16)]
    _columns_table(store, rows)
    for where, params in (("", ()), ("WHERE k > ?", (4,)), ("WHERE k > ?", (99,))):
        got, want = _read(store, where, params), _as_rows(store, where, params)
        assert list(got["k"]) == [r[0] for r in want]
        assert got["k"].dtype == np.int64 and got["n"].dtype == np.int64 and got["t"].dtype == object
        assert got["f"].dtype == np.float64
        for j, col in enumerate(("n", "t", "u")):
            assert list(got[col]) == [r[1 + j] for r in want]
        for j, col in enumerate(("f", "g")):
            for v, r in zip(got[col], want):
                assert (math.isnan(v) and r[4 + j] is None) or (v == r[4 + j] and str(v) == str(r[4 + j]))


def test_an_integer_column_with_null_keeps_the_null(store):
    _columns_table(store, [(1, 1, "x", "u", None, None), (2, None, "y", "v", None, None)])
    got = _read(store)
    assert str(got["n"].dtype) == "Int64" and got["n"][0] == 1 and got["n"][1] is __import__("pandas").NA
    assert list(got["k"]) == [1, 2] and got["k"].dtype == np.int64


@pytest.mark.parametrize("at", [0, 1, 2, 1500])
@pytest.mark.parametrize("bad", ["abc", 1.5, "1.5", "", "-", "9223372036854775808", b"1", "\u0661\u0662"])
def test_an_integer_column_holding_a_non_integer_is_refused_by_name(store, bad, at):
    """SQLite keeps what an INTEGER column cannot convert (its loose typing): refused, naming the column, wherever
    the value is (also after more NULL rows than the driver's first batch, from which it would infer the type)."""
    if store.dialect != "sqlite":
        pytest.skip("PostgreSQL types its columns: an integer column holds integers")
    rows = [(k, None if at == 1500 and k < at else k, "x", "u", None, None) for k in range(max(3, at + 2))]
    rows[at] = (rows[at][0], bad, *rows[at][2:])
    _columns_table(store, rows)
    with pytest.raises(ColumnTypeError, match="'n'"):
        _read(store)


def test_a_text_column_holding_a_blob_is_refused(store):
    """(A TEXT column stores a number given to it as text: SQLite's affinity, before anything reads it.)"""
    if store.dialect != "sqlite":
        pytest.skip("PostgreSQL types its columns")
    with store.write() as c:
        c.execute("CREATE TABLE loose (k INTEGER, t TEXT)")
        c.executemany("INSERT INTO loose VALUES (?, ?)", [(1, "a"), (2, b"bytes")])
    with pytest.raises(ColumnTypeError, match="'t'"):
        read_columns(store, [("SELECT k, t FROM loose ORDER BY k", (), {"k": "int", "t": "text"})])


def test_a_real_column_null_in_its_first_thousands_of_rows_is_read(store):
    """A model run's timing columns are NULL: imported first, they come before the participants' in the scan."""
    _columns_table(store, [(k, k, None, None, None if k < 3000 else k / 4, None) for k in range(3010)])
    got = _read(store)
    assert np.isnan(got["f"][:3000]).all() and list(got["f"][3000:]) == [k / 4 for k in range(3000, 3010)]
    assert list(got["t"][:2]) == [None, None]


@pytest.mark.parametrize("sign", [1, -1])
def test_the_integer_limits_are_exact(store, sign):
    """SQLite's INTEGER is 64-bit; PostgreSQL's (the schema's INTEGER as written) 32-bit, widened exactly."""
    bits = 63 if store.dialect == "sqlite" else 31
    big = 2 ** bits - 1 if sign > 0 else -2 ** bits
    _columns_table(store, [(1, big, "x", "u", None, None)])
    assert int(_read(store)["n"][0]) == big


def test_an_empty_result_has_the_declared_types(store):
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    got = _read(store, "WHERE k > ?", (5,))
    assert {c: v.dtype for c, v in got.items()} == {"k": np.int64, "n": np.int64, "t": object, "u": object,
                                                     "f": np.float64, "g": np.float64}


def test_the_columns_asked_for_are_the_columns_read(store):
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    with pytest.raises(ValueError, match="not \\['k', 't'\\]"):
        read_columns(store, [("SELECT k, n FROM cols", (), {"k": "int", "t": "text"})])


def test_queries_read_together_see_one_snapshot(store):
    """Two queries of one call see the same database even while another connection commits between them: the data
    version read beside the rows is those rows' version."""
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    from rose_core.storage import columns

    if store.dialect == "sqlite":
        from rose_core.storage import sqlite_reader

        real = sqlite_reader.SqliteReader._ask
        seen = []

        def ask(self, request):      # a commit lands while the reader is asked, before it answers
            if not seen:
                seen.append(1)
                with store.write() as c:
                    c.execute("INSERT INTO cols(k, n) VALUES (2, 2)")
            return real(self, request)

        sqlite_reader.SqliteReader._ask = ask
        try:
            a, b = read_columns(store, [("SELECT k FROM cols ORDER BY k", (), {"k": "int"}),
                                        ("SELECT count(*) AS n FROM cols", (), {"n": "int"})])
        finally:
            sqlite_reader.SqliteReader._ask = real
        assert len(a["k"]) == int(b["n"][0])
    else:
        real = columns._numbered
        seen = []

        def numbered(sql):           # a commit lands between the two statements of one snapshot
            if len(seen) == 1:
                with store.write() as c:
                    c.execute("INSERT INTO cols(k, n) VALUES (2, 2)")
            seen.append(sql)
            return real(sql)

        columns._numbered = numbered
        try:
            a, b = read_columns(store, [("SELECT k FROM cols ORDER BY k", (), {"k": "int"}),
                                        ("SELECT count(*) AS n FROM cols", (), {"n": "int"})])
        finally:
            columns._numbered = real
        assert len(a["k"]) == int(b["n"][0]) == 1
    assert len(_read(store)["k"]) == 2


def test_the_sqlite_reader_is_a_process_of_its_own_restarted_when_it_dies(tmp_path):
    """The ADBC SQLite driver carries its own copy of SQLite: in the app's process its POSIX locks and the app's
    would not see each other. It runs in a process of its own, opens the file read-only, and is started again
    when it died; the app's own connection is unharmed (its WAL in place, its next writes fine)."""
    from rose_core.storage import open_store
    from rose_core.storage.sqlite_reader import ReaderError, reader_for

    store = open_store(tmp_path / "r.db")
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    reader = reader_for(str(store.path))
    assert list(_read(store)["k"]) == [1]
    proc = reader._proc
    assert proc is not None and proc.pid != __import__("os").getpid()
    with pytest.raises(ReaderError, match="readonly"):
        reader.read([("INSERT INTO cols(k) VALUES (9)", [])])
    proc.kill()
    proc.wait()
    starts = reader.starts
    assert list(_read(store)["k"]) == [1] and reader.starts == starts + 1
    reader.close()
    with store.write() as c:
        c.execute("INSERT INTO cols(k, n) VALUES (2, 2)")
    store.checkpoint()
    assert (tmp_path / "r.db-wal").exists()
    with sqlite3.connect(tmp_path / "r.db") as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert list(_read(store)["k"]) == [1, 2]


def test_a_failed_read_names_the_database_and_the_reader_goes_on(tmp_path):
    from rose_core.storage import open_store
    from rose_core.storage.sqlite_reader import ReaderError

    store = open_store(tmp_path / "r.db")
    with pytest.raises(ReaderError, match="r.db.*no such table"):
        read_columns(store, [("SELECT k FROM nowhere", (), {"k": "int"})])
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    assert list(_read(store)["k"]) == [1]


def test_postgresql_reads_write_their_parameters_as_literals():
    """The PostgreSQL column read writes its parameters into the statement (bound parameters made the driver read
    through libpq's row buffer, not a binary COPY): every value as the database would have bound it, quoted text
    left alone, and nothing it cannot write exactly."""
    from rose_core.storage.columns import _inlined

    sql = "SELECT 'a $1 ''b''' AS t FROM r WHERE k = $1 AND n > $2 AND x - $3 < $4 AND y IS $5"
    assert _inlined(sql, ("it's \\ ok", 7, -5, 2.5, None)) == (
        "SELECT 'a $1 ''b''' AS t FROM r WHERE k = E'it''s \\\\ ok' AND n > 7 AND x - (-5) < 2.5 AND y IS NULL")
    for bad in (["a\x00b"], [float("nan")], [b"bytes"], [object()]):
        with pytest.raises(ValueError, match="literal"):
            _inlined("SELECT $1", bad)
    with pytest.raises(ValueError, match=r"\$2 has no value"):
        _inlined("SELECT $1, $2", [1])


def test_postgresql_literals_read_back_as_bound_values(backend, store):
    """The same values through the column read (on PostgreSQL written as literals) and through the app's own
    (bound) connection."""
    from rose_core.storage.columns import read_columns

    values = ("it's \\ 'quoted' $1 -- not a comment", -5, 2.5)
    sql = "SELECT CAST(? AS TEXT) AS t, CAST(? AS BIGINT) - 1 AS n, CAST(? AS DOUBLE PRECISION) AS f"
    got, = read_columns(store, [(sql, values, {"t": "text", "n": "int", "f": "float"})])
    with store.connect() as c:
        want = tuple(c.execute(sql, values).fetchone())
    assert (got["t"][0], int(got["n"][0]), float(got["f"][0])) == want == (values[0], -6, 2.5)
