"""A SQLite database's columns read into Arrow by the ADBC SQLite driver, in a reader process of its own.

Why a process: `adbc-driver-sqlite` links its own copy of the SQLite library, and two copies in ONE process do not
see each other's POSIX locks on the database, its WAL and its shared memory (closing the driver's connection
released the app's locks and removed the WAL under it: "disk I/O error"; SQLite's "How To Corrupt", 2.2.1). Two
processes are SQLite's ordinary case. Reading in C into Arrow (and dictionary-encoding the text there) also
leaves the app process's interpreter lock free: at 200,000 rows the read is ~0.3 s of the reader's CPU, against
~0.8 s of `group_concat` text parsing in the app process.

One reader per app process and database file, started at its first read (`reader_for`). A reader that dies
during a read is started again once for that read; if that one dies too, the read raises `ReaderError` (its
error output goes to the server's log, not into the error). It opens the file read-only (`mode=ro`: it cannot write), reads each request's
statements in one read transaction (one snapshot), and streams the results back as Arrow IPC over its stdout. It
ends when the app process closes its stdin (or dies).

Run as a script (`python sqlite_reader.py PATH`): the child imports nothing of `rose_core`, only pyarrow and the
driver (a new process's imports are its start's cost).
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


def _serve(path: str) -> None:
    """The reader's loop: a request (length-prefixed JSON: {"queries": [[sql, params], …]}) in, the results out.

    Through the driver manager's own statements, not its DB-API layer, which imports pandas and pyarrow's dataset
    module: a reader's start is its imports, ~0.3 s of CPU this way and ~1.1 s that way."""
    import pathlib
    import urllib.parse

    import adbc_driver_manager as adbc
    import adbc_driver_sqlite
    import pyarrow as pa
    import pyarrow.compute as pc

    uri = "file:" + urllib.parse.quote(str(pathlib.Path(path).resolve())) + "?mode=ro"
    conn = adbc.AdbcConnection(adbc_driver_sqlite.connect(uri))

    def run(sql: str, params: Sequence[int] = (), rows: bool = True) -> Any:
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

    run("PRAGMA busy_timeout = 10000", rows=False)   # as the app's own connections wait for a lock (storage/sqlite)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return                                          # the app process closed the pipe (or ended)
        request = json.loads(inp.read(struct.unpack("<I", head)[0]))
        try:
            tables = []
            run("BEGIN", rows=False)                        # one snapshot for every statement of the request
            try:
                for sql, params in request["queries"]:
                    tables.append(run(sql, params or ()))
            finally:
                run("COMMIT", rows=False)
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
    """The app side of one reader process (see the module docstring). Thread-safe: requests take turns."""

    def __init__(self, path: str):
        self.path = path
        self._proc: Any = None
        self._err: Any = None
        self._lock = threading.Lock()
        self.starts = 0                    # how many processes were started (a test sees a restart)

    def _start(self) -> None:
        import subprocess

        import tempfile

        # its error output into a file, not a pipe nobody drains (a full pipe would stop it); read when it died
        self._err = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([sys.executable, __file__, self.path], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._err)
        self.starts += 1

    def start(self) -> None:
        """Start the process now if it is not running (it then imports its libraries while this one goes on). Never
        waits: a read under way (it holds the lock) has a process already."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
        finally:
            self._lock.release()

    def read(self, queries: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """Each (sql, params) of `queries` as a pyarrow Table, all read in one snapshot."""
        request = json.dumps({"queries": [[sql, list(params)] for sql, params in queries]}).encode()
        with self._lock:
            for attempt in (1, 2):
                if self._proc is None or self._proc.poll() is not None:
                    self._start()
                try:
                    return self._ask(request)
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
                        "the SQLite reader process of %s ended (exit code %s, read attempt %d of 2): %s", self.path,
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

    def _ask(self, request: bytes) -> list[Any]:
        import pyarrow as pa

        self._proc.stdin.write(struct.pack("<I", len(request)) + request)
        self._proc.stdin.flush()
        status, n = _HEAD.unpack(_read_exactly(self._proc.stdout, _HEAD.size))
        if status not in (b"K", b"E"):
            raise ConnectionError(f"the reader process answered out of step (status {status!r})")
        payload = _read_exactly(self._proc.stdout, n)
        if status == b"E":
            err = json.loads(payload)
            raise ReaderError(f"reading {self.path}: {err['error']}: {err['message']}")
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
        """End the reader process (it ends by itself when this process ends)."""
        with self._lock:
            self.close_locked()


def _read_exactly(f: Any, n: int) -> bytes:
    chunks, left = [], n
    while left:
        b = f.read(left)
        if not b:
            raise EOFError("the reader process closed its output")
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


# The readers of this process, most recently used last. A server reads one database; a process that opens many (the
# test suite: a database per test) keeps the last few readers and ends the others, never a process per database.
_READERS: "OrderedDict[str, SqliteReader]" = OrderedDict()
_READERS_LOCK = threading.Lock()
MAX_READERS = 8


def reader_for(path: str) -> SqliteReader:
    """This process's reader of the SQLite file `path` (one per file; its process starts at the first read)."""
    with _READERS_LOCK:
        reader = _READERS.get(path)
        if reader is None:
            reader = _READERS[path] = SqliteReader(path)
        _READERS.move_to_end(path)
        ended = [_READERS.popitem(last=False)[1] for _ in range(len(_READERS) - MAX_READERS)]
    for old in ended:
        old.close()
    return reader


def close_reader(path: str) -> None:
    """End the reader of `path`, if this process started one (its store is closed: nothing reads it any more)."""
    with _READERS_LOCK:
        reader = _READERS.pop(path, None)
    if reader is not None:
        reader.close()


if __name__ == "__main__":
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]   # this folder's modules are not libraries
    _serve(sys.argv[1])
