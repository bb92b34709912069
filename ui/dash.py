"""What every dashboard page shares: cached data (keyed by the data version, not the rerun), the sidebar
filters and exclusion switches, and tables/charts that export themselves (CSV, HTML; PNG from the chart's
own camera button)."""
from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from contextlib import contextmanager
from typing import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from rose_core import SUBSETS, TEMPLATES, Dataset
from rose_core.analysis import (
    ExclusionRules, Filters, FrameCache, Selection, bridge_table, difficulty_table, failure_table,
    gap_table, human_agreement, human_model_agreement, instance_params, main_rows, participant_table,
    scorer_note, scorer_versions, select, with_published,
)
from rose_core.analysis.agreement import HumanTrials, human_trials
from rose_core.analysis.answers import AnalysisInputError
from rose_core.analysis.charts import dot_figure, failure_figure
from rose_core.analysis.difference import DIFFERENCE_COLUMNS, HumanSide, human_model_difference, human_side
from rose_core.analysis.display import Kind, format_frame, human_label
from rose_core.analysis.persist import DiskCache, local_prefix
from rose_core.analysis.selection import participant_stats, repeated_people_note
from rose_core.analysis.tables import Cores, SolverCore, solver_core
from rose_core.common.csv_safety import frame_bytes
from rose_core.instrument.exports import table_frame, table_rows
from rose_core.runs.importer import skipped_note, skipped_samples
from rose_core.storage.columns import ColumnReadError
from rose_core.storage.connection import Store
from rose_core.storage.version import DataVersion
from rose_core.instrument.study import list_studies
from ui.preload import statistics_libraries
from ui.resources import dataset, store, store_at

log = logging.getLogger("rose_studio.dashboards")


@st.cache_resource(show_spinner=False)
def _frames(db: str) -> FrameCache:
    """Shared by all sessions and read-only to them: it holds no participant's state."""
    return FrameCache(store_at(db))


@st.cache_resource(show_spinner=False)
def _disk(db: str) -> DiskCache:
    """What the analyses computed, kept on disk for the first pages after a restart (beside a SQLite file; in the
    machine's cache folder for PostgreSQL: rose_core.analysis.persist.local_prefix)."""
    return DiskCache(f"{local_prefix(store_at(db))}.analyses")


def _on_disk(db: str, key: tuple, compute: Callable[[], object]) -> object:
    return _disk(db).fetch(key, compute)


@st.cache_data(show_spinner=False, max_entries=16)
def _participant_stats(db: str, people: tuple) -> pd.DataFrame:
    """The costly half of the participant table, by the participants' share of the data version
    (`DataVersion.people_part`: their responses, the verdicts generation, their studies' runs; memory, then disk)."""
    return _on_disk(db, ("participant_stats", people), lambda: participant_stats(store_at(db)))


def _excluded_key(parts: pd.DataFrame) -> str:
    """Which participants the exclusions leave out now, as a short digest (the selection's cache key)."""
    if parts.empty:
        return ""
    out = parts.loc[parts["excluded"] != "", "participant_id"]
    return hashlib.sha256("\n".join(sorted(map(str, out))).encode()).hexdigest()[:16]


def _signature(g: pd.DataFrame, version: DataVersion) -> tuple:
    """A solver's share of the data version: which rows it has (their count, last id and a digest of every id) and
    its runs' share (`DataVersion.of_runs`: the verdicts generation, the runs' import times: a run replaced by one
    of the same size reuses the freed ids). New responses of another solver leave it as it was, so that solver's
    cached parts are reused. The ids' digest tells apart two selections of as many rows with the same last one:
    one participant excluded instead of another who answered as many items."""
    ids = g["response_id"].to_numpy(dtype=np.int64)
    return (len(g), int(ids.max()) if len(g) else 0, hashlib.blake2b(ids.tobytes(), digest_size=16).hexdigest(),
            version.of_runs(pd.unique(g["run_id"])) if len(g) else (version.generation, ()))


# The analyses whose per-solver share also depends on the humans' rows (keyed by their signature too, and given
# the humans' side prepared once per human data: `_HumanParts`); the humans' own group has no share in them.
AGAINST_HUMANS = ("human_model", "difference")


class _HumanParts:
    """The humans' prepared side of the human–model analyses, built only when a solver's share is not cached."""

    def __init__(self, db: str, signature: tuple, rules: ExclusionRules, filters: Filters, humans: pd.DataFrame):
        self._args = (db, signature, rules, filters, humans)

    def trials(self) -> HumanTrials:
        return _human_trials(*self._args)

    def difference_side(self) -> HumanSide | None:
        return _human_difference_side(*self._args)


@st.cache_resource(show_spinner=False, max_entries=64)
def _solver_core(db: str, solver: str, signature: tuple, _rows: pd.DataFrame) -> SolverCore:
    """A solver's `SolverCore` by its database and its rows' signature (`_signature`), shared read-only by its main
    row, gap row and human − model row (and the humans' side), so that none computes it again (about 0.2 s of a new
    database's Results page). `_rows`: the rows of that signature, or their main-template rows (the core is of those
    alone).
    By database too: a copy of one has its ids, runs and import times, so its rows can have the same signature with
    other verdicts (one rescore each)."""
    return solver_core(solver, _rows)


def _cores(db: str, signature: tuple) -> Cores:
    """The cores of the rows of `signature` in `db` (`_solver_core`), as the analyses take them."""
    return lambda solver, rows: _solver_core(db, solver, signature, rows)


def _analysis(kind: str, arg: object, g: pd.DataFrame, humans: _HumanParts, ds: Dataset, cores: Cores) -> object:
    if kind == "main":
        return main_rows(g, cores=cores)  # the solver's own seeded bootstrap: the same row as `report` computes
    if kind == "gap":
        return gap_table(g, conditioned=bool(arg), cores=cores)
    if kind == "bridges":
        return bridge_table(g)
    if kind == "failures":
        return failure_table(g)
    if kind == "human_model":  # the humans' trials, prepared once (`_human_trials`)
        return human_model_agreement(g, humans=humans.trials())
    if kind == "difference":  # one model's rows against the humans' side, prepared once (`_human_difference_side`)
        return human_model_difference(g, side=humans.difference_side(), cores=cores)
    if kind == "difficulty":
        return difficulty_table(g, cached_instance_params(ds.dataset_hash, ds), str(arg))
    raise ValueError(kind)


def _per_solver(kind: str, arg: object, solver: str, signature: tuple, human_signature: tuple, rules: ExclusionRules,
                filters: Filters, dataset_hash: str, db: str, g: pd.DataFrame,
                humans: _HumanParts, ds: Dataset) -> object:
    """One solver's share of an analysis, cached by that solver's own rows (in memory, then on disk): new
    responses of one run (or of the participants) recompute only that run's (or the humans') part."""
    key = ("per_solver", kind, arg, solver, signature, human_signature, rules, filters, dataset_hash)
    return _per_solver_cached(hashlib.sha256(repr(key).encode()).hexdigest(), db, key, g, humans, ds)


@st.cache_data(show_spinner=False, max_entries=1024)
def _per_solver_cached(digest: str, db: str, _key: tuple, _g: pd.DataFrame, _humans: _HumanParts,
                       _ds: Dataset) -> object:
    """Cached by the digest of the key's text (as the disk cache names its files): Streamlit hashes one string,
    where nine arguments took it ~2 ms a call (the signature looked up per argument), twice on a miss: a tenth of a
    cold Results page's analyses, 44 calls."""
    kind, arg, signature = _key[1], _key[2], _key[4]
    return _on_disk(db, _key, lambda: _analysis(kind, arg, _g, _humans, _ds, _cores(db, signature)))


@st.cache_resource(show_spinner=False, max_entries=8)
def _human_trials(db: str, human_signature: tuple, rules: ExclusionRules, filters: Filters,
                  _humans: pd.DataFrame) -> HumanTrials:
    """The humans' side of every human–model comparison, once per human data of a database (read-only once
    built)."""
    return human_trials(_humans)


@st.cache_resource(show_spinner=False, max_entries=8)
def _human_difference_side(db: str, human_signature: tuple, rules: ExclusionRules, filters: Filters,
                           _humans: pd.DataFrame) -> HumanSide | None:
    """The humans' side of the human − model table (their summary, resamples, counts), once per human data of a
    database (a copy's rows can have the same signature with other verdicts: `_solver_core`), shared
    by every session (it only adds the humans' rows on a new set of items both answered, `HumanSide.humans_on`): 50
    new responses of one run then recompute that run's row only."""
    return human_side(_humans, cores=_cores(db, human_signature))


@st.cache_data(show_spinner=False, max_entries=64)
def _human_agreement(human_signature: tuple, rules: ExclusionRules, filters: Filters, dataset_hash: str, db: str,
                     _humans: pd.DataFrame, _ds):
    return _on_disk(db, ("human_agreement", human_signature, rules, filters, dataset_hash),
                    lambda: human_agreement(_humans, _ds))


class _Selected:
    """A selection's rows and their split by solver, computed once per data version and choice (shared by every
    session and rerun, read-only): filtering and splitting 200,000 rows at every rerun cost more than the page."""

    def __init__(self, frame: pd.DataFrame, parts: pd.DataFrame, filters: Filters, rules: ExclusionRules,
                 version: DataVersion):
        sel = select(frame, parts, filters, rules)   # the one selection path (`report` takes it too)
        self.df, self.n_excluded = sel.df, sel.n_excluded
        self.versions = scorer_versions(self.df)
        self.people_note = repeated_people_note(self.df, parts)
        self.skipped_note: str | None = None   # set by `_selected`, which has the store
        self.groups = [(str(solver), g, _signature(g, version))
                       for solver, g in self.df.groupby("solver", sort=False)]
        human = self.df["solver_kind"].to_numpy(dtype=object) == "human"
        # the humans' rows: their group when they are one solver's rows and only theirs (the labels make them one,
        # "Human"), not a second copy of the same rows
        theirs = [(g, sig) for _, g, sig in self.groups if len(g) and g["solver_kind"].iloc[0] == "human"]
        if len(theirs) == 1 and len(theirs[0][0]) == int(human.sum()) \
                and bool((theirs[0][0]["solver_kind"].to_numpy(dtype=object) == "human").all()):
            self.humans = theirs[0]
        else:
            humans = self.df[human]
            self.humans = (humans, _signature(humans, version))


@st.cache_resource(show_spinner=False, max_entries=4)   # each holds a copy of the selected rows (~70 MB at 200k)
def _selected(db: str, version: str, participants: tuple, filters: Filters, rules: ExclusionRules, _frame: pd.DataFrame,
              _parts: pd.DataFrame, _version: DataVersion) -> _Selected:
    chosen = _Selected(_frame, _parts, filters, rules, _version)
    # the runs' import records change only with a run imported or replaced: a new data version, not a rerun
    chosen.skipped_note = skipped_note(skipped_samples(store_at(db), set(chosen.df["run_id"].unique())))
    return chosen


@st.cache_resource(show_spinner=False)
def cached_instance_params(dataset_hash: str, _ds: Dataset) -> pd.DataFrame:
    """The instances' parameters of the dataset handed over (keyed by its hash), never the one the process looks up:
    the warm-up thread computes this too, and `resources.dataset()` read the environment at that moment (after
    a test had restored it: the default folder, so the thread built the full dataset, holding this cache's lock)."""
    return instance_params(_ds)


class _Priority:
    """Pages before the warm-up: while a page is computing, the background warm-up waits between its units of
    work (one solver's share of one analysis), so on 2 cores a page opened at sign-in does not share the CPU
    with analyses nobody is looking at yet. The warm-up never waits while holding a cache's lock."""

    GRACE_S = 0.5  # after a page's last computation, room for it to lay out its tables and charts

    def __init__(self) -> None:
        self._busy = 0
        self._last = 0.0
        self._cv = threading.Condition()

    @contextmanager
    def page(self, background: bool):
        if background:
            yield
            return
        with self._cv:
            self._busy += 1
        try:
            yield
        finally:
            with self._cv:
                self._busy -= 1
                self._last = time.monotonic()
                self._cv.notify_all()

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Return once no page has computed for GRACE_S (or after `timeout`: the warm-up is never starved)."""
        end = time.monotonic() + timeout
        with self._cv:
            while time.monotonic() < end:
                if self._busy:
                    self._cv.wait(timeout=max(0.0, end - time.monotonic()))
                    continue
                rest = self._last + self.GRACE_S - time.monotonic()
                if rest <= 0:
                    return
                self._cv.wait(timeout=rest)


PRIORITY = _Priority()


def _read_failed(e: ColumnReadError) -> None:
    """A page whose rows could not be read (the SQLite reader process died twice, the database refused the read, a
    value not of its column's type): a calm message with a reference, the details (a path, the reader's traceback)
    only in the server's log under it; the page stops there."""
    ref = secrets.token_hex(4)
    log.error("dashboard read failure %s: %s", ref, type(e).__name__, exc_info=e)
    st.error(f"The responses could not be read from the database (reference {ref}); the operator finds the details "
             "in the server's terminal under that reference. Reload the page to try again.")
    st.stop()


def responses(db: Store) -> pd.DataFrame:
    """Every main response of `db` as the dashboards hold it (the one frame of this process, appended as answers
    arrive), for a page that is no analysis page (Model runs' summary); a read that fails stops the page with
    `_read_failed`'s message."""
    try:
        return _frames(db.location).get()[0]
    except ColumnReadError as e:
        _read_failed(e)


class View:
    """The filtered, exclusion-applied responses a page works on, and how they were chosen (from the
    sidebar, or given: the warm-up uses the sidebar's defaults without drawing it). `background`: the
    warm-up's view, which yields to pages (`PRIORITY`)."""

    def __init__(self, filters: Filters | None = None, rules: ExclusionRules | None = None,
                 db: Store | None = None, ds: Dataset | None = None, background: bool = False):
        self.background = background
        with PRIORITY.page(background):
            self._load(filters, rules, db, ds)

    def _load(self, filters: Filters | None, rules: ExclusionRules | None, db: Store | None,
              ds: Dataset | None) -> None:
        db = db or store()
        self.db = db
        self.ds = ds or dataset()
        try:
            everything, self.version = _frames(db.location).get()
            people = self.version.people_part()
            stats = _participant_stats(db.location, people)
        except ColumnReadError as e:
            if self.background:
                raise
            _read_failed(e)
        if filters is None or rules is None:
            filters, rules = sidebar(everything)
        self.filters, self.rules = filters, rules
        self.participants = participant_table(db, rules, stats=stats)   # the participants' own rows: always fresh
        # keyed by who is excluded too: an exclusion by hand, a participant finishing or timing out changes no
        # response, so the data version does not see it
        chosen = _selected(db.location, self.version.key, (people, _excluded_key(self.participants)), filters, rules,
                           everything, self.participants, self.version)
        self._parts = chosen
        self.df, self.n_excluded = chosen.df, chosen.n_excluded
        self.selection = Selection(self.df, self.participants, filters, rules, self.n_excluded)
        self.everything = everything
        humans = self.df.loc[self.df["solver_kind"] == "human", "study_id"].unique() if len(self.df) else []
        names = study_names(db)
        self.human_label = human_label(names.get(s, s) for s in sorted(humans))
        # Humans the filters chose before the exclusions (only counted when the exclusions left none).
        self.humans_before = 0
        if len(humans) == 0 and len(everything):
            self.humans_before = int(self.filters.apply(everything[everything["solver_kind"] == "human"])[
                "participant_id"].nunique())

    def shown(self, df: pd.DataFrame, col: str = "solver") -> pd.DataFrame:
        """`df` with the pooled human row named by its studies (e.g. "Human (pilot)")."""
        if col not in df or df.empty:
            return df
        return df.assign(**{col: df[col].replace({"Human": self.human_label})})

    def compute(self, kind: str, arg: object = None):
        """An analysis of the current selection, assembled from per-solver cached parts."""
        with PRIORITY.page(self.background):
            return self._compute(kind, arg)

    def _yield(self) -> None:
        if self.background:
            PRIORITY.wait_idle()

    def _compute(self, kind: str, arg: object):
        self._yield()
        humans, hsig = self._parts.humans
        db, ds_hash = self.db.location, self.ds.dataset_hash
        if kind == "human_agreement":
            return _human_agreement(hsig, self.rules, self.filters, ds_hash, db, humans, self.ds)
        prepared = _HumanParts(db, hsig, self.rules, self.filters, humans)  # built only when a share is not cached
        against = kind in AGAINST_HUMANS
        parts = []
        for solver, g, sig in self._parts.groups:
            if against and solver == "Human":
                continue
            self._yield()
            parts.append(_per_solver(kind, arg, solver, sig, hsig if against else (), self.rules,
                                     self.filters, ds_hash, db, g, prepared, self.ds))
        if kind == "difference":   # a run with no main-template row has no row (an empty share)
            parts = [p for p in parts if len(p)]
            return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=DIFFERENCE_COLUMNS)
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        if kind == "main":
            out = with_published(out)
        return out

    def note(self) -> str:
        """Short: goes into every chart's subtitle and every exported file name."""
        if self.rules.is_off:
            return "exclusions off"
        return f"exclusions on: {self.n_excluded} participants excluded"

    def caption(self) -> str:
        f = self.filters
        bits = [f"split {f.split or 'all'}"]
        if f.subsets:
            bits.append("subsets " + ", ".join(f.subsets))
        if f.templates:
            bits.append("templates " + ", ".join(f.templates))
        if f.studies:
            bits.append(f"{len(f.studies)} studies")
        ex = f"exclusions on ({self.rules.describe()}): {self.n_excluded} participants excluded" \
            if not self.rules.is_off else "exclusions off: every participant kept"
        scored = ", ".join(f"scorer {v}" for v in self._parts.versions) or "no responses"
        return f"{len(self.df):,} responses ({scored}) · " + " · ".join(bits) + " · " + ex

    def all_humans_excluded(self) -> bool:
        return self.humans_before > 0

    def header(self) -> None:
        """How the data was chosen, a loud error when the exclusions removed every participant (the human rows
        are then absent, not empty-looking data), and a warning when some verdicts come from an older scorer."""
        if self.all_humans_excluded():
            st.error(f"**The exclusions removed every participant** ({self.humans_before} in this selection; rules: "
                     f"{self.rules.describe()}). No human figure on this page: the human rows, human–human "
                     "agreement and human heatmaps are absent. Loosen the participant exclusions in the sidebar "
                     "to see them.", icon="🚫")
        st.caption(self.caption())
        stale = scorer_note(self._parts.versions)
        if stale:
            st.warning(stale)
        for note in (self._parts.skipped_note, self._parts.people_note):
            if note:
                st.warning(note[0].upper() + note[1:])


CHOICES = "dash_choices"  # the one place the sidebar's choices live: every analysis page reads and writes it
DEFAULT_CHOICES = {"dash_split": "all", "dash_subsets": [], "dash_templates": [], "dash_studies": [],
                   "dash_solvers": [], "dash_ex_att": True, "dash_ex_fast": True, "dash_ex_fast_s": 1.5,
                   "dash_ex_streak": True, "dash_ex_streak_n": 10, "dash_simulated": False,
                   "dash_ex_completed": True, "dash_ex_by_hand": True}


def _remember(key: str) -> None:
    st.session_state[CHOICES][key] = st.session_state[key]


def _kept(key: str, options: list | None = None) -> dict:
    """Seed a sidebar widget from the shared choices and keep them current when it changes.

    Streamlit scopes a widget's state to the page that drew it, so without this a choice made on Results
    would be back at its default on Agreement; the choice lives in `CHOICES` instead (written by the widget's
    callback, before the rerun) and every page's widget starts from it."""
    choices = st.session_state.setdefault(CHOICES, dict(DEFAULT_CHOICES))
    value = choices.get(key, DEFAULT_CHOICES[key])
    if options is not None and isinstance(value, list):
        value = [v for v in value if v in options]   # a study or run that is gone is no longer offered
    st.session_state[key] = value
    return {"key": key, "on_change": _remember, "args": (key,)}


def sidebar(df: pd.DataFrame) -> tuple[Filters, ExclusionRules]:
    sb = st.sidebar
    sb.markdown("### Filters")
    split = sb.selectbox("Split", ["all", "dev", "test"], **_kept("dash_split"))
    subsets = sb.multiselect("Subsets", SUBSETS, **_kept("dash_subsets", list(SUBSETS)))
    templates = sb.multiselect("Templates", TEMPLATES, **_kept("dash_templates", list(TEMPLATES)))
    studies = study_names()
    chosen = sb.multiselect("Studies (human rows)", list(studies), format_func=lambda s: studies[s],
                            **_kept("dash_studies", list(studies)))
    solver_options = sorted(df["solver"].unique()) if len(df) else []
    solvers = sb.multiselect("Solvers", solver_options, **_kept("dash_solvers", solver_options))
    simulated = sb.checkbox("Include simulated participants (dry run)", **_kept("dash_simulated"),
                            help="`study simulate`'s participants of known truth, beside the real ones: never for "
                                 "publication")
    if simulated:
        sb.warning("Simulated participants are counted on every page: a dry run, not for publication.")
    sb.markdown("### Participant exclusions")
    sb.caption("Chosen once, applied on every analysis page.")
    completed = sb.checkbox("Completed the study only", **_kept("dash_ex_completed"),
                            help="Leave out participants who did not finish (still working, timed out, screened out)")
    by_hand = sb.checkbox("Excluded by the experimenter", **_kept("dash_ex_by_hand"),
                          help="The exclusions made on the Studies page, each with its reason")
    att = sb.checkbox("Failed an attention check", **_kept("dash_ex_att"))
    fast_on = sb.checkbox("Too fast", **_kept("dash_ex_fast"))
    fast = sb.number_input("… median seconds per item below", 0.1, 60.0, **_kept("dash_ex_fast_s")) if fast_on else None
    streak_on = sb.checkbox("Response streaks", **_kept("dash_ex_streak"))
    streak = sb.number_input("… answers in a row saying the same", 2, 100, **_kept("dash_ex_streak_n")) \
        if streak_on else None
    return (Filters(None if split == "all" else split, tuple(subsets), tuple(templates), tuple(chosen), tuple(solvers),
                    ("participant", "simulated") if simulated else ("participant",)),
            ExclusionRules(att, fast * 1000 if fast else None, int(streak) if streak else None, completed, by_hand))


def study_names(db: Store | None = None) -> dict[str, str]:
    """study_id -> name of the ROSE studies, for the sidebar and for naming the human row (an SGP study has no
    ROSE responses: its participants are in the SGP views)."""
    return {s.study_id: s.name for s in list_studies(db or store()) if s.config.benchmark == "rose"}


def _suffix(note: str) -> str:
    return "__" + "-".join(note.replace(":", "").split()) if note else ""


def column_widths(df: pd.DataFrame) -> dict[str, int]:
    """Pixel widths wide enough for every cell's whole text and the header, so no interval is cut off."""
    widths = {}
    for col in df.columns:
        longest = max([len(str(col))] + [len(str(v)) for v in df[col]])
        widths[str(col)] = int(14 + 7.6 * longest) + 16
    return widths


def table(df: pd.DataFrame, name: str, key: str, note: str = "", kinds: dict[str, Kind] | None = None,
          intervals: tuple[str, ...] = (), drop: tuple[str, ...] = (), **kw) -> pd.DataFrame:
    """Show `df` in the one number format (`rose_core.analysis.display`), columns wide enough for their text,
    with a CSV of exactly what is shown (through `frame_bytes`, the one CSV encoder). Returns the shown table."""
    shown = format_frame(df, kinds, intervals=intervals, drop=drop)
    config = {c: st.column_config.TextColumn(width=w) for c, w in column_widths(shown).items()}
    st.dataframe(shown, hide_index=True, width="stretch", column_config=config, **kw)
    st.download_button("CSV", lambda: frame_bytes(shown, "csv"), f"{name}{_suffix(note)}.csv", "text/csv",
                       key=f"{key}_csv", on_click="ignore")
    return shown


def table_downloads(db: Store, tables: tuple[str, ...], study_id: str, key: str) -> None:
    """A study's tables as CSV and Parquet (the Studies page, ROSE and SGP): each table's row count, and the file
    built when its button is clicked, not at every rerun (100,000 responses take seconds to read and encode)."""
    for name in tables:
        c1, c2, c3 = st.columns([2, 1, 1])
        c1.write(f"**{name}**: {table_rows(db, name, study_id)} rows")
        c2.download_button("CSV", lambda t=name: frame_bytes(table_frame(db, t, study_id), "csv"),
                           f"{study_id}-{name}.csv", "text/csv", key=f"{key}_csv_{name}", on_click="ignore")
        c3.download_button("Parquet", lambda t=name: frame_bytes(table_frame(db, t, study_id), "parquet"),
                           f"{study_id}-{name}.parquet", "application/octet-stream", key=f"{key}_pq_{name}",
                           on_click="ignore")


def participants_overview(parts: pd.DataFrame, rules_text: str, name: str, key: str, note: str,
                          kinds: dict[str, Kind]) -> pd.DataFrame:
    """A participant table as both benchmarks show it (ROSE's Participants page, SGP results): participants,
    excluded, screened out at practice, completed; the rules and the reasons; the table. Returns the excluded."""
    ex = parts[parts["excluded"] != ""]
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Participants", len(parts))
    c2.metric("Excluded", len(ex))
    c3.metric("Screened out at practice", int((parts["end_reason"] == "screened_out").sum()))
    c4.metric("Completed", int((parts["end_reason"] == "completed").sum()))
    st.caption(f"Exclusion rules: {rules_text}. Reasons: "
               + (", ".join(f"{r}: {n}" for r, n in ex["excluded"].str.split(", ").explode().value_counts().items())
                  or "none"))
    table(parts.assign(excluded=parts["excluded"].replace("", "no")), name, key, note, kinds=kinds)
    return ex


def chart(fig: go.Figure, name: str, key: str, note: str = "") -> None:
    if note and fig.layout.title.subtitle.text != note:  # the chart itself says how its data was chosen, also once exported
        fig.update_layout(title={"subtitle": {"text": note}})
    st.plotly_chart(fig, key=key, config={"toImageButtonOptions": {"format": "png", "filename": name, "scale": 2},
                                          "displaylogo": False})
    st.download_button("HTML", lambda: fig.to_html(include_plotlyjs=True, full_html=True).encode(),
                       f"{name}{_suffix(note)}.html",
                       "text/html", key=f"{key}_html", on_click="ignore")


@st.cache_resource(show_spinner=False, max_entries=64)
def _figure(builder: str, df: pd.DataFrame, title: str, note: str, metrics: tuple = (), connect: bool = True) -> go.Figure:
    """A figure in the one visual language (`rose_core.analysis.charts`), built once per table shown (keyed by
    the table's content) and shared read-only: building a figure costs more than a rerun's cached analyses."""
    if builder == "dots":
        fig, _ = dot_figure(df, list(metrics), title, connect=connect, width=None)
    else:
        fig, _ = failure_figure(df, title, width=None)
    if note:
        fig.update_layout(title={"subtitle": {"text": note}})
    return fig


def dots(df: pd.DataFrame, metrics: list[tuple[str, str]], title: str, name: str, key: str, note: str = "",
         connect: bool = True) -> None:
    """One row per solver, a coloured marker per metric (`charts.dot_figure`), with its exports."""
    chart(_figure("dots", df, title, note, tuple(metrics), connect), name, key, note)


def failures(df: pd.DataFrame, title: str, name: str, key: str, note: str = "") -> None:
    """Stacked bars of failure kinds per solver and template (`charts.failure_figure`), with its exports."""
    chart(_figure("failures", df, title, note), name, key, note)


# What the pages compute with the sidebar's defaults, in the order of the pages that show them (Results, then
# Agreement and difficulty); the warm-up fills these caches ahead of the pages.
WARM_ANALYSES = [("main", None), ("difference", None), ("gap", False), ("bridges", None), ("failures", None),
                 ("human_agreement", None), ("human_model", None), ("difficulty", "grid cells")]


class _WarmUp:
    """The warm-up started at sign-in: `done` once the default analyses are computed (and on disk). The dataset is
    handed over after the thread started (`give_dataset`): the rows it reads first do not need it, so loading the
    dataset (about half a second of a new process's first experimenter rerun) does not delay them."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self._ds: Dataset | None = None
        self._ds_given = threading.Event()
        self._lock = threading.Lock()
        self.generation = 0   # the thread whose end sets `done` (a later one supersedes it: `give_dataset`)

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)

    def is_set(self) -> bool:
        return self.done.is_set()

    def give_dataset(self, ds: Dataset | None) -> bool:
        """None: the page could not load it (its error is shown there); the warm-up then stops after the rows. A
        dataset given after a None (the first sign-in form met a dataset still being built or broken; the
        experimenter's page loaded it later) replaces it: True, and the caller starts the warm-up's thread again
        (the rows are cached by then), or no analysis of this data version would ever be warmed."""
        with self._lock:
            if self._ds_given.is_set() and (self._ds is not None or ds is None):
                return False
            late = self._ds_given.is_set()
            self._ds = ds
            self._ds_given.set()
            if late:
                self.generation += 1
                self.done.clear()
            return late

    def dataset(self, generation: int | None = None) -> Dataset | None:
        """The page's dataset, once handed over; None when the page could not load it, or for the thread of
        `generation` once a later one was started with it: that thread was handed the None, and read the rows while
        the dataset came (taking it, it would compute every analysis beside the later thread)."""
        self._ds_given.wait()
        with self._lock:
            return None if generation is not None and generation != self.generation else self._ds

    def finished(self, generation: int) -> None:
        """A warm-up thread ended: `done` unless a later thread superseded it (it sets `done` when it ends)."""
        with self._lock:
            if generation == self.generation:
                self.done.set()


def _warm(w: _WarmUp, db: Store, generation: int = 0) -> None:
    try:
        # The rows first (the response frame, the participant statistics, the default selection: what every page
        # needs before any analysis), from the moment of sign-in: most of their time is the database's and
        # numpy's, which share two cores with the statistics imports still running (started at the sign-in form).
        # Not waiting for pages here: the page that started the warm-up (Studies, at sign-in) is still running, and
        # every analysis page needs these rows first. The analyses below yield to pages.
        _, version = _frames(db.location).get()
        _participant_stats(db.location, version.people_part())
        ds = w.dataset(generation)
        if ds is not None:   # None: the page could not load it and says why; no analysis without it (no traceback)
            v = View(Filters(), ExclusionRules(), db=db, ds=ds, background=True)
            statistics_libraries().join()   # the analyses need them; imported by the warm-up, a page would wait
            for kind, arg in WARM_ANALYSES:
                try:
                    v.compute(kind, arg)
                except AnalysisInputError as e:   # refused (a trial answered twice): the page computing it says why
                    log.info("the dashboards' warm-up left out %s: %s", kind, e)
    except ColumnReadError as e:   # the pages that need the rows say so (`_read_failed`); the reader logs its details
        # No traceback from this thread: Python 3.11 formats one with `ast.parse`, which is not thread-safe
        # (CPython gh-106905), and a page compiled at that moment failed with "AST constructor recursion depth
        # mismatch" instead of saying the responses could not be read.
        log.error("the dashboards' warm-up could not read the responses: %s", e)
    finally:
        w.finished(generation)


@st.cache_resource(show_spinner=False, max_entries=4)
def _warm_up_started(db_path: str, version: str, _db: Store) -> _WarmUp:
    w = _WarmUp()
    _start(w, _db)
    return w


def _start(w: _WarmUp, db: Store) -> None:
    # The thread gets the store and dataset of the page that started it: it never looks them up itself.
    threading.Thread(target=_warm, args=(w, db, w.generation), name="rose-dashboard-warm-up", daemon=True).start()


def warm_up() -> _WarmUp:
    """Start (once per data version) computing the dashboards' default analyses in the background.

    Called where experimenters land after signing in, first thing, so the analysis pages are warm when they are
    opened (and once per process from the sign-in form: `ui.preload.dashboards_warmed`); participant sessions
    never start it."""
    return warm_up_on(store(), dataset)


def warm_up_on(db: Store, load: Callable[[], Dataset]) -> _WarmUp:
    """`warm_up` of this store, its thread given the dataset `load()` returns (None to it if that raises)."""
    # The version alone (no rows read): the frame itself is read by the warm-up, or by a page opened before it,
    # not by the sign-in's rerun.
    w = _warm_up_started(db.location, _frames(db.location).current().key, db)
    ds = None
    try:
        ds = load()   # loaded by the caller, while the thread already reads the rows
    finally:
        if w.give_dataset(ds):   # loaded now, where an earlier caller could not: the analyses now
            _start(w, db)
    return w
