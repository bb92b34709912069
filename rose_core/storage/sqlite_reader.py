"""A SQLite database's columns read into Arrow by the ADBC SQLite driver, in a reader process of its own.

Why a process: `adbc-driver-sqlite` links its own copy of the SQLite library, and two copies in ONE process do not
see each other's POSIX locks on the database, its WAL and its shared memory (closing the driver's connection
released the app's locks and removed the WAL under it: "disk I/O error"; SQLite's "How To Corrupt", 2.2.1). Two
processes are SQLite's ordinary case. Reading in C into Arrow (and dictionary-encoding the text there) also
leaves the app process's interpreter lock free: at 200,000 rows the read is ~0.3 s of the reader's CPU, against
~0.8 s of `group_concat` text parsing in the app process.

One reader process per app process, serving every database file the app process reads (`read(path, queries)`),
started at the first read (or ahead of it, `start()`). It keeps a connection to each of the last `MAX_CONNECTIONS`
files read, opened read-only at its first read (`mode=ro`: it cannot write) and closed with its store
(`close_reader`) or when older than those; it reads each request's statements on that file's connection in one
read transaction (one snapshot), and streams the results back as Arrow IPC over its stdout. Requests take turns on
its pipe; a file the database refuses (a failed read, a file it cannot open) fails that request alone. A reader
that dies during a read is started again once for that read; if that one dies too, the read raises `ReaderError`
(its error output goes to the server's log, not into the error). It ends when the app process closes its stdin
(or dies).

Run as a script (`python sqlite_reader.py`): the child imports nothing of `rose_core`, only pyarrow and the driver
(a process's start is its imports, ~0.3 s of CPU: paid once per app process, not once per database file).
"""
from __future__ import annotations

import json
import struct
import sys
import threading
from collections import OrderedDict
from typing import Any, Sequence

# The driver infers a column's Arrow type from its first batch of rows and fails on a later row of another type
# (a column NULL in a whole first batch, then REAL). One batch holding every row: the type is inferred from
# all of them, and a column of mixed types comes back as one the caller refuses by name (`columns.read_columns`).
_BATCH_ROWS = str(2 ** 30)   # (2 ** 31 - 1 is refused)
_HEAD = struct.Struct("<cQ")            # status (b"K" results, b"E" an error), payload length


def _send(out: Any, status: bytes, payload: bytes) -> None:
    out.write(_HEAD.pack(status, len(payload)))
    out.write(payload)
    out.flush()


def _serve() -> None:
    """The reader's loop: a request (length-prefixed JSON: {"close": [path, …], "path": path, "queries": [[sql,
    params], …]}) in, the results out. The files named in "close" are closed first (never an error: another file's
    read must not fail for them); then the queries are read from "path", through a connection opened at its first
    read and kept.

    Through the driver manager's own statements, not its DB-API layer, which imports pandas and pyarrow's dataset
    module: a reader's start is its imports, ~0.3 s of CPU this way and ~1.1 s that way."""
    import os
    import pathlib
    import urllib.parse

    import adbc_driver_manager as adbc
    import adbc_driver_sqlite
    import pyarrow as pa
    import pyarrow.compute as pc

    def run(conn: Any, sql: str, params: Sequence[int] = (), rows: bool = True) -> Any:
        stmt = adbc.AdbcStatement(conn)
        try:
            stmt.set_options(**{"adbc.sqlite.query.batch_rows": _BATCH_ROWS})
            stmt.set_sql_query(sql)
            if params:   # integers only (`columns.read_columns` refuses any other value before it is sent)
                stmt.bind(pa.record_batch([pa.array([v], type=pa.int64()) for v in params],
                                          names=[str(i) for i in range(len(params))]))
            if not rows:
                stmt.execute_update()
                return None
            handle, _ = stmt.execute_query()
            return pa.RecordBatchReader._import_from_c(handle.address).read_all()
        finally:
            stmt.close()

    opened: dict[str, tuple[Any, Any, Any]] = {}      # path -> (the driver's database, its connection, the file)

    def identity(path: str) -> Any:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def connection(path: str) -> Any:
        # another file at the path since its connection was opened (the old one deleted or replaced): that connection
        # still reads the old file, the app's own new connections the new one; it is opened anew on the new file
        if path in opened and identity(path) not in (None, opened[path][2]):
            close(path)
        if path not in opened:
            # the name's bytes (a name that is not UTF-8 too), every one a URI gives a meaning to ("?", "#", "%") quoted
            uri = "file:" + urllib.parse.quote(os.fsencode(pathlib.Path(path).resolve())) + "?mode=ro"
            db = adbc_driver_sqlite.connect(uri)
            try:
                conn = adbc.AdbcConnection(db)
                try:   # it waits for a lock as the app's own connections do (storage/sqlite)
                    run(conn, "PRAGMA busy_timeout = 10000", rows=False)
                except BaseException:
                    conn.close()
                    raise
            except BaseException:
                db.close()
                raise
            opened[path] = (db, conn, identity(path))
        return opened[path][1]

    def close(path: str) -> None:
        db, conn, _ = opened.pop(path, (None, None, None))
        for handle in (conn, db):
            if handle is not None:
                try:
                    handle.close()
                except Exception:  # noqa: BLE001  closed as far as the driver can; the next request is another's
                    pass

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return                                          # the app process closed the pipe (or ended)
        request = json.loads(inp.read(struct.unpack("<I", head)[0]))
        for path in request.get("close", ()):
            close(path)
        try:
            tables = []
            if request.get("queries"):
                conn = connection(request["path"])
                run(conn, "BEGIN", rows=False)              # one snapshot for every statement of the request
                try:
                    for sql, params in request["queries"]:
                        tables.append(run(conn, sql, params or ()))
                finally:
                    run(conn, "COMMIT", rows=False)
            blobs = []
            for t in tables:
                # text dictionary-encoded here, in this process: less to send, and the app makes one Python string
                # per distinct value
                t = pa.table({n: pc.dictionary_encode(c) if pa.types.is_string(c.type) else c
                              for n, c in zip(t.column_names, t.columns)}) if t.num_columns else t
                sink = pa.BufferOutputStream()
                with pa.ipc.new_stream(sink, t.schema) as w:
                    w.write_table(t)
                blobs.append(sink.getvalue().to_pybytes())
            _send(out, b"K", struct.pack("<I", len(blobs)) + b"".join(struct.pack("<Q", len(b)) + b for b in blobs))
            del tables, blobs                               # not kept until the next request
        except Exception as e:  # noqa: BLE001  the app raises it, named; this process goes on serving
            _send(out, b"E", json.dumps({"error": type(e).__name__, "message": str(e)}).encode())


class ReaderError(RuntimeError):
    """The reader process could not answer (it died twice in a row, or the database refused the read).
    `columns.read_columns` raises it on as `ColumnReadError`."""


class SqliteReader:
    """The app side of the reader process (see the module docstring). Thread-safe: requests take turns on its pipe."""

    def __init__(self) -> None:
        self._proc: Any = None
        self._err: Any = None
        self._lock = threading.Lock()
        # the files the process has a connection to, most recently read last (the process keeps MAX_CONNECTIONS)
        self._paths: "OrderedDict[str, None]" = OrderedDict()
        self.starts = 0                    # how many processes were started (a test sees a restart)

    def _start(self) -> None:
        import subprocess

        import tempfile

        # its error output into a file, not a pipe nobody drains (a full pipe would stop it); read when it died
        self._err = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._err)
        self.starts += 1

    def _running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the process now if it is not running (it then imports its libraries while this one goes on). Never
        waits: a read under way (it holds the lock) has a process already."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            if not self._running():
                self.close_locked()
                self._start()
        finally:
            self._lock.release()

    def read(self, path: str, queries: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """Each (sql, params) of `queries` read from the SQLite file `path` as a pyarrow Table, all in one snapshot."""
        where = _whole(path)
        with self._lock:
            for attempt in (1, 2):
                if not self._running():
                    self.close_locked()
                    self._start()
                self._paths[where] = None
                self._paths.move_to_end(where)
                ended = [self._paths.popitem(last=False)[0] for _ in range(len(self._paths) - MAX_CONNECTIONS)]
                request = json.dumps({"close": ended, "path": where,
                                      "queries": [[sql, list(params)] for sql, params in queries]}).encode()
                try:
                    return self._ask(request, path)
                except (BrokenPipeError, EOFError, ConnectionError) as e:
                    import logging
                    import subprocess

                    try:
                        self._proc.wait(timeout=2)       # it ended, or is ending
                    except subprocess.TimeoutExpired:
                        pass
                    code = self._proc.poll()
                    # what it wrote before it ended (a traceback) goes to the server's log, never into the error
                    logging.getLogger("rose_studio.sqlite_reader").error(
                        "the SQLite reader process ended reading %s (exit code %s, read attempt %d of 2): %s", path,
                        code, attempt, self._stderr() or e)
                    self.close_locked()
                    if attempt == 2:
                        raise ReaderError(f"the SQLite reader process died twice in a row (exit code {code}); its "
                                          "error output is in the server's log") from e
                except ReaderError:
                    raise                                # the database refused the read: the process goes on
                except BaseException:
                    # anything else (out of memory half-way through a reply, an interrupt) leaves the pipe out of
                    # step with the requests: the next read would take the rest of this reply for its own
                    self.close_locked()
                    raise
        raise AssertionError("unreachable")

    def close_path(self, path: str) -> None:
        """Close the process's connection to `path`, if it has one (the process goes on serving the other files)."""
        where = _whole(path)
        with self._lock:
            if where not in self._paths:
                return                           # never read here (or its process ended since): nothing to close
            del self._paths[where]
            if not self._running():
                self.close_locked()
                return
            try:
                self._ask(json.dumps({"close": [where]}).encode(), path)
            except (BrokenPipeError, EOFError, ConnectionError, ReaderError):
                self.close_locked()              # its connection ended with it; the next read starts one anew
            except BaseException:
                self.close_locked()              # the pipe may be out of step (see `read`)
                raise

    def _ask(self, request: bytes, path: str) -> list[Any]:
        import pyarrow as pa

        self._proc.stdin.write(struct.pack("<I", len(request)) + request)
        self._proc.stdin.flush()
        status, n = _HEAD.unpack(_read_exactly(self._proc.stdout, _HEAD.size))
        if status not in (b"K", b"E"):
            raise ConnectionError(f"the reader process answered out of step (status {status!r})")
        payload = _read_exactly(self._proc.stdout, n)
        if status == b"E":
            err = json.loads(payload)
            raise ReaderError(f"reading {path}: {err['error']}: {err['message']}")
        count, at, tables = struct.unpack_from("<I", payload)[0], 4, []
        for _ in range(count):
            size = struct.unpack_from("<Q", payload, at)[0]
            at += 8
            tables.append(pa.ipc.open_stream(pa.py_buffer(payload[at:at + size])).read_all())
            at += size
        return tables

    def _stderr(self) -> str:
        try:
            if self._proc is not None and self._proc.poll() is not None:
                self._err.seek(0)
                return self._err.read().decode(errors="replace")[-2000:].strip()
        except (OSError, ValueError):
            pass
        return ""

    def close_locked(self) -> None:
        proc, self._proc = self._proc, None
        self._paths.clear()                      # the process's connections end with it
        if proc is not None:
            for f in (proc.stdin, proc.stdout, self._err):
                try:
                    f.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=5)
            except Exception:  # noqa: BLE001  a reader that does not end on EOF is ended
                proc.kill()
                proc.wait()

    def close(self) -> None:
        """End the reader process (it ends by itself when this process ends); the next read starts another."""
        with self._lock:
            self.close_locked()


def _whole(path: str) -> str:
    """The file `path` names now, as the process is sent it: whole, since the reader process (started once, in the
    folder current then) would resolve a relative path against its own folder, and a relative name read from two
    folders would be one connection's."""
    import os

    return os.path.abspath(path)


def _read_exactly(f: Any, n: int) -> bytes:
    chunks, left = [], n
    while left:
        b = f.read(left)
        if not b:
            raise EOFError("the reader process closed its output")
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


# This process's one reader. A server reads one database; a process that reads many (the test suite: a database per
# test) pays for one process's start, not one per database, and keeps connections to the last few files read.
_READER = SqliteReader()
MAX_CONNECTIONS = 8


def read(path: str, queries: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
    """Each (sql, params) of `queries` read from the SQLite file `path` by this process's reader, as pyarrow Tables,
    in one snapshot (its process starts at the first read)."""
    return _READER.read(path, queries)


def start() -> None:
    """Start this process's reader ahead of its first read, if it is not running (never waits)."""
    _READER.start()


def close_reader(path: str) -> None:
    """Close the reader's connection to `path`, if it has one (its store is closed: nothing reads it any more)."""
    _READER.close_path(path)


if __name__ == "__main__":
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]   # this folder's modules are not libraries
    _serve()
