"""A study as a whole: read one or all, open or close it, edit its texts, read one of its participants. Every
other name of a study lives in the module of its job and is imported from there, never through here:

- `instrument.config`: `StudyConfig` (checked), `Study`, `StudyError`
- `instrument.practice`: practice rounds covering every kind of answer, fresh scenes per attempt
- `instrument.policy`: pure assignment (least-annotated, target cap, counterbalancing, attention checks)
- `instrument.rose_study`: a ROSE study's creation (`create_study`)
- `instrument.joining`: a visitor admitted and stored as a participant (`join`)
- `instrument.session`: `ParticipantSession.screen()` and what a participant's actions store
- `instrument.screens`: what `screen()` returns (Consent … End) and what a submitted answer comes back as
- `instrument.grid_input`: the click grid's messages, validated, and the restore after a reload
- `instrument.texts`: what participants read (consent, instructions, end pages), its facts and markers, the end
  questionnaire
- `storage.*`: the SQL
"""
from __future__ import annotations

import dataclasses

from .config import Study, StudyError, load_studies, load_study
from .ids import system_clock
from .texts import edit_problems, opening_problems, store_texts
from ..storage import participants, questionnaire, studies
from ..storage.participants import Participant
from ..storage.connection import Store

__all__ = ["get_study", "list_studies", "set_active", "get_participant", "update_texts"]


def get_study(store: Store, study_id: str) -> Study | None:
    with store.connect() as c:
        return load_study(c, study_id)


def list_studies(store: Store) -> list[Study]:
    with store.connect() as c:
        return load_studies(c)


def set_active(store: Store, study_id: str, active: bool) -> None:
    """Open or close a study. Opening is refused (StudyError naming each) while a text still has a template
    marker or a required fact is empty: a participant never reads a template."""
    with store.write() as c:
        study = load_study(c, study_id)
        if study is None:
            raise StudyError(f"no study {study_id!r}")
        problems = opening_problems(study.config) if active and study.config.benchmark == "rose" else []
        if problems:
            raise StudyError("the study cannot open yet: " + "; ".join(problems))
        studies.set_active(c, study_id, active)


def update_texts(store: Store, study_id: str, texts: dict[str, str], info: dict[str, str],
                 questions: list[str], clock=system_clock) -> int:
    """Save edited texts, facts and end questions as the study's next text version (returned; the same version
    when nothing changed). Refused (StudyError naming each key) when malformed, when an open study would be left
    with a marker or an empty fact, or when other questions are asked after someone answered."""
    with store.write() as c:
        study = load_study(c, study_id)
        if study is None:
            raise StudyError(f"no study {study_id!r}")
        old = study.config
        new = dataclasses.replace(old, texts=dict(texts), info=dict(info), questionnaire=list(questions))
        problems = edit_problems(old, new, study.active, questionnaire.answer_count(c, study_id))
        if problems:
            raise StudyError("; ".join(problems))
        row = studies.study_row(c, study_id)
        if (new.texts, new.info, new.questionnaire) == (old.texts, old.info, old.questionnaire):
            return int(row["version"])
        version, t = int(row["version"]) + 1, clock()   # one version number for settings and texts
        studies.update_settings(c, study_id, study.name, new.to_json(), version, t)
        store_texts(c, study_id, new, version, t)
        return version


def get_participant(store: Store, participant_id: str) -> Participant | None:
    with store.connect() as c:
        return participants.get_participant(c, participant_id)
