"""A participant's session in an episode study (iVISPAR's sliding geom puzzle): what to show, what they did.

The intro, the time limit, practice feedback still to acknowledge and the end page are the ROSE session's
(`ParticipantSession`: consent, instructions, `acknowledge_feedback`); what differs is the item. An item is an
episode: the participant moves geoms one move at a time; every move is the command string a model writes
(`move red cube up`), applied by the benchmark's engine (the same rules, the same outcome classes, the same
step cap as the models by default), stored at once as one `episode_steps` row (idempotent by seq, timed on the
server) and the board shown again. The move that reaches the goal or the cap also marks the assignment
answered and stores the episode's result, in the same transaction. A reload rebuilds the board from the
stored moves, so the participant resumes exactly where they were.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Literal, Sequence, Union

from ..benchmarks.sgp.actions import allowed_words, split_moves
from ..benchmarks.sgp.dataset import SgpDataset
from ..benchmarks.sgp.item import SgpItem, sgp_item
from ..storage.connection import Store
from ..storage import episodes
from ..storage import participants, studies
from .config import Study, StudyConfig, StudyError, load_study
from .ids import Clock, Ids, RandomIds, stable_hash, system_clock
from ..benchmarks.items import Move, StepOutcome
from .policy import best_first, default_tiebreak, shown_at
from .session import ClaimBusy, Consent, End, Instructions, ParticipantSession, RoundOutcome, view_id_for

MoveInput = Literal["click", "keyboard", "typed"]
MAX_COMMAND_CHARS = 200
MAX_SUBMISSION_CHARS = 2000               # sgp_several_moves: one typed line of several comma-separated moves
MAX_MOVES_PER_MESSAGE = 50
MAX_MS = 7 * 24 * 3600 * 1000.0


# --------------------------------------------------------------------------- screens

@dataclass(frozen=True)
class EpisodeScreen:
    """An episode on screen: the board after the stored moves (`state`), and how many moves were stored."""

    view_id: str
    kind: str
    item: SgpItem = field(repr=False)
    progress: str
    progress_fraction: float
    state: dict[str, Any]
    steps: tuple[episodes.StepRow, ...]
    ack_seq: int                          # moves stored: the browser's next move has this seq
    active_ms: float
    first_action_ms: float | None
    can_give_up: bool                     # no step cap: the participant may end an episode they cannot solve

    @property
    def last_command(self) -> str | None:
        return self.steps[-1].command if self.steps else None


@dataclass(frozen=True)
class EpisodeFeedback:
    """A practice episode's feedback: solved or not, in how many moves against the shortest, what the moves did."""

    view_id: str
    item: SgpItem = field(repr=False)
    solved: bool
    given_up: bool
    moves: int
    shortest: int
    final_state: dict[str, Any]
    outcomes: dict[str, int]
    outcome: RoundOutcome
    position: int
    of: int


EpisodeStudyScreen = Union[Consent, Instructions, EpisodeFeedback, EpisodeScreen, End]


@dataclass(frozen=True)
class MoveReport:
    stored: int                           # moves stored by this call
    ended: bool                           # the episode ended (solved, cap, given up) with this call
    refused: tuple[str, ...] = ()         # sgp_several_moves: typed moves after the goal or the cap, not made
    end: str | None = None                # why the episode ended: solved, step_cap, given_up

    @property
    def refused_note(self) -> str | None:
        """What the participant is told about moves typed after the puzzle ended (None: there were none)."""
        if not self.refused:
            return None
        why = "was solved" if self.end == "solved" else "reached its move limit"
        return (f"The puzzle {why} before your last {len(self.refused)} typed "
                f"{'move' if len(self.refused) == 1 else 'moves'}, so {'it was' if len(self.refused) == 1 else 'they were'}"
                f" not made: {', '.join(self.refused)}.")


# --------------------------------------------------------------------------- messages from the browser

@dataclass(frozen=True)
class BoardMove:
    seq: int
    text: str
    input: MoveInput
    t: float | None
    active_ms: float | None
    click: tuple[str, str, float, float] | None = None  # a board click: (piece's cell, cell clicked, x, y in px)


@dataclass(frozen=True)
class BoardMessage:
    view_id: str
    moves: tuple[BoardMove, ...]
    give_up: int | None                   # the seq at which the participant gave up (no-cap studies only)


def _err(what: str) -> StudyError:
    return StudyError(f"malformed message from the browser: {what}")


def _ms(v: Any, what: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= MAX_MS:
        raise _err(f"{what}: expected a number of milliseconds, got {v!r}")
    return float(v)


def _seq(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 100_000:
        raise _err(f"{what}: expected a whole number 0..100000, got {v!r}")
    return v


def _click(v: Any, what: str) -> tuple[str, str, float, float] | None:
    """A move made on the board image: the chosen piece's cell, the cell clicked and the click in image pixels
    (checked against the board by `SgpItem.click_move` before the move is applied)."""
    if v is None:
        return None
    if not isinstance(v, dict) or set(v) != {"from", "to", "x", "y"}:
        raise _err(f"{what}: expected an object with from, to, x and y")
    cells = [v["from"], v["to"]]
    if any(not isinstance(c, str) or not 2 <= len(c) <= 3 for c in cells):
        raise _err(f"{what}: from and to: expected cell names such as B3")
    xy = [v["x"], v["y"]]
    if any(isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n) or not 0 <= n <= 10_000
           for n in xy):
        raise _err(f"{what}: x and y: expected image pixels 0..10000")
    return cells[0], cells[1], float(xy[0]), float(xy[1])


def parse_board_message(payload: Any, allowed: Sequence[str], max_chars: int = MAX_COMMAND_CHARS) -> BoardMessage:
    """The board component's state: the moves the server has not acknowledged yet (each a command string, as
    a model would write it, however the participant made it), checked field by field."""
    if not isinstance(payload, dict):
        raise _err(f"expected an object, got {type(payload).__name__}")
    view = payload.get("view_id")
    if not isinstance(view, str) or not 1 <= len(view) <= 64:
        raise _err("view_id: expected 1-64 characters")
    raw = payload.get("moves") or []
    if not isinstance(raw, list) or len(raw) > MAX_MOVES_PER_MESSAGE:
        raise _err(f"moves: expected a list of at most {MAX_MOVES_PER_MESSAGE}")
    moves = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict):
            raise _err(f"moves[{i}]: expected an object")
        text = m.get("text")
        if not isinstance(text, str) or len(text) > max_chars:
            raise _err(f"moves[{i}].text: expected text of at most {max_chars} characters")
        how = m.get("input")
        if how not in allowed:
            raise _err(f"moves[{i}].input: expected one of {', '.join(allowed)}, got {how!r}")
        click = _click(m.get("click"), f"moves[{i}].click")
        if click is not None and how != "click":
            raise _err(f"moves[{i}].click: only a click move has a click")
        moves.append(BoardMove(_seq(m.get("seq"), f"moves[{i}].seq"), text, how, _ms(m.get("t"), f"moves[{i}].t"),
                               _ms(m.get("active_ms"), f"moves[{i}].active_ms"), click))
    seqs = [m.seq for m in moves]
    if seqs != sorted(set(seqs)):
        raise _err("moves: expected increasing sequence numbers")
    give_up = payload.get("give_up")
    return BoardMessage(view, tuple(moves), None if give_up is None else _seq(give_up, "give_up"))


def allowed_inputs(cfg: StudyConfig) -> tuple[str, ...]:
    """Typed studies take typed commands only; the board's buttons also work from the keyboard (accessibility),
    so a click study records keyboard moves too, and a keyboard study clicks."""
    return ("typed",) if cfg.sgp_input == "typed" else ("click", "keyboard")


# --------------------------------------------------------------------------- studies

def sgp_pool(ds: SgpDataset, cfg: StudyConfig) -> list[str]:
    """The episodes a study may assign as main items: the chosen numbers of geoms and c1, practice kept out."""
    practice = set(cfg.practice_scene_ids)
    return [e.episode_id for e in ds.episodes.values()
            if (not cfg.sgp_num_geoms or len(e.geoms) in cfg.sgp_num_geoms)
            and (not cfg.sgp_c1 or e.c1 in cfg.sgp_c1) and e.episode_id not in practice]


def plan_sgp_practice(ds: SgpDataset, cfg: StudyConfig) -> list[list[str]]:
    """Practice rounds on the easiest episodes (fewest geoms, then shortest path), a fresh set per attempt, so a
    retry never replays an episode whose solution was just shown; they are kept out of the main pool."""
    if not cfg.practice_items:
        return []
    need = cfg.practice_items * cfg.practice_max_attempts
    eps = sorted(ds.episodes.values(), key=lambda e: (len(e.geoms), e.c1, stable_hash(str(cfg.seed), e.episode_id)))
    if len(eps) < need + 1:
        raise StudyError(f"practice: need {need} practice episodes ({cfg.practice_items} per round × "
                         f"{cfg.practice_max_attempts} attempts) and a main pool; the dataset has {len(eps)}")
    ids = [e.episode_id for e in eps[:need]]
    return [ids[k * cfg.practice_items:(k + 1) * cfg.practice_items] for k in range(cfg.practice_max_attempts)]


def create_sgp_study(store: Store, ds: SgpDataset, cfg: StudyConfig, ids: Ids | None = None,
                     clock: Clock = system_clock) -> Study:
    """Check the configuration, plan practice episodes and store the study (its dataset hash: the SGP build's)."""
    if cfg.benchmark != "sgp":
        raise StudyError("benchmark: create_sgp_study makes SGP studies (benchmark='sgp')")
    problems = cfg.problems()
    if problems:
        raise StudyError("; ".join(problems))
    cfg.practice_rounds = plan_sgp_practice(ds, cfg)
    cfg.practice_scene_ids = [e for r in cfg.practice_rounds for e in r]
    if not sgp_pool(ds, cfg):
        raise StudyError("the chosen numbers of geoms and c1 select no episode outside the practice set")
    study = Study((ids or RandomIds()).study_id(), cfg.name.strip(), ds.dataset_hash, cfg, clock(), True)
    with store.write() as c:
        studies.insert_study(c, study)
    return study


def rank_episodes(pool: Sequence[str], ds: SgpDataset, cfg: StudyConfig, counts: dict[str, int], seen: set[str],
                  counterbalance: int, position: int, tiebreak: Callable[[str], str]) -> Iterator[str]:
    """Eligible episodes, best first: least assigned, never at the target. Counterbalanced: the shortest path
    length c1 wanted at each position rotates with the participant's arrival rank (those episodes first), so
    difficulty order differs across participants. Pure: counts, what they saw and the tie-break are passed in."""
    eligible = [e for e in pool if counts.get(e, 0) < cfg.target_per_instance and e not in seen]

    def key(e: str) -> tuple[int, str]:
        return counts.get(e, 0), tiebreak(e)

    if cfg.ordering == "counterbalanced" and eligible:
        levels = sorted({ds.episodes[e].c1 for e in pool})
        want = levels[(counterbalance + position) % len(levels)]
        yield from best_first([e for e in eligible if ds.episodes[e].c1 == want], key)
        yield from best_first([e for e in eligible if ds.episodes[e].c1 != want], key)
        return
    yield from best_first(eligible, key)


def pick_episode(pool: Sequence[str], ds: SgpDataset, cfg: StudyConfig, counts: dict[str, int], seen: set[str],
                 counterbalance: int, position: int, tiebreak: Callable[[str], str]) -> str | None:
    """The best episode of `rank_episodes`, or None when none is eligible."""
    return next(rank_episodes(pool, ds, cfg, counts, seen, counterbalance, position, tiebreak), None)


def sgp_progress(cfg: StudyConfig, answered: int) -> str:
    return f"Puzzle {min(answered + 1, cfg.items_per_participant)} of {cfg.items_per_participant}"


# --------------------------------------------------------------------------- the session

class EpisodeSession(ParticipantSession):
    """`ParticipantSession` with episodes as items: the intro, time limit and feedback acknowledgement are
    inherited; practice, main assignment, feedback and the round's outcome are the episode's."""

    def __init__(self, store: Store, ds: SgpDataset, study: Study, participant_id: str,
                 clock: Clock = system_clock):
        if study.config.benchmark != "sgp":
            raise StudyError(f"study {study.study_id} is not an SGP study")
        super().__init__(store, ds, study, participant_id, clock)  # type: ignore[arg-type]
        self.sgp: SgpDataset = ds

    def item(self, episode_id: str) -> SgpItem:
        return sgp_item(self.sgp, episode_id, self.cfg.sgp_modality, self.cfg.step_cap)

    # ---- what to show (the hooks ParticipantSession._screen calls)
    def _episode_screen(self, c, a: participants.Assignment, progress: str, fraction: float) -> EpisodeScreen:
        view = view_id_for(a.participant_id, a.kind, a.attempt, a.position)
        item = self.item(a.instance_id)
        steps = tuple(episodes.view_steps(c, self.study.run_id, a.participant_id, view))
        state = steps[-1].board() if steps else item.start()
        active = [s.active_ms for s in steps if s.active_ms is not None]
        first = next((s.client_ms for s in steps if s.client_ms is not None), None)
        return EpisodeScreen(view, a.kind, item, progress, fraction, state, steps, len(steps),
                             max(active) if active else 0.0, first, self.cfg.step_cap is None)

    def _practice(self, c, p: participants.Participant, assigns: list[participants.Assignment], t: float):
        attempt = p.practice_attempts
        mine = [a for a in assigns if a.kind == "practice" and a.attempt == attempt]
        if not mine:
            for pos, eid in enumerate(self._round(attempt)):
                participants.insert_assignment(c, p.participant_id, "practice", pos, attempt, eid, eid, t)
            mine = [a for a in participants.participant_assignments(c, p.participant_id)
                    if a.kind == "practice" and a.attempt == attempt]
        open_ = sorted((a for a in mine if a.answered_at is None), key=lambda a: a.position)
        if not open_:
            self._close_round(c, p.participant_id, attempt, t)
            return self._screen(c)
        a = open_[0]
        return self._episode_screen(c, a, f"Practice puzzle {a.position + 1} of {len(mine)}", a.position / len(mine))

    def _main(self, c, p: participants.Participant, assigns: list[participants.Assignment], t: float):
        cfg, pid = self.cfg, p.participant_id
        participants.set_started_main(c, pid, t)
        participants.release_stale(c, self.study.study_id, t - 60 * cfg.release_after_minutes, pid, t)
        mains = [a for a in assigns if a.kind == "main"]
        answered = sum(a.answered_at is not None for a in mains)
        progress, fraction = sgp_progress(cfg, answered), min(1.0, answered / cfg.items_per_participant)
        held = [a for a in mains if a.answered_at is None and a.released_at is None]
        if held:
            return self._episode_screen(c, held[0], progress, fraction)
        if answered >= cfg.items_per_participant:
            participants.finish(c, pid, "completed", t)
            return self._end(c, "completed")
        ranked = rank_episodes(sgp_pool(self.sgp, cfg), self.sgp, cfg, participants.main_assignment_counts(c, self.study.study_id),
                               {a.instance_id for a in mains}, p.counterbalance, answered, default_tiebreak(pid))
        claim = participants.claim_instance(c, self.study.study_id, ranked, cfg.target_per_instance)
        if claim.busy:
            raise ClaimBusy()
        eid = claim.instance_id
        if eid is None:
            reason = "completed" if answered else "pool_exhausted"
            participants.finish(c, pid, reason, t)
            return self._end(c, reason)
        participants.insert_assignment(c, pid, "main", len(mains), 0, eid, eid, t)
        a = next(a for a in participants.participant_assignments(c, pid) if a.kind == "main" and a.position == len(mains))
        return self._episode_screen(c, a, progress, fraction)

    def _feedback(self, c, p: participants.Participant, a: participants.Assignment, assigns: list[participants.Assignment]) -> EpisodeFeedback:
        item = self.item(a.instance_id)
        view = view_id_for(p.participant_id, a.kind, a.attempt, a.position)
        row = episodes.episode_result_of(c, self.study.run_id, p.participant_id, a.instance_id, "practice", a.attempt)
        steps = episodes.view_steps(c, self.study.run_id, p.participant_id, view)
        parsed = json.loads(row["parsed"]) if row else {}
        round_ = [x for x in assigns if x.kind == "practice" and x.attempt == a.attempt]
        if any(x.answered_at is None for x in round_):
            outcome: RoundOutcome = "next"
        elif p.practice_passed:
            outcome = "passed"
        elif p.end_reason == "screened_out":
            outcome = "screened_out"
        else:
            outcome = "retry"
        return EpisodeFeedback(view, item, bool(row and row["passed"]), bool(parsed.get("given_up")), len(steps),
                               item.c1, steps[-1].board() if steps else item.start(),
                               dict(Counter(s.outcome for s in steps)), outcome, a.position + 1, len(round_))

    def _close_round(self, c, pid: str, attempt: int, t: float) -> None:
        cfg = self.cfg
        solved = episodes.practice_round_solved(c, self.study.run_id, pid, attempt)
        if len(solved) < len(self._round(attempt)):
            return
        if sum(solved) / len(solved) >= cfg.practice_pass_fraction:
            participants.set_practice(c, pid, True, attempt)
        elif attempt + 1 >= cfg.practice_max_attempts:
            participants.set_practice(c, pid, False, attempt + 1)
            participants.finish(c, pid, "screened_out", t)
        else:
            participants.set_practice(c, pid, None, attempt + 1)

    # ---- what they did
    def record_moves(self, screen: EpisodeScreen, payload: Any) -> MoveReport:
        """Apply and store the moves not stored yet, in order, each in the engine's rules; the move that ends
        the episode stores its result in the same transaction. A repeated seq is ignored (the first stays); a
        gap (a move whose predecessor never arrived) is refused, so no board is ever built on a missing move."""
        if not isinstance(payload, dict) or payload.get("view_id") != screen.view_id:
            return MoveReport(0, False)
        several = self.cfg.sgp_several_moves
        msg = parse_board_message(payload, allowed_inputs(self.cfg), MAX_SUBMISSION_CHARS if several else MAX_COMMAND_CHARS)
        if not msg.moves and msg.give_up is None:
            return MoveReport(0, False)
        # each typed move is one step (sgp_several_moves: a line split on commas); one message at most 50 of them
        texts_of = [(split_moves(m.text) or [m.text]) if several else [m.text] for m in msg.moves]
        if sum(map(len, texts_of)) > MAX_MOVES_PER_MESSAGE:
            raise _err(f"moves: at most {MAX_MOVES_PER_MESSAGE} moves in one message")
        pid, run = self.participant_id, self.study.run_id
        item = screen.item
        with self._tx() as c:
            a = self._assignment_of(c, screen.view_id)
            if a is None or a.answered_at is not None or a.released_at is not None:
                return MoveReport(0, a is not None and a.answered_at is not None)
            steps = episodes.view_steps(c, run, pid, screen.view_id)
            state = steps[-1].board() if steps else item.start()
            stored = 0
            t = self.clock()
            for m, texts in zip(msg.moves, texts_of):
                if m.seq < len(steps):
                    continue                                  # already stored (a repeated message)
                if m.seq > len(steps):
                    raise _err(f"move {m.seq} arrived before move {len(steps)}")
                if m.click is not None:                       # a board click: checked against this board
                    try:
                        item.click_move(state, m.text, *m.click[:2], m.click[2:])
                    except ValueError as e:
                        raise _err(f"move {m.seq}: {e}") from None
                for k, text in enumerate(texts):
                    out = item.step(state, Move(len(steps), text, m.t), len(steps))
                    row = episodes.StepRow(run, pid, item.item_id, screen.view_id, len(steps), text, out.outcome,
                                     int(out.valid), json.dumps(out.state, sort_keys=True), item.distance(out.state),
                                     out.end, m.input, m.t, m.active_ms, t)
                    episodes.insert_step(c, row)
                    steps.append(row)
                    stored += 1
                    state = out.state
                    if out.end is not None:
                        self._finish_episode(c, a, item, steps, t, given_up=False)
                        return MoveReport(stored, True, tuple(texts[k + 1:]), out.end)
            if msg.give_up is not None and msg.give_up == len(steps):
                if self.cfg.step_cap is not None:
                    raise _err("give_up: this study has a step cap; an episode ends at the goal or the cap")
                self._finish_episode(c, a, item, steps, t, given_up=True)
                return MoveReport(stored, True)
            participants.touch(c, pid, t)
            return MoveReport(stored, False)

    def _assignment_of(self, c, view_id: str) -> participants.Assignment | None:
        pid = self.participant_id
        return next((a for a in participants.participant_assignments(c, pid)
                     if view_id_for(pid, a.kind, a.attempt, a.position) == view_id), None)

    def _finish_episode(self, c, a: participants.Assignment, item: SgpItem, steps: list[episodes.StepRow], t: float,
                        given_up: bool) -> None:
        pid = self.participant_id
        if not participants.mark_answered(c, a, t):
            return
        moves = [Move(s.seq, s.command, s.client_ms) for s in steps]
        outcomes = [StepOutcome(s.board(), s.outcome, bool(s.valid), s.ended) for s in steps]  # type: ignore[arg-type]
        res = item.result(moves, outcomes, given_up=given_up)
        ended = "failed" if given_up else (steps[-1].ended if steps and steps[-1].ended else "failed")
        active = [s.active_ms for s in steps if s.active_ms is not None]
        first = next((s.client_ms for s in steps if s.client_ms is not None), None)
        assigns = participants.participant_assignments(c, pid)
        episodes.write_episode_results(c, [episodes.EpisodeResultRow(
            self.study.run_id, pid, item.item_id, a.kind, a.attempt, 0, self.cfg.sgp_modality, self.cfg.step_cap,
            ended, len(steps), res.response, res.protocol, json.dumps(res.parsed), int(res.valid), int(res.passed),
            res.failure, json.dumps(list(res.errors)), first, 1000.0 * (t - shown_at(a, assigns)),
            max(active) if active else None, view_id_for(pid, a.kind, a.attempt, a.position), t)])
        participants.touch(c, pid, t)
        if a.kind == "practice":
            self._close_round(c, pid, a.attempt, t)


def open_episode_session(store: Store, ds: SgpDataset, study_id: str, participant_id: str,
                         clock: Clock = system_clock) -> EpisodeSession | None:
    with store.connect() as c:
        study = load_study(c, study_id)
    return None if study is None else EpisodeSession(store, ds, study, participant_id, clock)


# --------------------------------------------------------------------------- what the board component gets

def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header (the component keeps the image's aspect ratio for its overlay)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def board_component_data(screen: EpisodeScreen, image: str | None, goal_image: str | None,
                         size: tuple[int, int] | None, input_mode: str, goal_view: str,
                         error: str | None = None, *, several: bool = False,
                         piece_coordinates: bool = False) -> dict[str, Any]:
    """Everything the browser gets for one episode screen (the CONTRACT with ui/sgp_board.js): the board after
    the stored moves and the goal (images by URL, or text), the pieces with their names and cells, click
    polygons (`SgpItem.hit_cells`), the move count against the cap, and how many moves the server has stored (`ack_seq`)."""
    item = screen.item
    w, h = size or (0, 0)
    return {
        "view_id": screen.view_id, "progress": screen.progress, "instruction": item.instruction,
        "modality": item.modality, "input": input_mode, "goal_view": goal_view,
        "image": image, "goal_image": goal_image, "width": w, "height": h, "board_size": item.board_size,
        "cells": item.hit_cells(screen.state), "geoms": item.geoms(screen.state),
        # the board as text only where the model gets it too (the text modality), or where the study chose
        # piece buttons with cells (sgp_piece_coordinates)
        **({"text": item.text(screen.state), "goal_text": item.text(item.goal_state)}
           if item.modality == "text" or piece_coordinates else {"text": None, "goal_text": None}),
        "words": allowed_words(item.shape_names), "several": several, "piece_coordinates": piece_coordinates,
        "step_cap": item.step_cap, "ack_seq": screen.ack_seq, "last_command": screen.last_command,
        "restore": {"active_ms": screen.active_ms, "first_action_ms": screen.first_action_ms},
        "can_give_up": screen.can_give_up, "finished": False, "error": error,
    }


def study_benchmark(store: Store, study_id: str | None) -> str | None:
    """Which benchmark a study link names ("rose", "sgp"), None for no such study: the participant page's
    dispatch (an SGP study has its own flow)."""
    if not study_id:
        return None
    with store.connect() as c:
        study = load_study(c, study_id)
    return None if study is None else study.config.benchmark


def sgp_coverage(store: Store, ds: SgpDataset, study: Study) -> dict[str, Any]:
    """Finished episodes per pool episode against the target, and participants needed (pool × target ÷ episodes
    each): the Studies page's figures for an SGP study, over its own pool."""
    pool = sgp_pool(ds, study.config)
    with store.connect() as c:
        counts = episodes.main_result_counts(c, study.run_id)
        ends = participants.status_counts(c, study.study_id)
    target = study.config.target_per_instance
    per = [min(counts.get(e, 0), target) for e in pool]
    hist = Counter(counts.get(e, 0) for e in pool)
    return {"pool": len(pool), "target": target, "answers": sum(counts.values()),
            "complete_instances": sum(1 for v in per if v >= target),
            "progress": sum(per) / (target * len(pool)) if pool else 0.0,
            "histogram": {k: hist[k] for k in sorted(hist)},
            "participants_needed": study.participants_needed(len(pool)),
            "participants_completed": int(ends.get("completed", 0)),
            "participants_by_status": {str(k): int(v) for k, v in ends.items()}}


__all__ = ["EpisodeScreen", "EpisodeFeedback", "EpisodeSession", "EpisodeStudyScreen", "MoveReport",
           "BoardMessage", "parse_board_message", "create_sgp_study", "sgp_pool", "plan_sgp_practice",
           "pick_episode", "open_episode_session", "allowed_inputs", "board_component_data", "sgp_coverage",
           "study_benchmark"]
