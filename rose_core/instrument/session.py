"""A participant's session: what to show now, computed from the database alone, and what they did, stored.

`ParticipantSession.screen()` runs one write transaction (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: the
participant's row lock first, see `rose_core.storage.participants`) and returns a screen record (Consent,
Instructions, PracticeFeedback, ItemScreen, End); the page only lays it out. Everything that decides where the
participant is (consent, practice feedback still to acknowledge, the held item, the end reason) is in the
database, so a reload, a closed tab or a restarted server (or another app process) resumes at the same screen.
Gold answers stay on the server: a screen's `component_data()` holds none.
"""
from __future__ import annotations

import json
import random
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Literal, Protocol, Union

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import Cell
from ..benchmarks.rose.scoring import SCORER_VERSION
from ..storage.connection import DatabaseError, IntegrityError, Store, roll_back
from ..storage import exclusions, participants, studies
from ..storage import questionnaire as q_store
from ..storage.events import view_events
from ..storage.responses import ResponseRow
from . import results
from .config import EndReason, Origin, Study, StudyConfig, StudyError, load_study
from .grid_input import GridEvent, Restore, component_data, parse_state, parse_submit, restore
from .ids import Clock, Ids, RandomIds, stable_hash, system_clock
from ..benchmarks.items import ItemResult, OneShotAnswer
from ..benchmarks.rose.item import RoseItem
from .behaviour import check_behaviour
from .completion import completion, study_secret
from .items import attention_item_id, is_picture_check, item_for, picture_key
from .policy import (
    CLOSED_TAB_GRACE_S, attention_scene, attention_slot_due, default_tiebreak, holds_per_address, main_pool,
    progress_text, rank_main, shown_at,
)
from .practice import plan_practice
from .texts import opening_problems, page_text, store_texts, validate_answers
from .sample import choose_items, design_check, without_sample


class StorageError(RuntimeError):
    """The database cannot store or read right now (disk full, read-only, corrupt). Nothing was half-stored: the
    page keeps the participant's selection and sends the answer again once storage works."""


class ClaimBusy(Exception):
    """Every instance this participant could get was being claimed by others at that moment (PostgreSQL): the
    screen's transaction is rolled back and computed again (`BUSY_RETRIES` times, then `Wait`)."""


BUSY_RETRIES = 20


class OtherTabError(StudyError):
    """This tab no longer drives the participant: the study was continued in another tab or window."""


class IdentityMismatch(StudyError):
    """The participant id is known, but arrived with another Prolific study / session id or another source."""


class ItemUnavailable(StudyError):
    """An item's image is missing or damaged: a main or attention item is released and replaced; a practice item
    cannot be replaced, and the participant is asked to come back later."""

    def __init__(self, assignment: participants.Assignment, why: str):
        super().__init__(why)
        self.assignment, self.why = assignment, why


@contextmanager
def storage(store: Store) -> Iterator[None]:
    """Database faults as StorageError (a duplicate key stays an IntegrityError: that is a bug, not a fault).

    A COMMIT refused for a full disk leaves SQLite's transaction open; it is rolled back here, so the next write
    of this thread (a rerun's events, the retry) starts clean instead of failing as a nested transaction."""
    try:
        yield
    except IntegrityError:
        raise
    except DatabaseError as e:
        try:
            with store.connect() as c:
                roll_back(c)
        except DatabaseError:
            pass
        raise StorageError(str(e)) from e


@dataclass(frozen=True)
class Client:
    """The browser tab driving a participant: its id, the address it connects from, a probe saying whether a
    tab (any tab id) is still connected: True, False, or None when this server process cannot know (the tab is
    another process's; see `rose_core.instrument.tabs`), and `resumes`: the Streamlit session id this tab had
    before it reconnected, as the browser says (a tab that lost its server process and came back on another)."""

    client_id: str
    address: str | None = None
    live: Callable[[str], bool | None] = field(default=lambda _client_id: True, repr=False, compare=False)
    resumes: str | None = None

    def continues(self, tab_id: str) -> bool:
        """True when this tab is `tab_id` reconnected (its session id is the one the browser says it had)."""
        return self.resumes is not None and tab_id.rpartition("/")[2] == self.resumes


def view_id_for(participant_id: str, kind: str, attempt: int, position: int) -> str:
    """Stable per assignment (a reload gets the same view), and says nothing about the item's kind."""
    return "v" + stable_hash(participant_id, kind, str(attempt), str(position))[:20]


# --------------------------------------------------------------------------- screens

@dataclass(frozen=True)
class Consent:
    """`text`: the study's consent Markdown, fields filled in (`instrument.texts`)."""

    time_limit_minutes: int
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Deadline:
    """When the study's time limit runs out (server clock, epoch seconds), and the server's time when the screen
    was computed: the page counts down `ends_at - now` from there (it only displays; the server decides)."""

    ends_at: float
    now: float

    @property
    def seconds_left(self) -> float:
        return max(0.0, self.ends_at - self.now)


@dataclass(frozen=True)
class Instructions:
    """`text`: the study's instructions; `templates`: what the worked examples cover (one per output kind)."""

    has_practice: bool
    text: str = field(default="", compare=False)
    templates: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Questionnaire:
    """The end questionnaire, after the last item and before the end page (`ParticipantSession.answer_questionnaire`)."""

    questions: tuple[str, ...]


@dataclass(frozen=True)
class ItemScreen:
    view_id: str
    kind: str
    item: RoseItem = field(repr=False)
    progress: str
    progress_fraction: float
    ack_seq: int
    restore: Restore
    drawing: bytes | None = field(default=None, repr=False)   # a picture check's key (`items.picture_key`): server only

    def component_data(self, image: bytes | str, stored_seq: int = -1, refusals: int = 0,
                       pending: bool = False) -> dict[str, Any]:
        """What the grid component gets; `image`: the PNG bytes or a URL serving exactly them. `stored_seq`: the
        highest seq of this view stored since the screen was computed (`record_events`' return): the browser then
        drops those events and sends only newer ones (ack_seq), not the item's whole log with every change.
        `refusals`, `pending`: what became of this view's answer (grid_input.component_data)."""
        return component_data(self.view_id, image, self.item.layout, self.item.mode, self.item.instruction,
                              self.progress, max(self.ack_seq, stored_seq + 1), self.restore, refusals, pending)


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
class OtherTab:
    """The participant is driven by another open tab; this one may take over (`take_over`)."""


@dataclass(frozen=True)
class Wait:
    """No item can be given now, but one may be soon: every remaining item is held by someone who has not answered
    yet ("held"), or this address already holds as many items as one client may ("address")."""

    reason: Literal["held", "address"]


@dataclass(frozen=True)
class End:
    """The end screen: why, and what the participant takes back to the platform. A completed participant gets the
    completion code / URL, a screened-out one the screen-out code / URL (`code`, `url` say which applies);
    `attention`: screened out by a failed attention check rather than the practice. `text`: the study's end page
    (its screen-out page when screened out); `debrief`: "" when none."""

    reason: EndReason
    completion_code: str
    completion_url: str
    screen_out_code: str = ""
    screen_out_url: str = ""
    attention: bool = False
    text: str = field(default="", compare=False)
    debrief: str = field(default="", compare=False)

    @property
    def code(self) -> str:
        return {"completed": self.completion_code, "screened_out": self.screen_out_code}.get(self.reason, "")

    @property
    def url(self) -> str:
        return {"completed": self.completion_url, "screened_out": self.screen_out_url}.get(self.reason, "")


Stopped = Literal["closed", "excluded"]


@dataclass(frozen=True)
class Closed:
    """This participant may store nothing more: their study was closed or deleted ("closed"), or they were
    excluded ("excluded"), while their tab was open. The page says so calmly; answers are refused on the server."""

    why: Stopped


Screen = Union[Consent, Instructions, PracticeFeedback, ItemScreen, OtherTab, Wait, Questionnaire, End, Closed]
Refusal = Literal["answered", "unknown", "released", "late", "other_tab", "closed", "excluded"]


@dataclass(frozen=True)
class Recorded:
    result: ItemResult | None
    duplicate: bool               # nothing stored (already answered, not this participant's, or refused)
    refused: Refusal | None = None  # why nothing was stored


# --------------------------------------------------------------------------- kinds of item

class ItemKind(Protocol):
    """What the one participant session asks of a kind of item (jsPsych's plugin for a trial type): the session
    runs the timeline (consent, instructions, practice rounds with feedback, main items, the end) and stores
    through the one writer (`instrument.results`); the kind says which items come, draws the screen of one, and
    reads the input it takes. `RoseKind` (one-shot items), `instrument.episode_kind.EpisodeKind` (episodes)."""

    benchmark: str

    def text(self, cfg: StudyConfig, key: str) -> str: ...
    def templates(self, cfg: StudyConfig) -> tuple[str, ...]: ...
    def scene_of(self, instance_id: str) -> str: ...
    def practice_label(self, position: int, of: int) -> str: ...
    def progress(self, cfg: StudyConfig, answered_main: int, answered_attention: int) -> str: ...
    def rank(self, s: "ParticipantSession", counts: dict[str, int], mains: list[participants.Assignment],
             counterbalance: int, answered: int) -> Iterator[str]: ...
    def item_screen(self, s: "ParticipantSession", c: Any, a: participants.Assignment, progress: str,
                    fraction: float) -> Any: ...
    def feedback(self, s: "ParticipantSession", c: Any, p: participants.Participant, a: participants.Assignment,
                 outcome: RoundOutcome, of: int) -> Any: ...


class RoseKind:
    """ROSE's one-shot items: a picture with a click grid and/or a number, answered once (`submit`)."""

    benchmark = "rose"

    def __init__(self, ds: Dataset):
        self.ds = ds

    def text(self, cfg: StudyConfig, key: str) -> str:
        return page_text(cfg, key)

    def templates(self, cfg: StudyConfig) -> tuple[str, ...]:
        return tuple(cfg.templates)

    def scene_of(self, instance_id: str) -> str:
        return self.ds.instances[instance_id].scene_id

    def practice_label(self, position: int, of: int) -> str:
        return f"Practice {position + 1} of {of}"

    def progress(self, cfg: StudyConfig, answered_main: int, answered_attention: int) -> str:
        return progress_text(cfg, answered_main, answered_attention)

    def rank(self, s: "ParticipantSession", counts: dict[str, int], mains: list[participants.Assignment],
             counterbalance: int, answered: int) -> Iterator[str]:
        seen = {a.instance_id for a in mains}, {a.scene_id for a in mains}
        return (i.instance_id for i in rank_main(main_pool(self.ds, s.cfg), s.cfg, counts, *seen, counterbalance,
                                                 answered, default_tiebreak(s.participant_id)))

    def item_screen(self, s: "ParticipantSession", c: Any, a: participants.Assignment, progress: str,
                    fraction: float) -> ItemScreen:
        item = item_for(self.ds, a.kind, a.instance_id, s.cfg.attention_kind)
        problem = self.ds.image_problem(item.image)
        if problem is not None:
            raise ItemUnavailable(a, f"{self.ds.root / item.image}: {problem}")
        view = view_id_for(a.participant_id, a.kind, a.attempt, a.position)
        restored = restore([GridEvent(*e) for e in view_events(c, a.participant_id, view)])
        drawing = picture_key(study_secret(c, s.study.study_id), a.participant_id, a.position) \
            if is_picture_check(item) else None
        return ItemScreen(view, a.kind, item, progress, fraction, restored.next_seq, restored, drawing)

    def feedback(self, s: "ParticipantSession", c: Any, p: participants.Participant, a: participants.Assignment,
                 outcome: RoundOutcome, of: int) -> PracticeFeedback:
        item = item_for(self.ds, a.kind, a.instance_id)
        row = results.result_of(c, s.study.run_id, p.participant_id, a.instance_id, "practice", a.attempt, False)
        parsed = json.loads(row["parsed"]) if row else {"clicks": [], "count": None}
        clicked = [tuple(x) for x in parsed.get("clicks") or []]
        gold = item.gold_cells()
        lines = [FeedbackLine(g, True, g in clicked) for g in gold]
        if item.mode != "count":
            lines += [FeedbackLine(x, False, True) for x in clicked if x not in gold]
        return PracticeFeedback(
            view_id_for(p.participant_id, a.kind, a.attempt, a.position), item, item.instruction,
            bool(row and row["passed"]), clicked if item.mode != "count" else [], parsed.get("count"), gold,
            None if item.mode == "click" else item.key.gold_count, lines, outcome, a.position + 1, of)


# --------------------------------------------------------------------------- studies and participants

def create_study(store: Store, ds: Dataset, cfg: StudyConfig, ids: Ids | None = None,
                 clock: Clock = system_clock) -> Study:
    """Check the configuration, plan practice rounds (fresh scenes per attempt) and store the study."""
    if cfg.benchmark != "rose":  # an SGP study: instrument.episode_session.create_sgp_study
        raise StudyError(f"benchmark: create_study makes ROSE studies, not {cfg.benchmark!r} ones")
    problems = cfg.problems()
    if problems:
        raise StudyError("; ".join(problems))
    derive_pool(ds, cfg)
    # A study still carrying the template's markers (or an empty required fact) is stored as a draft: closed
    # until its texts are filled in (`study.set_active` refuses to open it, naming each).
    study = Study((ids or RandomIds()).study_id(), cfg.name.strip(), ds.dataset_hash, cfg, clock(),
                  not opening_problems(cfg))
    with store.write() as c:
        studies.insert_study(c, study)
        store_texts(c, study.study_id, cfg, 1, study.created_at)
    return study


def derive_pool(ds: Dataset, cfg: StudyConfig) -> None:
    """Fill what creation derives from the settings: practice rounds (planned as without a sample, so a sample
    never changes practice), then the item sample from the pool practice leaves (`sample_ids` already set, as by a
    clone on the same dataset: kept, and checked). StudyError naming the key when the design is impossible."""
    base = without_sample(cfg)
    base.practice_rounds, base.practice_scene_ids = [], []
    cfg.practice_rounds, cfg.practice_scene_ids = plan_practice(ds, base, random.Random(f"practice:{cfg.seed}"))
    base.practice_scene_ids = cfg.practice_scene_ids
    pool = main_pool(ds, base)
    if not pool:
        raise StudyError("the chosen split, subsets and templates select no instance")
    if cfg.sample_ids:
        inside = {i.instance_id for i in pool}
        lost = [i for i in cfg.sample_ids if i not in inside]
        if lost:
            raise StudyError(f"sample: {len(lost)} stored instance ids are not in this dataset's pool (or sit on "
                             f"practice scenes): {', '.join(lost[:10])}")
        design_check(cfg, len(cfg.sample_ids))
    else:
        cfg.sample_ids = choose_items(ds, cfg, pool)


def join(store: Store, study: Study, external_id: str, source: str, prolific_study_id: str | None = None,
         prolific_session_id: str | None = None, ids: Ids | None = None,
         clock: Clock = system_clock, origin: Origin = "participant") -> participants.Participant:
    """The participant for (study, external id), created on the first request and stored at once. `origin`
    marks previews and simulations (never counted); an existing participant keeps the origin it was stored with."""
    external_id = external_id.strip()
    if not external_id or len(external_id) > 128:
        raise StudyError("participant id: expected 1-128 characters")
    prolific_study_id, prolific_session_id = _link_id(prolific_study_id), _link_id(prolific_session_id)
    t = clock()
    with storage(store), store.write(concurrent=True) as c:
        p = participants.find_participant(c, study.study_id, external_id)
        if p is None:
            participants.lock_joins(c, study.study_id)  # the arrival rank is a count: one new participant at a time
            p = participants.find_participant(c, study.study_id, external_id)  # stored meanwhile by another process?
        if p is None:
            if origin == "participant":  # a new visitor; one already stored (a preview) keeps its way in
                admit(study.config, source, external_id)
            pid = (ids or RandomIds()).participant_id()
            participants.insert_participant(c, pid, study.study_id, external_id, source, prolific_study_id,
                                  prolific_session_id, t, origin)
            return participants.get_participant(c, pid)
        stored, given = (p.source, p.prolific_study_id, p.prolific_session_id), (source, prolific_study_id,
                                                                                 prolific_session_id)
        if stored == given:
            participants.touch(c, p.participant_id, t)
            return participants.get_participant(c, p.participant_id)
        # Someone with this id arrived another way: they never take over the stored progress (recorded, refused).
        participants.record_flag(c, study.study_id, p.participant_id, external_id, "identity_mismatch",
                       json.dumps({"stored": dict(zip(("source", "study_id", "session_id"), stored)),
                                   "given": dict(zip(("source", "study_id", "session_id"), given))}), t)
    raise IdentityMismatch("this participant id is already taking part in the study under another session. "
                           "Please open the study again from the link you were given; if this keeps happening, "
                           "contact the researcher")


class NeedsProlificId(StudyError):
    """The study admits only visitors with a Prolific id (`StudyConfig.prolific_id_required`)."""


PROLIFIC_PID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def admit(cfg: StudyConfig, source: str, external_id: str) -> None:
    """NeedsProlificId when a study that needs a Prolific id is visited without one (an anonymous `?pid=` link, or
    a PROLIFIC_PID that is not one: letters, digits, - and _, at most 64). Previews, simulations and tests never
    come through here."""
    if not cfg.prolific_id_required:
        return
    if source != "prolific" or not PROLIFIC_PID.fullmatch(external_id.strip()):
        raise NeedsProlificId("this study is open only through its Prolific link")


def _link_id(v: str | None) -> str | None:
    """A Prolific STUDY_ID / SESSION_ID from the link: None when absent, refused when absurd."""
    v = (v or "").strip()
    if len(v) > 128:
        raise StudyError("study or session id: expected at most 128 characters")
    return v or None


# --------------------------------------------------------------------------- the session

class ParticipantSession:
    """One participant of one study: `screen()` says what to show; the other methods store what they did."""

    def __init__(self, store: Store, ds: Any, study: Study, participant_id: str, clock: Clock = system_clock,
                 client: Client | None = None, kind: ItemKind | None = None):
        """`client`: the tab this session serves. With it, one tab at a time drives the participant, and held
        items of closed tabs go back to the pool; without it (scripts, tests of the flow) neither is checked.
        `kind`: the study's kind of item (`instrument.kinds.kind_for`); ROSE's one-shot items by default."""
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


def open_session(store: Store, ds: Dataset, study_id: str, participant_id: str,
                 clock: Clock = system_clock, client: Client | None = None) -> ParticipantSession | None:
    """A ROSE study's participant session (any study's, with its kind: `instrument.kinds.open_participant_session`)."""
    with storage(store), store.connect() as c:
        study = load_study(c, study_id)
    return None if study is None else ParticipantSession(store, ds, study, participant_id, clock, client)
