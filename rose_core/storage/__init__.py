"""The instrument's storage layer: every SQL statement about studies, participants, assignments, responses,
events and runs of the participant path lives in this package (connections and schema: `rose_core.store`).

Functions take a `sqlite3.Connection` so callers compose them inside one `Store.write()` transaction
(`BEGIN IMMEDIATE`); nothing here opens or commits on its own, except `store_responses`.
"""
from ..store import SCHEMA_VERSION, Store, db_path, now
from .events import insert_events, view_event_count, view_events
from .participants import Assignment, Participant
from .responses import ResponseRow, store_responses, write_responses

__all__ = ["SCHEMA_VERSION", "Store", "db_path", "now", "insert_events", "view_events", "view_event_count",
           "Assignment", "Participant", "ResponseRow", "write_responses", "store_responses"]
