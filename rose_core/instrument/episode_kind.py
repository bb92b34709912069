"""Episodes (iVISPAR's sliding geom puzzle) as one kind of item in the one participant session.

The session (`ParticipantSession`) runs the timeline: consent, instructions, the time limit, practice rounds with
feedback still to acknowledge, main items, the end. This kind says which episodes come (`rank`), draws one
(`EpisodeScreen`: the board after the stored moves), shows a practice episode's feedback, and reads its input:
the participant moves geoms one move at a time; every move is the command string a model writes
(`move red cube up`), applied by the benchmark's engine (the same rules, outcome classes and step cap as the
models by default), stored at once as the item's event (one `episode_steps` row, idempotent by seq, timed on the
server). The move that reaches the goal or the cap also marks the assignment answered and stores the episode's
result, in the same transaction, through the session's one writer (`instrument.results`). A reload rebuilds the
board from the stored moves, so the participant resumes exactly where they were.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..benchmarks.items import Move, StepOutcome
from ..benchmarks.sgp.dataset import SgpDataset
from ..benchmarks.sgp.actions import split_moves
from ..benchmarks.sgp.item import SgpItem, sgp_item
from ..storage import episodes, participants
from . import results
from .config import StudyConfig, sgp_move_help
from .episode_messages import (
    MAX_COMMAND_CHARS, MAX_MOVES_PER_MESSAGE, MAX_SUBMISSION_CHARS, _err, allowed_inputs, parse_board_message,
)
from .episode_study import rank_episodes, sgp_pool, sgp_progress
from .policy import default_tiebreak, shown_at
from .ids import view_id_for
from .screens import OtherTabError, RoundOutcome
from .session import ParticipantSession
from .storage_errors import storage


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


# --------------------------------------------------------------------------- the pages' words

CONSENT = ("You are invited to take part in a short research study on how people solve sliding puzzles. Each screen "
           "shows a small board with coloured pieces and the goal board; you move the pieces until your board "
           "matches the goal. Your moves and their timing are recorded together with your participant id. No other "
           "personal data is collected. Participation is voluntary and you may stop at any time by closing this "
           "page.")


def sgp_text(cfg: StudyConfig, key: str) -> str:
    """An SGP study's page texts (its own wording; the ROSE study texts do not apply): consent and instructions,
    nothing extra on the end pages."""
    if key == "consent":
        return CONSENT
    if key == "instructions":
        cap = (f"You have at most **{cfg.step_cap} moves** per puzzle; every move counts, also one that is blocked."
               if cfg.step_cap else "There is no limit on the number of moves; if you are stuck you may give up a "
                                    "puzzle.")
        text = ("Each puzzle shows **your board** and **the goal**. Columns are **A, B, C, …** from the left and rows "
                "**1, 2, 3, …** from the bottom, so A1 is the bottom-left cell. A piece moves one cell **up, down, "
                "left or right**, and only into a free cell. Make your board look exactly like the goal, in as few "
                f"moves as you can.\n\n{sgp_move_help(cfg)}\n\n{cap}")
        if cfg.practice_rounds:
            text += "\n\nFirst a few practice puzzles, with feedback after each."
        return text
    return ""


# --------------------------------------------------------------------------- the kind

class EpisodeKind:
    """SGP's episodes in the participant session (`instrument.item_kind.ItemKind`)."""

    benchmark = "sgp"

    def __init__(self, ds: SgpDataset):
        self.ds = ds

    def item(self, cfg: StudyConfig, episode_id: str) -> SgpItem:
        return sgp_item(self.ds, episode_id, cfg.sgp_modality, cfg.step_cap)

    def text(self, cfg: StudyConfig, key: str) -> str:
        return sgp_text(cfg, key)

    def templates(self, cfg: StudyConfig) -> tuple[str, ...]:
        return ()                         # no worked examples: the practice puzzles show the rules

    def scene_of(self, instance_id: str) -> str:
        return instance_id                # an episode is its own scene

    def practice_label(self, position: int, of: int) -> str:
        return f"Practice puzzle {position + 1} of {of}"

    def progress(self, cfg: StudyConfig, answered_main: int, answered_attention: int) -> str:
        return sgp_progress(cfg, answered_main)

    def rank(self, s: ParticipantSession, counts: dict[str, int], mains: list[participants.Assignment],
             counterbalance: int, answered: int) -> Iterator[str]:
        return rank_episodes(sgp_pool(self.ds, s.cfg), self.ds, s.cfg, counts, {a.instance_id for a in mains},
                             counterbalance, answered, default_tiebreak(s.participant_id))

    def item_screen(self, s: ParticipantSession, c: Any, a: participants.Assignment, progress: str,
                    fraction: float) -> EpisodeScreen:
        view = view_id_for(a.participant_id, a.kind, a.attempt, a.position)
        item = self.item(s.cfg, a.instance_id)
        steps = tuple(episodes.view_steps(c, s.study.run_id, a.participant_id, view))
        state = steps[-1].board() if steps else item.start()
        active = [x.active_ms for x in steps if x.active_ms is not None]
        first = next((x.client_ms for x in steps if x.client_ms is not None), None)
        return EpisodeScreen(view, a.kind, item, progress, fraction, state, steps, len(steps),
                             max(active) if active else 0.0, first, s.cfg.step_cap is None)

    def feedback(self, s: ParticipantSession, c: Any, p: participants.Participant, a: participants.Assignment,
                 outcome: RoundOutcome, of: int) -> EpisodeFeedback:
        item = self.item(s.cfg, a.instance_id)
        view = view_id_for(p.participant_id, a.kind, a.attempt, a.position)
        row = results.result_of(c, s.study.run_id, p.participant_id, a.instance_id, "practice", a.attempt, True)
        steps = episodes.view_steps(c, s.study.run_id, p.participant_id, view)
        parsed = json.loads(row["parsed"]) if row else {}
        return EpisodeFeedback(view, item, bool(row and row["passed"]), bool(parsed.get("given_up")), len(steps),
                               item.c1, steps[-1].board() if steps else item.start(),
                               dict(Counter(x.outcome for x in steps)), outcome, a.position + 1, of)

    # ---- what they did
    def record_moves(self, s: ParticipantSession, screen: EpisodeScreen, payload: Any) -> MoveReport:
        """Apply and store the moves not stored yet, in order, each in the engine's rules; the move that ends
        the episode stores its result in the same transaction. A repeated seq is ignored (the first stays); a
        gap (a move whose predecessor never arrived) is refused, so no board is ever built on a missing move.
        A message naming another view stores nothing; a malformed one is refused whole (`StudyError`)."""
        if not isinstance(payload, dict) or payload.get("view_id") != screen.view_id:
            return MoveReport(0, False)
        several = s.cfg.sgp_several_moves
        msg = parse_board_message(payload, allowed_inputs(s.cfg), MAX_SUBMISSION_CHARS if several else MAX_COMMAND_CHARS)
        if not msg.moves and msg.give_up is None:
            return MoveReport(0, False)
        # each typed move is one step (sgp_several_moves: a line split on commas); one message at most 50 of them
        texts_of = [(split_moves(m.text) or [m.text]) if several else [m.text] for m in msg.moves]
        if sum(map(len, texts_of)) > MAX_MOVES_PER_MESSAGE:
            raise _err(f"moves: at most {MAX_MOVES_PER_MESSAGE} moves in one message")
        pid, run = s.participant_id, s.study.run_id
        item = screen.item
        with storage(s.store), s._tx() as c:
            if (stop := s._stopped(c)) is not None:   # a closed study, or an excluded participant: nothing stored
                a = s._assignment_of(c, screen.view_id)
                if a is not None and a.answered_at is None and a.released_at is None:   # on record once, as ROSE's
                    participants.record_flag(c, s.study.study_id, pid, None, f"{stop}_answer",
                                             f"{a.kind} {a.instance_id} moved after the "
                                             + ("study closed" if stop == "closed" else "participant was excluded"),
                                             s.clock())
                    participants.release_holds(c, [pid], s.clock())   # the held episode goes back to the pool
                return MoveReport(0, False)
            if not s._owns(c):
                raise OtherTabError("the study continues in another tab")
            a = s._assignment_of(c, screen.view_id)
            if a is None or a.answered_at is not None or a.released_at is not None:
                return MoveReport(0, a is not None and a.answered_at is not None)
            steps = episodes.view_steps(c, run, pid, screen.view_id)
            state = steps[-1].board() if steps else item.start()
            stored = 0
            t = s.clock()
            stored_before = len(steps)
            for m, texts in zip(msg.moves, texts_of):
                if m.seq < stored_before:
                    continue                                  # already stored (a repeated message)
                if m.seq != len(steps):                       # a gap, or a seq inside a line this message stored
                    raise _err(f"move {m.seq} arrived where move {len(steps)} was due")
                if m.click is not None:                       # a board click: checked against this board
                    try:
                        item.click_move(state, m.text, *m.click[:2], m.click[2:])
                    except ValueError as e:
                        raise _err(f"move {m.seq}: {e}") from None
                for k, text in enumerate(texts):
                    out = item.step(state, Move(len(steps), text, m.t), len(steps))
                    row = episodes.StepRow(run, pid, item.item_id, screen.view_id, len(steps), text, out.outcome,
                                           int(out.valid), json.dumps(out.state, sort_keys=True),
                                           item.distance(out.state), out.end, m.input, m.t, m.active_ms, t)
                    results.write_move(c, row)
                    steps.append(row)
                    stored += 1
                    state = out.state
                    if out.end is not None:
                        self._finish(s, c, a, item, steps, t, given_up=False)
                        return MoveReport(stored, True, tuple(texts[k + 1:]), out.end)
            if msg.give_up is not None and msg.give_up == len(steps):
                if s.cfg.step_cap is not None:
                    raise _err("give_up: this study has a step cap; an episode ends at the goal or the cap")
                self._finish(s, c, a, item, steps, t, given_up=True)
                return MoveReport(stored, True)
            participants.touch(c, pid, t)
            return MoveReport(stored, False)

    def _finish(self, s: ParticipantSession, c: Any, a: participants.Assignment, item: SgpItem,
                steps: list[episodes.StepRow], t: float, given_up: bool) -> None:
        """The episode's outcome as its result (the scored `ItemResult` of its moves), and the round's verdict."""
        pid, cfg = s.participant_id, s.cfg
        if not participants.mark_answered(c, a, t):
            return
        moves = [Move(x.seq, x.command, x.client_ms) for x in steps]
        outcomes = [StepOutcome(x.board(), x.outcome, bool(x.valid), x.ended) for x in steps]  # type: ignore[arg-type]
        res = item.result(moves, outcomes, given_up=given_up)
        ended = "failed" if given_up else (steps[-1].ended if steps and steps[-1].ended else "failed")
        active = [x.active_ms for x in steps if x.active_ms is not None]
        first = next((x.client_ms for x in steps if x.client_ms is not None), None)
        assigns = participants.participant_assignments(c, pid)
        results.write_result(c, episodes.EpisodeResultRow(
            s.study.run_id, pid, item.item_id, a.kind, a.attempt, 0, cfg.sgp_modality, cfg.step_cap,
            ended, len(steps), res.response, res.protocol, json.dumps(res.parsed), int(res.valid), int(res.passed),
            res.failure, json.dumps(list(res.errors)), first, 1000.0 * (t - shown_at(a, assigns)),
            max(active) if active else None, view_id_for(pid, a.kind, a.attempt, a.position), t))
        participants.touch(c, pid, t)
        if a.kind == "practice":
            s._close_round(c, pid, a.attempt, t)
