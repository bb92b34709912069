"""The store: one database, its schema, and the connections every part shares.

Two backends behind one interface, `Store(location)`:

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
lives in `rose_core.storage`; this module only owns connections and the schema.
"""
from __future__ import annotations

import os
import queue
import sqlite3
import threading
import time
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Protocol, Sequence
from urllib.parse import urlsplit, urlunsplit

import sqlite_utils

DEFAULT_DB = Path(__file__).resolve().parent.parent / "data" / "rose.db"
DB_ENV = "ROSE_DB"
BUSY_TIMEOUT_MS = 10_000

MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE studies (
            study_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            dataset_hash TEXT NOT NULL,
            config TEXT NOT NULL,
            created_at REAL NOT NULL,
            active INTEGER NOT NULL DEFAULT 1
        )""",
        """CREATE TABLE participants (
            participant_id TEXT PRIMARY KEY,
            study_id TEXT NOT NULL REFERENCES studies(study_id),
            external_id TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('prolific', 'anonymous', 'link')),
            prolific_study_id TEXT,
            prolific_session_id TEXT,
            counterbalance INTEGER NOT NULL,
            created_at REAL NOT NULL,
            last_seen_at REAL NOT NULL,
            consent_at REAL,
            instructions_at REAL,
            practice_attempts INTEGER NOT NULL DEFAULT 0,
            practice_passed INTEGER,
            started_main_at REAL,
            finished_at REAL,
            end_reason TEXT,
            UNIQUE (study_id, external_id)
        )""",
        """CREATE TABLE assignments (
            participant_id TEXT NOT NULL REFERENCES participants(participant_id),
            kind TEXT NOT NULL CHECK (kind IN ('practice', 'main', 'attention')),
            position INTEGER NOT NULL,
            attempt INTEGER NOT NULL DEFAULT 0,
            instance_id TEXT NOT NULL,
            scene_id TEXT NOT NULL,
            assigned_at REAL NOT NULL,
            answered_at REAL,
            released_at REAL,
            PRIMARY KEY (participant_id, kind, attempt, position)
        )""",
        "CREATE INDEX assignments_instance ON assignments(instance_id) WHERE kind = 'main'",
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            solver_kind TEXT NOT NULL CHECK (solver_kind IN ('human', 'model', 'agent')),
            solver_name TEXT NOT NULL,
            study_id TEXT REFERENCES studies(study_id),
            source_file TEXT,
            format TEXT,
            dataset_hash TEXT NOT NULL,
            imported_at REAL NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        )""",
        """CREATE TABLE responses (
            response_id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(run_id),
            participant_id TEXT NOT NULL DEFAULT '',
            instance_id TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'main' CHECK (kind IN ('practice', 'main', 'attention')),
            attempt INTEGER NOT NULL DEFAULT 0,
            template TEXT NOT NULL,
            subset TEXT NOT NULL,
            split TEXT NOT NULL,
            scene_id TEXT NOT NULL,
            response TEXT NOT NULL,
            protocol TEXT,
            parsed TEXT NOT NULL,
            valid INTEGER NOT NULL,
            passed INTEGER NOT NULL,
            failure TEXT,
            errors TEXT NOT NULL,
            first_action_ms REAL,
            total_ms REAL,
            viewport_w INTEGER,
            viewport_h INTEGER,
            device_pixel_ratio REAL,
            focus_lost INTEGER,
            view_id TEXT,
            submitted_at REAL NOT NULL,
            UNIQUE (run_id, participant_id, instance_id, kind, attempt)
        )""",
        "CREATE INDEX responses_instance ON responses(instance_id)",
        """CREATE TABLE events (
            participant_id TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            view_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            row INTEGER,
            col INTEGER,
            value TEXT,
            client_ts REAL,
            server_ts REAL NOT NULL,
            PRIMARY KEY (participant_id, view_id, seq)
        )""",
        "CREATE INDEX events_instance ON events(participant_id, instance_id)",
    ],
    2: [
        # Per-participant summaries (monitoring, exclusions) read responses by participant.
        "CREATE INDEX responses_participant ON responses(participant_id, kind)",
    ],
    3: [
        # Which scorer produced a stored verdict (rose_core.benchmarks.rose.scoring.SCORER_VERSION); rows stored before: version 1.
        "ALTER TABLE responses ADD COLUMN scorer_version TEXT NOT NULL DEFAULT '1'",
    ],
    4: [
        # Practice feedback is part of the participant's state: shown until acknowledged, so a reload shows it again.
        "ALTER TABLE assignments ADD COLUMN acknowledged_at REAL",
        "UPDATE assignments SET acknowledged_at = answered_at WHERE kind = 'practice' AND answered_at IS NOT NULL",
        # The page's own timing beside the server's (responses.total_ms is assigned -> answered, server clock).
        "ALTER TABLE responses ADD COLUMN active_ms REAL",
        "ALTER TABLE responses ADD COLUMN client_total_ms REAL",
        "ALTER TABLE events ADD COLUMN active_ms REAL",
        "CREATE INDEX assignments_open ON assignments(participant_id) WHERE answered_at IS NULL",
    ],
    5: [
        # The browser tab (Streamlit session id) driving a participant and the address it connects from: one tab
        # at a time, held items of closed tabs released early, held items per address capped.
        "ALTER TABLE participants ADD COLUMN client_id TEXT",
        "ALTER TABLE participants ADD COLUMN client_address TEXT",
        # Requests the instrument refused, kept for the experimenter: an identity that does not match the stored
        # one, an answer after the time limit or for an item given to someone else, a damaged image.
        """CREATE TABLE participant_flags (
            study_id TEXT NOT NULL,
            participant_id TEXT,
            external_id TEXT,
            kind TEXT NOT NULL,
            detail TEXT NOT NULL,
            at REAL NOT NULL
        )""",
        "CREATE INDEX participant_flags_study ON participant_flags(study_id, kind)",
    ],
    6: [
        # Every experimenter sign-in attempt, to slow down and audit password guessing (rose_core.auth).
        """CREATE TABLE sign_in_attempts (
            attempt_id TEXT PRIMARY KEY,
            attempted_at REAL NOT NULL,
            client TEXT NOT NULL,
            session_id TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'wrong', 'refused'))
        )""",
        "CREATE INDEX sign_in_attempts_client ON sign_in_attempts(client, attempted_at)",
        "CREATE INDEX sign_in_attempts_session ON sign_in_attempts(session_id, attempted_at)",
    ],
    7: [
        # Episode benchmarks (iVISPAR's sliding geom puzzle): one row per move, stored once by (run, participant,
        # view, seq) like a click, with what the move did (outcome class, board after it, A* distance d_t) and
        # when (server clock; the page's times beside it). A reload resumes at the last stored board.
        """CREATE TABLE episode_steps (
            run_id TEXT NOT NULL,
            participant_id TEXT NOT NULL DEFAULT '',
            episode_id TEXT NOT NULL,
            view_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            command TEXT NOT NULL,
            outcome TEXT NOT NULL,
            valid INTEGER NOT NULL,
            state TEXT NOT NULL,
            distance INTEGER,
            ended TEXT,
            input TEXT,
            client_ms REAL,
            active_ms REAL,
            server_ts REAL NOT NULL,
            PRIMARY KEY (run_id, participant_id, view_id, seq)
        )""",
        "CREATE INDEX episode_steps_episode ON episode_steps(run_id, episode_id)",
        # One row per finished episode (the item's scored result), apart from ROSE's `responses`, so no ROSE
        # analysis, export or rescore ever reads an episode as a ROSE answer.
        """CREATE TABLE episode_results (
            result_id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(run_id),
            participant_id TEXT NOT NULL DEFAULT '',
            episode_id TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'main' CHECK (kind IN ('practice', 'main')),
            attempt INTEGER NOT NULL DEFAULT 0,
            sample INTEGER NOT NULL DEFAULT 0,
            modality TEXT NOT NULL,
            step_cap INTEGER,
            ended TEXT NOT NULL,
            steps INTEGER NOT NULL,
            response TEXT NOT NULL,
            protocol TEXT,
            parsed TEXT NOT NULL,
            valid INTEGER NOT NULL,
            passed INTEGER NOT NULL,
            failure TEXT,
            errors TEXT NOT NULL,
            first_action_ms REAL,
            total_ms REAL,
            active_ms REAL,
            view_id TEXT,
            submitted_at REAL NOT NULL,
            UNIQUE (run_id, participant_id, episode_id, kind, attempt, sample)
        )""",
        "CREATE INDEX episode_results_participant ON episode_results(participant_id, kind)",
    ],
    8: [
        # SGP's auxiliary board-state inference task: one row per written board (a model's or an agent's), with
        # the true board it is scored against, so a figure never depends on which SGP build the app has loaded.
        # Apart from ROSE's `runs` / `responses`: no ROSE view reads it (rose_core.storage.inference).
        """CREATE TABLE sgp_inference (
            dataset_hash TEXT NOT NULL,
            solver TEXT NOT NULL,
            solver_kind TEXT NOT NULL CHECK (solver_kind IN ('model', 'agent')),
            modality TEXT NOT NULL CHECK (modality IN ('2d', '3d', 'text')),
            item_id TEXT NOT NULL,
            episode_id TEXT NOT NULL,
            board TEXT NOT NULL CHECK (board IN ('start', 'goal')),
            sample INTEGER NOT NULL,
            n_geoms INTEGER NOT NULL,
            truth TEXT NOT NULL,
            response TEXT NOT NULL,
            ms REAL,
            source_file TEXT NOT NULL,
            imported_at REAL NOT NULL,
            PRIMARY KEY (dataset_hash, solver, modality, item_id, sample)
        )""",
    ],
}

SCHEMA_VERSION = max(MIGRATIONS)

# One `except` for both backends: the PostgreSQL connection raises psycopg's errors as these DB-API classes
# (rose_core.storage.pg), so a duplicate key is an IntegrityError and a lost server a DatabaseError everywhere.
IntegrityError = sqlite3.IntegrityError
DatabaseError = sqlite3.DatabaseError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class Connection(Protocol):
    """What the storage layer uses of a connection: sqlite3's, or the PostgreSQL one that behaves like it
    (rows by index and by column name, `rowcount`, `total_changes`, `in_transaction`)."""

    dialect: str
    total_changes: int
    in_transaction: bool

    def execute(self, sql: str, params: Sequence[Any] | dict = ...) -> Any: ...

    def executemany(self, sql: str, seq: Any) -> Any: ...


def dialect(conn: Any) -> str:
    """'sqlite' or 'postgresql': for the few statements that must differ (row locks, advisory locks)."""
    return getattr(conn, "dialect", "sqlite")


def is_postgres(location: str | Path | None) -> bool:
    return str(location or "").startswith(POSTGRES_SCHEMES)


def db_location() -> str:
    """The app's database: $ROSE_DB (a file path, or a postgresql:// URL), else data/rose.db."""
    return os.environ.get(DB_ENV) or str(DEFAULT_DB)


def database_exists(location: str | Path) -> bool:
    """A SQLite file that is there, or any PostgreSQL URL (an unreachable server fails when opened, by name)."""
    return is_postgres(location) or Path(location).exists()


def masked(location: str | Path) -> str:
    """The location for messages and logs: a URL's password hidden."""
    text = str(location)
    if not is_postgres(text):
        return text
    parts = urlsplit(text)
    if parts.password is None:
        return text
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


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


class Store:
    """One database, migrated to the current schema on open. `Store(path)` is SQLite (`SqliteStore`),
    `Store("postgresql://…")` is PostgreSQL (`rose_core.storage.pg.PgStore`); no argument: `db_location()`."""

    location: str                 # the path or URL it was opened with (a cache key; the URL may hold a password)
    path: Path | None             # the SQLite file (None on PostgreSQL)
    dialect: str

    def __new__(cls, location: Path | str | None = None, **options: Any):
        if cls is Store:
            if is_postgres(location if location else db_location()):
                from .storage.pg import PgStore
                cls = PgStore
            else:
                cls = SqliteStore
        return super().__new__(cls)

    def connect(self) -> Any:
        """This thread's connection, as a context manager (see the backend)."""
        raise NotImplementedError

    def write(self, concurrent: bool = False) -> Any:
        """One read-modify-write transaction, as a context manager. Writers take turns (as SQLite's BEGIN
        IMMEDIATE) unless `concurrent`: then, on PostgreSQL, the transaction does not queue behind other writers
        and the caller takes the row locks its read-modify-write needs (the participant path:
        `rose_core.storage.participants`). SQLite always takes turns."""
        raise NotImplementedError

    def migrate(self) -> int:
        raise NotImplementedError

    def query(self, sql: str, params: tuple | dict = ()) -> list[dict[str, Any]]:
        raise NotImplementedError

    def table_names(self) -> list[str]:
        raise NotImplementedError

    def checkpoint(self) -> None:
        """Make a copy of the database file complete (SQLite's WAL); nothing to do on a server."""

    def close(self) -> None:
        """Close the store's connections (tests and scripts; the app keeps one store per process)."""

    def schema_version(self) -> int:
        with self.connect() as conn:
            return int(conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])

    def display(self) -> str:
        """Where the data is, for messages (a URL's password hidden)."""
        return masked(self.location)


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

    def query(self, sql: str, params: tuple | dict = ()) -> list[dict[str, Any]]:
        """Rows as dicts, read through sqlite-utils (writes go through `write()` transactions)."""
        with self.connect() as conn:
            return list(sqlite_utils.Database(conn).query(sql, params))

    def table_names(self) -> list[str]:
        with self.connect() as conn:
            return sqlite_utils.Database(conn).table_names()


def apply_migrations(conn: Connection, where: str) -> int:
    """Inside the caller's transaction: create `meta`, apply the missing migrations in version order and record
    the version (the PostgreSQL connection translates each statement). Returns the version found."""
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    current = int(row[0]) if row else 0
    if current > SCHEMA_VERSION:
        raise RuntimeError(f"{where}: schema version {current} is newer than this code ({SCHEMA_VERSION})")
    for version in sorted(v for v in MIGRATIONS if v > current):
        for stmt in MIGRATIONS[version]:
            conn.execute(stmt)
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))
    return current


def read_frame(conn: Connection, sql: str, params: Sequence[Any] | dict | None = None) -> Any:
    """A query's rows as a pandas DataFrame on either backend (pandas reads sqlite3 connections itself; other
    DB-API connections it does not support)."""
    import pandas as pd

    if dialect(conn) == "sqlite":
        return pd.read_sql_query(sql, conn, params=params)
    cur = conn.execute(sql, params or ())
    return pd.DataFrame.from_records([tuple(r) for r in cur.fetchall()], columns=[d[0] for d in cur.description],
                                     coerce_float=True)


def fetch_rows(conn: Connection, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[tuple]]:
    """(column names, rows as plain tuples) on either backend: for bulk reads, where building a named row object
    per row (`sqlite3.Row`, `PgRow`) costs a third of the read."""
    if dialect(conn) == "sqlite":
        cur = conn.cursor()
        cur.row_factory = None
        cur.execute(sql, params)
    else:
        from psycopg.rows import tuple_row

        from .storage.pg import as_dbapi_error, translate

        cur = conn.raw.cursor(row_factory=tuple_row)
        try:
            cur.execute(translate(sql), params)
        except Exception as e:  # noqa: BLE001  psycopg's error as the sqlite3 class of the same kind
            import psycopg

            raise (as_dbapi_error(e) if isinstance(e, psycopg.Error) else e) from e
    return [d[0] for d in cur.description], cur.fetchall()


_I64_MAX = 2 ** 63 - 1
_UNIT, _NULL = "\x1f", "\x1e"   # what separates the values of a column read at once, and stands for NULL


def fetch_columns(conn: Connection, source: str, key: str, text: Sequence[str] = (), ints: Sequence[str] = (),
                  floats: Sequence[str] = (), params: Sequence[Any] = ()) -> dict[str, Any] | None:
    """Columns of `SELECT … FROM <source>` (`source`: a table and its WHERE, with `?` placeholders) ordered by
    `key` (a unique integer column, read as an int64 array with `ints`), each column as a whole: text as an object
    array of str (None for NULL), ints as int64, floats as float64 (NaN for NULL).

    Why: the driver builds a Python object per row and value, and at 200,000 rows × 19 columns that was most of a
    new database's first dashboard page. Here the database joins each integer or text column into one string
    (`group_concat` / `string_agg`: one value per column, split in C); floats, whose text form is not exact on
    SQLite, are read as rows, of the non-NULL ones only. One snapshot. Returns None (the caller reads rows instead)
    when a text value holds one of the two control characters used to separate values and stand for NULL, or an
    integer column holds NULL or a non-integer: a column is never misaligned or misread."""
    import numpy as np

    pg = dialect(conn) != "sqlite"
    sep, null = ("chr(31)", "chr(30)") if pg else ("char(31)", "char(30)")
    # Joined in the order the scan meets the rows, which is the same for every aggregate of the one query (each row
    # is handed to all of them in turn; parallel workers' partial results are combined all aggregates at once), so the
    # columns stay aligned; sorted by the key below when the scan's order is not the key's. An ORDER BY inside each
    # aggregate would sort the rows once per column (on PostgreSQL, twice the time of the whole read).
    agg = (lambda e, s: f"string_agg(({e})::text, {s})") if pg else (lambda e, s: f"group_concat({e}, {s})")
    ints = [key, *[c for c in ints if c != key]]
    parts = ["count(*)"] + [agg(c, "','") for c in ints] \
        + [agg(f"CASE WHEN {c} IS NULL THEN {null} ELSE {c} END", sep) for c in text] \
        + [f"count({c})" for c in (*text, *ints)]
    with read_snapshot(conn):
        row = _fetch_one(conn, f"SELECT {', '.join(parts)} FROM {source}", params)
        nums: list[tuple] = []
        if floats:
            keep = " OR ".join(f"{c} IS NOT NULL" for c in floats)
            _, nums = fetch_rows(conn, f"SELECT {key}, {', '.join(floats)} FROM (SELECT {key}, {', '.join(floats)} "
                                       f"FROM {source}) AS src WHERE {keep} ORDER BY {key}", params)
    n = int(row[0])
    out: dict[str, Any] = {}
    counted = row[1 + len(ints) + 2 * len(text):]
    for i, c in enumerate(ints):
        if int(counted[i]) != n:
            return None                                   # NULLs are left out of the join: not this column's rows
        # Only integers written plainly, one per row, joined by commas (anything else SQLite's loose typing kept as
        # text, a real or a blob goes back to the rows: numpy's parser would read a lone sign or blanks as 0), then
        # parsed in C: a tenth of splitting and converting each value.
        joined = row[1 + i] if n else ""
        if n and not _plain_ints(joined):
            return None
        try:
            values = np.fromstring(joined, dtype=np.int64, sep=",") if n else np.zeros(0, dtype=np.int64)
        except ValueError:
            return None
        if len(values) != n or (n and bool((values == _I64_MAX).any() or (values == -_I64_MAX - 1).any())):
            return None                                   # numpy saturates a number too large (rows tell)
        out[c] = values
    for i, c in enumerate(text):
        joined = row[1 + len(ints) + i] if n else ""
        values = joined.split(_UNIT) if n else []
        if len(values) != n:
            return None                                   # a separator inside a value
        col = np.array(values, dtype=object) if n else np.zeros(0, dtype=object)
        nulls = col == _NULL
        # every NULL-mark is a NULL, and no value holds the mark (which would read as one)
        if int(nulls.sum()) != n - int(row[1 + len(ints) + len(text) + i]) or joined.count(_NULL) != int(nulls.sum()):
            return None
        col[nulls] = None
        out[c] = col
    ids = out[key]
    if n > 1 and not bool((ids[1:] > ids[:-1]).all()):
        order = np.argsort(ids, kind="stable")
        out = {c: v[order] for c, v in out.items()}
        ids = out[key]
    if floats:
        got = np.array([r[0] for r in nums], dtype=np.int64)
        at = np.searchsorted(ids, got)
        if len(got) and (int(at.max()) >= n or not bool((ids[at] == got).all())):
            return None                                   # not the same rows (cannot happen in one snapshot)
        for j, c in enumerate(floats):
            col = np.full(n, np.nan)
            col[at] = np.array([np.nan if r[1 + j] is None else r[1 + j] for r in nums], dtype=float)
            out[c] = col
    return out


def _plain_ints(joined: Any) -> bool:
    """`joined` is integers written plainly (an optional minus, then digits), joined by commas: byte operations in C,
    a few milliseconds for 200,000 values (a regular expression took 30)."""
    if not isinstance(joined, str) or not joined.isascii():
        return False
    b = joined.encode("ascii")
    return (b != b"" and not b.translate(None, b"0123456789,-") and b[:1] != b"," and b[-1:] not in (b",", b"-")
            and b",," not in b and b"-," not in b and b"--" not in b
            and b.count(b"-") == b.count(b",-") + b.startswith(b"-"))     # a minus only where a value begins


def _fetch_one(conn: Connection, sql: str, params: Sequence[Any]) -> tuple:
    _, rows = fetch_rows(conn, sql, params)
    return rows[0]


@contextmanager
def read_snapshot(conn: Connection) -> Iterator[None]:
    """The statements inside see one snapshot of the database (a read transaction; inside a caller's transaction,
    that one)."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN" if dialect(conn) == "sqlite" else "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def verdicts_generation(conn: Connection) -> int:
    """How many times stored verdicts were rewritten in place (`rescore`). Responses otherwise only grow, so
    caches keyed by (rows, last id) must also key on this, or they keep serving the old verdicts."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'verdicts_generation'").fetchone()
    return int(row[0]) if row else 0


def bump_verdicts_generation(conn: Connection) -> None:
    """Inside the transaction that rewrites verdicts."""
    conn.execute("INSERT INTO meta(key, value) VALUES ('verdicts_generation', '1') "
                 "ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)")


def now() -> float:
    return time.time()
