"""How a visitor becomes a study's participant: admitted (a study may require a Prolific id: `admit`), stored
once per (study, external id) on the first request (`join`), and never let in again under another Prolific
study / session id or source (`IdentityMismatch`, recorded as a flag)."""
from __future__ import annotations

import json
import re

from ..storage import participants
from ..storage.connection import Store
from .config import Origin, Study, StudyConfig, StudyError
from .ids import Clock, Ids, RandomIds, system_clock
from .storage_errors import storage


class IdentityMismatch(StudyError):
    """The participant id is known, but arrived with another Prolific study / session id or another source."""


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
