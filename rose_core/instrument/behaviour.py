"""The behaviour check: does a completed participant's own record look like a person at a browser? Computed on the
server, at completion, from what is already stored (server-timed answers and the grid's events), because a
script that waits a human-looking 1.6 s per item passes the timing exclusion ("too fast") and, with a worded
attention check, every other one.

Two signs, each one a person at the click grid does not give:
- *answers without a trace*: an answer that clicked or counted something, with no click, undo or typing event
  stored for its view. The grid records every action as an event and sends it before (or with) DONE; a script
  that posts only the answer leaves none.
- *clockwork timing*: over at least MIN_TIMED main items, server-timed answer times (assigned → answered) whose
  coefficient of variation is below MIN_CV. People's times on these items vary several-fold between items (a
  count on a crowded grid against an empty region); a sleep loop's barely do.

Not built: repeated items answered inconsistently (the study design repeats no item, and adding repeats costs
every participant time). Limits: a script that sends made-up events and jitters its pauses passes both; the
picture attention check and the per-participant code are the other layers (docs/threat-model.md, "Bots").
"""
from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from typing import Any, Sequence

from ..storage import exclusions, participants
from ..storage.events import action_counts
from ..storage.responses import read_response_rows
from .config import Study
from .grid_input import ACTION_TYPES

MIN_TIMED = 8          # main items needed before timing regularity is judged
MIN_CV = 0.15          # answer times varying less than this (sd / mean) are clockwork
FLAG = "behaviour"     # the participant_flags kind
EXCLUDED_BY = "behaviour check"   # who a behaviour exclusion is by (participant_exclusions.excluded_by)


@dataclass(frozen=True)
class Answered:
    """One stored answer, as the check reads it: its kind, whether it clicked or counted anything, how many
    action events its view has, and its server time (ms; None when unknown)."""

    kind: str
    said_something: bool
    actions: int
    total_ms: float | None


@dataclass(frozen=True)
class Verdict:
    answers: int
    traceless: int                 # answers that said something with no action on record
    timed: int                     # main answers with a server time
    timing_cv: float | None        # None: fewer than MIN_TIMED timed main answers, or a mean of 0
    reasons: tuple[str, ...]

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)


def judge(answers: Sequence[Answered]) -> Verdict:
    """Pure: the verdict on one participant's answers."""
    reasons = []
    traceless = sum(a.said_something and a.actions == 0 for a in answers)
    if traceless:
        reasons.append(f"{traceless} of {len(answers)} answers clicked or counted with no click or typing on record")
    times = [a.total_ms for a in answers if a.kind == "main" and a.total_ms is not None and math.isfinite(a.total_ms)]
    mean = statistics.fmean(times) if times else 0.0
    cv = statistics.pstdev(times) / mean if len(times) >= MIN_TIMED and mean > 0 else None
    if cv is not None and cv < MIN_CV:
        reasons.append(f"answer times vary too little to be a person's: coefficient of variation {cv:.3f} over "
                       f"{len(times)} items (a person's is rarely below {MIN_CV:g})")
    return Verdict(len(answers), traceless, len(times), cv, tuple(reasons))


def _said_something(parsed: Any) -> bool:
    try:
        d = json.loads(parsed) if isinstance(parsed, str) else {}
    except ValueError:
        return False
    return bool(isinstance(d, dict) and (d.get("clicks") or d.get("count") is not None))


def read_answers(c, study: Study, participant_id: str) -> list[Answered]:
    """The participant's stored answers (every kind) with their views' action counts."""
    cols, rows = read_response_rows(c, ("kind", "view_id", "total_ms", "parsed"), run_id=study.run_id,
                                    participant_id=participant_id)
    acts = action_counts(c, participant_id, sorted(ACTION_TYPES))
    return [Answered(kind, _said_something(parsed), acts.get(view_id or "", 0),
                     None if total_ms is None else float(total_ms)) for kind, view_id, total_ms, parsed in rows]


def check_behaviour(c, study: Study, participant_id: str, t: float) -> Verdict | None:
    """At completion, in the completing transaction: judge the participant and, when flagged, record a
    `behaviour` flag (shown with the other flags on the Participants page and in the exports), and with
    `behaviour_check = "exclude"` a standing exclusion by EXCLUDED_BY (the experimenter's own machinery: the
    analyses and the approvals leave them out; it can be lifted on the Participants page). None: check off."""
    mode = study.config.behaviour_check
    if mode == "off":
        return None
    verdict = judge(read_answers(c, study, participant_id))
    if verdict.flagged:
        detail = "; ".join(verdict.reasons)
        participants.record_flag(c, study.study_id, participant_id, None, FLAG, detail, t)
        if mode == "exclude" and exclusions.standing(c, participant_id) is None:
            exclusions.insert_exclusion(c, participant_id, study.study_id, f"{EXCLUDED_BY}: {detail}", EXCLUDED_BY, t)
    return verdict
