"""Tables as files: the one CSV encoder of the project, and the tables experimenters download (the Studies page)
and export (`python -m rose_core export-table`): ROSE's responses and events, SGP's episode results and moves.

Every CSV the project writes goes through `frame_bytes(df, "csv")`. Cells hold text that participants and
models control (a Prolific id, event values, a model's response), and a spreadsheet opening a CSV treats a
cell that begins with `=`, `+`, `-` or `@` (or a tab or carriage return) as a formula: `=HYPERLINK(…)` would
become a live link. Such text cells are written with a leading apostrophe (`'=HYPERLINK(…)`), which
spreadsheets show as text. Only text is touched: numeric columns, and text that is exactly a number
(`-3`, a count typed by a participant), stay as they are. Times are ISO 8601 UTC (`…Z`) in columns whose
name ends in `_utc`; durations are numbers in columns whose name states the unit (`_ms`).

Parquet keeps the raw text (it is read by programs, not opened as formulas) with times as UTC timestamps.
"""
from __future__ import annotations

import io
import re
import unicodedata
from pathlib import Path
from typing import Literal

import pandas as pd

from .store import Store, read_frame

Table = Literal["responses", "events", "episode_results", "episode_steps"]
TABLES: tuple[str, ...] = Table.__args__  # type: ignore[attr-defined]
Format = Literal["csv", "parquet"]

# Epoch-second columns read from the database, exported as UTC times under a name that says so.
_UTC_COLUMNS = {"submitted_at": "submitted_at_utc", "server_ts": "server_at_utc"}

_RESPONSES_SQL = """
SELECT r.response_id, r.run_id, runs.solver_kind, runs.solver_name, runs.study_id, r.participant_id,
       p.external_id, r.instance_id, r.kind, r.attempt, r.template, r.subset, r.split, r.scene_id, r.response,
       r.protocol, r.parsed, r.valid, r.passed, r.failure, r.errors, r.scorer_version, r.first_action_ms,
       r.total_ms, r.active_ms, r.client_total_ms, r.viewport_w, r.viewport_h, r.device_pixel_ratio,
       r.focus_lost, r.view_id, r.submitted_at
FROM responses r JOIN runs USING (run_id) LEFT JOIN participants p ON p.participant_id = r.participant_id
{where} ORDER BY r.response_id
"""
_EVENTS_SQL = """
SELECT e.participant_id, p.external_id, p.study_id, e.instance_id, e.view_id, e.seq, e.type, e.row, e.col, e.value,
       e.client_ts AS client_ms_since_shown, e.active_ms, e.server_ts
FROM events e JOIN participants p USING (participant_id) {where} ORDER BY e.participant_id, e.server_ts, e.seq
"""


def table_frame(store: Store, table: Table, study_id: str | None = None) -> pd.DataFrame:
    """A table as exported (one study's rows, or all). `total_ms` is the server's assigned → answered (or, for an
    episode, shown → ended) time, `client_total_ms`, `first_action_ms` and `active_ms` the page's own;
    `submitted_at_utc` and `server_at_utc` are UTC timestamps."""
    with store.connect() as conn:
        df = read_frame(conn, *_query(conn, table, study_id))
    for col, name in _UTC_COLUMNS.items():
        if col in df.columns:
            df[col] = pd.to_datetime(df[col], unit="s", utc=True)
            df = df.rename(columns={col: name})
    return df


def table_rows(store: Store, table: Table, study_id: str | None = None) -> int:
    """How many rows `table_frame` returns now, counted by the database (a page shows the count and builds the
    file only when it is downloaded: 100,000 responses take seconds to read and encode)."""
    with store.connect() as conn:
        sql, params = _query(conn, table, study_id)
        return int(conn.execute(f"SELECT count(*) FROM ({sql}) AS exported", params or ()).fetchone()[0])


def _query(conn, table: str, study_id: str | None) -> tuple[str, tuple | dict | None]:
    """The export's query and parameters: ROSE's responses or events, SGP's episode results or moves
    (`storage.episodes.export_query`); every run's, or one study's."""
    if table == "responses":
        return _RESPONSES_SQL.format(where="WHERE runs.study_id = :s" if study_id else ""), \
            {"s": study_id} if study_id else None
    if table == "events":
        return _EVENTS_SQL.format(where="WHERE p.study_id = :s" if study_id else ""), \
            {"s": study_id} if study_id else None
    if table in ("episode_results", "episode_steps"):
        from .storage import episodes as se
        from .storage.participants import get_study

        if study_id is None:
            return se.export_query(table, False), None
        study = get_study(conn, study_id)
        return se.export_query(table, True), (study.run_id if study else "",)
    raise ValueError(f"unknown table {table!r}: expected one of {', '.join(TABLES)}")


# --- the CSV encoder ---------------------------------------------------------------------------------------

_FORMULA_FIRST = frozenset("=+-@\u2212")  # after NFKC: full-width ＝＋－＠ and small forms are these
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def formula_like(text: str) -> bool:
    """Whether a spreadsheet could read this text as a formula: it begins with = + - @ (also full-width or
    after leading spaces), or with a tab or carriage return. Text that is exactly a number written in ASCII
    digits (`-3`, `+4`, `-3.5e2`) is not."""
    if not text:
        return False
    if text[0] in "\t\r":
        return True
    s = unicodedata.normalize("NFKC", text).lstrip()
    return s[:1] in _FORMULA_FIRST and not _NUMBER.fullmatch(text.strip())  # a number as written in ASCII


def neutralise(text: str) -> str:
    """Text a spreadsheet shows as text: a formula-like cell gets a leading apostrophe."""
    return "'" + text if formula_like(text) else text


def _neutral_column(col: pd.Series) -> pd.Series:
    return col.astype(object).map(lambda v: neutralise(v) if isinstance(v, str) else v)


def _iso_utc(col: pd.Series) -> pd.Series:
    if getattr(col.dt, "tz", None) is not None:
        return col.dt.tz_convert("UTC").dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return col.dt.strftime("%Y-%m-%dT%H:%M:%S.%f")  # a time without a zone stays without one


def safe_csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The frame as the CSV shows it: text cells and column names neutralised, times as ISO 8601."""
    out = df.copy()
    for name in out.columns:
        col = out[name]
        if pd.api.types.is_datetime64_any_dtype(col):
            out[name] = _iso_utc(col)
        elif not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
            out[name] = _neutral_column(col)
    out.columns = [neutralise(c) if isinstance(c, str) else c for c in out.columns]
    return out


def frame_bytes(df: pd.DataFrame, fmt: Format) -> bytes:
    """The table as CSV (safe to open in a spreadsheet, see the module docstring) or Parquet."""
    buf = io.BytesIO()
    if fmt == "csv":
        # RFC 4180 line ends: the csv module then quotes every cell holding a CR or LF (with "\n" a lone CR
        # inside a cell went out unquoted and split the row for every reader).
        safe_csv_frame(df).to_csv(buf, index=False, lineterminator="\r\n")
    elif fmt == "parquet":
        df.to_parquet(buf, index=False)
    else:
        raise ValueError(f"unknown format {fmt!r}: expected csv or parquet")
    return buf.getvalue()


def harness_tsv_bytes(df: pd.DataFrame) -> bytes:
    """A harness's input table (VLMEvalKit's TSV), written verbatim: an apostrophe would change the prompt the
    model reads. Its text is ours (prompts, gold answers, base64 PNGs), never a participant's, and this refuses
    to write a cell a spreadsheet could read as a formula rather than let one through."""
    for name in df.columns:
        col = df[name]
        if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            continue
        bad = col.map(lambda v: isinstance(v, str) and formula_like(v))
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            raise ValueError(f"harness table column {name!r}, row {row + 1}: {str(col.iloc[row])[:40]!r} would open "
                             "as a spreadsheet formula")
    buf = io.BytesIO()
    df.to_csv(buf, sep="\t", index=False)
    return buf.getvalue()


def export_table(store: Store, table: Table, fmt: Format, out: Path, study_id: str | None = None) -> int:
    """Write the table to `out` (via a temporary file, renamed at the end); returns the row count."""
    df = table_frame(store, table, study_id)
    out = Path(out)
    tmp = out.with_name(f".{out.name}.part")
    tmp.write_bytes(frame_bytes(df, fmt))
    tmp.replace(out)
    return len(df)
