"""Reading the response frame: every main response once, with its solver and resampling unit, read as whole
columns (`storage.columns.read_columns`) and kept current in memory by appending what is new (FrameCache), keyed
by the one data version (`storage.version`)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..common.solver_labels import label_of
from ..storage.columns import ColumnTypeError, read_columns, read_snapshot
from ..storage.connection import Store
from ..storage.responses import RESPONSE_TYPES, RUN_COLUMNS, main_responses_read, read_response_rows
from ..storage.runs import RUN_SOLVERS_COLUMNS, RUN_SOLVERS_SQL
from ..storage.version import NEWER_SQL, VERSION_COLUMNS, VERSION_SQL, DataVersion, data_version, version_of


# --------------------------------------------------------------------------- frames, filters, exclusions

# The frame's columns, named from storage's one list (`RESPONSE_COLUMNS` and the run's `RUN_COLUMNS`) and typed as
# it types them; the responses' own are read as whole columns, the run's looked up per run. Not the `parsed`
# records: 23 MB of JSON text at 200,000 rows, a quarter of a new database's first read, that only the drill-down
# needs, for one instance (`parsed_records`); the participants' streaks read their own.
_COLUMNS = ["response_id", "run_id", "solver_kind", "solver_name", "study_id", "participant_id", "instance_id",
            "template", "subset", "split", "scene_id", "valid", "passed", "failure", "protocol",
            "total_ms", "first_action_ms", "scorer_version"]
_RESPONSE_PART = tuple(c for c in _COLUMNS if c not in RUN_COLUMNS)
_INTS = tuple(c for c in _RESPONSE_PART if RESPONSE_TYPES[c] == "int")
_FLOATS = tuple(c for c in _RESPONSE_PART if RESPONSE_TYPES[c] == "float")


def responses_frame(store: Store, after_id: int = 0) -> pd.DataFrame:
    """Every main response the analyses read (participants' practice and attention items excluded, and previews'
    and tests' answers: `storage.responses.ANALYSABLE`), one row each; with after_id, only the responses stored
    after that one (for incremental refreshes)."""
    return _read(store, after_id)[0]


def _read(store: Store, after_id: int = 0, newer_than: int | None = None,
          ) -> tuple[pd.DataFrame, DataVersion, int | None]:
    """(the frame's rows after `after_id`, the data version they were read at, and with `newer_than` how many
    responses are stored after that id), all in one snapshot: the version handed out is the rows' own."""
    queries = [main_responses_read(_RESPONSE_PART, after_id), (RUN_SOLVERS_SQL, (), RUN_SOLVERS_COLUMNS),
               (VERSION_SQL, (), VERSION_COLUMNS)]
    if newer_than is not None:
        queries.append((NEWER_SQL, (newer_than,), {"n": "int"}))
    got = read_columns(store, queries)
    cols, solvers, version = got[0], got[1], version_of(got[2])
    for c in _INTS:
        if not isinstance(cols[c], np.ndarray):   # a nullable array: NULL in a NOT NULL column (a foreign file)
            raise ColumnTypeError(f"column {c!r} of the responses holds NULL: the database does not follow the schema")
    runs = {r: (k, nm, st) for r, k, nm, st in zip(*(solvers[c] for c in RUN_SOLVERS_COLUMNS))}
    # the runs' solver and study looked up per run rather than joined into every row
    codes, uniques = pd.factorize(cols["run_id"])
    known = np.array([u in runs for u in uniques] + [False], dtype=bool)[codes]
    if not known.all():  # a response of no run (a join would leave it out)
        cols = {c: v[known] for c, v in cols.items()}
        codes, uniques = pd.factorize(cols["run_id"])
    for j, name in enumerate(("solver_kind", "solver_name", "study_id")):
        cols[name] = np.array([runs[u][j] for u in uniques] + [None], dtype=object)[codes]
    # dtype given: pandas would infer its Arrow text type from object arrays of strings (None becoming NaN)
    df = _typed(pd.DataFrame({c: pd.Series(cols[c], dtype=cols[c].dtype, copy=False) for c in _COLUMNS}))
    return df, version, int(got[3]["n"][0]) if newer_than is not None else None


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
    plain Python strings in object columns (pandas 3's Arrow-backed strings re-encode the column at every row filter
    and group-by), and each row's solver label and resampling unit."""
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


class FrameCache:
    """The responses frame of one database, kept in memory and current by appending what is new: responses only
    grow, except where the data version says otherwise (a rescore, a run replaced or removed: then everything is
    read again). `get` returns the frame with the version it was read at (`storage.version.DataVersion`), the key
    of everything computed from it."""

    def __init__(self, store: Store):
        import threading

        self.store = store
        self.lock = threading.Lock()
        self.frame: pd.DataFrame | None = None
        self.version: DataVersion | None = None

    def current(self) -> DataVersion:
        """The data version now, without reading a row."""
        with self.store.connect() as conn:
            return data_version(conn)

    def get(self) -> tuple[pd.DataFrame, DataVersion]:
        """(frame, the data version it was read at), as of now."""
        with self.lock:
            return self._get()

    def _get(self) -> tuple[pd.DataFrame, DataVersion]:
        now = self.current()
        if self.frame is not None and self.version is not None and now == self.version:
            return self.frame, self.version
        # Appending is only right while no stored verdict was rewritten (the generation) and no run was replaced or
        # removed (the runs read before are all still there, imported at the same time; new runs may be added).
        if self.frame is not None and self.version is not None and now.generation == self.version.generation \
                and now.last >= self.version.last and self._only_new_runs(now):
            ids = self.frame["response_id"]
            # An answer committed after a later one (PostgreSQL hands ids out before commit) would never be appended.
            # Every response stored since the frame's version has an id beyond that version's last (counted here, a
            # range of the primary key) or came late below it; responses are removed only with their run (a changed
            # import time, checked above): equal counts, none came late.
            new, version, newer = _read(self.store, int(ids.max()) if len(ids) else 0, newer_than=self.version.last)
            if version.generation == self.version.generation and self._only_new_runs(version) \
                    and version.rows - self.version.rows == newer:
                if len(new):
                    self.frame = pd.concat([self.frame, new], ignore_index=True)
                self.version = version
                return self.frame, self.version
        self.frame, self.version, _ = _read(self.store)
        return self.frame, self.version

    def _only_new_runs(self, now: DataVersion) -> bool:
        stamps = now.stamps
        return all(stamps.get(r) == t for r, t in self.version.stamps.items())


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


