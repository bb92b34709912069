"""Reading query results into frames, rows and columns (both backends), and one snapshot for several reads."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from .connection import Connection, dialect


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
