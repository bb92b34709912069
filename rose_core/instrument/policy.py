"""Assignment policy as pure functions: which instance next, when an attention check, what progress to show.

Nothing here reads the database or a global random source: the caller passes the counts, what the
participant has seen and a tie-break, so tests seed them and get the same assignment every time.
"""
from __future__ import annotations

import heapq
import os
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import Instance
from .config import StudyConfig
from .ids import stable_hash
from .sample import choose_items

_POOLS: dict[tuple, list[Instance]] = {}
T = TypeVar("T")

CLOSED_TAB_GRACE_S = 60.0      # a tab closed this long (and silent) loses its held item: time for a reload
HOLDS_PER_ADDRESS_ENV = "ROSE_MAX_HOLDS_PER_ADDRESS"
DEFAULT_HOLDS_PER_ADDRESS = 5


def holds_per_address() -> int:
    """How many main items the connected tabs of one client address may hold at once (0: no cap). Behind a proxy
    every participant may share the proxy's address: raise it, or set 0, there."""
    try:
        return max(0, int(os.environ.get(HOLDS_PER_ADDRESS_ENV, DEFAULT_HOLDS_PER_ADDRESS)))
    except ValueError:
        return DEFAULT_HOLDS_PER_ADDRESS


def main_pool(ds: Dataset, cfg: StudyConfig) -> list[Instance]:
    """The instances a study may assign as main items (practice scenes and damaged images excluded); cached per
    dataset, its known damaged images and config. A created study's sample is its stored `sample_ids`; a study
    not yet created with a sample or an item list gets the sample it will draw (the planner's view)."""
    # Keyed on exactly what selects the pool (serializing the whole config for the key cost ~1 ms per screen).
    sample = cfg.sample
    key = (id(ds), len(ds.damaged_images), cfg.split, tuple(cfg.subsets), tuple(cfg.templates),
           tuple(cfg.practice_scene_ids), tuple(cfg.sample_ids), tuple(cfg.items), cfg.participants,
           cfg.same_scene_multiple_templates, cfg.target_per_instance, cfg.items_per_participant,
           None if sample is None else (sample.per_cell, tuple(sample.by), sample.seed, sample.scenes))
    pool = _POOLS.get(key)
    if pool is None:
        excluded = set(cfg.practice_scene_ids)
        if cfg.sample_ids:
            pool = [ds.instances[i] for i in cfg.sample_ids if i in ds.instances]
        else:
            pool = ds.select(None if cfg.split == "all" else cfg.split, cfg.subsets, cfg.templates)
        pool = [i for i in pool if i.scene_id not in excluded and i.image not in ds.damaged_images]
        if not cfg.sample_ids and (cfg.sample is not None or cfg.items):
            keep = set(choose_items(ds, cfg, pool))
            pool = [i for i in pool if i.instance_id in keep]
        if len(_POOLS) > 64:
            _POOLS.clear()
        _POOLS[key] = pool
    return pool


def default_tiebreak(participant_id: str) -> Callable[[str], str]:
    """Ties between equally annotated instances, broken per participant (so participants spread out)."""
    return lambda instance_id: stable_hash(participant_id, instance_id)


def best_first(cands: Sequence[T], key: Callable[[T], Any]) -> Iterator[T]:
    """`cands` by `key`, smallest first, lazily: the first costs one pass (as `min`), the rest a heap only when a
    caller asks for them (on PostgreSQL, when another participant is claiming the first one right now)."""
    if not cands:
        return
    keyed = [(key(c), n) for n, c in enumerate(cands)]
    first = min(keyed)
    yield cands[first[1]]
    keyed.remove(first)
    heapq.heapify(keyed)
    while keyed:
        yield cands[heapq.heappop(keyed)[1]]


def rank_main(pool: Sequence[Instance], cfg: StudyConfig, counts: Mapping[str, int], seen_ids: set[str],
              seen_scenes: set[str], counterbalance: int, position: int,
              tiebreak: Callable[[str], str]) -> Iterator[Instance]:
    """Eligible instances, best first: least annotated (every item reaches k raters before any reaches k + 1,
    among the items this participant may still take), never at the target; within a level counterbalanced by
    template and subset (the wanted template and subset first, then the wanted template, then the rest).

    `counts` are live assignments per instance (answered or held), `position` the number of main items the
    participant has answered, `counterbalance` the participant's arrival rank in the study."""
    eligible = [i for i in pool
                if counts.get(i.instance_id, 0) < cfg.target_per_instance and i.instance_id not in seen_ids
                and (cfg.same_scene_multiple_templates or i.scene_id not in seen_scenes)]
    if cfg.ordering == "counterbalanced" and eligible:
        want_t = cfg.templates[(counterbalance + position) % len(cfg.templates)]
        want_s = cfg.subsets[(counterbalance + position // len(cfg.templates)) % len(cfg.subsets)]

        def group(i: Instance) -> int:
            return 0 if i.template == want_t and i.subset == want_s else 1 if i.template == want_t else 2
    else:
        def group(i: Instance) -> int:
            return 0

    def key(i: Instance) -> tuple[int, int, str]:
        return counts.get(i.instance_id, 0), group(i), tiebreak(i.instance_id)

    yield from best_first(eligible, key)


def attention_slot_due(cfg: StudyConfig, answered_main: int, done_slots: set[int]) -> int | None:
    """The attention check due now (after every N-th main answer, never after the last), or None."""
    if not cfg.attention_every or not answered_main or answered_main % cfg.attention_every:
        return None
    if answered_main >= cfg.items_per_participant:
        return None
    slot = answered_main // cfg.attention_every
    return None if slot in done_slots else slot


def attention_scene(pool: Sequence[Instance], participant_id: str, slot: int) -> str:
    """A real scene of the pool for the check, chosen by a hash of (participant, slot)."""
    return pool[int(stable_hash(participant_id, str(slot)), 16) % len(pool)].scene_id


def progress_text(cfg: StudyConfig, answered_main: int, answered_attention: int) -> str:
    """'Item k of n', counting attention checks as items (so they do not stand out)."""
    n = cfg.items_per_participant + cfg.attention_checks
    return f"Item {min(answered_main + answered_attention + 1, n)} of {n}"


def shown_at(a, assigns) -> float:
    """When the item was put on the participant's screen, on the server's clock: the start of its server-timed
    answer (assigned → answered). A practice round is assigned at once, but its items are shown one after
    another: each one once the feedback of the one before was acknowledged."""
    if a.kind != "practice":
        return a.assigned_at
    before = [b.acknowledged_at for b in assigns if b.kind == "practice" and b.attempt == a.attempt
              and b.position < a.position and b.acknowledged_at is not None]
    return max([a.assigned_at, *before])
