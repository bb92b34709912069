"""A simulated pilot with known truth: synthetic participants driven through the real participant session.

Why: an experimenter dry-runs a study before paying for it (does the design fill, how long does it take, do
the exclusion rules catch the careless), and the analysis can be checked against a truth it does not know.
Every simulated participant joins with origin 'simulated' (never counted; `clear_simulated` deletes exactly
them) and goes through `ParticipantSession` exactly as a browser does: consent, instructions, practice with
feedback, main and attention items, the end; each answer is the click grid's own messages (`record_events`
while answering, `submit` on DONE), parsed, scored and timed by the server. The session's clock is a
`FakeClock` moved by the simulated durations, so server-measured times are the simulated ones. The error model
comes from a TRUTH.toml (`load_truth`): accuracy and speed per template and subset, and the shares of
too-fast, attention-failing and dropping-out participants. Deterministic: one seed gives the same stored rows.
"""
from __future__ import annotations

import heapq
import math
import random
import statistics
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import SUBSETS, TEMPLATES
from ..benchmarks.items import OneShotAnswer
from ..storage import episodes, events, participants, responses
from ..storage.connection import Store
from ..storage.schema import bump_verdicts_generation
from .config import Study, StudyError
from .device import report_device
from .ids import FakeClock, stable_hash
from .joining import join
from .screens import Consent, End, Instructions, ItemScreen, OtherTab, PracticeFeedback, Questionnaire, Wait
from .session import ParticipantSession
from .storage_errors import storage

Role = Literal["attentive", "too_fast", "attention_failure", "drop_out"]
ROLES: tuple[Role, ...] = ("attentive", "too_fast", "attention_failure", "drop_out")
SOURCE = "anonymous"          # how a simulated participant "arrived" (no Prolific ids to invent)
MAX_PARTICIPANTS = 100_000
DEVICE = {"viewport": [1440, 900], "dpr": 2.0, "touch_points": 0, "coarse_pointer": False}   # a desktop browser


class TruthError(ValueError):
    """A TRUTH.toml that cannot be used: the message names the file and the key."""


# --------------------------------------------------------------------------- the truth file

@dataclass(frozen=True)
class CellTruth:
    """How attentive participants answer one template (and subset): P(right) and seconds per item (log-normal:
    median and the spread of the log)."""

    accuracy: float
    median_s: float
    sigma: float


@dataclass(frozen=True)
class Truth:
    """The known error model of a simulated pilot (docs/running-a-study.md, "Dry run", documents every key)."""

    accuracy: float = 0.85
    median_s: float = 8.0
    sigma: float = 0.4
    too_fast: float = 0.0
    too_fast_median_s: float = 0.8
    too_fast_accuracy: float = 0.2
    attention_failure: float = 0.0
    drop_out: float = 0.0
    practice_accuracy: float = 1.0
    arrival_every_s: float = 60.0
    reading_s: float = 30.0
    templates: dict[str, dict[str, Any]] = field(default_factory=dict)   # template -> its keys (and "subsets")

    def cell(self, template: str, subset: str) -> CellTruth:
        """The attentive model of one template and subset: the subset's keys over the template's over the
        file's top level."""
        t = self.templates.get(template, {})
        s = t.get("subsets", {}).get(subset, {})
        get = lambda k: s.get(k, t.get(k, getattr(self, k)))  # noqa: E731
        return CellTruth(get("accuracy"), get("median_s"), get("sigma"))


_SHARES = ("too_fast", "attention_failure", "drop_out")
_PROBS = ("accuracy", "too_fast", "too_fast_accuracy", "attention_failure", "drop_out", "practice_accuracy")
_POSITIVE = ("median_s", "too_fast_median_s", "arrival_every_s", "reading_s")
_NONNEG = ("sigma",)
_CELL_KEYS = ("accuracy", "median_s", "sigma")


def _number(where: str, key: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise TruthError(f"{where}: {key}: expected a number, got {v!r}")
    v = float(v)
    if key in _PROBS and not 0 <= v <= 1:
        raise TruthError(f"{where}: {key}: expected a share or probability in 0..1, got {v:g}")
    if key in _POSITIVE and not v > 0:
        raise TruthError(f"{where}: {key}: expected seconds > 0, got {v:g}")
    if key in _NONNEG and not 0 <= v <= 5:
        raise TruthError(f"{where}: {key}: expected a spread of the log in 0..5, got {v:g}")
    return v


def _table(where: str, key: str, v: Any) -> dict:
    if not isinstance(v, dict):
        raise TruthError(f"{where}: {key}: expected a table, got {v!r}")
    return v


def _cell_keys(where: str, prefix: str, d: dict, allow_subsets: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        name = f"{prefix}.{k}"
        if k == "subsets" and allow_subsets:
            out["subsets"] = {}
            for s, sv in _table(where, name, v).items():
                if s not in SUBSETS:
                    raise TruthError(f"{where}: {name}.{s}: unknown subset (expected one of {', '.join(SUBSETS)})")
                out["subsets"][s] = _cell_keys(where, f"{name}.{s}", _table(where, f"{name}.{s}", sv), False)
        elif k in _CELL_KEYS:
            out[k] = _number(where, name, v)
        else:
            keys = _CELL_KEYS + (("subsets",) if allow_subsets else ())
            raise TruthError(f"{where}: {name}: unknown key (expected one of {', '.join(keys)})")
    return out


def parse_truth(data: dict[str, Any], where: str = "TRUTH.toml") -> Truth:
    """A Truth from a parsed TOML table; an unknown key, a wrong type or an impossible value raises one
    TruthError naming `where` and the key."""
    known = {f for f in Truth.__dataclass_fields__}
    values: dict[str, Any] = {}
    for k, v in data.items():
        if k not in known:
            raise TruthError(f"{where}: {k}: unknown key (expected one of {', '.join(sorted(known))})")
        if k == "templates":
            values[k] = {}
            for t, tv in _table(where, k, v).items():
                if t not in TEMPLATES:
                    raise TruthError(f"{where}: templates.{t}: unknown template "
                                     f"(expected one of {', '.join(TEMPLATES)})")
                values[k][t] = _cell_keys(where, f"templates.{t}", _table(where, f"templates.{t}", tv), True)
        else:
            values[k] = _number(where, k, v)
    truth = Truth(**values)
    shares = sum(getattr(truth, k) for k in _SHARES)
    if shares > 1 + 1e-9:
        raise TruthError(f"{where}: too_fast + attention_failure + drop_out: the shares add up to {shares:g}, "
                         "more than 1")
    return truth


def load_truth(path: str | Path) -> Truth:
    """Read and check a TRUTH.toml (a syntax error names the file, line and column)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TruthError(f"{path}: cannot read it: {e}") from e
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TruthError(f"{path}: not valid TOML: {e}") from e
    return parse_truth(data, str(path))


def check_against(truth: Truth, study: Study, where: str = "TRUTH.toml") -> None:
    """The truth must fit the study: its templates and subsets, and attention failures need attention checks."""
    cfg = study.config
    if cfg.benchmark != "rose":
        raise TruthError(f"study {study.study_id} is an SGP study: `study simulate` drives ROSE studies")
    for t, tv in truth.templates.items():
        if t not in cfg.templates:
            raise TruthError(f"{where}: templates.{t}: study {study.study_id} does not use this template "
                             f"(it uses {', '.join(cfg.templates)})")
        for s in tv.get("subsets", {}):
            if s not in cfg.subsets:
                raise TruthError(f"{where}: templates.{t}.subsets.{s}: study {study.study_id} does not use this "
                                 f"subset (it uses {', '.join(cfg.subsets)})")
    if truth.attention_failure and not cfg.attention_checks:
        raise TruthError(f"{where}: attention_failure: study {study.study_id} has no attention checks to fail "
                         f"(attention_every = {cfg.attention_every}, items_per_participant = "
                         f"{cfg.items_per_participant})")


# --------------------------------------------------------------------------- roles and answers

def apportion(n: int, truth: Truth) -> list[Role]:
    """Exactly how many of n participants take each role (largest remainder), in a fixed order."""
    shares = {r: getattr(truth, r) for r in _SHARES}
    shares["attentive"] = max(0.0, 1 - sum(shares.values()))
    exact = {r: n * shares[r] for r in ROLES}
    counts = {r: int(math.floor(exact[r])) for r in ROLES}
    for r in sorted(ROLES, key=lambda r: (-(exact[r] - counts[r]), ROLES.index(r)))[:n - sum(counts.values())]:
        counts[r] += 1
    return [r for r in ROLES for _ in range(counts[r])]


def right_answer(item) -> tuple[list[tuple[int, int]], int | None]:
    """The gold answer as the grid would send it: the cells (not for a count) and the number (not for DONE)."""
    k = item.key
    return (sorted(k.gold_cells) if item.mode != "count" else [],
            k.gold_count if item.mode != "click" else None)


def wrong_answer(item, rng: random.Random) -> tuple[list[tuple[int, int]], int | None]:
    """A realistic error for the item's output kind: a count off by one; a missed or an extra click (and for
    SUBMIT(n) sometimes the number off by one instead). Checked wrong with the benchmark's scorer."""
    cells, count = right_answer(item)
    k = item.key
    others = [(r, c) for r in range(1, k.rows + 1) for c in range(1, k.cols + 1) if (r, c) not in k.gold_cells]
    tries = []
    if item.mode == "count":
        tries = [(cells, count + 1)] + ([(cells, count - 1)] if count > 0 else [])
        rng.shuffle(tries)
    else:
        if cells:
            miss = cells[:]
            miss.pop(rng.randrange(len(miss)))
            tries.append((miss, None if count is None else max(0, count - 1)))
        if others:
            extra = sorted(cells + [rng.choice(others)])
            tries.append((extra, None if count is None else count + 1))
        rng.shuffle(tries)
        if item.mode == "click_submit":
            tries.insert(rng.randrange(len(tries) + 1), (cells, count + 1))
    for sel, n in tries:
        if not item.result(OneShotAnswer(tuple(sel), n)).passed:
            return sel, n
    raise StudyError(f"{item.item_id}: no wrong answer of the simulator's kinds exists for this item")


def _ms_events(cells, count, start_seq: int, duration_ms: float, first_ms: float) -> list[dict]:
    """The grid's events for an answer given over `duration_ms`: the clicks (then the number) evenly spread
    from the first action to just before DONE, with the page's own clock (ms since shown, active ms)."""
    actions = [("click", r, c, None) for r, c in cells] + ([("count_input", None, None, str(count))]
                                                           if count is not None else [])
    last = max(first_ms, 0.95 * duration_ms)
    step = (last - first_ms) / max(1, len(actions) - 1)
    out = []
    for i, (typ, r, c, value) in enumerate(actions):
        t = round(first_ms + i * step, 1)
        e = {"seq": start_seq + i, "type": typ, "t": t, "active_ms": t}
        if r is not None:
            e.update(r=r, c=c)
        if value is not None:
            e["value"] = value
        out.append(e)
    return out


# --------------------------------------------------------------------------- one participant

@dataclass
class SimulatedParticipant:
    """One synthetic participant and what became of them: the simulator's ground truth."""

    index: int
    external_id: str
    participant_id: str
    role: Role
    drop_after: int | None                # main items answered before leaving (drop_out only)
    end_reason: str | None = None         # None: left without finishing (dropped out)
    main_answered: int = 0
    main_right: int = 0
    attention_answered: int = 0
    attention_failed: int = 0
    practice_answered: int = 0
    waits: int = 0                        # "please wait" screens (every remaining item held by others)
    refused: int = 0                      # answers the session refused: past the time limit
    item_seconds: list[float] = field(default_factory=list, repr=False)   # main items, server-timed

    @property
    def median_item_s(self) -> float | None:
        """Median server time per main item (what the too-fast rule reads); None without main answers."""
        return statistics.median(self.item_seconds) if self.item_seconds else None

    @property
    def should_be_excluded(self) -> bool:
        """What an analysis must exclude: a too-fast participant with main answers, or one who failed an
        attention check (the simulated careless; drop-outs are incomplete, not careless)."""
        return (self.role == "too_fast" and self.main_answered > 0) or self.attention_failed > 0


class _Ids:
    """join()'s ids for simulated participant `index`: one id per (study, seed, index), so a seed gives the
    same rows."""

    def __init__(self, study_id: str, seed: int, index: int):
        self.pid = "sim" + stable_hash(study_id, "simulated", str(seed), str(index))[:12]

    def study_id(self) -> str:            # pragma: no cover - join never creates studies
        raise NotImplementedError

    def participant_id(self) -> str:
        return self.pid


@dataclass
class _Pending:
    """An item being answered: the answer chosen, the events still to send, its timing (page ms)."""

    screen: ItemScreen
    cells: list
    count: int | None
    early: list[dict]       # sent while clicking
    rest: list[dict]        # sent with DONE
    first_ms: float
    duration_ms: float


class _Actor:
    """Drives one session a step at a time; each step returns the simulated seconds until the next, or None
    once the participant is done (finished, or gone)."""

    def __init__(self, sim: SimulatedParticipant, session: ParticipantSession | None, truth: Truth,
                 rng: random.Random, clock: FakeClock):
        self.p, self.session, self.truth, self.rng, self.clock = sim, session, truth, rng, clock
        self.pending: _Pending | None = None  # the item being answered
        self.shown_at = 0.0                   # when the item being answered was put on the screen (server clock)

    def _duration(self, template: str, subset: str) -> float:
        if self.p.role == "too_fast":
            median, sigma = self.truth.too_fast_median_s, self.truth.cell(template, subset).sigma
        else:
            c = self.truth.cell(template, subset)
            median, sigma = c.median_s, c.sigma
        return median * math.exp(self.rng.gauss(0.0, sigma))

    def _right(self, screen: ItemScreen) -> bool:
        item = screen.item
        if screen.kind == "attention":
            return self.p.role != "attention_failure"
        if screen.kind == "practice":
            return self.rng.random() < self.truth.practice_accuracy
        acc = self.truth.too_fast_accuracy if self.p.role == "too_fast" else self.truth.cell(
            item.template, item.subset).accuracy
        return self.rng.random() < acc

    def step(self) -> float | None:
        """One thing the participant does now; the seconds until the next, or None once they are done. Only
        the caller moves the shared clock (participants' steps interleave in time order)."""
        assert self.session is not None
        if self.pending is not None:
            return self._send() if self.pending.early else self._submit()
        s = self.session.screen()
        if isinstance(s, End):
            self.p.end_reason = s.reason
            return None
        if isinstance(s, Consent):
            # the page's device check before consent: the window the simulated answers carry
            report_device(self.session.store, self.session.cfg, self.p.participant_id, DEVICE, clock=self.clock)
            self.session.consent()
            return self.truth.reading_s * (0.5 + self.rng.random())
        if isinstance(s, Instructions):
            self.session.finish_instructions()
            return self.truth.reading_s * (1 + self.rng.random())
        if isinstance(s, PracticeFeedback):
            self.session.acknowledge_feedback(s.view_id)
            return 2.0 + 3.0 * self.rng.random()
        if isinstance(s, Questionnaire):   # skipped, as the page's "Skip the questions" does
            self.session.answer_questionnaire({})
            return 5.0 + 5.0 * self.rng.random()
        if isinstance(s, Wait):
            self.p.waits += 1
            return 30.0
        if isinstance(s, OtherTab):  # cannot happen without a client: a bug, not a participant's doing
            raise StudyError(f"simulated participant {self.p.external_id}: another tab drives it")
        assert isinstance(s, ItemScreen), s
        if s.kind == "main" and self.p.role == "drop_out" and self.p.main_answered >= (self.p.drop_after or 0):
            return None   # leaves the item on the screen: it stays held until the study's silence limit
        return self._start(s)

    def _start(self, s: ItemScreen) -> float:
        """The item is on the screen (assigned, the server's clock running): choose the answer and its timing.
        Its events go in two messages, as the grid sends them: the first half while clicking (`_send`), the
        rest with DONE (`_submit`)."""
        item = s.item
        self.shown_at = self.clock()
        cells, count = right_answer(item) if self._right(s) else wrong_answer(item, self.rng)
        # an attention check is timed like the study's first template's items
        duration_ms = 1000.0 * self._duration(self.session.cfg.templates[0] if s.kind == "attention"
                                              else item.template, item.subset)
        first_ms = duration_ms * (0.25 + 0.25 * self.rng.random())
        evs = _ms_events(cells, count, s.ack_seq, duration_ms, first_ms)
        half = len(evs) // 2
        self.pending = _Pending(s, cells, count, evs[:half], evs[half:], first_ms, duration_ms)
        return (evs[half - 1]["t"] if half else duration_ms) / 1000.0

    def _send(self) -> float:
        """The grid's state message after the first half of the clicks (stored by `record_events`)."""
        p = self.pending
        sent, p.early = p.early, []
        self.session.record_events(p.screen, {
            "view_id": p.screen.view_id, "events": sent,
            "selection": [[e["r"], e["c"]] for e in sent if e["type"] == "click"],
            "count": next((e["value"] for e in sent if e["type"] == "count_input"), None),
            "active_ms": sent[-1]["t"], "first_action_ms": p.first_ms})
        return (p.duration_ms - sent[-1]["t"]) / 1000.0

    def _submit(self) -> float:
        p, self.pending = self.pending, None
        s, count = p.screen, p.count
        total_ms = 1000.0 * (self.clock() - self.shown_at)
        rec = self.session.submit(s, {
            "view_id": s.view_id, "selection": [list(c) for c in p.cells],
            "count": None if count is None else str(count), "events": p.rest,
            "first_action_ms": p.first_ms if p.rest or p.cells or count is not None else None,
            "active_ms": total_ms, "client_total_ms": total_ms, "viewport": DEVICE["viewport"], "dpr": DEVICE["dpr"],
            "focus_lost": False})
        if rec.refused in ("late", "released"):
            # past the study's time limit (or silent past its release limit): refused and recorded, as for a
            # browser; the next screen says how it ended
            self.p.refused += 1
            return 1.0
        if rec.duplicate:
            raise StudyError(f"simulated participant {self.p.external_id}: the session refused the answer to "
                             f"{s.item.item_id} ({rec.refused})")
        if s.kind == "main":
            self.p.main_answered += 1
            self.p.main_right += bool(rec.result and rec.result.passed)
            self.p.item_seconds.append(total_ms / 1000.0)
        elif s.kind == "attention":
            self.p.attention_answered += 1
            self.p.attention_failed += not (rec.result and rec.result.passed)
        else:
            self.p.practice_answered += 1
        return 0.5 + self.rng.random()   # the next item is asked for at once



@dataclass(frozen=True)
class Simulation:
    """What `simulate` did: the participants with their ground truth, and the truth it drew them from."""

    study_id: str
    seed: int
    truth: Truth
    participants: list[SimulatedParticipant]
    simulated_seconds: float

    def summary(self) -> dict[str, Any]:
        ps = self.participants
        ends: dict[str, int] = {}
        for p in ps:
            ends[p.end_reason or "left (dropped out)"] = ends.get(p.end_reason or "left (dropped out)", 0) + 1
        roles = {r: sum(p.role == r for p in ps) for r in ROLES}
        main = sum(p.main_answered for p in ps)
        return {"study_id": self.study_id, "seed": self.seed, "participants": len(ps), "roles": roles,
                "end_reasons": ends, "main_answers": main, "main_right": sum(p.main_right for p in ps),
                "attention_answers": sum(p.attention_answered for p in ps),
                "attention_failed": sum(p.attention_failed for p in ps),
                "practice_answers": sum(p.practice_answered for p in ps),
                "should_be_excluded": [p.external_id for p in ps if p.should_be_excluded],
                "simulated_hours": round(self.simulated_seconds / 3600, 2)}


def simulate(store: Store, ds: Dataset, study: Study, truth: Truth, n: int, seed: int) -> Simulation:
    """Drive `n` simulated participants through the study's real session, interleaved as they would arrive
    (seeded arrivals, one shared server clock starting at the study's creation), and return the ground truth."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_PARTICIPANTS:
        raise StudyError(f"participants: expected a whole number 1..{MAX_PARTICIPANTS}, got {n!r}")
    check_against(truth, study)
    if ds.dataset_hash != study.dataset_hash:
        raise StudyError(f"study {study.study_id} was made on dataset build {study.dataset_hash}, not on "
                         f"{ds.dataset_hash}: pass that build with --dataset")
    with storage(store), store.connect() as c:
        origins = participants.origin_counts(c, study.study_id)
        taken = [i for i in range(n) if participants.find_participant(c, study.study_id, _external(seed, i))]
    if origins.get("participant"):
        raise StudyError(f"study {study.study_id} has {origins['participant']} real participants: simulated ones "
                         "would take their items' places. Dry-run a clone of it instead")
    if taken:
        raise StudyError(f"study {study.study_id} already has simulated participants of seed {seed} "
                         f"({_external(seed, taken[0])}…): clear them first (study simulate {study.study_id} "
                         "--clear) or use another seed")
    master = random.Random(f"simulate:{study.study_id}:{seed}")
    roles = apportion(n, truth)
    master.shuffle(roles)
    clock = FakeClock(study.created_at)
    start = study.created_at
    arrivals, t = [], start
    for i in range(n):
        t += master.expovariate(1 / truth.arrival_every_s)
        arrivals.append(t)
    actors: list[_Actor] = []
    queue: list[tuple[float, int]] = []
    for i, role in enumerate(roles):
        rng = random.Random(f"simulate:{study.study_id}:{seed}:{i}")
        drop = rng.randint(1, max(1, study.config.items_per_participant - 1)) if role == "drop_out" else None
        ext = _external(seed, i)
        sim = SimulatedParticipant(i, ext, _Ids(study.study_id, seed, i).pid, role, drop)
        actors.append(_Actor(sim, None, truth, rng, clock))   # the session is made when they arrive
        heapq.heappush(queue, (arrivals[i], i))
    while queue:
        when, i = heapq.heappop(queue)
        clock.advance(max(0.0, when - clock()))
        actor = actors[i]
        if actor.session is None:
            p = join(store, study, actor.p.external_id, SOURCE, ids=_Ids(study.study_id, seed, i), clock=clock,
                     origin="simulated")
            actor.session = ParticipantSession(store, ds, study, p.participant_id, clock=clock)
        wait = actor.step()
        if wait is not None:
            heapq.heappush(queue, (clock() + wait, i))
    return Simulation(study.study_id, seed, truth, [a.p for a in actors], clock() - start)


def _external(seed: int, i: int) -> str:
    return f"sim-{seed}-{i + 1:04d}"


# --------------------------------------------------------------------------- clearing a dry run

def clear_simulated(store: Store, study: Study) -> dict[str, int]:
    """Delete exactly the study's simulated participants and every row of theirs (responses, events, SGP moves
    and results, assignments, flags, the participants), in one transaction; returns rows deleted per table.
    The verdicts generation is bumped so no cached frame keeps serving the deleted answers."""
    with storage(store), store.write() as c:
        out = {"responses": responses.delete_of_origin(c, study.run_id, study.study_id, "simulated"),
               "events": events.delete_of_origin(c, study.study_id, "simulated"),
               **episodes.delete_of_origin(c, study.run_id, study.study_id, "simulated"),
               **participants.delete_of_origin(c, study.study_id, "simulated")}
        if out["responses"]:
            bump_verdicts_generation(c)
    return out
