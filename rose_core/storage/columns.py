"""Reading query results into frames, rows and whole columns (both backends), and one snapshot for several reads."""
from __future__ import annotations

import atexit
import re
import threading
import weakref
from contextlib import contextmanager
from typing import Any, Iterator, Literal, Mapping, Sequence

from .connection import Connection, Store, dialect


def read_frame(conn: Connection, sql: str, params: Sequence[Any] | dict | None = None) -> Any:
    """A query's rows as a pandas DataFrame on either backend (pandas reads sqlite3 connections itself; other
    DB-API connections it does not support)."""
    import pandas as pd

    if dialect(conn) == "sqlite":
        return pd.read_sql_query(sql, conn, params=params)
    cur = conn.execute(sql, params or ())
    return pd.DataFrame.from_records([tuple(r) for r in cur.fetchall()], columns=[d[0] for d in cur.description],
                                     coerce_float=True)


def count_rows(conn: Connection, sql: str, params: Sequence[Any] | dict | None = None) -> int:
    """How many rows a query returns, counted by the database (without reading them)."""
    return int(conn.execute(f"SELECT count(*) FROM ({sql}) AS counted", params or ()).fetchone()[0])


def fetch_rows(conn: Connection, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[tuple]]:
    """(column names, rows as plain tuples) on either backend: for bulk reads, where building a named row object
    per row (`sqlite3.Row`, `PgRow`) costs a third of the read."""
    if dialect(conn) == "sqlite":
        cur = conn.cursor()
        cur.row_factory = None
        cur.execute(sql, params)
    else:
        from psycopg.rows import tuple_row

        from .pg import as_dbapi_error, translate

        cur = conn.raw.cursor(row_factory=tuple_row)
        try:
            cur.execute(translate(sql), params)
        except Exception as e:  # noqa: BLE001  psycopg's error as the sqlite3 class of the same kind
            import psycopg

            raise (as_dbapi_error(e) if isinstance(e, psycopg.Error) else e) from e
    return [d[0] for d in cur.description], cur.fetchall()


Kind = Literal["int", "float", "text"]


class ColumnReadError(RuntimeError):
    """A column read failed: SQLite's reader process died twice in a row or the database refused the read, or the
    PostgreSQL read failed (`__cause__` holds the driver's error; the message is for the server's log, not a page)."""


class ColumnTypeError(ColumnReadError, TypeError):
    """A stored value is not of its column's declared type: the column is refused, never coerced."""


def read_columns(store: Store, queries: Sequence[tuple[str, Sequence[int], Mapping[str, Kind]]],
                 ) -> list[dict[str, Any]]:
    """Each (sql, params, columns) of `queries` (SQLite's dialect, `?` placeholders; selecting exactly `columns`,
    in their order) as whole numpy columns of their declared kinds, in the query's row order; all read in one
    snapshot (a data version read beside rows is those rows' version).

    Read by a maintained columnar driver into Arrow, in C: on PostgreSQL `adbc-driver-postgresql` (libpq's binary
    COPY) in this process, on its own connection, in one REPEATABLE READ READ ONLY transaction; on SQLite
    `adbc-driver-sqlite` in a reader process of its own (`sqlite_reader`: it may not share a process with
    Python's `sqlite3`).

    Parameters are integers only (an id to read after): on PostgreSQL they are written into the statement
    (`_inlined`), and no reader needs text; anything else is refused with TypeError, on both backends alike.

    Types are exact: `int` is int64 (NULLs kept: then a pandas nullable Int64 array), `float` float64 (NaN for
    NULL), `text` an object array of `str` (None for NULL). A value of another type (SQLite keeps text, a real or a
    blob in an INTEGER column as given) raises `ColumnTypeError`, naming the column. A read that fails raises
    `ColumnReadError`."""
    for sql, params, _ in queries:
        _integers(params)
    if store.dialect == "sqlite":
        from . import sqlite_reader

        try:
            tables = sqlite_reader.read(str(store.path), [(sql, list(params)) for sql, params, _ in queries])
        except sqlite_reader.ReaderError as e:
            raise ColumnReadError(str(e)) from e
    else:
        tables = _pg_tables(store, [(sql, params) for sql, params, _ in queries])
    out = []
    for table, (sql, _, cols) in zip(tables, queries):
        if table.column_names != list(cols):
            raise ValueError(f"the query returned columns {table.column_names}, not {list(cols)}: {sql}")
        out.append({n: _column(n, k, table.column(n)) for n, k in cols.items()})
    return out


def _integers(params: Sequence[Any]) -> None:
    """Refuse a parameter that is not exactly an int (not a bool, nor a subclass, whose text could be anything),
    naming its position and type only."""
    for j, v in enumerate(params):
        if type(v) is not int:
            raise TypeError(f"a column read takes integer parameters only (on PostgreSQL they are written into the "
                            f"statement): parameter {j + 1} is {type(v).__name__}")


def prepare_reads(store: Store) -> None:
    """Start what `read_columns` of this store needs, ahead of the first read: SQLite's reader process (its own
    imports, ~0.3 s on a quiet machine, which a first dashboard page would otherwise wait for); on PostgreSQL the
    driver's import, in a thread of its own."""
    if store.dialect == "sqlite":
        from . import sqlite_reader

        sqlite_reader.start()
        return
    global _PG_IMPORT
    with _PG_LOCK:
        if _PG_IMPORT is None:    # once per process: the sign-in form calls this at every rerun
            _PG_IMPORT = threading.Thread(target=_import_pg_driver, name="rose-import-adbc", daemon=True)
            _PG_IMPORT.start()


_PG_IMPORT: threading.Thread | None = None


def _import_pg_driver() -> None:
    import adbc_driver_postgresql.dbapi  # noqa: F401  imported ahead of the first read (its own cost)


# One ADBC connection per PostgreSQL store and process, kept open between reads (a new one cost a read ~0.26 s of
# wall and 40 ms of CPU at load 13), reads taking turns on it; dropped after an error, made anew at the next read.
# Kept by the store object, not its URL: a URL may leave the database to PGDATABASE and the like, so one text can
# name two databases.
_PG: "weakref.WeakKeyDictionary[Store, list]" = weakref.WeakKeyDictionary()
_PG_LOCK = threading.Lock()


def _close_kept() -> None:
    """At exit, before the interpreter tears the driver's module down under the connections' finalizers."""
    for slot in list(_PG.values()):
        if slot[1] is not None:
            try:
                slot[1].close()
            except Exception:  # noqa: BLE001
                pass
            slot[1] = None


atexit.register(_close_kept)


def _pg_tables(store: Store, queries: Sequence[tuple[str, Sequence[int]]]) -> list[Any]:
    import adbc_driver_postgresql.dbapi as driver

    with _PG_LOCK:
        slot = _PG.get(store)
        if slot is None:
            slot = _PG[store] = [threading.Lock(), None]
    with slot[0]:
        for attempt in (1, 2):
            fresh = slot[1] is None
            try:
                if fresh:
                    slot[1] = driver.connect(store.location, autocommit=True)
                return _pg_read(slot[1], queries)
            except driver.Error as e:
                conn, slot[1] = slot[1], None
                if conn is not None:
                    try:
                        conn.close()
                    except Exception:  # noqa: BLE001  a connection the server already ended
                        pass
                # a kept connection the server ended (a restart, an idle timeout): once more on a new one
                if fresh or attempt == 2 or not isinstance(e, driver.OperationalError):
                    raise ColumnReadError(f"the PostgreSQL column read failed: {type(e).__name__}: {e}") from e
        raise AssertionError("unreachable")


def _pg_read(conn: Any, queries: Sequence[tuple[str, Sequence[int]]]) -> list[Any]:
    from .pg import translate

    with conn.cursor() as cur:
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            tables = []
            for sql, params in queries:
                # the values written into the statement: with bound parameters the driver reads the result through
                # libpq's row buffer instead of a binary COPY, 0.7–1.2 s more for the frame's 205,840 rows
                cur.execute(_inlined(translate(sql), params))
                tables.append(cur.fetch_arrow_table())
            return tables
        finally:
            cur.execute("ROLLBACK")


_PLACEHOLDER = re.compile(r"%%|%s|%")


def _inlined(sql: str, params: Sequence[Any]) -> str:
    """`sql` as `pg.translate` writes it for psycopg, for a driver that binds nothing: each `%s` outside quoted
    text replaced by its parameter in order, written as a number, and `%%` back to `%`. Integers only (bool is not
    one; a negative one in brackets, never `x--5`, a comment): the read's parameters are ids. Anything else, a
    placeholder without its value, a value without its placeholder, or a named placeholder is refused, never
    passed on half-written."""
    from .pg import _TOKENS

    _integers(params)
    values = iter(params)

    def value(m: re.Match) -> str:
        if m.group(0) == "%%":
            return "%"
        if m.group(0) == "%":
            raise ValueError(f"a column read takes positional `?` placeholders only: {sql}")
        v = next(values, None)
        if v is None:
            raise ValueError(f"a placeholder has no value ({len(params)} given): {sql}")
        return f"({v})" if v < 0 else str(v)

    out = "".join(part if part[:1] in "'\"" else _PLACEHOLDER.sub(value, part) for part in _TOKENS.findall(sql))
    if next(values, None) is not None:
        raise ValueError(f"{len(params)} parameters given for fewer placeholders: {sql}")
    return out


def _column(name: str, kind: Kind, arr: Any) -> Any:
    """One Arrow column as numpy (see `read_columns` for the types)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    if len(arr) == arr.null_count:      # no value but NULL (or no row): the driver's type says nothing
        if kind == "int":
            return np.zeros(0, dtype=np.int64) if not len(arr) else _nullable_ints(pa.nulls(len(arr), pa.int64()))
        if kind == "float":
            return np.full(len(arr), np.nan)
        return np.full(len(arr), None, dtype=object)
    t = arr.type.value_type if pa.types.is_dictionary(arr.type) else arr.type
    if kind == "int":
        if not pa.types.is_integer(t):
            raise ColumnTypeError(f"column {name!r} is declared integer but holds {t} values")
        arr = arr.cast(pa.int64())
        return _nullable_ints(arr) if arr.null_count else arr.to_numpy(zero_copy_only=False)
    if kind == "float":
        if not pa.types.is_floating(t):
            raise ColumnTypeError(f"column {name!r} is declared real but holds {t} values")
        return arr.cast(pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False)
    if kind == "text":
        if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
            raise ColumnTypeError(f"column {name!r} is declared text but holds {t} values")
        # each distinct text made a Python string once (the columns repeat a few thousand values at most)
        enc = arr if pa.types.is_dictionary(arr.type) else pc.dictionary_encode(arr)
        words = np.array(enc.dictionary.to_pylist() + [None], dtype=object)
        return words[enc.indices.fill_null(len(enc.dictionary)).to_numpy(zero_copy_only=False)]
    raise ValueError(f"unknown column kind {kind!r}")


def _nullable_ints(arr: Any) -> Any:
    import pandas as pd

    return pd.array(arr.to_pylist(), dtype="Int64")


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
