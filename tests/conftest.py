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
    """A database filled through the real paths, deterministically (sequential ids, a fake server clock): a
    study with eight participants who answer through ParticipantSession (one fails the attention check, one
    answers in a streak, one is too fast), plus three reference agents imported as runs."""
    import random as _random

    from rose_core.benchmarks.rose.agents import run_agent
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.run_import import import_run
    from rose_core.store import Store
    from rose_core.study import End, StudyConfig, create_study

    from .participants import new_session, submit_payload

    root = tmp_path_factory.mktemp("populated")
    store = Store(root / "rose.db")
    ds = small_dataset
    ids, clock = SequentialIds("pop"), FakeClock()
    study = create_study(store, ds, StudyConfig(
        name="pilot", split="all", templates=["T1", "T2", "T3", "T4", "T5", "G-Clk", "mL-Cnt"],
        items_per_participant=60, target_per_instance=3, practice_items=0, attention_every=20,
        same_scene_multiple_templates=True, seed=2), ids=ids, clock=clock)
    rng = _random.Random(4)
    for k in range(8):
        session = new_session(store, ds, study, f"H{k}", ids=ids, clock=clock)
        while not isinstance(screen := session.screen(), End):
            key = screen.item.key
            right = k != 1 if screen.kind == "attention" else rng.random() < 0.9
            if k == 2:  # always the same answer: a streak
                cells, count = [], 0
            elif right:
                cells, count = sorted(key.gold_cells), key.gold_count
            else:
                cells, count = [(1, 1), (2, 2)], key.gold_count + 1
            clock.advance(0.5 if k == 3 else rng.uniform(2.5, 9.0))  # server time: assigned -> answered
            session.submit(screen, submit_payload(screen, cells if screen.item.mode != "count" else [],
                                                  count if screen.item.mode != "click" else None))
    for name in ("oracle", "region-ignoring", "pixel"):
        out = root / f"{name}.jsonl"
        run_agent(name, ds, out)
        import_run(store, ds, out, name, kind="agent")
    store.checkpoint()  # tests copy the file: put everything in it
    return store
