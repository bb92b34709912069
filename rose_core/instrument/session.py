"""A participant's session: what to show now, computed from the database alone, and what they did, stored.

`ParticipantSession.screen()` runs one write transaction (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: the
participant's row lock first, see `rose_core.storage.participants`) and returns a screen record (Consent,
Instructions, PracticeFeedback, ItemScreen, End); the page only lays it out. Everything that decides where the
participant is (consent, practice feedback still to acknowledge, the held item, the end reason) is in the
database, so a reload, a closed tab or a restarted server (or another app process) resumes at the same screen.
Gold answers stay on the server: a screen's `component_data()` holds none.

Here only the session itself; what it uses lives apart: the screens (`screens`), what it asks of a kind of item
(`item_kind`; ROSE's `rose_kind`, SGP's `episode_kind`), the tab it serves (`tabs.Client`), database faults
(`storage_errors`). A study is created in `rose_study` (SGP: `episode_study`), a visitor joins in `joining`.
"""
from __future__ import annotations

import random
import time
from contextlib import contextmanager
from typing import Any, Iterator

from ..benchmarks.items import OneShotAnswer
from ..benchmarks.rose.scoring import SCORER_VERSION
from ..storage import exclusions, participants, studies
from ..storage import questionnaire as q_store
from ..storage.connection import Store
from ..storage.responses import ResponseRow
from . import results
from .behaviour import check_behaviour
from .completion import completion
from .config import EndReason, Study, StudyConfig, StudyError
from .grid_input import parse_state, parse_submit
from .ids import Clock, system_clock, view_id_for
from .item_kind import ItemKind, ItemUnavailable
from .items import attention_item_id
from .policy import CLOSED_TAB_GRACE_S, attention_scene, attention_slot_due, holds_per_address, main_pool, shown_at
from .rose_kind import RoseKind
from .screens import (
    Closed, Consent, Deadline, End, Instructions, ItemScreen, OtherTab, OtherTabError, Questionnaire, Recorded,
    Refusal, RoundOutcome, Screen, Stopped, Wait,
)
from .storage_errors import storage
from .tabs import Client
from .texts import validate_answers


class ClaimBusy(Exception):
    """Every instance this participant could get was being claimed by others at that moment (PostgreSQL): the
    screen's transaction is rolled back and computed again (`BUSY_RETRIES` times, then `Wait`)."""


BUSY_RETRIES = 20


class ParticipantSession:
    """One participant of one study: `screen()` says what to show; the other methods store what they did."""

    def __init__(self, store: Store, ds: Any, study: Study, participant_id: str, clock: Clock = system_clock,
                 client: Client | None = None, kind: ItemKind | None = None):
        """`client`: the tab this session serves. With it, one tab at a time drives the participant, and held
        items of closed tabs go back to the pool; without it (scripts, tests of the flow) neither is checked.
        `kind`: the study's kind of item (`instrument.study_kind.kind_for`); ROSE's one-shot items by default."""
        self.store, self.ds, self.study, self.participant_id, self.clock = store, ds, study, participant_id, clock
        self.client = client
        self.kind: ItemKind = kind or RoseKind(ds)
        if self.kind.benchmark != study.config.benchmark:
            raise StudyError(f"study {study.study_id} has benchmark {study.config.benchmark!r}; this session's "
                             f"kind of item is {self.kind.benchmark!r}")

    @property
    def cfg(self) -> StudyConfig:
        return self.study.config

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """A write transaction of this participant: their row lock first (PostgreSQL), so their transactions take
        turns and nobody else releases their items meanwhile (see `rose_core.storage.participants`)."""
        with self.store.write(concurrent=True) as c:
            participants.lock_participant(c, self.participant_id)
            yield c

    # ---- the intro
    def consent(self) -> None:
        with storage(self.store), self._tx() as c:
            if self._owns(c):
                participants.set_consent(c, self.participant_id, self.clock())

    def finish_instructions(self) -> None:
        with storage(self.store), self._tx() as c:
            if self._owns(c):
                participants.set_instructions(c, self.participant_id, self.clock())

    def answer_questionnaire(self, answers: Any) -> bool:
        """Store the end questionnaire's answers (checked here: choices from the fixed list, free text capped; a
        question left out is stored unanswered). Only once, only after the participant completed; False when
        nothing was stored (answered before, not asked, another tab)."""
        try:
            clean = validate_answers(list(self.cfg.questionnaire), answers)
        except ValueError as e:
            raise StudyError(str(e)) from e
        with storage(self.store), self._tx() as c:
            p = participants.get_participant(c, self.participant_id)
            if (p is None or p.end_reason != "completed" or not self.cfg.questionnaire or not self._owns(c)
                    or self._stopped(c, p) is not None):
                return False
            return q_store.insert_answers(c, self.participant_id, clean, self.clock())

    # ---- which tab drives the participant
    def _claim(self, c, p: participants.Participant) -> bool:
        """True when this tab drives the participant (claimed now when the tab that drove it is known closed, or
        when this tab is that tab reconnected, e.g. after its server process died). A tab of another process may
        be open: this one then asks, as a second tab does."""
        if self.client is None:
            return True
        mine, current = self.client.client_id, p.client_id
        if current == mine:
            return True
        if current is not None and not self.client.continues(current):
            live = self.client.live(current)
            if live or live is None:
                return False
        participants.set_client(c, p.participant_id, mine, self.client.address)
        return True

    def _owns(self, c) -> bool:
        """Writes come only from the tab that drives the participant (another tab's events would collide with its
        sequence numbers); a tab that lost the participant is told so and shows `OtherTab`."""
        if self.client is None:
            return True
        p = participants.get_participant(c, self.participant_id)
        return p is not None and p.client_id in (None, self.client.client_id) and self._claim(c, p)

    def take_over(self) -> None:
        """'Continue here': this tab drives the participant from now on; the other tab's messages are refused."""
        if self.client is None:
            return
        with storage(self.store), self._tx() as c:
            participants.set_client(c, self.participant_id, self.client.client_id, self.client.address)

    # ---- what to show
    def screen(self) -> Screen:
        dropped = busy = 0
        while True:
            try:
                with storage(self.store), self._tx() as c:
                    return self._screen(c)
            except ItemUnavailable as e:
                dropped += 1
                if dropped >= 10:
                    raise StudyError("too many items of this study cannot be shown (damaged images)") from e
                self._drop(e.assignment, e.why)
            except ClaimBusy:
                # Other participants were claiming the instances this one would get (PostgreSQL): everything of
                # this transaction was rolled back; again in a moment, with fresh counts.
                busy += 1
                if busy >= BUSY_RETRIES:
                    return Wait("held")
                time.sleep(random.uniform(0.002, 0.01) * busy)

    def drop_item(self, screen: ItemScreen, why: str) -> None:
        """The page could not read the item's image: never show it again; the participant gets another item."""
        self.ds.mark_damaged(screen.item.image, why)
        with storage(self.store), self._tx() as c:
            a = self._assignment_of(c, screen.view_id)
        if a is not None:
            self._drop(a, why)

    def _drop(self, a: participants.Assignment, why: str) -> None:
        if a.kind == "practice":
            raise ItemUnavailable(a, why)
        with storage(self.store), self._tx() as c:
            participants.release(c, a, self.clock())
            participants.record_flag(c, self.study.study_id, a.participant_id, None, "damaged_image",
                           f"{a.kind} {a.instance_id}: {why}", self.clock())

    def _assignment_of(self, c, view_id: str) -> participants.Assignment | None:
        pid = self.participant_id
        return next((a for a in participants.participant_assignments(c, pid)
                     if view_id_for(pid, a.kind, a.attempt, a.position) == view_id), None)

    def _end(self, c, reason: EndReason, p: participants.Participant | None = None) -> End | Questionnaire:
        """The end page, or first the study's questionnaire (completed participants who have not answered it).
        `p`: the participant, to tell a screen-out by attention check from one at the practice."""
        cfg = self.cfg
        if (reason == "completed" and cfg.questionnaire and not q_store.answered(c, self.participant_id)
                and self._stopped(c) is None):
            return Questionnaire(tuple(cfg.questionnaire))
        attention = bool(reason == "screened_out" and p is not None
                         and (p.practice_passed or not cfg.practice_rounds))
        code, url = cfg.completion_code, cfg.completion_url
        if reason == "completed":  # the participant's own code when the study gives one (instrument.completion)
            me = p or participants.get_participant(c, self.participant_id)
            code, url = completion(c, self.study, me.external_id)
        return End(reason, code, url, cfg.screen_out_code, cfg.screen_out_url,
                   attention, self.kind.text(cfg, "screen_out" if reason == "screened_out" else "end"),
                   self.kind.text(cfg, "debrief"))
    def deadline(self) -> Deadline | None:
        """When this participant's time runs out (the study's limit, from their consent), for the page's countdown;
        None without a limit, before consent or after the end. The server alone decides: `screen()` ends the
        participant as timed out once it has passed, and refuses a later answer."""
        if not self.cfg.time_limit_minutes:
            return None
        with storage(self.store), self.store.connect() as c:
            p = participants.get_participant(c, self.participant_id)
        if p is None or p.consent_at is None or p.finished_at is not None:
            return None
        return Deadline(p.consent_at + 60 * self.cfg.time_limit_minutes, self.clock())

    def _screen(self, c) -> Screen:
        cfg, t, pid = self.cfg, self.clock(), self.participant_id
        p = participants.get_participant(c, pid)
        if p is None:
            if studies.study_row(c, self.study.study_id) is None:
                return Closed("closed")  # the study was deleted (its participants with it) while the tab was open
            raise StudyError(f"unknown participant {pid!r}")
        participants.touch(c, pid, t)
        if p.finished_at is None and (stop := self._stopped(c, p)) is not None:
            participants.release_holds(c, [pid], t)  # their held item goes back to the pool at once
            return Closed(stop)
        if p.finished_at is not None and p.end_reason != "screened_out":
            return self._end(c, p.end_reason, p)
        if not self._claim(c, p):
            return OtherTab()
        if p.consent_at is None:
            return Consent(cfg.time_limit_minutes, self.kind.text(cfg, "consent"))
        if p.finished_at is None and cfg.time_limit_minutes and t - p.consent_at > 60 * cfg.time_limit_minutes:
            participants.finish(c, pid, "timed_out", t)
            participants.release_holds(c, [pid], t)  # their held item goes back to the pool at once
            return self._end(c, "timed_out")
        if p.instructions_at is None:
            return Instructions(bool(cfg.practice_rounds), self.kind.text(cfg, "instructions"),
                                self.kind.templates(cfg))
        assigns = participants.participant_assignments(c, pid)
        pending = [a for a in assigns if a.kind == "practice" and a.answered_at is not None and a.acknowledged_at is None]
        if pending:
            return self._feedback(c, p, pending[0], assigns)
        if p.finished_at is not None:
            return self._end(c, p.end_reason, p)
        if cfg.practice_rounds and not p.practice_passed:
            return self._practice(c, p, assigns, t)
        return self._main(c, p, assigns, t)

    def _item_screen(self, c, a: participants.Assignment, progress: str, fraction: float) -> Any:
        """The assignment's item on screen, as its kind draws it (`ItemScreen`, an episode's `EpisodeScreen`)."""
        return self.kind.item_screen(self, c, a, progress, fraction)

    def _round(self, attempt: int) -> list[str]:
        rounds = self.cfg.practice_rounds
        return rounds[min(attempt, len(rounds) - 1)]

    def _practice(self, c, p: participants.Participant, assigns: list[participants.Assignment], t: float) -> Screen:
        attempt = p.practice_attempts
        mine = [a for a in assigns if a.kind == "practice" and a.attempt == attempt]
        if not mine:
            for pos, iid in enumerate(self._round(attempt)):
                participants.insert_assignment(c, p.participant_id, "practice", pos, attempt, iid,
                                     self.kind.scene_of(iid), t)
            mine = [a for a in participants.participant_assignments(c, p.participant_id)
                    if a.kind == "practice" and a.attempt == attempt]
        open_ = sorted((a for a in mine if a.answered_at is None), key=lambda a: a.position)
        if not open_:  # answered but the round was never closed (cannot happen through submit): close it now
            self._close_round(c, p.participant_id, attempt, t)
            return self._screen(c)
        a = open_[0]
        return self._item_screen(c, a, self.kind.practice_label(a.position, len(mine)), a.position / len(mine))

    def _main(self, c, p: participants.Participant, assigns: list[participants.Assignment], t: float) -> Screen:
        cfg, pid = self.cfg, p.participant_id
        participants.set_started_main(c, pid, t)
        # past the time limit a held item goes back even if its tab keeps sending events (its answer would be late)
        participants.release_stale(c, self.study.study_id, t - 60 * cfg.release_after_minutes, pid, t,
                                   t - 60 * cfg.time_limit_minutes if cfg.time_limit_minutes else None)
        mains = [a for a in assigns if a.kind == "main"]
        atts = [a for a in assigns if a.kind == "attention"]
        answered_main = sum(a.answered_at is not None for a in mains)
        answered_att = sum(a.answered_at is not None for a in atts)
        progress = self.kind.progress(cfg, answered_main, answered_att)
        n = cfg.items_per_participant + cfg.attention_checks
        fraction = min(1.0, (answered_main + answered_att) / n)
        held = [a for a in mains + atts if a.answered_at is None and a.released_at is None]
        if held:
            return self._item_screen(c, held[0], progress, fraction)
        if answered_main >= cfg.items_per_participant:
            self._finish(c, "completed", t)
            return self._end(c, "completed")
        self._release_closed_tabs(c, t)
        slot = attention_slot_due(cfg, answered_main, {a.position for a in atts})
        if slot is not None:  # ROSE's: an SGP study has no attention checks (`StudyConfig.problems`)
            scene_id = attention_scene(main_pool(self.ds, cfg), pid, slot)
            participants.insert_assignment(c, pid, "attention", slot, 0, attention_item_id(scene_id, f"{pid}-{slot}"),
                                 scene_id, t)
            return self._refetch(c, pid, "attention", slot, progress, fraction)
        if self._address_full(c):
            return Wait("address")
        anon = cfg.counts_anonymous
        ranked = self.kind.rank(self, participants.main_assignment_counts(c, self.study.study_id, anon), mains,
                                p.counterbalance, answered_main)
        claim = participants.claim_instance(c, self.study.study_id, ranked, cfg.target_per_instance, anon)
        if claim.busy:
            raise ClaimBusy()
        if claim.instance_id is None:
            # Only answers fill an instance for good: while a held item may still come free, ask them to wait.
            if next(self.kind.rank(self, participants.main_answered_counts(c, self.study.study_id, anon), mains,
                                   p.counterbalance, answered_main), None) is not None:
                return Wait("held")
            reason: EndReason = "completed" if answered_main else "pool_exhausted"
            self._finish(c, reason, t)
            return self._end(c, reason)
        iid = claim.instance_id
        participants.insert_assignment(c, pid, "main", len(mains), 0, iid, self.kind.scene_of(iid), t)
        return self._refetch(c, pid, "main", len(mains), progress, fraction)

    def _finish(self, c, reason: EndReason, t: float) -> None:
        """The end of the main items; a completed participant's record is then judged by the behaviour check
        (`instrument.behaviour`: flagged, and excluded when the study says so) in the same transaction."""
        participants.finish(c, self.participant_id, reason, t)
        if reason == "completed":
            check_behaviour(c, self.study, self.participant_id, t)

    def _release_closed_tabs(self, c, t: float) -> None:
        """Held main items of participants whose tab closed (no longer connected to this server) more than
        CLOSED_TAB_GRACE_S ago go back to the pool, long before the study's silence limit. Only tabs known closed:
        another server process's tab may be open (its holds wait for the silence limit)."""
        if self.client is None:
            return
        gone = [h.participant_id for h in participants.holders(c, self.study.study_id)
                if h.participant_id != self.participant_id and h.client_id is not None
                and h.last_seen_at < t - CLOSED_TAB_GRACE_S and self.client.live(h.client_id) is False]
        participants.release_holds(c, gone, t)

    def _address_full(self, c) -> bool:
        """One client address holds at most `holds_per_address()` main items at once (tabs not known closed)."""
        address = self.client.address if self.client is not None else None
        cap = holds_per_address()
        if address is None or not cap:
            return False
        same = [h for h in participants.holders(c, self.study.study_id)
                if h.client_address == address and h.participant_id != self.participant_id
                and (h.client_id is None or self.client.live(h.client_id) is not False)]
        return len(same) >= cap

    def _refetch(self, c, pid: str, kind: str, position: int, progress: str, fraction: float) -> Any:
        a = next(a for a in participants.participant_assignments(c, pid) if a.kind == kind and a.position == position
                 and a.attempt == 0)
        return self._item_screen(c, a, progress, fraction)

    def _feedback(self, c, p: participants.Participant, a: participants.Assignment,
                  assigns: list[participants.Assignment]) -> Any:
        """A practice item's feedback: where the round stands (one path for every kind), what the kind shows."""
        round_ = [x for x in assigns if x.kind == "practice" and x.attempt == a.attempt]
        if any(x.answered_at is None for x in round_):
            outcome: RoundOutcome = "next"
        elif p.practice_passed:
            outcome = "passed"
        elif p.end_reason == "screened_out":
            outcome = "screened_out"
        else:
            outcome = "retry"
        return self.kind.feedback(self, c, p, a, outcome, len(round_))

    # ---- what they did
    def acknowledge_feedback(self, view_id: str) -> None:
        """'Continue' on a practice feedback: stored, so the feedback is shown until then and never again after."""
        with storage(self.store), self._tx() as c:
            if not self._owns(c):
                return
            for a in participants.participant_assignments(c, self.participant_id):
                if a.kind == "practice" and view_id_for(a.participant_id, a.kind, a.attempt, a.position) == view_id:
                    participants.acknowledge(c, a, self.clock())

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
        with storage(self.store), self._tx() as c:
            if self._stopped(c) is not None:
                return known_max_seq  # nothing more is stored; the next screen says why
            if not self._owns(c):
                raise OtherTabError("the study continues in another tab")
            results.write_events(c, self.participant_id, screen.item.item_id, screen.view_id, new, t)
            participants.touch(c, self.participant_id, t)
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
        with storage(self.store), self._tx() as c:
            if participants.get_participant(c, pid) is None:   # deleted with its study while the tab was open
                return Recorded(None, duplicate=True, refused="closed")
            if not self._owns(c):
                return Recorded(None, duplicate=True, refused="other_tab")
            assigns = participants.participant_assignments(c, pid)
            a = next((a for a in assigns if view_id_for(pid, a.kind, a.attempt, a.position) == screen.view_id), None)
            refused = self._refusal(c, a, t)
            if refused is not None or not participants.mark_answered(c, a, t):
                return Recorded(result, duplicate=True, refused=refused or "answered")
            results.write_events(c, pid, item.item_id, screen.view_id, sub.events, t)
            vp = sub.viewport
            results.write_result(c, ResponseRow.scored(
                self.study.run_id, item.item_id, item.template, item.subset, item.split, item.scene_id,
                result.response, result.protocol, result.parsed, result.valid, result.passed, result.failure,
                result.errors, t, participant_id=pid, kind=a.kind, attempt=a.attempt,
                first_action_ms=sub.first_action_ms, total_ms=1000.0 * (t - shown_at(a, assigns)), active_ms=sub.active_ms,
                client_total_ms=sub.client_total_ms, viewport_w=vp[0] if vp else None,
                viewport_h=vp[1] if vp else None, device_pixel_ratio=sub.dpr, focus_lost=int(sub.focus_lost),
                view_id=screen.view_id, scorer_version=SCORER_VERSION))
            participants.touch(c, pid, t)
            if a.kind == "practice":
                self._close_round(c, pid, a.attempt, t)
            elif a.kind == "attention" and not result.passed and self.cfg.attention_screen_out:
                participants.finish(c, pid, "screened_out", t)
                participants.release_holds(c, [pid], t)
        return Recorded(result, duplicate=False)

    def record_moves(self, screen: Any, payload: Any) -> Any:
        """An episode's moves (the board component's message): read and applied by the episode kind
        (`EpisodeKind.record_moves`), stored through the one writer. A one-shot item takes `submit` instead."""
        record = getattr(self.kind, "record_moves", None)
        if record is None:
            raise StudyError(f"a {self.kind.benchmark} study's items are answered once, not moved")
        return record(self, screen, payload)

    def _refusal(self, c, a: participants.Assignment | None, t: float) -> Refusal | None:
        """Why an answer for this assignment must not count (recorded), or None. An item released to someone else
        or answered after the time limit is never stored: it would count twice against the target, or count
        time the study did not allow."""
        if a is None:
            return "unknown"
        if a.answered_at is not None:
            return "answered"
        pid, cfg = self.participant_id, self.cfg
        p = participants.get_participant(c, pid)
        stop = self._stopped(c, p)
        if stop is not None and p is not None:
            participants.record_flag(c, self.study.study_id, pid, None, f"{stop}_answer",
                                     f"{a.kind} {a.instance_id} answered after the "
                                     + ("study closed" if stop == "closed" else "participant was excluded"), t)
            participants.release_holds(c, [pid], t)
        if stop is not None:
            return stop
        late = bool(cfg.time_limit_minutes and p.consent_at is not None
                    and t - p.consent_at > 60 * cfg.time_limit_minutes)
        if a.released_at is None and not late and p.finished_at is None:
            return None
        why: Refusal = "released" if a.released_at is not None else "late"
        participants.record_flag(c, self.study.study_id, pid, None, f"{why}_answer",
                       f"{a.kind} {a.instance_id} answered {t - a.assigned_at:.1f} s after it was assigned", t)
        if late:
            participants.finish(c, pid, "timed_out", t)
            participants.release_holds(c, [pid], t)
        return why

    def _stopped(self, c, p: participants.Participant | None = None) -> Stopped | None:
        """Why this participant may store nothing more, read in the caller's transaction: their study closed or
        deleted since the tab opened ("closed"; a preview may go on in a closed study: the experimenter tries it
        before opening it; a session without a browser tab is not checked for a closed study, as for tabs), or a
        standing exclusion ("excluded"). None: go on."""
        row = studies.study_row(c, self.study.study_id)
        p = p or participants.get_participant(c, self.participant_id)
        if row is None or p is None:
            return "closed"
        if exclusions.standing(c, self.participant_id) is not None:
            return "excluded"
        # a browser tab only: scripts and tests of the flow drive draft studies that were never open (`client` None)
        closed = not row["active"] and p.origin != "preview" and self.client is not None
        return "closed" if closed else None

    def _close_round(self, c, pid: str, attempt: int, t: float) -> None:
        """After the last answer of a round: passed, another round on fresh items, or screened out."""
        cfg = self.cfg
        passes = results.round_passes(c, self.study.run_id, pid, attempt)
        if len(passes) < len(self._round(attempt)):
            return
        if sum(passes) / len(passes) >= cfg.practice_pass_fraction:
            participants.set_practice(c, pid, True, attempt)
        elif attempt + 1 >= cfg.practice_max_attempts:
            participants.set_practice(c, pid, False, attempt + 1)
            participants.finish(c, pid, "screened_out", t)
        else:
            participants.set_practice(c, pid, None, attempt + 1)
