"""The tables experimenters download (the Studies page) and export (`python -m rose_core export-table`): ROSE's
responses and events, SGP's episode results and moves, written through the project's one CSV encoder
(`rose_core.common.csv_safety`: formula-like text neutralised, times as ISO 8601 UTC).
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd

from ..common.csv_safety import Format, frame_bytes
from ..storage.columns import read_frame
from ..storage.connection import Store

Table = Literal["responses", "events", "episode_results", "episode_steps"]
TABLES: tuple[str, ...] = Table.__args__  # type: ignore[attr-defined]

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
        from ..storage import episodes
        from .config import load_study

        if study_id is None:
            return episodes.export_query(table, False), None
        study = load_study(conn, study_id)
        return episodes.export_query(table, True), (study.run_id if study else "",)
    raise ValueError(f"unknown table {table!r}: expected one of {', '.join(TABLES)}")


def export_table(store: Store, table: Table, fmt: Format, out: Path, study_id: str | None = None) -> int:
    """Write the table to `out` (via a temporary file, renamed at the end); returns the row count."""
    df = table_frame(store, table, study_id)
    out = Path(out)
    tmp = out.with_name(f".{out.name}.part")
    tmp.write_bytes(frame_bytes(df, fmt))
    tmp.replace(out)
    return len(df)
