"""Where the data is and what a connection is: the `Store` interface both backends implement, the database
location (`$ROSE_DB`), the connection protocol and its dialect, the DB-API errors both backends raise.

`rose_core.storage.open_store(location)` opens the backend that takes the location (SQLite for a file path,
`storage.sqlite`; PostgreSQL for a `postgresql://` URL, `storage.pg`); `Store` is the type callers annotate with.
"""
from __future__ import annotations

import os
import sqlite3
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Protocol, Sequence
from urllib.parse import urlsplit, urlunsplit

DEFAULT_DB = Path(__file__).resolve().parent.parent.parent / "data" / "rose.db"
DB_ENV = "ROSE_DB"

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


def roll_back(conn: Any) -> None:
    """End the connection's open transaction, if any, undoing it (after an error left it open)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


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


class Store(ABC):
    """One database, migrated to the current schema on open: `storage.sqlite.SqliteStore` (a file) or
    `storage.pg.PgStore` (a server). Open one with `rose_core.storage.open_store(location)`."""

    location: str                 # the path or URL it was opened with (a cache key; the URL may hold a password)
    path: Path | None             # the SQLite file (None on PostgreSQL)
    dialect: str

    @abstractmethod
    def connect(self) -> Any:
        """This thread's connection, as a context manager (see the backend)."""

    @abstractmethod
    def write(self, concurrent: bool = False) -> Any:
        """One read-modify-write transaction, as a context manager. Writers take turns (as SQLite's BEGIN
        IMMEDIATE) unless `concurrent`: then, on PostgreSQL, the transaction does not queue behind other writers
        and the caller takes the row locks its read-modify-write needs (the participant path:
        `rose_core.storage.participants`). SQLite always takes turns."""

    @abstractmethod
    def migrate(self) -> int:
        """Apply the missing schema steps; the schema version reached."""

    @abstractmethod
    def query(self, sql: str, params: tuple | dict = ()) -> list[dict[str, Any]]:
        """Rows as dicts (for the storage layer's own reads and for tests)."""

    @abstractmethod
    def table_names(self) -> list[str]:
        """The database's tables."""

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


def now() -> float:
    return time.time()

