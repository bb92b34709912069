"""Database faults as one error the participant path can answer calmly (`StorageError`), kept apart so the
session, joining, the kinds of item and the device gate all map them the same way without importing the session.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from ..storage.connection import DatabaseError, IntegrityError, Store, roll_back


class StorageError(RuntimeError):
    """The database cannot store or read right now (disk full, read-only, corrupt). Nothing was half-stored: the
    page keeps the participant's selection and sends the answer again once storage works."""


@contextmanager
def storage(store: Store) -> Iterator[None]:
    """Database faults as StorageError (a duplicate key stays an IntegrityError: that is a bug, not a fault).

    A COMMIT refused for a full disk leaves SQLite's transaction open; it is rolled back here, so the next write
    of this thread (a rerun's events, the retry) starts clean instead of failing as a nested transaction."""
    try:
        yield
    except IntegrityError:
        raise
    except DatabaseError as e:
        try:
            with store.connect() as c:
                roll_back(c)
        except DatabaseError:
            pass
        raise StorageError(str(e)) from e
