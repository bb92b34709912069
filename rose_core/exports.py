"""Responses and events as tables: for the app's download buttons and the command line."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Literal

import pandas as pd

from .store import Store

Table = Literal["responses", "events"]
Format = Literal["csv", "parquet"]

_RESPONSES_SQL = """
SELECT r.response_id, r.run_id, runs.solver_kind, runs.solver_name, runs.study_id, r.participant_id,
       p.external_id, r.instance_id, r.kind, r.attempt, r.template, r.subset, r.split, r.scene_id, r.response,
       r.protocol, r.parsed, r.valid, r.passed, r.failure, r.errors, r.first_action_ms, r.total_ms, r.viewport_w,
       r.viewport_h, r.device_pixel_ratio, r.focus_lost, r.view_id, r.submitted_at
FROM responses r JOIN runs USING (run_id) LEFT JOIN participants p ON p.participant_id = r.participant_id
{where} ORDER BY r.response_id
"""
_EVENTS_SQL = """
SELECT e.participant_id, p.external_id, p.study_id, e.instance_id, e.view_id, e.seq, e.type, e.row, e.col, e.value,
       e.client_ts, e.server_ts
FROM events e JOIN participants p USING (participant_id) {where} ORDER BY e.participant_id, e.server_ts, e.seq
"""


def table_frame(store: Store, table: Table, study_id: str | None = None) -> pd.DataFrame:
    if table == "responses":
        sql = _RESPONSES_SQL.format(where="WHERE runs.study_id = :s" if study_id else "")
    elif table == "events":
        sql = _EVENTS_SQL.format(where="WHERE p.study_id = :s" if study_id else "")
    else:
        raise ValueError(f"unknown table {table!r}: expected responses or events")
    with store.connect() as conn:
        return pd.read_sql_query(sql, conn, params={"s": study_id} if study_id else None)


def frame_bytes(df: pd.DataFrame, fmt: Format) -> bytes:
    buf = io.BytesIO()
    if fmt == "csv":
        df.to_csv(buf, index=False)
    elif fmt == "parquet":
        df.to_parquet(buf, index=False)
    else:
        raise ValueError(f"unknown format {fmt!r}: expected csv or parquet")
    return buf.getvalue()


def export_table(store: Store, table: Table, fmt: Format, out: Path, study_id: str | None = None) -> int:
    """Write the table to `out` (via a temporary file, renamed at the end); returns the row count."""
    df = table_frame(store, table, study_id)
    out = Path(out)
    tmp = out.with_name(f".{out.name}.part")
    tmp.write_bytes(frame_bytes(df, fmt))
    tmp.replace(out)
    return len(df)
