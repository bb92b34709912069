"""Reading the response frame: every main response once, with its solver and resampling unit, kept current
by appending (FrameCache) and snapshotted to Parquet (beside a SQLite file, in the cache folder for PostgreSQL)
for fast first loads."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..common.solver_labels import label_of
from ..storage.connection import Store
from ..storage.columns import read_snapshot
from ..storage.responses import (RESPONSE_TYPES, RUN_COLUMNS, main_response_columns, main_responses_extent,
                                 participant_responses_extent, read_response_rows)
from ..storage.runs import run_solvers, run_stamps
from ..storage.schema import verdicts_generation
from .persist import analysis_code_digest, local_prefix, write_whole


# --------------------------------------------------------------------------- frames, filters, exclusions

def _plain_text(df: pd.DataFrame) -> pd.DataFrame:
    """Text columns as plain Python strings (object dtype), whatever produced them.

    pandas 3 reads text as Arrow-backed strings, whose every row filter and group-by re-encodes the column: a
    cold dashboard page spends most of its time there. Object columns are filtered by pointer copies."""
    for col in df.columns:
        dtype = df[col].dtype
        if isinstance(dtype, pd.CategoricalDtype):   # the snapshot's dictionary-encoded columns: cheap to expand
            df[col] = df[col].astype(object).where(df[col].notna(), None)
        elif dtype == "str" or isinstance(dtype, pd.StringDtype):
            df[col] = df[col].astype("category").astype(object).where(df[col].notna(), None)
    return df


# The frame's columns, named from storage's one list (`RESPONSE_COLUMNS` and the run's `RUN_COLUMNS`) and typed as
# it types them; the responses' own are read as whole columns, the run's looked up per run.
_COLUMNS = ["response_id", "run_id", "solver_kind", "solver_name", "study_id", "participant_id", "instance_id",
            "template", "subset", "split", "scene_id", "valid", "passed", "failure", "protocol",
            "total_ms", "first_action_ms", "scorer_version"]
_RESPONSE_PART = tuple(c for c in _COLUMNS if c not in RUN_COLUMNS)
_TEXT = tuple(c for c in _RESPONSE_PART if RESPONSE_TYPES[c] == "text")
_INTS = tuple(c for c in _RESPONSE_PART if RESPONSE_TYPES[c] == "int")
_FLOATS = tuple(c for c in _RESPONSE_PART if RESPONSE_TYPES[c] == "float")
# Not the `parsed` records: 23 MB of JSON text at 200,000 rows, a quarter of a new database's first read, that only the
# drill-down needs, for one instance (`parsed_records`); the participants' streaks read their own.
FRAME_COLUMNS = [*_COLUMNS, "solver", "unit"]   # what every frame holds, read or appended or from a snapshot


def responses_frame(store: Store, after_id: int = 0) -> pd.DataFrame:
    """Every main response (participants' practice and attention items excluded), one row each; with
    after_id, only the responses stored after that one (for incremental refreshes)."""
    with store.connect() as conn, read_snapshot(conn):
        # each column read whole (`fetch_columns`: no Python object per row and value from the driver), the runs'
        # solver and study looked up per run rather than joined into every row
        cols = main_response_columns(conn, _RESPONSE_PART, after_id)
        runs = run_solvers(conn)
        if cols is None:   # a value the column read cannot carry: rows, as plain tuples
            names, rows = read_response_rows(conn, _COLUMNS, kind="main", after_id=after_id, analysable=True)
            df = pd.DataFrame(rows, columns=names, dtype=object) if rows else pd.DataFrame(
                {c: pd.Series(dtype=object) for c in names})
            del rows
            return _typed(df)
    codes, uniques = pd.factorize(cols["run_id"])
    known = np.array([u in runs for u in uniques] + [False], dtype=bool)[codes]
    if not known.all():  # a response of no run (the join left it out)
        cols = {c: v[known] for c, v in cols.items()}
        codes, uniques = pd.factorize(cols["run_id"])
    for j, name in enumerate(("solver_kind", "solver_name", "study_id")):   # as `run_solvers` gives them
        cols[name] = np.array([runs[u][j] for u in uniques] + [None], dtype=object)[codes]
    # dtype given: pandas would infer its Arrow text type from object arrays of strings (None becoming NaN)
    return _typed(pd.DataFrame({c: pd.Series(cols[c], dtype=cols[c].dtype, copy=False) for c in _COLUMNS}))


# What identifies a frame row's answer and verdict: a record read later must still belong to it
_IDENTITY = ("run_id", "participant_id", "instance_id", "valid", "passed", "failure")


def parsed_records(store: Store, rows: pd.DataFrame) -> list[str | None]:
    """The stored `parsed` records of these frame rows, in their order (the frame leaves them out). Read after the
    frame, so each is checked against its row: a response no longer stored, or stored as another answer (a run
    replaced in between, whose freed ids SQLite reuses) or with another verdict (`rescore` rewrote it) raises,
    never a record shown beside a verdict it does not belong to."""
    ids = [int(i) for i in rows["response_id"]]
    found: dict[int, tuple] = {}
    with store.connect() as conn, read_snapshot(conn):
        for k in range(0, len(ids), 500):
            chunk = ids[k:k + 500]
            _, got = read_response_rows(conn, ("response_id", *_IDENTITY, "parsed"), response_ids=chunk,
                                        analysable=True)
            found.update((int(r[0]), tuple(r[1:])) for r in got)
    missing = [i for i in ids if i not in found]
    if missing:
        raise LookupError(f"responses {missing[:5]} are no longer stored (the data changed: reload the page)")
    want = zip(ids, *(rows[c].tolist() for c in _IDENTITY))
    changed = [w[0] for w in want if _stored_as(found[w[0]][:-1]) != _stored_as(w[1:])]
    if changed:
        raise LookupError(f"responses {changed[:5]} changed since the page read them (a run replaced or rescored: "
                          "reload the page)")
    return [found[i][-1] for i in ids]


def _stored_as(values: Sequence) -> tuple:
    """A row's identity as stored: text as text (NULL as None), verdicts as ints."""
    run, participant, instance, valid, passed, failure = values
    return (str(run), str(participant), str(instance), int(valid), int(passed),
            None if failure is None or (isinstance(failure, float) and failure != failure) else str(failure))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """Numbers typed (fixed dtypes whatever this batch holds: an appended batch must look like a full reload), text
    plain strings (`_plain_text`), and each row's solver label and resampling unit."""
    for col in _INTS:
        df[col] = df[col].astype(np.int64)
    for col in _FLOATS:
        df[col] = df[col].astype(float)
    df["study_id"] = df["study_id"].where(df["study_id"].notna(), "")
    # one label per run (a run has one solver kind and name): looked up per distinct run, not per row
    codes, _ = pd.factorize(df["run_id"])
    first = np.unique(codes, return_index=True)[1] if len(codes) else np.zeros(0, dtype=np.int64)
    kinds, names = df["solver_kind"].to_numpy(dtype=object), df["solver_name"].to_numpy(dtype=object)
    labels = [label_of(kinds[i], names[i]) for i in first]
    human = kinds == "human"
    # given as object Series: a bare array of strings would be inferred as Arrow text and converted back
    df["solver"] = pd.Series(np.array(labels + [""], dtype=object)[codes], index=df.index, dtype=object, copy=False)
    df["unit"] = pd.Series(np.where(human, df["participant_id"].to_numpy(dtype=object),
                                    df["scene_id"].to_numpy(dtype=object)), index=df.index, dtype=object, copy=False)
    return df


def stamps_digest(stamps: dict[str, float]) -> str:
    return hashlib.sha256(json.dumps(sorted(stamps.items())).encode()).hexdigest()[:16]


class FrameCache:
    """The responses frame of one database, refreshed by appending what is new (responses only grow; a
    removed or replaced run changes the row count or the runs' import times, and then everything is reloaded).

    A Parquet snapshot (`<db>.frame.parquet` beside a SQLite file; for PostgreSQL in the machine's cache folder,
    `persist.local_prefix`) makes the first load after a server start a file read plus the rows stored since,
    instead of a full scan.

    `state` is (rows, max response_id, verdicts generation, digest of the runs' import times): a rescore rewrites
    verdicts in place (generation), and a run replaced by one of the same size (or a database made anew at the
    same path) would otherwise look unchanged, because SQLite reuses the freed response ids.
    """

    def __init__(self, store: Store, snapshot: bool = True, idle: Callable[[], None] | None = None):
        """`idle`: when given, the snapshot is written by a thread of its own once `idle()` returns (the dashboards
        pass "no page is computing"), not by the reader that read the rows: encoding 200,000 rows to Parquet cost
        a page opened on a new database most of a second, for the next start's benefit."""
        import threading

        self.store = store
        self.lock = threading.Lock()
        self._idle = idle
        self._saving: threading.Thread | None = None
        self.frame: pd.DataFrame | None = None
        self.state: tuple[int, int, int, str] = (0, 0, 0, "")
        self._seen: dict[str, float] = {}      # the runs when the frame was last read
        self.snapshot = Path(f"{local_prefix(store)}.frame.parquet") if snapshot else None
        self.snapshot_rows = 0

    def _current(self) -> tuple[tuple[int, int, int, str], dict[str, float]]:
        with self.store.connect() as conn:
            rows, last = main_responses_extent(conn)
            generation = verdicts_generation(conn)
            stamps = run_stamps(conn)
        return (int(rows), int(last), generation, stamps_digest(stamps)), stamps

    def _load_snapshot(self) -> None:
        if self.snapshot is None:
            return
        try:
            if not self.snapshot.exists():  # raises for a folder this process may not look into: a full read
                return
            import pyarrow.parquet as pq

            table = pq.read_table(self.snapshot)
            meta = json.loads(table.schema.metadata[b"rose_state"])
            # Written by a version with other columns, or other code deriving them (the same column names can hold
            # other values: an older label rule pooled two runs into one row): read the database.
            if table.column_names != FRAME_COLUMNS or meta.get("code") != analysis_code_digest():
                return
            self.frame = _plain_text(table.to_pandas())
            stamps = {str(r): float(t) for r, t in meta["stamps"].items()}  # older snapshots: KeyError, reload
            self.state = (int(meta["rows"]), int(meta["last"]), int(meta["generation"]), stamps_digest(stamps))
            self._seen = stamps
            self.snapshot_rows = self.state[0]
        except Exception:  # a torn, foreign or older file: ignore it, the database is the truth
            self.frame, self.state, self._seen = None, (0, 0, 0, ""), {}

    def _save_snapshot(self) -> None:
        """Snapshot the frame as of now: at once, or (with `idle`) in a thread of its own once pages are idle. The
        frame is never changed in place (appending makes a new one), so the thread writes exactly this version."""
        if self.snapshot is None or self.frame is None:
            return
        frame, meta = self.frame, {"rows": self.state[0], "last": self.state[1], "generation": self.state[2],
                                   "stamps": dict(self._seen), "code": analysis_code_digest()}
        if self._idle is None:
            self._write_snapshot(frame, meta)
            return
        import threading

        if self._saving is not None and self._saving.is_alive():
            return   # one write at a time; the next refresh past the threshold writes the newer version

        def later() -> None:
            self._idle()
            self._write_snapshot(frame, meta)

        # not a daemon: a server stopping right after a first read still leaves the next start its snapshot
        self._saving = threading.Thread(target=later, name="rose-frame-snapshot")
        self._saving.start()

    def wait_saved(self, timeout: float | None = None) -> None:
        """Return once a snapshot being written in the background is on disk."""
        saving = self._saving
        if saving is not None:
            saving.join(timeout)

    def _write_snapshot(self, frame: pd.DataFrame, meta: dict) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, preserve_index=False)
        # text dictionary-encoded: a smaller file, read back as categories that expand to strings at once
        table = pa.table({name: col.dictionary_encode() if pa.types.is_string(col.type) else col
                          for name, col in zip(table.column_names, table.columns)})
        table = table.replace_schema_metadata({b"rose_state": json.dumps(meta).encode()})
        # app processes on one machine may share the file (PostgreSQL); a full disk only costs a full read
        if write_whole(self.snapshot, lambda path: pq.write_table(table, path)):
            self.snapshot_rows = max(self.snapshot_rows, int(meta["rows"]))

    def current(self) -> tuple[int, int, int, str]:
        """The data version now, as `get` would return it, without reading a row (counts and the runs' times)."""
        return self._current()[0]

    def get(self) -> tuple[pd.DataFrame, tuple[int, int, int, str]]:
        frame, state, _ = self.get_with_stamps()
        return frame, state

    def get_with_stamps(self) -> tuple[pd.DataFrame, tuple[int, int, int, str], dict[str, float]]:
        """(frame, state, the runs' import times the frame was read with), read together under the lock."""
        with self.lock:
            frame, state = self._get()
            return frame, state, dict(self._seen)

    def _get(self) -> tuple[pd.DataFrame, tuple[int, int, int, str]]:
        """The frame as of now (the caller holds the lock)."""
        current, stamps = self._current()
        rows, last, generation, _ = current
        if self.frame is None:
            self._load_snapshot()
        if self.frame is not None and current == self.state:
            return self.frame, self.state
        # Appending is only right while no stored verdict was rewritten (rescore bumps the generation) and
        # no run was replaced or removed: the runs seen before are all still there, imported at the same time.
        if self.frame is not None and last >= self.state[1] and generation == self.state[2] and \
                self._only_new_runs(stamps):
            new = responses_frame(self.store, after_id=self.state[1])
            if self.state[0] + len(new) == rows:
                if len(new):
                    self.frame = pd.concat([self.frame, new], ignore_index=True)
                self.state = current
                self._seen = stamps
                if rows - self.snapshot_rows > max(1000, rows // 20):  # amortised rewrites
                    self._save_snapshot()
                return self.frame, self.state
        for _ in range(5):
            self.frame = responses_frame(self.store)
            # The runs' import times and the generation handed out with the frame key every cached analysis
            # (`ui.dash._signature`): a run imported, replaced or removed, or verdicts rewritten, while the rows were
            # read leaves them unknown for these rows (a replaced run's old time beside its new rows was the key of
            # its old answers), so the rows are read again.
            after, after_stamps = self._current()
            if after_stamps == stamps and after[2] == generation:
                break
            current, stamps, generation = after, after_stamps, after[2]
        else:   # five such changes in a row: no generation is this frame's, so the next refresh reads it again
            generation = -1
        # The rows are read after the version: answers committed in between are in the frame, so its rows and
        # last id are what was read (else the next refresh appends them again).
        ids = self.frame["response_id"]
        self.state = (len(self.frame), int(ids.max()) if len(ids) else 0, generation, current[3])
        self._seen = stamps
        self._save_snapshot()
        return self.frame, self.state

    def _only_new_runs(self, stamps: dict[str, float]) -> bool:
        """Every run the frame was read with is still there with the same import time (new runs may be added)."""
        return all(stamps.get(r) == t for r, t in self._seen.items())


def human_version(store: Store) -> tuple[int, int, int, str]:
    """Changes only when participants' responses change (what the participant statistics depend on): their
    count, last id, the verdicts generation and the studies' runs' creation times (a database made anew at the
    same path, with as many participant responses, is not the same data)."""
    with store.connect() as conn:
        rows, last = participant_responses_extent(conn)
        return rows, last, verdicts_generation(conn), stamps_digest(run_stamps(conn, "human"))


def scorer_versions(df: pd.DataFrame) -> dict[str, int]:
    """How many of these responses each scorer version produced (a stored verdict is only as good as its
    scorer: numbers from an older one are flagged, and `rescore` brings them up to date)."""
    if df.empty:
        return {}
    out: dict[str, int] = {}
    for k, v in df["scorer_version"].value_counts(dropna=False).items():  # counted as stored, then named
        out[str(k)] = out.get(str(k), 0) + int(v)
    return dict(sorted(out.items()))


def scorer_note(versions: dict[str, int]) -> str | None:
    """None when every response was scored by the current scorer; otherwise the loud sentence to show."""
    from ..benchmarks.rose.scoring import SCORER_VERSION

    old = {v: n for v, n in versions.items() if v != SCORER_VERSION}
    if not old:
        return None
    parts = ", ".join(f"{n:,} by scorer {v}" for v, n in old.items())
    return (f"{parts} (current: scorer {SCORER_VERSION}): these verdicts are stale; run "
            f"`python -m rose_core rescore` to bring every stored response up to the current scorer")


