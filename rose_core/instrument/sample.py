"""A study's item sample: `per_cell` instances drawn from every cell of template × subset (or the `by` dimensions
chosen), or an explicit list of instance ids; checked against the dataset so an impossible design is refused before
anything is stored.

The draw is seeded and reproducible. `scenes = "distinct"`: each cell's candidates (sorted by instance id) are
shuffled by a generator seeded with (seed, cell), cells are visited in sorted order, and unless the study lets one
participant see a scene under several templates, instances on a scene not already drawn come first (so a
participant can take more of the sample). `scenes = "shared"`: the pool's scenes are shuffled once (seeded) and
every cell takes its first instances in that scene order, so a scene's templates are drawn together (what the
conditioned gap and the bridges compare). `create_study` stores the drawn ids with the study
(`StudyConfig.sample_ids`): the pool never changes afterwards, even if this code does.
"""
from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict
from dataclasses import replace
from typing import Sequence

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import TEMPLATE_LABEL, Instance
from .config import StudyConfig, StudyError

MAX_NAMED = 10   # unknown ids named in a message (then "and N more")


def without_sample(cfg: StudyConfig) -> StudyConfig:
    """The same study without its sample: every instance of split × subsets × templates (practice is planned on
    it, exactly as for a study without a sample)."""
    return replace(cfg, sample=None, items=[], sample_ids=[])


def cell_values(cfg: StudyConfig, dim: str) -> list[str]:
    """The values a `by` dimension takes in this study (its cells are their product)."""
    if dim == "template":
        return sorted(cfg.templates)
    if dim == "subset":
        return sorted(cfg.subsets)
    return ["dev", "test"] if cfg.split == "all" else [cfg.split]


def cell_of(inst: Instance, by: Sequence[str]) -> tuple[str, ...]:
    return tuple(getattr(inst, dim) for dim in by)


def cell_name(cell: tuple[str, ...], by: Sequence[str]) -> str:
    return " × ".join(TEMPLATE_LABEL.get(v, v) if d == "template" else v for d, v in zip(by, cell)) or "the pool"


def draw(base: Sequence[Instance], cfg: StudyConfig) -> list[str]:
    """The sampled instance ids (sorted) from `base` (the study's pool without a sample); StudyError naming the
    key when a cell is empty or smaller than `per_cell`."""
    s = cfg.sample
    assert s is not None
    cells: dict[tuple[str, ...], list[Instance]] = defaultdict(list)
    for inst in sorted(base, key=lambda i: i.instance_id):
        cells[cell_of(inst, s.by)].append(inst)
    wanted = list(itertools.product(*(cell_values(cfg, d) for d in s.by)))
    empty = [cell_name(c, s.by) for c in wanted if not cells.get(c)]
    if empty:
        raise StudyError(f"sample.by: {len(empty)} empty cell{'s' if len(empty) > 1 else ''} (no instance in the "
                         f"pool): {', '.join(empty[:MAX_NAMED])}{_more(empty)}; drop those templates or subsets, "
                         "or sample by fewer dimensions")
    small = [f"{cell_name(c, s.by)} has {len(cells[c])}" for c in wanted if len(cells[c]) < s.per_cell]
    if small:
        raise StudyError(f"sample.per_cell: {s.per_cell} per cell is more than a cell holds: "
                         f"{', '.join(small[:MAX_NAMED])}{_more(small)}")
    if s.scenes == "shared":   # one seeded scene order for every cell: templates meet on the same scenes
        order = sorted({i.scene_id for i in base})
        random.Random(f"rose-sample:{s.seed}:scenes").shuffle(order)
        rank = {scene: k for k, scene in enumerate(order)}
        chosen = [i.instance_id for c in sorted(wanted)
                  for i in sorted(cells[c], key=lambda i: (rank[i.scene_id], i.instance_id))[:s.per_cell]]
        shared_check(cfg, [i for i in base if i.instance_id in set(chosen)])
        return sorted(chosen)
    used_scenes: set[str] = set()
    chosen = []
    for c in sorted(wanted):
        cands = list(cells[c])
        random.Random(f"rose-sample:{s.seed}:{'/'.join(c)}").shuffle(cands)
        if not cfg.same_scene_multiple_templates:   # fresh scenes first, keeping the shuffled order
            cands.sort(key=lambda i: i.scene_id in used_scenes)
        for inst in cands[:s.per_cell]:
            chosen.append(inst.instance_id)
            used_scenes.add(inst.scene_id)
    return sorted(chosen)


def shared_check(cfg: StudyConfig, drawn: Sequence[Instance]) -> None:
    """Under the same-scene rule a participant rates one item per scene, so a scene carrying m sampled items needs
    m × raters different participants: refuse a plan with fewer."""
    if cfg.same_scene_multiple_templates or not cfg.participants or not drawn:
        return
    per_scene = max(Counter(i.scene_id for i in drawn).values())
    need = per_scene * cfg.target_per_instance
    if cfg.participants < need:
        raise StudyError(f"sample.scenes: shared scenes carry up to {per_scene} sampled items each, and a participant "
                         f"sees a scene once, so {per_scene} × {cfg.target_per_instance} raters need {need} "
                         f"participants, planned {cfg.participants} (plan more, use scenes = \"distinct\", or set "
                         "same_scene_multiple_templates = true)")


def explicit(ds: Dataset, base: Sequence[Instance], cfg: StudyConfig) -> list[str]:
    """The listed ids (sorted), each known and inside the study's split, subsets and templates."""
    unknown = [i for i in cfg.items if i not in ds.instances]
    if unknown:
        raise StudyError(f"items: {len(unknown)} unknown instance id{'s' if len(unknown) > 1 else ''} in dataset "
                         f"{ds.dataset_hash}: {', '.join(unknown[:MAX_NAMED])}{_more(unknown)}")
    inside = {i.instance_id for i in base}
    outside = [i for i in cfg.items if i not in inside]
    if outside:
        raise StudyError(f"items: {len(outside)} listed instance{'s' if len(outside) > 1 else ''} outside the "
                         f"study's split, subsets and templates (or on a practice scene or a damaged image): "
                         f"{', '.join(outside[:MAX_NAMED])}{_more(outside)}")
    return sorted(cfg.items)


def choose_items(ds: Dataset, cfg: StudyConfig, base: Sequence[Instance]) -> list[str]:
    """The study's pool as instance ids: drawn, listed, or [] (no sample: the whole of `base`), with the design
    checks that need the pool (participants planned against raters and items)."""
    if cfg.sample is not None:
        ids = draw(base, cfg)
    elif cfg.items:
        ids = explicit(ds, base, cfg)
    else:
        ids = []
    if ids and cfg.items_per_participant > len(ids):
        key = "sample" if cfg.sample is not None else "items"
        raise StudyError(f"{key}: the sample holds {len(ids)} items, fewer than items_per_participant "
                         f"({cfg.items_per_participant}); nobody answers an item twice")
    design_check(cfg, len(ids) if ids else len(base))
    return ids


def design_check(cfg: StudyConfig, pool: int) -> None:
    """Refuse a design the planned participants cannot fill: every item needs `target_per_instance` different
    people, and each answers at most min(items per participant, pool) items."""
    if not cfg.participants or not pool:
        return
    per = min(cfg.items_per_participant, pool)
    if cfg.participants * per < pool * cfg.target_per_instance:
        raise StudyError(f"participants: {cfg.participants} participants × {per} items give "
                         f"{cfg.participants * per} answers; {pool} items × {cfg.target_per_instance} raters need "
                         f"{pool * cfg.target_per_instance} (plan at least "
                         f"{-(-pool * cfg.target_per_instance // per)} participants, or a smaller sample)")


def describe(cfg: StudyConfig) -> str:
    """The methods text's sentence about the item sample."""
    s = cfg.sample
    n = f" of {len(cfg.sample_ids)}" if cfg.sample_ids else " of"   # not yet drawn: no count
    if s is not None:
        dims = " × ".join(s.by) or "the whole pool"
        scenes = ("following one random order of scenes in every cell, so templates share scenes" if s.scenes ==
                  "shared" else "on distinct scenes where the dataset allowed")
        return (f"The main items were a stratified random sample{n} instances: {s.per_cell} per {dims} cell, "
                f"{scenes}, drawn with seed {s.seed} by ROSE Studio's seeded draw (the drawn instance ids are stored "
                f"with the study), each rated by up to {cfg.target_per_instance} participants.")
    if cfg.items:
        return (f"The main items were an explicit list{n} instances chosen by the experimenter, each rated by "
                f"up to {cfg.target_per_instance} participants.")
    return ("The main items were every instance of the chosen split, subsets and templates, assigned least-rated "
            f"first up to {cfg.target_per_instance} participants each.")


def _more(xs: list) -> str:
    return f" and {len(xs) - MAX_NAMED} more" if len(xs) > MAX_NAMED else ""
