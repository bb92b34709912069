"""Managing a created study: edit it in versions, clone it, list its versions.

Until its first real participant (origin 'participant': previews, simulations and tests do not count) every
setting may change, and practice and the item sample are derived again; afterwards only the texts participants
read (`LIVE_EDITABLE`), so nothing a participant already answered changes meaning. Each edit raises
`Study.version` by one and keeps the version's settings in `study_versions`.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any

from ..benchmarks.rose.dataset import Dataset
from ..storage import participants, questionnaire, studies, study_versions
from ..storage.connection import Store
from .config import Study, StudyConfig, StudyError, load_study
from .ids import Clock, Ids, system_clock
from .study_file import DERIVED, FIELD_NAMES
from .texts import edit_problems, store_texts

# What may change once a real participant has joined: what participants read (the texts, the facts they name and
# the end questions; rose_core.instrument.texts checks those edits).
LIVE_EDITABLE: tuple[str, ...] = ("texts", "info", "questionnaire")


def changed_settings(old: StudyConfig, new: StudyConfig) -> list[str]:
    """The settings (derived fields left out) that differ, by field name."""
    return [f.name for f in dataclasses.fields(StudyConfig)
            if f.name not in DERIVED and getattr(old, f.name) != getattr(new, f.name)]


def real_participants(store: Store, study_id: str) -> int:
    with store.connect() as c:
        return participants.real_participant_count(c, study_id)


def edit_study(store: Store, ds: Any, study: Study, cfg: StudyConfig, clock: Clock = system_clock) -> Study:
    """The study with `cfg` as its next version (StudyError naming the settings that may no longer change, or
    what is wrong with them; nothing stored then). `ds`: the study's dataset (ROSE or SGP build)."""
    cfg = copy.deepcopy(cfg)
    changed = changed_settings(study.config, cfg)
    if not changed:
        raise StudyError("nothing changed: the settings are those of version "
                         f"{study.version}")
    if cfg.benchmark != study.config.benchmark:
        raise StudyError("benchmark: a study cannot change benchmark; create a new study")
    if ds.dataset_hash != study.dataset_hash:
        raise StudyError(f"the study was created on dataset {study.dataset_hash}, the app has {ds.dataset_hash} "
                         "loaded: edit it with that build, or clone it")
    frozen = [f for f in changed if f not in LIVE_EDITABLE]
    if frozen:
        _derive(ds, cfg)   # checks the new settings before anything is written
    else:
        for f in DERIVED:
            setattr(cfg, f, copy.deepcopy(getattr(study.config, f)))
        problems = cfg.problems()
        if problems:
            raise StudyError("; ".join(problems))
    version = study.version + 1
    t = clock()
    with store.write() as c:
        real = participants.real_participant_count(c, study.study_id)  # in the writing transaction: no race
        if real and frozen:
            names = ", ".join(FIELD_NAMES.get(f, f) for f in frozen)
            raise StudyError(f"{names}: the study has {real} participant{'s' if real > 1 else ''}; only its texts "
                             f"({', '.join(LIVE_EDITABLE)}) can change now (clone it to change the rest)")
        row = studies.study_row(c, study.study_id)
        if row is None:
            raise StudyError(f"no study {study.study_id}")
        if int(row["version"]) != study.version:
            raise StudyError(f"the study was edited meanwhile (now version {row['version']}): reload and edit again")
        if cfg.benchmark == "rose":   # the texts participants read (SGP pages keep their own wording)
            problems = edit_problems(study.config, cfg, bool(row["active"]),
                                     questionnaire.answer_count(c, study.study_id))
            if problems:
                raise StudyError("; ".join(problems))
        studies.update_settings(c, study.study_id, cfg.name.strip(), cfg.to_json(), version, t)
        if cfg.benchmark == "rose":
            store_texts(c, study.study_id, cfg, version, t)
    return dataclasses.replace(study, name=cfg.name.strip(), config=cfg, version=version)


def clone_study(store: Store, ds: Any, study: Study, name: str, ids: Ids | None = None,
                clock: Clock = system_clock) -> Study:
    """A new study with the same settings under `name`; on the same dataset build it keeps the stored sample
    (the same items even if the draw's code changed), on another it draws again."""
    cfg = copy.deepcopy(study.config)
    cfg.name = name
    keep = cfg.sample_ids if ds.dataset_hash == study.dataset_hash else []
    for f in DERIVED:
        setattr(cfg, f, [])
    cfg.sample_ids = list(keep)
    return create_any(store, ds, cfg, ids, clock)


def create_any(store: Store, ds: Any, cfg: StudyConfig, ids: Ids | None = None, clock: Clock = system_clock) -> Study:
    """A study of either benchmark (`ds`: a ROSE Dataset or an SGP build, as `cfg.benchmark` says)."""
    if cfg.benchmark == "sgp":
        from .episode_session import create_sgp_study

        return create_sgp_study(store, ds, cfg, ids, clock)
    from .rose_study import create_study

    return create_study(store, ds, cfg, ids, clock)


def _derive(ds: Any, cfg: StudyConfig) -> None:
    problems = cfg.problems()
    if problems:
        raise StudyError("; ".join(problems))
    for f in DERIVED:
        setattr(cfg, f, [])
    if cfg.benchmark == "sgp":
        from .episode_session import plan_sgp_practice, sgp_pool

        cfg.practice_rounds = plan_sgp_practice(ds, cfg)
        cfg.practice_scene_ids = [e for r in cfg.practice_rounds for e in r]
        if not sgp_pool(ds, cfg):
            raise StudyError("the chosen numbers of geoms and c1 select no episode outside the practice set")
        return
    from .rose_study import derive_pool

    assert isinstance(ds, Dataset)
    derive_pool(ds, cfg)


def versions(store: Store, study_id: str) -> list[dict]:
    """Every version of the study: version, name, when, and its settings."""
    with store.connect() as c:
        rows = study_versions.version_rows(c, study_id)
    return [{"version": int(r["version"]), "name": r["name"], "created_at": float(r["created_at"]),
             "config": StudyConfig.from_json(r["config"])} for r in rows]


def reload(store: Store, study_id: str) -> Study:
    with store.connect() as c:
        s = load_study(c, study_id)
    if s is None:
        raise StudyError(f"no study {study_id}")
    return s


__all__ = ["LIVE_EDITABLE", "changed_settings", "real_participants", "edit_study", "clone_study", "create_any",
           "versions", "reload"]
