"""Shared fixtures: one small dataset per test session, built by the real build path."""
from __future__ import annotations

import pytest

from rose_core import Dataset, build_dataset

SMALL_SCALE = 0.05


@pytest.fixture(scope="session")
def small_dataset(tmp_path_factory) -> Dataset:
    root = tmp_path_factory.mktemp("datasets") / "small"
    build_dataset(root, seed=7, scale=SMALL_SCALE)
    return Dataset.load(root)


@pytest.fixture(scope="session")
def populated_db(small_dataset, tmp_path_factory):
    """A database filled through the real paths: a study with eight participants who answer in the
    participant flow's functions (one fails the attention check, one answers in a streak, one is too fast),
    plus three reference agents imported as runs."""
    import random as _random

    from rose_core.agents import run_agent
    from rose_core.run_import import import_run
    from rose_core.store import Store
    from rose_core.study import (
        StudyConfig, Submission, create_study, current_item, finish_instructions, get_participant, give_consent,
        join, record_response,
    )

    root = tmp_path_factory.mktemp("populated")
    store = Store(root / "rose.db")
    ds = small_dataset
    study = create_study(store, ds, StudyConfig(
        name="pilot", split="all", templates=["T1", "T2", "T3", "T4", "T5", "G-Clk", "mL-Cnt"],
        items_per_participant=60, target_per_instance=3, practice_items=0, attention_every=20,
        same_scene_multiple_templates=True, seed=2))
    rng = _random.Random(4)
    for k in range(8):
        p = join(store, study, f"H{k}", "prolific")
        give_consent(store, p)
        finish_instructions(store, get_participant(store, p.participant_id))
        p = get_participant(store, p.participant_id)
        while (item := current_item(store, ds, study, p)) is not None:
            key = item.gold_key
            right = k != 1 if item.kind == "attention" else rng.random() < 0.9
            if k == 2:  # always the same answer: a streak
                cells, count = [], 0
            elif right:
                cells, count = sorted(key.gold_cells), key.gold_count
            else:
                cells, count = [(1, 1), (2, 2)], key.gold_count + 1
            events = [{"type": "click", "r": r, "c": c, "t": 1000.0 * (i + 1)} for i, (r, c) in enumerate(cells)]
            sub = Submission(f"v{k}-{item.instance_id}", cells if item.output != "count" else [],
                             count if item.output != "click" else None, events, 400.0,
                             500.0 if k == 3 else rng.uniform(2500, 9000), (1280, 800), 1.0, False)
            record_response(store, study, p, item, sub)
            p = get_participant(store, p.participant_id)
    for name in ("oracle", "region-ignoring", "pixel"):
        out = root / f"{name}.jsonl"
        run_agent(name, ds, out)
        import_run(store, ds, out, name, kind="agent")
    return store
