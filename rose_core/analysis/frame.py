"""Reading the response frame: every main response once, with its solver and resampling unit, kept current
by appending (FrameCache) and snapshotted to Parquet beside the database for fast first loads."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..solver_labels import label_of
from ..store import Store, read_frame, verdicts_generation

_SQL = """
SELECT r.response_id, r.run_id, runs.solver_kind, runs.solver_name, runs.study_id, r.participant_id, r.instance_id,
       r.template, r.subset, r.split, r.scene_id, r.valid, r.passed, r.failure, r.protocol, r.parsed,
       r.total_ms, r.first_action_ms, r.scorer_version
FROM responses r JOIN runs USING (run_id)
WHERE r.kind = 'main'
"""


# --------------------------------------------------------------------------- frames, filters, exclusions

def responses_frame(store: Store, after_id: int = 0) -> pd.DataFrame:
    """Every main response (participants' practice and attention items excluded), one row each; with
    after_id, only the responses stored after that one (for incremental refreshes)."""
    with store.connect() as conn:
        df = read_frame(conn, _SQL + " AND r.response_id > ? ORDER BY r.response_id", (after_id,))
    # Fixed dtypes, whatever this batch holds: an appended batch must look like a full reload.
    df["study_id"] = df["study_id"].fillna("").astype(object)
    for col in ("total_ms", "first_action_ms"):
        df[col] = df[col].astype(float)
    codes, runs = pd.factorize(df["solver_kind"] + "\x1f" + df["solver_name"])  # one label per distinct run
    df["solver"] = np.array([label_of(*r.split("\x1f", 1)) for r in runs] + [""], dtype=object)[codes]
    df["unit"] = np.where(df["solver_kind"] == "human", df["participant_id"], df["scene_id"])
    return df


class FrameCache:
    """The responses frame of one database, refreshed by appending what is new (responses only grow; a
    removed or replaced run changes the row count differently, and then everything is reloaded).

    A Parquet snapshot beside a SQLite database (`<db>.frame.parquet`) makes the first load after a server start
    a file read plus the rows stored since, instead of a full scan.
    """

    def __init__(self, store: Store, snapshot: bool = True):
        import threading

        self.store = store
        self.lock = threading.Lock()
        self.frame: pd.DataFrame | None = None
        # (rows, max response_id, verdicts generation) of what the frame holds
        self.state: tuple[int, int, int] = (0, 0, 0)
        # SQLite only: beside the file. On PostgreSQL several app processes share the data; each reads it whole once.
        self.snapshot = Path(f"{store.path}.frame.parquet") if snapshot and store.path is not None else None
        self.snapshot_rows = 0

    def _current(self) -> tuple[int, int, int]:
        with self.store.connect() as conn:
            rows, last = conn.execute("SELECT count(*), coalesce(max(response_id), 0) FROM responses "
                                      "WHERE kind = 'main'").fetchone()
            return int(rows), int(last), verdicts_generation(conn)

    def _load_snapshot(self) -> None:
        if self.snapshot is None or not self.snapshot.exists():
            return
        try:
            import pyarrow.parquet as pq

            table = pq.read_table(self.snapshot)
            meta = json.loads(table.schema.metadata[b"rose_state"])
            self.frame = table.to_pandas()
            self.state = (int(meta["rows"]), int(meta["last"]), int(meta.get("generation", -1)))
            self.snapshot_rows = self.state[0]
        except Exception:  # a torn or foreign file: ignore it, the database is the truth
            self.frame, self.state = None, (0, 0)

    def _save_snapshot(self) -> None:
        if self.snapshot is None or self.frame is None:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(self.frame, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"rose_state": json.dumps(
            {"rows": self.state[0], "last": self.state[1], "generation": self.state[2]}).encode()})
        tmp = self.snapshot.with_name(self.snapshot.name + ".part")
        pq.write_table(table, tmp)
        tmp.replace(self.snapshot)
        self.snapshot_rows = self.state[0]

    def get(self) -> tuple[pd.DataFrame, tuple[int, int, int]]:
        with self.lock:
            rows, last, generation = current = self._current()
            if self.frame is None:
                self._load_snapshot()
            if self.frame is not None and current == self.state:
                return self.frame, self.state
            # Appending is only right while no stored verdict was rewritten (rescore bumps the generation).
            if self.frame is not None and last >= self.state[1] and generation == self.state[2]:
                new = responses_frame(self.store, after_id=self.state[1])
                if self.state[0] + len(new) == rows:
                    if len(new):
                        self.frame = pd.concat([self.frame, new], ignore_index=True)
                    self.state = current
                    if rows - self.snapshot_rows > max(1000, rows // 20):  # amortised rewrites
                        self._save_snapshot()
                    return self.frame, self.state
            self.frame = responses_frame(self.store)
            self.state = current
            self._save_snapshot()
            return self.frame, self.state


def human_version(store: Store) -> tuple[int, int, int]:
    """Changes only when participants' responses change (what the participant table depends on)."""
    with store.connect() as conn:
        rows, last = conn.execute("SELECT count(*), coalesce(max(response_id), 0) FROM responses "
                                  "WHERE participant_id != ''").fetchone()
        return int(rows), int(last), verdicts_generation(conn)


def scorer_versions(df: pd.DataFrame) -> dict[str, int]:
    """How many of these responses each scorer version produced (a stored verdict is only as good as its
    scorer: numbers from an older one are flagged, and `rescore` brings them up to date)."""
    if df.empty:
        return {}
    return {str(k): int(v) for k, v in df["scorer_version"].astype(str).value_counts().sort_index().items()}


def scorer_note(versions: dict[str, int]) -> str | None:
    """None when every response was scored by the current scorer; otherwise the loud sentence to show."""
    from ..benchmarks.rose.scoring import SCORER_VERSION

    old = {v: n for v, n in versions.items() if v != SCORER_VERSION}
    if not old:
        return None
    parts = ", ".join(f"{n:,} by scorer {v}" for v, n in old.items())
    return (f"{parts} (current: scorer {SCORER_VERSION}): these verdicts are stale; run "
            f"`python -m rose_core rescore` to bring every stored response up to the current scorer")


