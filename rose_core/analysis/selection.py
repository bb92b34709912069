"""Which responses an analysis sees: the sidebar's (or the command line's) filters and the pre-registrable
participant exclusions, applied by one function, `select`, that the dashboards and `report` both call."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..storage.columns import read_columns
from ..storage.connection import Store
from ..storage.exclusions import standing_reasons
from ..storage.participants import participant_rows
from ..storage.responses import RESPONSE_TYPES, responses_query
from .answers import decode_answer
from .frame import responses_frame

@dataclass(frozen=True)
class Filters:
    split: str | None = None
    subsets: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    studies: tuple[str, ...] = ()      # human responses only from these studies (empty: all)
    solvers: tuple[str, ...] = ()
    # whose answers count: real participants only; a dry run's analysis adds "simulated" (`report
    # --include-simulated`, the sidebar's "Include simulated participants"). Previews and tests never count.
    origins: tuple[str, ...] = ("participant",)

    def apply(self, df: pd.DataFrame) -> pd.DataFrame:
        m = pd.Series(True, index=df.index)
        if self.split:
            m &= df["split"] == self.split
        if self.subsets:
            m &= df["subset"].isin(self.subsets)
        if self.templates:
            m &= df["template"].isin(self.templates)
        if self.studies:
            m &= (df["solver_kind"] != "human") | df["study_id"].isin(self.studies)
        if self.solvers:
            m &= df["solver"].isin(self.solvers)
        return df[m]


@dataclass(frozen=True)
class ExclusionRules:
    """Pre-registrable participant exclusions; each can be switched off. `completed_only`: a participant who did
    not finish (still working, timed out, screened out, the pool ran out before any answer) is left out, so a
    half-done session never weighs in; `by_hand`: the experimenter's own exclusions (`instrument.manage`)."""

    failed_attention: bool = True
    too_fast_ms: float | None = 1500.0   # median time per main item below this
    streak: int | None = 10              # this many answers in a row that say the same (same clicks and count)
    completed_only: bool = True
    by_hand: bool = True

    @staticmethod
    def off() -> ExclusionRules:
        """Every participant kept (finished or not, excluded by hand or not)."""
        return ExclusionRules(False, None, None, False, False)

    @property
    def is_off(self) -> bool:
        return self == ExclusionRules.off()

    def describe(self) -> str:
        parts = []
        if self.completed_only:
            parts.append("did not complete the study")
        if self.by_hand:
            parts.append("excluded by the experimenter")
        if self.failed_attention:
            parts.append("failed an attention check")
        if self.too_fast_ms:
            parts.append(f"median time per item < {self.too_fast_ms / 1000:g} s")
        if self.streak:
            parts.append(f"≥ {self.streak} answers in a row saying the same")
        return "; ".join(parts) if parts else "none"


def _longest_streak(values: list) -> int:
    best = run = 0
    prev = object()
    for v in values:
        run = run + 1 if v == prev else 1
        prev = v
        best = max(best, run)
    return best


def _longest_streaks(main: pd.DataFrame) -> pd.Series:
    """Per participant, `_longest_streak` of what their answers say (`Answer.says`), in the frame's order.

    Vectorized (a cold dashboard computes it for every participant): each distinct stored record is decoded
    once, then runs of equal codes within a participant are measured with array operations."""
    if main.empty:
        return pd.Series(dtype=int)
    codes, uniques = pd.factorize(main["parsed"])              # a missing record: code -1
    missing = main["parsed"].iloc[int(np.argmax(codes < 0))] if (codes < 0).any() else None
    ids: dict = {}
    said = np.array([ids.setdefault(decode_answer(u).says(), len(ids)) for u in uniques]
                    + [ids.setdefault(decode_answer(missing).says(), len(ids))], dtype=np.int64)
    sid = said[codes]                                           # code -1 picks the last entry: the missing record
    pid = main["participant_id"].to_numpy(dtype=object)
    new = np.ones(len(sid), dtype=bool)
    new[1:] = (sid[1:] != sid[:-1]) | (pid[1:] != pid[:-1])
    run = np.cumsum(new) - 1
    return pd.Series(np.bincount(run)[run], index=main.index).groupby(pid).max()


def rose_study_ids(store: Store) -> set[str]:
    """The ROSE studies' ids: an SGP study's participants answer episodes, never ROSE items, and are analysed in
    the SGP views (`analysis.sgp`), so no ROSE table counts them."""
    from ..instrument.config import load_studies

    with store.connect() as conn:
        return {s.study_id for s in load_studies(conn) if s.config.benchmark == "rose"}


def participant_stats(store: Store) -> pd.DataFrame:
    """Per participant (the index), from their responses: main items and PASS rate, median time per item and to
    first action, the longest streak, attention checks (and passed), practice PASS rate. The costly half of
    `participant_table` (it reads every participant response); it changes only when those change
    (`DataVersion.people_part`), so the dashboards cache it by that."""
    names = ("participant_id", "kind", "passed", "parsed", "total_ms", "first_action_ms")
    sql, params = responses_query(names, participants_only=True, analysable=True, order="participant")
    cols = read_columns(store, [(sql, params, {c: RESPONSE_TYPES[c] for c in names})])[0]
    # text as object columns of plain strings (pandas' Arrow strings re-encode at every group-by), numbers typed
    resp = pd.DataFrame({c: pd.Series(v, dtype=v.dtype, copy=False) for c, v in cols.items()})
    resp["passed"] = resp["passed"].astype(np.int64)   # NOT NULL: a NULL (a foreign file) raises here
    main = resp[resp["kind"] == "main"]
    g = main.groupby("participant_id")
    stats = pd.DataFrame({
        "main_items": g.size(), "main_pass_rate": 100 * g["passed"].mean(),
        "median_item_s": g["total_ms"].median() / 1000, "median_first_action_s": g["first_action_ms"].median() / 1000,
        "longest_streak": _longest_streaks(main),
    })
    att = resp[resp["kind"] == "attention"].groupby("participant_id")["passed"].agg(["size", "sum"])
    att.columns = ["attention_checks", "attention_passed"]
    prac = resp[resp["kind"] == "practice"].groupby("participant_id")["passed"].mean().mul(100).rename(
        "practice_pass_rate")
    return pd.concat([stats, att, prac], axis=1)


def participant_table(store: Store, rules: ExclusionRules, stats: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per participant of a ROSE study: timing, practice, attention, streaks, and why (if) excluded. The
    participants' own rows (study, end state, practice attempts) and the studies' benchmarks are read afresh;
    `stats` (`participant_stats` of the same database) may come from a cache."""
    with store.connect() as conn:
        parts = pd.DataFrame(participant_rows(conn))
    if parts.empty:
        return parts
    parts = parts[parts["study_id"].isin(rose_study_ids(store))].reset_index(drop=True)
    if parts.empty:
        return parts
    stats = participant_stats(store) if stats is None else stats
    out = parts.set_index("participant_id").join(stats).reset_index()
    for col in ("main_items", "longest_streak", "attention_checks", "attention_passed"):
        out[col] = out[col].fillna(0).astype(int)
    with store.connect() as conn:
        by_hand = standing_reasons(conn)
    out["excluded_by_hand"] = [by_hand.get(p, "") for p in out["participant_id"]]
    why = pd.DataFrame(index=out.index)
    why["unfinished"] = rules.completed_only & (out["end_reason"].fillna("") != "completed")
    why["by hand"] = rules.by_hand & (out["excluded_by_hand"] != "")
    why["attention"] = rules.failed_attention and (out["attention_passed"] < out["attention_checks"])
    why["too fast"] = bool(rules.too_fast_ms) and (out["median_item_s"] * 1000 < (rules.too_fast_ms or 0)) \
        & out["median_item_s"].notna()
    why["streak"] = bool(rules.streak) and (out["longest_streak"] >= (rules.streak or 0))
    reasons = np.full(len(out), "", dtype=object)
    for name in why.columns:  # "unfinished, by hand, attention, too fast, streak": those that hold, in this order
        hit = why[name].to_numpy(dtype=bool)
        reasons = np.where(hit & (reasons == ""), name, np.where(hit, reasons + ", " + name, reasons))
    out["excluded"] = reasons
    return out


def apply_exclusions(df: pd.DataFrame, participants: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Drop excluded participants' responses; returns (frame, number of participants excluded)."""
    if participants.empty:
        return df, 0
    out = set(participants.loc[participants["excluded"] != "", "participant_id"])
    return df[~df["participant_id"].isin(out)], len(out)


@dataclass(frozen=True)
class Selection:
    """The filtered, exclusion-applied responses an analysis works on, and how they were chosen."""

    df: pd.DataFrame
    participants: pd.DataFrame     # the participant table the exclusions came from (all participants)
    filters: Filters
    rules: ExclusionRules
    n_excluded: int


def excluded_count(participants: pd.DataFrame, filters: Filters) -> int:
    """Excluded participants of the chosen studies (of every study when none is chosen): the count a page, `report`
    and the paper bundle print beside a selection. Another study's excluded participants were never in it."""
    if participants.empty:
        return 0
    if filters.studies:
        participants = participants[participants["study_id"].isin(filters.studies)]
    return int((participants["excluded"] != "").sum())


def repeated_people_note(df: pd.DataFrame, participants: pd.DataFrame) -> str | None:
    """The loud sentence when one person (the same recruitment source and id, e.g. a Prolific id) took part in
    more than one of the studies pooled in `df`: each of their study sessions is a participant of its own (in n,
    the bootstrap over participants and agreement), and an instance they answered in two studies is two trials.
    None when every person is in one study of the selection."""
    if participants.empty or "external_id" not in participants:
        return None
    human = (df["solver_kind"] == "human").to_numpy(dtype=bool, na_value=False)
    if not human.any():
        return None
    who = participants.loc[participants["external_id"].fillna("") != "", ["participant_id", "source", "external_id"]]
    # the people of the participants who answered here (a participant id is one row of `participants`): asked of
    # a few thousand participants, not of every response merged with them (most of a cold page's selection)
    answered = set(pd.unique(df["participant_id"].to_numpy(dtype=object)[human]))
    present = who[np.array([p in answered for p in who["participant_id"]], dtype=bool)]
    people = present.groupby(["source", "external_id"]).size()
    repeated = people[people > 1]
    if repeated.empty:
        return None
    rows = df.loc[human, ["participant_id", "instance_id"]].merge(who, on="participant_id")
    rows = rows.set_index(["source", "external_id"]).loc[repeated.index].reset_index()
    twice = int((rows.groupby(["source", "external_id", "instance_id"]).size() > 1).sum())
    return (f"{len(repeated):,} {'person' if len(repeated) == 1 else 'people'} (the same recruitment id) took part in "
            f"more than one of the pooled studies ({int(repeated.sum()):,} study sessions): each session counts as a "
            f"participant of its own in n, the bootstrap and agreement"
            + (f", and {twice:,} instances were answered twice by one person" if twice else "")
            + ". Choose studies without shared people to count each person once")


def counted(df: pd.DataFrame, participants: pd.DataFrame, origins: tuple[str, ...]) -> tuple[pd.DataFrame,
                                                                                              pd.DataFrame]:
    """The responses and participants of the origins that count (`Filters.origins`): human answers of anyone
    else (a preview, a test, a dry run's simulated participant) are dropped, model and agent rows kept."""
    if participants.empty or "origin" not in participants:
        return df, participants
    keep = participants["origin"].isin(origins).to_numpy(dtype=bool)
    if keep.all():
        return df, participants
    others = set(participants.loc[~keep, "participant_id"])
    human = (df["solver_kind"] == "human").to_numpy(dtype=bool, na_value=False)
    drop = human & df["participant_id"].isin(others).to_numpy(dtype=bool)
    return df[~drop], participants[keep].reset_index(drop=True)


def simulated_note(participants: pd.DataFrame, filters: Filters) -> str | None:
    """The loud sentence when a selection counts simulated participants (a dry run): never for publication."""
    if "simulated" not in filters.origins or participants.empty or "origin" not in participants:
        return None
    n = int((participants["origin"] == "simulated").sum())
    return (f"{n:,} simulated participants (a dry run, `study simulate`) are counted in these numbers: not for "
            "publication" if n else None)


def select(frame: pd.DataFrame, participants: pd.DataFrame, filters: Filters, rules: ExclusionRules) -> Selection:
    """The one selection path: the origins that count, then the filters, then the exclusions (`participants` must
    be `participant_table(store, rules)` of the same database)."""
    frame, participants = counted(frame, participants, filters.origins)
    df, _ = apply_exclusions(filters.apply(frame), participants)
    return Selection(df, participants, filters, rules, excluded_count(participants, filters))


def select_from_store(store: Store, filters: Filters, rules: ExclusionRules) -> Selection:
    """`select` over a database read afresh (the command line; the dashboards keep the frame cached)."""
    return select(responses_frame(store), participant_table(store, rules), filters, rules)


def shown_participants(parts: pd.DataFrame) -> pd.DataFrame:
    """The participant table as the pages show it: `practice_attempts` stores the practice rounds failed (0 for a
    participant who passed the first time, which read as "never practised"), shown as the rounds completed
    ("practice rounds": the failed ones plus the one passed), right after the study."""
    if parts.empty or "practice_attempts" not in parts:
        return parts
    passed = parts["practice_passed"].map(lambda v: v is True or v == 1).astype(int)
    out = parts.drop(columns=["practice_attempts"])
    out.insert(out.columns.get_loc("practice_passed"), "practice rounds",
               parts["practice_attempts"].astype(int) + passed)
    return out
