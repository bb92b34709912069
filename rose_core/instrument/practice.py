"""Practice that trains what the study asks: every kind of answer, and a retry on fresh items.

Kinds of answer (what a participant must learn to do, not which template): a count; clicks in a named
region (a row, a column, a rectangle or the whole grid: T3, G-Clk); clicks in the highlighted region (T4);
clicks outside an excluded region plus a count (T5). A round holds at least one item of every kind the
study's templates ask for; every round is on scenes no other round uses, so a retry never shows an item
whose answer was just revealed, and every practice scene is outside the main pool.

What a round teaches beyond the kinds: a count is practised on L-Cnt (T2, counting inside a named region) before
G-Cnt when the study has both; every round starts with an easy scene (among the top quarter of its candidates by
the dataset's visibility figure, `visible_px` of the hardest odd cell); and one item of the round, when the study's
templates offer one, is an abstention: nothing in the region fits, so the right answer is "click nothing, press
DONE" (or the number 0).
"""
from __future__ import annotations

import random
from collections import defaultdict
from typing import Literal

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import TEMPLATE_OUTPUT, Instance
from .config import StudyConfig, StudyError
from .policy import main_pool

PracticeKind = Literal["count", "click_region", "click_highlight", "click_outside_count"]
PRACTICE_KIND: dict[str, PracticeKind] = {
    "T1": "count", "T2": "count", "mL-Cnt": "count", "T3": "click_region", "G-Clk": "click_region",
    "T4": "click_highlight", "T5": "click_outside_count",
}
# Within a kind, the template practised first: L-Cnt (T2) before G-Cnt (T1), a named region before the grid.
PRACTICE_PREFERENCE: tuple[str, ...] = ("T2", "T1", "mL-Cnt", "T3", "G-Clk", "T4", "T5")
KIND_WORDS: dict[PracticeKind, str] = {
    "count": "count", "click_region": "click in a named region", "click_highlight": "click in the highlighted region",
    "click_outside_count": "click outside the excluded region and submit a count",
}


def practice_kinds(templates: list[str]) -> list[PracticeKind]:
    """The kinds of answer a study's templates ask for, in the order they first appear."""
    out: list[PracticeKind] = []
    for t in templates:
        k = PRACTICE_KIND[t]
        if k not in out:
            out.append(k)
    return out


def round_slots(cfg: StudyConfig) -> list[str]:
    """The template of each item of one round: kinds round-robin, templates within a kind in turn."""
    kinds = practice_kinds(cfg.templates)
    by_kind = {k: sorted((t for t in cfg.templates if PRACTICE_KIND[t] == k), key=PRACTICE_PREFERENCE.index)
               for k in kinds}
    used = defaultdict(int)
    slots = []
    for i in range(cfg.practice_items):
        k = kinds[i % len(kinds)]
        slots.append(by_kind[k][used[k] % len(by_kind[k])])
        used[k] += 1
    return slots


def pool_needs(cfg: StudyConfig) -> dict[str, int]:
    """Practice instances each template must supply, on distinct scenes: items per round × attempts."""
    need: dict[str, int] = defaultdict(int)
    for t in round_slots(cfg):
        need[t] += cfg.practice_max_attempts
    return dict(need)


def plan_practice(ds: Dataset, cfg: StudyConfig, rng: random.Random) -> tuple[list[list[str]], list[str]]:
    """(practice rounds, scenes reserved out of the main pool); refuses a study that cannot supply them."""
    if cfg.practice_items == 0:
        return [], []
    kinds = practice_kinds(cfg.templates)
    if cfg.practice_items < len(kinds):
        raise StudyError(
            f"practice_items: the study's templates ask for {len(kinds)} kinds of answer "
            f"({'; '.join(KIND_WORDS[k] for k in kinds)}), so each practice round needs at least {len(kinds)} "
            f"items (or 0 for no practice), got {cfg.practice_items}")
    scenes_needed = cfg.practice_items * cfg.practice_max_attempts
    reserved: list[str] = []
    pool_scenes = sorted({i.scene_id for i in main_pool(ds, cfg)})
    outside = [i for i in ds.instances.values() if i.template in cfg.templates and i.subset in cfg.subsets
               and i.scene_id not in set(pool_scenes)]
    outside_scenes = len({i.scene_id for i in outside})
    if outside_scenes < scenes_needed:
        # Not enough scenes outside the pool (split "all", or few scenes): keep enough of the pool's out of it.
        if len(pool_scenes) <= scenes_needed:
            raise StudyError(
                f"practice: {cfg.practice_items} items × {cfg.practice_max_attempts} attempts need {scenes_needed} "
                f"distinct practice scenes (every round on fresh scenes); outside the main pool there are "
                f"{outside_scenes}, and the main pool ({len(pool_scenes)} scenes) cannot give {scenes_needed} and "
                f"keep one (fewer practice items or attempts, or more subsets)")
        reserved = sorted(rng.sample(pool_scenes, scenes_needed))
        keep = set(reserved)
        outside = [i for i in ds.instances.values() if i.scene_id in keep and i.template in cfg.templates]
    by_template: dict[str, list[Instance]] = defaultdict(list)
    for i in sorted(outside, key=lambda i: i.instance_id):
        by_template[i.template].append(i)
    used_scenes: set[str] = set()
    rounds: list[list[str]] = []
    slots = round_slots(cfg)
    for attempt in range(cfg.practice_max_attempts):
        abstain_at = _abstention_slot(slots, {t: [i for i in by_template[t] if i.scene_id not in used_scenes]
                                              for t in set(slots)})
        chosen = []
        for pos, t in enumerate(slots):
            cands = [i for i in by_template[t] if i.scene_id not in used_scenes]
            if not cands:
                need = pool_needs(cfg)
                have = {tt: len({i.scene_id for i in by_template[tt]}) for tt in need}
                raise StudyError(
                    f"practice: round {attempt + 1} needs a fresh {t} item on a scene no other round uses; each "
                    f"template must supply items per round × attempts on distinct scenes: needed {need}, "
                    f"available outside the main pool {have} (fewer practice items or attempts, or more subsets)")
            shaped = [i for i in cands if is_abstention(i) == (pos == abstain_at)] or cands
            if pos == 0:
                shaped = easiest_quarter(ds, shaped)
            pick = rng.choice(shaped)
            chosen.append(pick.instance_id)
            used_scenes.add(pick.scene_id)
        rounds.append(chosen)
    return rounds, reserved


def is_abstention(i: Instance) -> bool:
    """Nothing in the instance's region fits: the right answer clicks nothing and presses DONE, or counts 0."""
    return not i.gold.cells if i.gold.cells is not None else i.gold.count == 0


def _abstention_slot(slots: list[str], fresh: dict[str, list[Instance]]) -> int | None:
    """Which item of a round is the abstention: a click item first ("nothing to click: DONE"), else a count of 0;
    never the first item (the easy start), and none when the templates offer no such instance."""
    order = sorted(range(1, len(slots)), key=lambda k: (TEMPLATE_OUTPUT[slots[k]] != "click", k))
    return next((k for k in order if any(is_abstention(i) for i in fresh[slots[k]])), None)


def visibility(ds: Dataset, i: Instance) -> float | None:
    """The dataset's visibility figure of the instance's scene (visible_px of its hardest odd cell), if stored."""
    v = ds.scenes[i.scene_id].params.get("visibility") if i.scene_id in ds.scenes else None
    px = v.get("visible_px") if isinstance(v, dict) else None
    return float(px) if isinstance(px, (int, float)) and not isinstance(px, bool) else None


def easiest_quarter(ds: Dataset, cands: list[Instance]) -> list[Instance]:
    """The candidates in the top quarter by visibility (at least one); all of them when no figure is stored."""
    scored = [(visibility(ds, i), i) for i in cands]
    if any(v is None for v, _ in scored):
        return cands
    scored.sort(key=lambda vi: (-vi[0], vi[1].instance_id))
    return [i for _, i in scored[:max(1, len(scored) // 4)]]
