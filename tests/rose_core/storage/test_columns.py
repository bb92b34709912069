"""Whole columns read into Arrow (`storage.columns.read_columns`: ADBC on both backends, SQLite's in a reader
process) and the one data version (`storage.version`)."""
import math
import sqlite3
import threading
import time

import numpy as np
import pytest

from rose_core.storage import open_store
from rose_core.storage.columns import ColumnReadError, ColumnTypeError, fetch_rows, read_columns
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


@pytest.fixture
def reader(monkeypatch):
    """A reader of this test's own (this process's is shared by every test the worker runs), ended afterwards."""
    from rose_core.storage import sqlite_reader

    own = sqlite_reader.SqliteReader()
    monkeypatch.setattr(sqlite_reader, "_READER", own)
    yield own
    own.close()


def _files_open(proc) -> set[str]:
    """The names of the database files (not their -wal or -shm) the process `proc` has open."""
    import os

    names = set()
    for fd in os.listdir(f"/proc/{proc.pid}/fd"):
        try:
            target = os.readlink(f"/proc/{proc.pid}/fd/{fd}")
        except OSError:
            continue                                 # closed while listed
        if target.endswith(".db"):
            names.add(os.path.basename(target))
    return names


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
def test_an_integer_column_holding_a_non_integer_is_refused_by_name(tmp_path, bad, at):
    """SQLite keeps what an INTEGER column cannot convert (its loose typing): refused, naming the column, wherever
    the value is (also after more NULL rows than the driver's first batch, from which it would infer the type).
    SQLite only: PostgreSQL types its columns, an integer column holds integers."""
    store = open_store(tmp_path / "loose.db")
    rows = [(k, None if at == 1500 and k < at else k, "x", "u", None, None) for k in range(max(3, at + 2))]
    rows[at] = (rows[at][0], bad, *rows[at][2:])
    _columns_table(store, rows)
    with pytest.raises(ColumnTypeError, match="'n'"):
        _read(store)


def test_a_text_column_holding_a_blob_is_refused(tmp_path):
    """(A TEXT column stores a number given to it as text: SQLite's affinity, before anything reads it.) SQLite
    only: PostgreSQL types its columns."""
    store = open_store(tmp_path / "loose.db")
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
        _sqlite_commit_during_the_read(store)
        return
    real = columns._inlined
    seen = []

    def inlined(sql, params):    # a commit lands between the two statements of one snapshot
        if len(seen) == 1:
            with store.write() as c:
                c.execute("INSERT INTO cols(k, n) VALUES (2, 2)")
        seen.append(sql)
        return real(sql, params)

    columns._inlined = inlined
    try:
        a, b = read_columns(store, [("SELECT k FROM cols ORDER BY k", (), {"k": "int"}),
                                    ("SELECT count(*) AS n FROM cols", (), {"n": "int"})])
    finally:
        columns._inlined = real
    assert len(a["k"]) == int(b["n"][0]) == 1
    assert len(_read(store)["k"]) == 2


# A statement that keeps SQLite busy (a recursive count, ~0.2 s per million on this machine) between two counts of
# one request, while this process commits a row.
_SPIN = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) AS s FROM c"


def _sqlite_commit_during_the_read(store: Store) -> None:
    """The reader process runs [count, busy statement, count] as one request while a row is committed meanwhile:
    a request that began before the commit (its first count does not see the row) must not see it in its last
    either. A commit that landed before the reader began (a slow start) decides nothing: tried again, waiting
    longer, up to five times."""
    count = ("SELECT count(*) AS n FROM cols", (), {"n": "int"})
    decided = 0
    for attempt in range(5):
        got: list = []
        before = int(_read(store)["k"].size)
        spin = 4_000_000 * 2 ** attempt
        reading = threading.Thread(target=lambda: got.append(read_columns(
            store, [count, (_SPIN, (spin,), {"s": "int"}), count])))
        reading.start()
        time.sleep(0.2 * 2 ** attempt)
        with store.write() as c:
            c.execute("INSERT INTO cols(k, n) VALUES (?, ?)", (before + 1, before + 1))
        reading.join(60)
        first, _, last = got[0]
        if int(first["n"][0]) == before:          # the request's snapshot began before the commit
            decided += 1
            assert int(last["n"][0]) == before, "the last query of one request saw a row committed after its first"
            break
    assert decided, "the commit never landed during the request in five tries"
    assert int(_read(store)["k"].size) == before + 1


def test_the_sqlite_reader_is_a_process_of_its_own_restarted_when_it_dies(tmp_path, reader):
    """The ADBC SQLite driver carries its own copy of SQLite: in the app's process its POSIX locks and the app's
    would not see each other. It runs in a process of its own, opens the file read-only, and is started again
    when it died; the app's own connection is unharmed (its WAL in place, its next writes fine)."""
    from rose_core.storage.sqlite_reader import ReaderError

    store = open_store(tmp_path / "r.db")
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    assert list(_read(store)["k"]) == [1]
    proc = reader._proc
    assert proc is not None and proc.pid != __import__("os").getpid() and reader.starts == 1
    with pytest.raises(ReaderError, match="readonly"):
        reader.read(str(store.path), [("INSERT INTO cols(k) VALUES (9)", [])])
    proc.kill()
    proc.wait()
    assert list(_read(store)["k"]) == [1] and reader.starts == 2 and reader._proc.pid != proc.pid
    reader.close()
    with store.write() as c:
        c.execute("INSERT INTO cols(k, n) VALUES (2, 2)")
    store.checkpoint()
    assert (tmp_path / "r.db-wal").exists()
    with sqlite3.connect(tmp_path / "r.db") as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert list(_read(store)["k"]) == [1, 2]


def test_a_failed_read_names_the_database_and_the_reader_goes_on(tmp_path, reader):
    """A read the database refuses fails that read alone, named by its file: the same process goes on serving that
    file and every other (a file it cannot open too)."""
    from rose_core.storage.sqlite_reader import ReaderError

    store, other = open_store(tmp_path / "r.db"), open_store(tmp_path / "other.db")
    _columns_table(other, [(5, 5, "x", "u", 1.0, None)])
    assert list(_read(other)["k"]) == [5]
    with pytest.raises(ColumnReadError, match="r.db.*no such table"):
        read_columns(store, [("SELECT k FROM nowhere", (), {"k": "int"})])
    assert list(_read(other)["k"]) == [5]
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    assert list(_read(store)["k"]) == [1]
    with pytest.raises(ReaderError, match="gone.db.*failed to open"):
        reader.read(str(tmp_path / "gone.db"), [("SELECT 1 AS k", [])])
    assert list(_read(other)["k"]) == [5] and list(_read(store)["k"]) == [1] and reader.starts == 1


def test_postgresql_reads_write_their_integer_parameters_into_the_statement():
    """The PostgreSQL column read writes its parameters into the statement (bound parameters made the driver read
    through libpq's row buffer, not a binary COPY). Only integers reach it (ids to read after): each is written as
    a number (a negative one in brackets, never `x--5`, a comment), quoted text and `%%` left as SQL means them,
    and anything else is refused, never written."""
    from rose_core.storage.columns import _inlined

    sql = "SELECT '%s ''b''' AS t, 5 %% 2 FROM r WHERE k > %s AND n - %s < %s"
    assert _inlined(sql, (7, -5, 0)) == "SELECT '%s ''b''' AS t, 5 % 2 FROM r WHERE k > 7 AND n - (-5) < 0"
    class Sly(int):                                  # an int whose text is not its value
        def __str__(self):
            return "1; DROP TABLE responses"

    for bad in ("it's", "1; DROP TABLE responses", 2.5, float("nan"), None, True, b"1", object(), Sly(1)):
        with pytest.raises(TypeError, match="integer parameters only.*parameter 1 is"):
            _inlined("SELECT %s", [bad])
    with pytest.raises(ValueError, match="placeholder has no value"):
        _inlined("SELECT %s, %s", [1])
    with pytest.raises(ValueError, match="fewer placeholders"):
        _inlined("SELECT %s", [1, 2])
    with pytest.raises(ValueError, match="positional"):
        _inlined("SELECT %(name)s", [])


@pytest.mark.parametrize("bad", ["main", "1 OR 1 = 1", 2.5, None, True])
def test_a_column_read_refuses_any_parameter_but_an_integer(store, bad):
    """On both backends alike (SQLite's reader binds them, PostgreSQL's read writes them into the statement): the
    refusal names the parameter's type, and nothing is read."""
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    with pytest.raises(TypeError, match=f"integer parameters only.*parameter 2 is {type(bad).__name__}"):
        read_columns(store, [("SELECT k FROM cols WHERE k > ? AND n > ?", (0, bad), {"k": "int"})])
    assert list(_read(store, "WHERE k > ? AND n > ?", (0, -1))["k"]) == [1]


def test_postgresql_literals_read_back_as_bound_values(store):
    """The same integers through the column read (on PostgreSQL written into the statement) and through the app's
    own (bound) connection, at the 64-bit limits too."""
    values = (-5, 0, 2 ** 63 - 1, -2 ** 63)
    sql = ("SELECT CAST(? AS BIGINT) - 1 AS a, CAST(? AS BIGINT) AS b, CAST(? AS BIGINT) AS c, "
           "CAST(? AS BIGINT) AS d")
    got, = read_columns(store, [(sql, values, {"a": "int", "b": "int", "c": "int", "d": "int"})])
    with store.connect() as c:
        want = tuple(c.execute(sql, values).fetchone())
    assert tuple(int(got[k][0]) for k in "abcd") == want == (-6, 0, 2 ** 63 - 1, -2 ** 63)


def test_a_reader_that_dies_at_every_start_is_restarted_once_then_named(tmp_path, monkeypatch, caplog, reader):
    """A reader process that ends before it answers is started again once for the same read; when the new one ends
    too, the read raises `ColumnReadError`, whose text carries no traceback and no path (those go to the server's
    log)."""
    import logging
    import subprocess
    import sys
    import tempfile

    store = open_store(tmp_path / "r.db")
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    dying = "import sys; sys.stdin.buffer.read(4); sys.exit('Traceback (most recent call last): boom')"
    real_start = reader._start

    def start():                                     # the process starts, then dies before answering
        reader._err = tempfile.TemporaryFile()
        reader._proc = subprocess.Popen([sys.executable, "-c", dying], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=reader._err)
        reader.starts += 1

    monkeypatch.setattr(reader, "_start", start)
    with caplog.at_level(logging.ERROR, logger="rose_studio.sqlite_reader"):
        with pytest.raises(ColumnReadError, match="died twice in a row") as e:
            _read(store)
    assert reader.starts == 2 and "Traceback" not in str(e.value) and str(tmp_path) not in str(e.value)
    assert "boom" in caplog.text                     # its error output, in the log
    monkeypatch.setattr(reader, "_start", real_start)
    assert list(_read(store)["k"]) == [1]            # a reader that starts again reads


def test_one_reader_serves_every_database_and_keeps_the_last_few_open(tmp_path, reader):
    """One process reads every database this process reads (its start is its imports: the suite, a database per
    test, had started one per database). It keeps a connection to the last MAX_CONNECTIONS files read and closes the
    others; a closed store's file is closed in it while the others stay open and read, in the same process."""
    from rose_core.storage import sqlite_reader

    n = sqlite_reader.MAX_CONNECTIONS
    stores = []
    for i in range(n + 2):
        store = open_store(tmp_path / f"r{i}.db")
        _columns_table(store, [(i, i, "x", "u", 1.0, None)])
        assert list(_read(store)["k"]) == [i]
        stores.append(store)
    proc = reader._proc
    assert reader.starts == 1 and _files_open(proc) == {f"r{i}.db" for i in range(2, n + 2)}
    assert list(_read(stores[0])["k"]) == [0]              # a closed file is opened again when read
    assert _files_open(proc) == {"r0.db"} | {f"r{i}.db" for i in range(3, n + 2)}
    stores[-1].close()
    assert _files_open(proc) == {"r0.db"} | {f"r{i}.db" for i in range(3, n + 1)}
    assert [list(_read(s)["k"]) for s in stores[3:-1]] == [[i] for i in range(3, n + 1)]
    assert reader._proc is proc and proc.poll() is None and reader.starts == 1
    stores[0].close()
    stores[0].close()                                      # twice, and a file it never read: nothing to close
    open_store(tmp_path / "never.db").close()
    assert _files_open(proc) == {f"r{i}.db" for i in range(3, n + 1)} and reader._proc is proc


def test_reads_of_several_databases_from_several_threads_each_get_their_own_rows(tmp_path, reader):
    """Threads reading different files (and the same one) at once through the one reader take turns on its pipe:
    every read gets its own file's rows, in one snapshot each."""
    import threading

    stores = []
    for i in range(4):
        store = open_store(tmp_path / f"t{i}.db")
        _columns_table(store, [(i * 1000 + k, i, f"s{i}", "u", 1.0, None) for k in range(500 + 100 * i)])
        stores.append(store)
    got: dict[tuple[int, int], tuple] = {}
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for r in range(10):
                i = (t + r) % len(stores)
                a, b = read_columns(stores[i], [("SELECT k, t FROM cols ORDER BY k", (), {"k": "int", "t": "text"}),
                                                ("SELECT count(*) AS c FROM cols", (), {"c": "int"})])
                got[t, r] = (i, list(a["k"]), set(a["t"]), int(b["c"][0]))
        except BaseException as e:  # noqa: BLE001  raised in the test's thread below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(got) == 60 and reader.starts == 1
    for i, keys, texts, count in got.values():
        assert keys == [i * 1000 + k for k in range(500 + 100 * i)] and texts == {f"s{i}"} and count == len(keys)


def test_a_relative_path_is_the_file_in_the_folder_current_at_the_read(tmp_path, monkeypatch, reader):
    """A store opened by a relative path reads the file its own connections open: the one in the folder current at
    the read. The one reader process outlives folder changes (it is started once per app process, in the folder
    current then): it is sent the whole path, or it opened the other folder's file, or failed to open one."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    a = open_store("a.db")
    _columns_table(a, [(1, 1, "x", "u", 1.0, None)])
    assert list(_read(a)["k"]) == [1]                  # the reader process starts here, in `first`
    monkeypatch.chdir(second)
    b = open_store("b.db")
    _columns_table(b, [(2, 2, "y", "u", 1.0, None)])
    assert list(_read(b)["k"]) == [2]
    same_name = open_store("a.db")                     # another file of the same (relative) name
    _columns_table(same_name, [(3, 3, "z", "u", 1.0, None)])
    assert list(_read(same_name)["k"]) == [3] and reader.starts == 1
    same_name.close()
    monkeypatch.chdir(first)
    assert list(_read(a)["k"]) == [1]


@pytest.mark.parametrize("name", ["with space.db", "quote'\"s.db", "what?.db", "hash#.db", "per%20cent%.db",
                                  "ünïcødé ✓.db", "semi;colon&amp=1.db", "not utf-8 \udcff.db"])
def test_odd_file_names_are_read_as_themselves(tmp_path, reader, name):
    """The reader opens a file by a URI (read-only): characters a URI gives a meaning are the file's own, and a name
    that is not UTF-8 (its bytes, as the app's own connections open it) is read too."""
    decoy = open_store(tmp_path / "what")                   # what "what?.db" would be read as, cut at the "?"
    _columns_table(decoy, [(7, 7, "decoy", "u", 1.0, None)])
    store = open_store(tmp_path / name)
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    assert list(_read(store)["k"]) == [1] and list(_read(decoy)["k"]) == [7]


def test_another_file_put_at_a_path_read_before_is_read_not_the_deleted_one(tmp_path, reader):
    """The reader keeps a connection to each file read. Another file put at that path (the old one deleted, its
    store not closed) is read, not the deleted file's rows through the kept connection: the app's own new
    connections read the new file, and a page would have shown the old file's numbers for the new data version.
    While nothing is at the path, the kept connection reads on (as the store's own open connections do)."""
    import os

    path = tmp_path / "x.db"
    old = open_store(path)
    _columns_table(old, [(1, 1, "old", "u", 1.0, None)])
    assert list(_read(old)["k"]) == [1]
    for f in list(tmp_path.iterdir()):
        os.unlink(f)
    assert list(_read(old)["k"]) == [1]
    new = open_store(path)
    _columns_table(new, [(2, 2, "new", "u", 1.0, None)])
    assert list(_read(new)["k"]) == [2] and reader.starts == 1
    with new.write() as c:
        c.execute("INSERT INTO cols(k) VALUES (3)")
    assert list(_read(new)["k"]) == [2, 3] and reader.starts == 1     # the same file: its kept connection


def test_a_reply_out_of_step_ends_the_reader_and_the_next_read_starts_anew(tmp_path, monkeypatch, reader):
    """Anything but a whole reply (here: a reply that is not one) leaves the pipe out of step with the requests; the
    reader is ended at once, so the next read never takes the rest of an old reply for its own."""
    from rose_core.storage import sqlite_reader

    store = open_store(tmp_path / "r.db")
    _columns_table(store, [(1, 1, "x", "u", 1.0, None)])
    assert list(_read(store)["k"]) == [1]
    first = reader._proc

    def broken(self, request, path):
        raise MemoryError("half-way through a reply")

    with monkeypatch.context() as m:
        m.setattr(sqlite_reader.SqliteReader, "_ask", broken)
        with pytest.raises(MemoryError):
            reader.read(str(store.path), [("SELECT k FROM cols", [])])
    assert reader._proc is None and first.wait(10) is not None
    assert list(_read(store)["k"]) == [1] and reader._proc is not first
