"""What an experimenter does to a study's participants and to the study itself: open it as a preview participant,
mark a participant as a test, exclude one by hand (with a reason, audited, reversible), delete a study.

Previews and tests are stored like anyone else (the same session, the same tables) but flagged by `origin`, and
every reader of human rows in `rose_core.storage` leaves them out: they never reach a number, an export, the
approvals or the checklist."""
from __future__ import annotations

import secrets
from dataclasses import dataclass

from ..storage import exclusions, participants
from ..storage.connection import Store
from ..storage.schema import bump_verdicts_generation
from .config import Study, StudyError, load_study
from .ids import Clock, Ids, system_clock
from .joining import join

PREVIEW_PREFIX = "preview-"
MAX_REASON = 500


def open_preview(store: Store, study: Study, ids: Ids | None = None, clock: Clock = system_clock,
                 token: str | None = None) -> participants.Participant:
    """A new preview participant of the study (origin 'preview'), whose external id the experimenter's link
    carries (`?study=…&pid=preview-…`). Its answers are stored, never counted, and take no real rater's place."""
    return join(store, study, PREVIEW_PREFIX + (token or secrets.token_hex(8)), "anonymous", ids=ids, clock=clock,
                origin="preview")


def is_preview(store: Store, study_id: str, external_id: str) -> bool:
    """True when this study's participant with this external id was stored as a preview (a preview may open a
    closed study: the experimenter tries it before opening it to participants)."""
    with store.connect() as c:
        p = participants.find_participant(c, study_id, external_id)
    return p is not None and p.origin == "preview"


def _who(by: str) -> str:
    by = (by or "").strip()
    if not by or len(by) > 128:
        raise StudyError("by: say who does this (1-128 characters), for the audit trail")
    return by


def _participant(c, participant_id: str) -> participants.Participant:
    p = participants.get_participant(c, participant_id)
    if p is None:
        raise StudyError(f"unknown participant {participant_id!r}")
    return p


def mark_test(store: Store, participant_id: str, test: bool, by: str, clock: Clock = system_clock) -> None:
    """Mark a participant as a test (origin 'test': out of every number, export, the approvals and the checklist)
    or back as a real one. Recorded with who and when among the study's flags. Previews and simulated
    participants keep their origin."""
    by, t = _who(by), clock()
    with store.write() as c:
        p = _participant(c, participant_id)
        if p.origin not in ("participant", "test"):
            raise StudyError(f"participant {participant_id!r} is a {p.origin} participant: only real participants "
                             "are marked as tests")
        new = "test" if test else "participant"
        if p.origin == new:
            return
        participants.set_origin(c, participant_id, new)
        participants.record_flag(c, p.study_id, participant_id, p.external_id, "marked_test" if test else
                                 "unmarked_test", f"by {by}", t)
        bump_verdicts_generation(c)  # the cached response frames must drop (or take back) their rows


def exclude(store: Store, participant_id: str, reason: str, by: str, clock: Clock = system_clock) -> None:
    """Exclude a participant by hand, with a reason (who and when are stored); refused while an exclusion of
    theirs stands."""
    by, reason, t = _who(by), (reason or "").strip(), clock()
    if not reason or len(reason) > MAX_REASON:
        raise StudyError(f"reason: say why (1-{MAX_REASON} characters); it goes to the approvals and the exports")
    with store.write() as c:
        p = _participant(c, participant_id)
        held = exclusions.standing(c, participant_id)
        if held is not None:
            raise StudyError(f"participant {p.external_id!r} is already excluded ({held.reason!r}, by "
                             f"{held.excluded_by}); lift that exclusion first")
        exclusions.insert_exclusion(c, participant_id, p.study_id, reason, by, t)


def lift_exclusion(store: Store, participant_id: str, by: str, clock: Clock = system_clock) -> None:
    """Take a participant back in: the standing exclusion is stamped revoked (who, when), never deleted."""
    by, t = _who(by), clock()
    with store.write() as c:
        p = _participant(c, participant_id)
        if not exclusions.revoke(c, participant_id, by, t):
            raise StudyError(f"participant {p.external_id!r} is not excluded")


def exclusion_history(store: Store, study_id: str) -> list[exclusions.Exclusion]:
    with store.connect() as c:
        return exclusions.history(c, study_id)


@dataclass(frozen=True)
class Deleted:
    study_id: str
    name: str
    rows: dict[str, int]     # rows deleted per table


def delete_study(store: Store, study_id: str, confirm: str) -> Deleted:
    """Delete a study and everything it stored, only when `confirm` is the study's name exactly (typed by the
    experimenter: a click alone never deletes). One transaction: all of it, or nothing."""
    with store.write() as c:
        study = load_study(c, study_id)
        if study is None:
            raise StudyError(f"unknown study {study_id!r}")
        if confirm != study.name:
            raise StudyError(f"confirmation: type the study's name exactly ({study.name!r}) to delete it")
        rows = participants.delete_study_rows(c, study.study_id, study.run_id)
    return Deleted(study.study_id, study.name, rows)
