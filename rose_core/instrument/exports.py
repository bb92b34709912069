"""The tables experimenters download (the Studies page) and export (`python -m rose_core export-table`): ROSE's
responses and events, SGP's episode results and moves, written through the project's one CSV encoder
(`rose_core.common.csv_safety`: formula-like text neutralised, times as ISO 8601 UTC).
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd

from ..common.csv_safety import Format, frame_bytes
from ..storage import devices, events, responses
from ..storage.columns import count_rows, read_frame
from ..storage.connection import Store

Table = Literal["responses", "events", "episode_results", "episode_steps", "participant_flags"]
TABLES: tuple[str, ...] = Table.__args__  # type: ignore[attr-defined]

# Epoch-second columns read from the database, exported as UTC times under a name that says so.
_UTC_COLUMNS = {"submitted_at": "submitted_at_utc", "server_ts": "server_at_utc", "excluded_at": "excluded_at_utc",
                "flagged_at": "flagged_at_utc"}

def table_frame(store: Store, table: Table, study_id: str | None = None) -> pd.DataFrame:
    """A table as exported (one study's rows, or all). `total_ms` is the server's assigned → answered (or, for an
    episode, shown → ended) time, `client_total_ms`, `first_action_ms` and `active_ms` the page's own;
    `submitted_at_utc` and `server_at_utc` are UTC timestamps. Every participant row carries the participant's
    completion state (`end_reason`: empty while still working) and standing exclusion by hand
    (`excluded_reason`, `excluded_by`, `excluded_at_utc`); previews, simulated and test participants are never
    in it."""
    with store.connect() as conn:
        df = read_frame(conn, *_query(conn, table, study_id))
        if table == "responses":
            df = with_device_columns(conn, df)
    for col, name in _UTC_COLUMNS.items():
        if col in df.columns:
            df[col] = pd.to_datetime(df[col], unit="s", utc=True)
            df = df.rename(columns={col: name})
    return df


DEVICE_COLUMNS = {"viewport_w": "device_viewport_w", "viewport_h": "device_viewport_h", "dpr": "device_dpr",
                  "touch_points": "device_touch_points", "coarse_pointer": "device_coarse_pointer",
                  "allowed": "device_allowed"}


def with_device_columns(conn, df: pd.DataFrame) -> pd.DataFrame:
    """Each human response with its participant's device as claimed before consent (`storage.devices`: window in
    CSS pixels, DPR, touch points, finger as the main pointer, met the study's minimum); empty for model rows and
    for participants whose browser never reported. The per-response `viewport_w`/`viewport_h` stay: the window at
    each answer."""
    dev = devices.device_frame(conn)
    dev = dev[dev["reports"] > 0][["participant_id", *DEVICE_COLUMNS]].rename(columns=DEVICE_COLUMNS)
    if df.empty or "participant_id" not in df.columns:
        return df.assign(**{c: pd.Series(dtype="float64") for c in DEVICE_COLUMNS.values()})
    return df.merge(dev, on="participant_id", how="left")


def table_rows(store: Store, table: Table, study_id: str | None = None) -> int:
    """How many rows `table_frame` returns now, counted by the database (a page shows the count and builds the
    file only when it is downloaded: 100,000 responses take seconds to read and encode)."""
    with store.connect() as conn:
        return count_rows(conn, *_query(conn, table, study_id))


def _query(conn, table: str, study_id: str | None) -> tuple[str, tuple | dict | None]:
    """The export's query and parameters (the storage layer's: `responses.responses_query`, `events.export_query`,
    `episodes.export_query`): ROSE's responses or events, SGP's episode results or moves; every run's, or one
    study's."""
    if table == "responses":
        return responses.responses_query(responses.EXPORT_COLUMNS, study_id=study_id or None)
    if table == "events":
        return events.export_query(study_id or None)
    if table == "participant_flags":
        return _flags_query(study_id)
    if table in ("episode_results", "episode_steps"):
        from ..storage import episodes
        from .config import load_study

        if study_id is None:
            return episodes.export_query(table, False), None
        study = load_study(conn, study_id)
        return episodes.export_query(table, True), (study.run_id if study else "",)
    raise ValueError(f"unknown table {table!r}: expected one of {', '.join(TABLES)}")


def _flags_query(study_id: str | None) -> tuple[str, tuple]:
    """participant_flags: what the server refused and kept for the experimenter (takeover attempts, late answers,
    damaged images), one row per refusal."""
    from ..storage.participants import flags_export_query

    return flags_export_query(study_id or None)


def export_table(store: Store, table: Table, fmt: Format, out: Path, study_id: str | None = None) -> int:
    """Write the table to `out` (via a temporary file, renamed at the end); returns the row count."""
    df = table_frame(store, table, study_id)
    out = Path(out)
    tmp = out.with_name(f".{out.name}.part")
    tmp.write_bytes(frame_bytes(df, fmt))
    tmp.replace(out)
    return len(df)
