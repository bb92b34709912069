"""The storage layer: the database, its schema, its connections, and the SQL of every part that stores or reads.

- `open_store(location)`: the database at a SQLite path or a `postgresql://` URL (None: `$ROSE_DB`), migrated.
- `connection`: where the data is (`$ROSE_DB`), the connection protocol and its dialect, the `Store` interface
  both backends implement (the type callers annotate with), the DB-API errors.
- `schema`: the migrations (versioned in `meta`) and the meta counters; `sqlite` and `pg`: the two backends.
- `columns`: query results into frames, rows and columns; one read snapshot.
- `studies`, `participants`, `runs`, `responses`, `events`, `episodes`, `inference`, `sign_ins`: the SQL of each
  table, as functions. `responses` has the table's one reader (`responses_query`, one column list
  `RESPONSE_COLUMNS`) and its one writer (`write_responses`).

Every SQL statement of `rose_core` lives here (tests/test_layers.py checks it).

Functions take a connection (`connection.Connection`: sqlite3's, or the PostgreSQL one of `storage.pg`) so
callers compose them inside one `Store.write()` transaction; nothing here opens or commits on its own, except
`store_responses`. SQL is written once in SQLite's dialect; the few statements that must differ per backend (row
and advisory locks on PostgreSQL) branch on `connection.dialect(conn)`. The storage layer imports nothing above
it: what the benchmarks and the instrument define (a scorer version, a study, a grid event) comes in as values.
"""
from pathlib import Path
from typing import Any

from .connection import Store, db_location, is_postgres, now
from .events import insert_events, view_event_count, view_events
from .participants import Assignment, Participant
from .responses import ResponseRow, store_responses, write_responses
from .schema import SCHEMA_VERSION
from .sqlite import SqliteStore


def open_store(location: Path | str | None = None, **options: Any) -> Store:
    """The database at `location`, migrated to the current schema: a `postgresql://` (or `postgres://`) URL opens
    PostgreSQL (`storage.pg.PgStore`; `options`: its `max_size`), anything else the SQLite file at that path
    (`storage.sqlite.SqliteStore`). None or empty: `db_location()` ($ROSE_DB, else data/rose.db)."""
    where = str(location) if location else db_location()
    if is_postgres(where):
        from .pg import PgStore  # psycopg is imported on the first PostgreSQL open only

        return PgStore(where, **options)
    return SqliteStore(where, **options)


__all__ = ["SCHEMA_VERSION", "Store", "open_store", "db_location", "now", "insert_events", "view_events",
           "view_event_count", "Assignment", "Participant", "ResponseRow", "write_responses", "store_responses"]
