"""The store: one database, its schema, and the connections every part shares.

Two backends behind one interface, `Store`, opened by `rose_core.storage.open_store(location)`:

- **SQLite** (the default: a file path, `data/rose.db`): WAL journal, a busy timeout, and `BEGIN IMMEDIATE`
  for every read-modify-write, so concurrent Streamlit sessions never see "database is locked" and never
  interleave an assignment. Connections are reused, not opened per operation: a thread borrows one from the
  store's pool the first time it needs one and keeps it until the thread ends (Streamlit runs every rerun on
  a new thread, so a rerun uses exactly one connection; when the thread ends its connection goes back to the
  pool). The store also keeps one connection open for its whole life, so SQLite never sees "the last
  connection closed" and does not checkpoint and delete the WAL after every rerun.
- **PostgreSQL** (a `postgresql://…` URL, e.g. `ROSE_DB=postgresql://rose@127.0.0.1:5432/rose`): psycopg 3 with
  a connection pool, the same schema, migrations and transactions (`rose_core.storage.pg`), so several app
  processes share one database server.

Humans, models and reference agents share the `runs` and `responses` tables (a run's `solver_kind`
tells them apart), so every analysis reads one table. The schema is versioned in
`meta.schema_version`; `migrate()` applies the missing steps (in version order; numbers may have
gaps while branches are merged) in one transaction. SQL is written once, in SQLite's dialect; the
PostgreSQL connection translates it (placeholders, `INSERT OR IGNORE`, column types). The instrument's SQL
lives in `rose_core.storage`; this module is the SQLite backend (schema: `storage.schema`).
"""
from __future__ import annotations

import queue
import sqlite3
import threading
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import sqlite_utils

from .connection import Store, db_location
from .schema import SCHEMA_VERSION, apply_migrations

BUSY_TIMEOUT_MS = 10_000


def _open(path: Path) -> sqlite3.Connection:
    # check_same_thread=False: a pooled connection moves to another thread, but is only ever used by one at a time.
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a commit survives a process kill
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class _Lease:
    """A thread's hold on a pooled connection; when the thread ends, the lease is freed and the connection returns."""

    __slots__ = ("conn", "__weakref__")

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn


def _give_back(pool: queue.SimpleQueue, conn: sqlite3.Connection) -> None:
    if conn.in_transaction:  # a thread died inside a transaction: never hand that state to the next one
        conn.execute("ROLLBACK")
    pool.put(conn)

class SqliteStore(Store):
    """One database file; connections reused per thread (see the module docstring)."""

    dialect = "sqlite"

    def __init__(self, location: Path | str | None = None):
        self.path = Path(location) if location else Path(db_location())
        self.location = str(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._pool: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._local = threading.local()
        self.opened = 0  # connections opened so far (tests and benchmarks read it)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.migrate()
        self._anchor = _open(self.path)  # keeps the WAL file alive between reruns (see the module docstring)

    def _conn(self) -> sqlite3.Connection:
        lease = getattr(self._local, "lease", None)
        if lease is None:
            try:
                conn = self._pool.get_nowait()
            except queue.Empty:
                conn = _open(self.path)
                with self._lock:
                    self.opened += 1
            lease = _Lease(conn)
            weakref.finalize(lease, _give_back, self._pool, conn)
            self._local.lease = lease
        return lease.conn

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection (opened once, reused; never closed here)."""
        yield self._conn()

    @contextmanager
    def write(self, concurrent: bool = False) -> Iterator[sqlite3.Connection]:
        """One read-modify-write transaction, taking the write lock up front (BEGIN IMMEDIATE), `concurrent` or not."""
        conn = self._conn()
        if conn.in_transaction:
            raise RuntimeError("Store.write() inside another transaction on the same thread")
        # Writers of this process queue on a lock (woken the moment it is free) rather than in SQLite's busy
        # handler, which polls with sleeps of up to 100 ms: under 100 participants that made a 7 s tail.
        # Other processes (a CLI import) still meet SQLite's own lock and busy timeout.
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def migrate(self) -> int:
        conn = self._conn()
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            apply_migrations(conn, self.location)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return SCHEMA_VERSION

    def checkpoint(self) -> None:
        """Copy the WAL into the database file (SQLite also does this every 1000 pages). The WAL stays between
        reruns, so copy a live database with `sqlite3 .backup`, or after this."""
        with self.connect() as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                break
        self._anchor.close()
        from .sqlite_reader import close_reader

        close_reader(str(self.path))   # the column reader's connection to this file, if it has one

    def query(self, sql: str, params: tuple | dict = ()) -> list[dict[str, Any]]:
        """Rows as dicts, read through sqlite-utils (writes go through `write()` transactions)."""
        with self.connect() as conn:
            return list(sqlite_utils.Database(conn).query(sql, params))

    def table_names(self) -> list[str]:
        with self.connect() as conn:
            return sqlite_utils.Database(conn).table_names()
