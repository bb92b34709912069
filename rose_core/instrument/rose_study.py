"""A ROSE study's creation (beside SGP's `episode_study`): the settings checked, practice rounds planned on fresh
scenes per attempt, the item sample drawn from the pool practice leaves, the study and its texts stored.
`derive_pool` is also what a clone re-derives (`study_edit`)."""
from __future__ import annotations

import random

from ..benchmarks.rose.dataset import Dataset
from ..storage import studies
from ..storage.connection import Store
from .config import Study, StudyConfig, StudyError
from .ids import Clock, Ids, RandomIds, system_clock
from .policy import main_pool
from .practice import plan_practice
from .sample import choose_items, design_check, without_sample
from .texts import opening_problems, store_texts


def create_study(store: Store, ds: Dataset, cfg: StudyConfig, ids: Ids | None = None,
                 clock: Clock = system_clock) -> Study:
    """Check the configuration, plan practice rounds (fresh scenes per attempt) and store the study."""
    if cfg.benchmark != "rose":  # an SGP study: instrument.episode_session.create_sgp_study
        raise StudyError(f"benchmark: create_study makes ROSE studies, not {cfg.benchmark!r} ones")
    problems = cfg.problems()
    if problems:
        raise StudyError("; ".join(problems))
    derive_pool(ds, cfg)
    # A study still carrying the template's markers (or an empty required fact) is stored as a draft: closed
    # until its texts are filled in (`study.set_active` refuses to open it, naming each).
    study = Study((ids or RandomIds()).study_id(), cfg.name.strip(), ds.dataset_hash, cfg, clock(),
                  not opening_problems(cfg))
    with store.write() as c:
        studies.insert_study(c, study)
        store_texts(c, study.study_id, cfg, 1, study.created_at)
    return study


def derive_pool(ds: Dataset, cfg: StudyConfig) -> None:
    """Fill what creation derives from the settings: practice rounds (planned as without a sample, so a sample
    never changes practice), then the item sample from the pool practice leaves (`sample_ids` already set, as by a
    clone on the same dataset: kept, and checked). StudyError naming the key when the design is impossible."""
    base = without_sample(cfg)
    base.practice_rounds, base.practice_scene_ids = [], []
    cfg.practice_rounds, cfg.practice_scene_ids = plan_practice(ds, base, random.Random(f"practice:{cfg.seed}"))
    base.practice_scene_ids = cfg.practice_scene_ids
    pool = main_pool(ds, base)
    if not pool:
        raise StudyError("the chosen split, subsets and templates select no instance")
    if cfg.sample_ids:
        inside = {i.instance_id for i in pool}
        lost = [i for i in cfg.sample_ids if i not in inside]
        if lost:
            raise StudyError(f"sample: {len(lost)} stored instance ids are not in this dataset's pool (or sit on "
                             f"practice scenes): {', '.join(lost[:10])}")
        design_check(cfg, len(cfg.sample_ids))
    else:
        cfg.sample_ids = choose_items(ds, cfg, pool)
