"""A participant's session: what to show now, computed from the database alone, and what they did, stored.

`ParticipantSession.screen()` runs one `BEGIN IMMEDIATE` transaction on the thread's one connection and
returns a screen record (Consent, Instructions, PracticeFeedback, ItemScreen, End); the page only lays it
out. Everything that decides where the participant is (consent, practice feedback still to acknowledge, the
held item, the end reason) is in SQLite, so a reload, a closed tab or a restarted server resumes at the
same screen. Gold answers stay on the server: a screen's `component_data()` holds none.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import Cell
from ..store import Store
from ..storage import participants as sp
from ..storage.events import insert_events, view_events
from ..storage.responses import ResponseRow, practice_round_passes, response_of, write_responses
from .config import EndReason, Study, StudyConfig, StudyError
from .grid_input import Restore, component_data, parse_state, parse_submit, restore
from .ids import Clock, Ids, RandomIds, stable_hash, system_clock
from .items import ItemResult, OneShotAnswer, RoseItem, attention_item_id, item_for
from .policy import (
    attention_scene, attention_slot_due, default_tiebreak, main_pool, pick_main, progress_text, shown_at,
)
from .practice import plan_practice


def view_id_for(participant_id: str, kind: str, attempt: int, position: int) -> str:
    """Stable per assignment (a reload gets the same view), and says nothing about the item's kind."""
    return "v" + stable_hash(participant_id, kind, str(attempt), str(position))[:20]


# --------------------------------------------------------------------------- screens

@dataclass(frozen=True)
class Consent:
    time_limit_minutes: int


@dataclass(frozen=True)
class Instructions:
    has_practice: bool


@dataclass(frozen=True)
class ItemScreen:
    view_id: str
    kind: str
    item: RoseItem = field(repr=False)
    progress: str
    progress_fraction: float
    ack_seq: int
    restore: Restore

    def component_data(self, image: bytes | str) -> dict[str, Any]:
        """What the grid component gets; `image`: the PNG bytes or a URL serving exactly them."""
        return component_data(self.view_id, image, self.item.layout, self.item.mode, self.item.instruction,
                              self.progress, self.ack_seq, self.restore)


RoundOutcome = Literal["next", "passed", "retry", "screened_out"]


@dataclass(frozen=True)
class FeedbackLine:
    """One correct cell and whether the participant clicked it, or one cell they clicked that was not correct."""

    cell: Cell
    correct: bool
    clicked: bool


@dataclass(frozen=True)
class PracticeFeedback:
    view_id: str
    item: RoseItem = field(repr=False)
    instruction: str
    passed: bool
    clicked: list[Cell]
    count: int | None
    gold_cells: list[Cell]
    gold_count: int | None        # None when the item asks no number
    lines: list[FeedbackLine]
    outcome: RoundOutcome
    position: int
    of: int


@dataclass(frozen=True)
class End:
    reason: EndReason
    completion_code: str
    completion_url: str


Screen = Union[Consent, Instructions, PracticeFeedback, ItemScreen, End]


@dataclass(frozen=True)
class Recorded:
    result: ItemResult | None
    duplicate: bool               # the view was already answered (or is not this participant's): nothing stored


# --------------------------------------------------------------------------- studies and participants

def create_study(store: Store, ds: Dataset, cfg: StudyConfig, ids: Ids | None = None,
                 clock: Clock = system_clock) -> Study:
    """Check the configuration, plan practice rounds (fresh scenes per attempt) and store the study."""
    if cfg.benchmark != "rose":  # an SGP study: instrument.episode_session.create_sgp_study
        raise StudyError(f"benchmark: create_study makes ROSE studies, not {cfg.benchmark!r} ones")
    problems = cfg.problems()
    if problems:
        raise StudyError("; ".join(problems))
    cfg.practice_rounds, cfg.practice_scene_ids = [], []
    cfg.practice_rounds, cfg.practice_scene_ids = plan_practice(ds, cfg, random.Random(f"practice:{cfg.seed}"))
    if not main_pool(ds, cfg):
        raise StudyError("the chosen split, subsets and templates select no instance")
    study = Study((ids or RandomIds()).study_id(), cfg.name.strip(), ds.dataset_hash, cfg, clock(), True)
    with store.write() as c:
        sp.insert_study(c, study)
    return study


def join(store: Store, study: Study, external_id: str, source: str, prolific_study_id: str | None = None,
         prolific_session_id: str | None = None, ids: Ids | None = None,
         clock: Clock = system_clock) -> sp.Participant:
    """The participant for (study, external id), created on the first request and stored at once."""
    external_id = external_id.strip()
    if not external_id or len(external_id) > 128:
        raise StudyError("participant id: expected 1-128 characters")
    t = clock()
    with store.write() as c:
        p = sp.find_participant(c, study.study_id, external_id)
        if p is None:
            pid = (ids or RandomIds()).participant_id()
            sp.insert_participant(c, pid, study.study_id, external_id, source, prolific_study_id,
                                  prolific_session_id, t)
        else:
            pid = p.participant_id
            sp.touch(c, pid, t)
        return sp.get_participant(c, pid)


# --------------------------------------------------------------------------- the session

class ParticipantSession:
    """One participant of one study: `screen()` says what to show; the other methods store what they did."""

    def __init__(self, store: Store, ds: Dataset, study: Study, participant_id: str, clock: Clock = system_clock):
        self.store, self.ds, self.study, self.participant_id, self.clock = store, ds, study, participant_id, clock

    @property
    def cfg(self) -> StudyConfig:
        return self.study.config

    # ---- the intro
    def consent(self) -> None:
        with self.store.write() as c:
            sp.set_consent(c, self.participant_id, self.clock())

    def finish_instructions(self) -> None:
        with self.store.write() as c:
            sp.set_instructions(c, self.participant_id, self.clock())

    # ---- what to show
    def screen(self) -> Screen:
        with self.store.write() as c:
            return self._screen(c)

    def _end(self, reason: EndReason) -> End:
        return End(reason, self.cfg.completion_code, self.cfg.completion_url)

    def _screen(self, c) -> Screen:
        cfg, t, pid = self.cfg, self.clock(), self.participant_id
        p = sp.get_participant(c, pid)
        if p is None:
            raise StudyError(f"unknown participant {pid!r}")
        sp.touch(c, pid, t)
        if p.finished_at is not None and p.end_reason != "screened_out":
            return self._end(p.end_reason)
        if p.consent_at is None:
            return Consent(cfg.time_limit_minutes)
        if p.finished_at is None and cfg.time_limit_minutes and t - p.consent_at > 60 * cfg.time_limit_minutes:
            sp.finish(c, pid, "timed_out", t)
            return self._end("timed_out")
        if p.instructions_at is None:
            return Instructions(bool(cfg.practice_rounds))
        assigns = sp.participant_assignments(c, pid)
        pending = [a for a in assigns if a.kind == "practice" and a.answered_at is not None and a.acknowledged_at is None]
        if pending:
            return self._feedback(c, p, pending[0], assigns)
        if p.finished_at is not None:
            return self._end(p.end_reason)
        if cfg.practice_rounds and not p.practice_passed:
            return self._practice(c, p, assigns, t)
        return self._main(c, p, assigns, t)

    def _item_screen(self, c, a: sp.Assignment, progress: str, fraction: float) -> ItemScreen:
        view = view_id_for(a.participant_id, a.kind, a.attempt, a.position)
        restored = restore(view_events(c, a.participant_id, view))
        return ItemScreen(view, a.kind, item_for(self.ds, a.kind, a.instance_id), progress, fraction,
                          restored.next_seq, restored)

    def _round(self, attempt: int) -> list[str]:
        rounds = self.cfg.practice_rounds
        return rounds[min(attempt, len(rounds) - 1)]

    def _practice(self, c, p: sp.Participant, assigns: list[sp.Assignment], t: float) -> Screen:
        attempt = p.practice_attempts
        mine = [a for a in assigns if a.kind == "practice" and a.attempt == attempt]
        if not mine:
            for pos, iid in enumerate(self._round(attempt)):
                sp.insert_assignment(c, p.participant_id, "practice", pos, attempt, iid,
                                     self.ds.instances[iid].scene_id, t)
            mine = [a for a in sp.participant_assignments(c, p.participant_id)
                    if a.kind == "practice" and a.attempt == attempt]
        open_ = sorted((a for a in mine if a.answered_at is None), key=lambda a: a.position)
        if not open_:  # answered but the round was never closed (cannot happen through submit): close it now
            self._close_round(c, p.participant_id, attempt, t)
            return self._screen(c)
        a = open_[0]
        return self._item_screen(c, a, f"Practice {a.position + 1} of {len(mine)}", a.position / len(mine))

    def _main(self, c, p: sp.Participant, assigns: list[sp.Assignment], t: float) -> Screen:
        cfg, pid = self.cfg, p.participant_id
        sp.set_started_main(c, pid, t)
        sp.release_stale(c, self.study.study_id, t - 60 * cfg.release_after_minutes, pid, t)
        mains = [a for a in assigns if a.kind == "main"]
        atts = [a for a in assigns if a.kind == "attention"]
        answered_main = sum(a.answered_at is not None for a in mains)
        answered_att = sum(a.answered_at is not None for a in atts)
        progress = progress_text(cfg, answered_main, answered_att)
        n = cfg.items_per_participant + cfg.attention_checks
        fraction = min(1.0, (answered_main + answered_att) / n)
        held = [a for a in mains + atts if a.answered_at is None and a.released_at is None]
        if held:
            return self._item_screen(c, held[0], progress, fraction)
        if answered_main >= cfg.items_per_participant:
            sp.finish(c, pid, "completed", t)
            return self._end("completed")
        pool = main_pool(self.ds, cfg)
        slot = attention_slot_due(cfg, answered_main, {a.position for a in atts})
        if slot is not None:
            scene_id = attention_scene(pool, pid, slot)
            sp.insert_assignment(c, pid, "attention", slot, 0, attention_item_id(scene_id, f"{pid}-{slot}"),
                                 scene_id, t)
            return self._refetch(c, pid, "attention", slot, progress, fraction)
        inst = pick_main(pool, cfg, sp.main_assignment_counts(c, self.study.study_id),
                         {a.instance_id for a in mains}, {a.scene_id for a in mains}, p.counterbalance,
                         answered_main, default_tiebreak(pid))
        if inst is None:
            reason: EndReason = "completed" if answered_main else "pool_exhausted"
            sp.finish(c, pid, reason, t)
            return self._end(reason)
        sp.insert_assignment(c, pid, "main", len(mains), 0, inst.instance_id, inst.scene_id, t)
        return self._refetch(c, pid, "main", len(mains), progress, fraction)

    def _refetch(self, c, pid: str, kind: str, position: int, progress: str, fraction: float) -> ItemScreen:
        a = next(a for a in sp.participant_assignments(c, pid) if a.kind == kind and a.position == position
                 and a.attempt == 0)
        return self._item_screen(c, a, progress, fraction)

    def _feedback(self, c, p: sp.Participant, a: sp.Assignment, assigns: list[sp.Assignment]) -> PracticeFeedback:
        item = item_for(self.ds, a.kind, a.instance_id)
        row = response_of(c, self.study.run_id, p.participant_id, a.instance_id, "practice", a.attempt)
        parsed = json.loads(row["parsed"]) if row else {"clicks": [], "count": None}
        clicked = [tuple(x) for x in parsed.get("clicks") or []]
        gold = item.gold_cells()
        lines = [FeedbackLine(g, True, g in clicked) for g in gold]
        if item.mode != "count":
            lines += [FeedbackLine(x, False, True) for x in clicked if x not in gold]
        round_ = [x for x in assigns if x.kind == "practice" and x.attempt == a.attempt]
        if any(x.answered_at is None for x in round_):
            outcome: RoundOutcome = "next"
        elif p.practice_passed:
            outcome = "passed"
        elif p.end_reason == "screened_out":
            outcome = "screened_out"
        else:
            outcome = "retry"
        return PracticeFeedback(
            view_id_for(p.participant_id, a.kind, a.attempt, a.position), item, item.instruction,
            bool(row and row["passed"]), clicked if item.mode != "count" else [], parsed.get("count"), gold,
            None if item.mode == "click" else item.key.gold_count, lines, outcome, a.position + 1, len(round_))

    # ---- what they did
    def acknowledge_feedback(self, view_id: str) -> None:
        """'Continue' on a practice feedback: stored, so the feedback is shown until then and never again after."""
        with self.store.write() as c:
            for a in sp.participant_assignments(c, self.participant_id):
                if a.kind == "practice" and view_id_for(a.participant_id, a.kind, a.attempt, a.position) == view_id:
                    sp.acknowledge(c, a, self.clock())

    def record_events(self, screen: ItemScreen, payload: Any, known_max_seq: int = -1) -> int:
        """Store the new events of the shown view (validated; repeats ignored, events up to `known_max_seq`
        skipped without a transaction). Returns the highest seq now known stored."""
        if not isinstance(payload, dict) or payload.get("view_id") != screen.view_id:
            return known_max_seq
        state = parse_state(payload, screen.item.layout.rows, screen.item.layout.cols)
        new = [e for e in state.events if e.seq > known_max_seq]
        if not new:
            return known_max_seq
        t = self.clock()
        with self.store.write() as c:
            insert_events(c, self.participant_id, screen.item.item_id, screen.view_id, new, t)
            sp.touch(c, self.participant_id, t)
        return max(known_max_seq, max(e.seq for e in new))

    def submit(self, screen: ItemScreen, payload: Any) -> Recorded:
        """Score the answer with the benchmark's scorer; store it, its last events and the practice round's
        outcome in one transaction. A second submit of the same view stores nothing."""
        if not isinstance(payload, dict) or payload.get("view_id") != screen.view_id:
            return Recorded(None, duplicate=True)
        item = screen.item
        sub = parse_submit(payload, item.layout.rows, item.layout.cols)
        result = item.result(OneShotAnswer(sub.selection, sub.count))
        t = self.clock()
        pid = self.participant_id
        with self.store.write() as c:
            assigns = sp.participant_assignments(c, pid)
            a = next((a for a in assigns if view_id_for(pid, a.kind, a.attempt, a.position) == screen.view_id), None)
            if a is None or a.released_at is not None or not sp.mark_answered(c, a, t):
                return Recorded(result, duplicate=True)
            insert_events(c, pid, item.item_id, screen.view_id, sub.events, t)
            vp = sub.viewport
            write_responses(c, [ResponseRow.scored(
                self.study.run_id, item.item_id, item.template, item.subset, item.split, item.scene_id,
                result.response, result.protocol, result.parsed, result.valid, result.passed, result.failure,
                result.errors, t, participant_id=pid, kind=a.kind, attempt=a.attempt,
                first_action_ms=sub.first_action_ms, total_ms=1000.0 * (t - shown_at(a, assigns)), active_ms=sub.active_ms,
                client_total_ms=sub.client_total_ms, viewport_w=vp[0] if vp else None,
                viewport_h=vp[1] if vp else None, device_pixel_ratio=sub.dpr, focus_lost=int(sub.focus_lost),
                view_id=screen.view_id)])
            sp.touch(c, pid, t)
            if a.kind == "practice":
                self._close_round(c, pid, a.attempt, t)
        return Recorded(result, duplicate=False)

    def _close_round(self, c, pid: str, attempt: int, t: float) -> None:
        """After the last answer of a round: passed, another round on fresh items, or screened out."""
        cfg = self.cfg
        passes = practice_round_passes(c, pid, attempt)
        if len(passes) < len(self._round(attempt)):
            return
        if sum(passes) / len(passes) >= cfg.practice_pass_fraction:
            sp.set_practice(c, pid, True, attempt)
        elif attempt + 1 >= cfg.practice_max_attempts:
            sp.set_practice(c, pid, False, attempt + 1)
            sp.finish(c, pid, "screened_out", t)
        else:
            sp.set_practice(c, pid, None, attempt + 1)


def open_session(store: Store, ds: Dataset, study_id: str, participant_id: str,
                 clock: Clock = system_clock) -> ParticipantSession | None:
    with store.connect() as c:
        study = sp.get_study(c, study_id)
    return None if study is None else ParticipantSession(store, ds, study, participant_id, clock)
