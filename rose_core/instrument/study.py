"""Human studies: the public entry points (the work is split by job in `rose_core.instrument` and
`rose_core.storage`).

- `instrument.config`: `StudyConfig` (checked), `Study`, `StudyError`
- `instrument.practice`: practice rounds covering every kind of answer, fresh scenes per attempt
- `instrument.policy`: pure assignment (least-annotated, target cap, counterbalancing, attention checks)
- `instrument.session`: `ParticipantSession.screen()` and what a participant's actions store
- `instrument.grid_input`: the click grid's messages, validated, and the restore after a reload
- `storage.*`: the SQL
"""
from __future__ import annotations

from .config import EndReason, Kind, Ordering, Study, StudyConfig, StudyError, load_studies, load_study
from .ids import FakeClock, Ids, RandomIds, SequentialIds
from .policy import main_pool
from .session import (
    Consent, End, Instructions, ItemScreen, ParticipantSession, PracticeFeedback, Recorded, Screen, create_study, join, open_session, view_id_for,
)
from ..storage import participants, studies
from ..storage.participants import Participant
from ..storage.connection import Store

__all__ = [
    "EndReason", "Kind", "Ordering", "Study", "StudyConfig", "StudyError", "FakeClock", "Ids", "RandomIds",
    "SequentialIds", "main_pool", "Consent", "End", "Instructions", "ItemScreen", "ParticipantSession",
    "PracticeFeedback", "Recorded", "Screen", "create_study", "join", "open_session", "view_id_for", "Participant",
    "get_study", "list_studies", "set_active", "get_participant",
]


def get_study(store: Store, study_id: str) -> Study | None:
    with store.connect() as c:
        return load_study(c, study_id)


def list_studies(store: Store) -> list[Study]:
    with store.connect() as c:
        return load_studies(c)


def set_active(store: Store, study_id: str, active: bool) -> None:
    with store.write() as c:
        studies.set_active(c, study_id, active)


def get_participant(store: Store, participant_id: str) -> Participant | None:
    with store.connect() as c:
        return participants.get_participant(c, participant_id)
