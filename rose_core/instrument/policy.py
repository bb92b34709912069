"""Assignment policy as pure functions: which instance next, when an attention check, what progress to show.

Nothing here reads the database or a global random source: the caller passes the counts, what the
participant has seen and a tie-break, so tests seed them and get the same assignment every time.
"""
from __future__ import annotations

import os
from typing import Callable, Mapping, Sequence

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import Instance
from .config import StudyConfig
from .ids import stable_hash

_POOLS: dict[tuple, list[Instance]] = {}

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
    dataset, its known damaged images and config."""
    # Keyed on exactly what selects the pool (serializing the whole config for the key cost ~1 ms per screen).
    key = (id(ds), len(ds.damaged_images), cfg.split, tuple(cfg.subsets), tuple(cfg.templates),
           tuple(cfg.practice_scene_ids))
    pool = _POOLS.get(key)
    if pool is None:
        excluded = set(cfg.practice_scene_ids)
        pool = [i for i in ds.select(None if cfg.split == "all" else cfg.split, cfg.subsets, cfg.templates)
                if i.scene_id not in excluded and i.image not in ds.damaged_images]
        if len(_POOLS) > 64:
            _POOLS.clear()
        _POOLS[key] = pool
    return pool


def default_tiebreak(participant_id: str) -> Callable[[str], str]:
    """Ties between equally annotated instances, broken per participant (so participants spread out)."""
    return lambda instance_id: stable_hash(participant_id, instance_id)


def pick_main(pool: Sequence[Instance], cfg: StudyConfig, counts: Mapping[str, int], seen_ids: set[str],
              seen_scenes: set[str], counterbalance: int, position: int,
              tiebreak: Callable[[str], str]) -> Instance | None:
    """Least-annotated eligible instance, never past the target; counterbalanced by template and subset.

    `counts` are live assignments per instance (answered or held), `position` the number of main items the
    participant has answered, `counterbalance` the participant's arrival rank in the study."""
    eligible = [i for i in pool
                if counts.get(i.instance_id, 0) < cfg.target_per_instance and i.instance_id not in seen_ids
                and (cfg.same_scene_multiple_templates or i.scene_id not in seen_scenes)]
    if not eligible:
        return None

    def best(cands: list[Instance]) -> Instance:
        return min(cands, key=lambda i: (counts.get(i.instance_id, 0), tiebreak(i.instance_id)))

    if cfg.ordering == "counterbalanced":
        want_t = cfg.templates[(counterbalance + position) % len(cfg.templates)]
        want_s = cfg.subsets[(counterbalance + position // len(cfg.templates)) % len(cfg.subsets)]
        for pred in (lambda i: i.template == want_t and i.subset == want_s, lambda i: i.template == want_t):
            cands = [i for i in eligible if pred(i)]
            if cands:
                return best(cands)
    return best(eligible)


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
