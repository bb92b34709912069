"""The instrument's storage layer: every SQL statement about studies, participants, assignments, responses,
events and runs of the participant path lives in this package (connections and schema: `rose_core.store`).

Functions take a connection (`rose_core.store.Connection`: sqlite3's, or the PostgreSQL one of `storage.pg`) so
callers compose them inside one `Store.write()` transaction; nothing here opens or commits on its own, except
`store_responses`. SQL is written once in SQLite's dialect; the few statements that must differ per backend (row
and advisory locks on PostgreSQL) branch on `rose_core.store.dialect(conn)`.
"""
from ..store import SCHEMA_VERSION, Store, db_location, now
from .events import insert_events, view_event_count, view_events
from .participants import Assignment, Participant
from .responses import ResponseRow, store_responses, write_responses

__all__ = ["SCHEMA_VERSION", "Store", "db_location", "now", "insert_events", "view_events", "view_event_count",
           "Assignment", "Participant", "ResponseRow", "write_responses", "store_responses"]
