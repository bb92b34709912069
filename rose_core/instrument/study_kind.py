"""Which kind of item a study's participants get, and their one session: ROSE's one-shot items or SGP's
episodes, both driven by `ParticipantSession` (the participant page opens every study through here)."""
from __future__ import annotations

from typing import Any

from ..storage.connection import Store
from .config import Study, StudyError, load_study
from .episode_kind import EpisodeKind
from .ids import Clock, system_clock
from .item_kind import ItemKind
from .rose_kind import RoseKind
from .session import ParticipantSession
from .storage_errors import storage
from .tabs import Client


def kind_for(study: Study, ds: Any) -> ItemKind:
    """The kind of item of the study's benchmark, over `ds` (that benchmark's dataset)."""
    benchmark = study.config.benchmark
    if benchmark == "sgp":
        return EpisodeKind(ds)
    if benchmark == "rose":
        return RoseKind(ds)
    raise StudyError(f"study {study.study_id}: unknown benchmark {benchmark!r}")


def study_benchmark(store: Store, study_id: str | None) -> str | None:
    """Which benchmark a study link names ("rose", "sgp"), None for no such study: which dataset the participant
    page loads."""
    if not study_id or not isinstance(study_id, str):
        return None
    with storage(store), store.connect() as c:
        study = load_study(c, study_id)
    return None if study is None else study.config.benchmark


def open_participant_session(store: Store, ds: Any, study_id: str, participant_id: str,
                             clock: Clock = system_clock, client: Client | None = None) -> ParticipantSession | None:
    """The participant's session with the study's kind of item; None when there is no such study."""
    with storage(store), store.connect() as c:
        study = load_study(c, study_id)
    if study is None:
        return None
    return ParticipantSession(store, ds, study, participant_id, clock, client, kind=kind_for(study, ds))
