"""Fixtures of the analysis tests, filled through the real paths (import, the participant functions), on both
storage backends (tests/conftest.py: `backend`).

`panel` is deterministic whatever ids `study.join` draws: every participant answers every instance of a small
pool (so who answered what does not depend on assignment tie-breaks) and whether an answer is right is a
function of (participant, instance) only (not of the order the items came in)."""
from __future__ import annotations

import hashlib
import json

import pytest

from rose_core.benchmarks.rose.records import MAIN_TEMPLATES
from rose_core.runs.importer import import_run
from rose_core.storage import open_store

RATES = {"T1": 80.0, "T2": 60.0, "T3": 40.0, "T4": 20.0, "T5": 0.0}
PANEL = ["P0", "P1", "P2", "P3"]
PANEL_TEMPLATES = ["T1", "T3", "G-Clk"]


def answers_right(external_id: str, instance_id: str, share: float = 0.85) -> bool:
    """A fixed draw per (participant, instance): the fixture's answers do not depend on item order."""
    h = int(hashlib.sha256(f"{external_id}:{instance_id}".encode()).hexdigest()[:8], 16)
    return h / 0xFFFFFFFF < share


@pytest.fixture
def known_run(small_dataset, store, tmp_path):
    """A run whose per-template PASS is exactly RATES (first k of each template right, the rest wrong)."""
    lines = []
    by_t = {t: [i for i in small_dataset.instances.values() if i.template == t] for t in MAIN_TEMPLATES}
    n = min(len(v) for v in by_t.values()) // 5 * 5  # a multiple of 5: every rate is exact
    for t, insts in by_t.items():
        for k, inst in enumerate(insts[:n]):
            right = k < RATES[t] / 100 * n
            lines.append({"instance_id": inst.instance_id,
                          "response": inst.protocol_answer if right else "I am not sure.",
                          "dataset_hash": small_dataset.dataset_hash})
    f = tmp_path / "known.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_run(store, small_dataset, f, "known-model")
    return store


@pytest.fixture(scope="session")
def panel(small_dataset, agent_runs, backend, tmp_path_factory, request):
    """(store, study): four participants who each answer every dev instance of three templates in the real
    participant flow, plus the oracle and pixel agents on the same instances (their lines of the agents' runs,
    `agent_runs`, written once per test run: each line is the agent's answer to its instance alone, seeded by
    the instance, so it is the line a run of the dev split alone writes, in the same order)."""
    from rose_core.instrument.ids import SequentialIds
    from rose_core.instrument.screens import End, ItemScreen
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.policy import main_pool
    from rose_core.instrument.rose_study import create_study
    from tests.participants import new_session, submit_payload

    ds = small_dataset
    root = tmp_path_factory.mktemp("panel")
    store = open_store(root / "rose.db" if backend == "sqlite"
                       else request.getfixturevalue("pg_server").fresh("_populated"))
    cfg = StudyConfig(name="panel", split="dev", templates=PANEL_TEMPLATES, items_per_participant=1,
                      target_per_instance=len(PANEL), practice_items=0, attention_every=0, ordering="random",
                      same_scene_multiple_templates=True, seed=3)
    cfg.items_per_participant = len(main_pool(ds, cfg))
    study = create_study(store, ds, cfg, ids=SequentialIds("panel"))
    for ext in PANEL:
        session = new_session(store, ds, study, ext)
        while not isinstance(screen := session.screen(), End):
            assert isinstance(screen, ItemScreen), screen
            key, mode = screen.item.key, screen.item.mode
            if answers_right(ext, screen.item.item_id):
                cells, count = sorted(key.gold_cells), key.gold_count
            else:  # a plausible slip: one target missed, or a count off by one
                cells, count = sorted(key.gold_cells)[1:], key.gold_count + 1
            session.submit(screen, submit_payload(screen, cells if mode != "count" else [],
                                                  count if mode != "click" else None))
    ids = {i.instance_id for i in main_pool(ds, cfg)}
    for name in ("oracle", "pixel"):
        out = root / f"{name}.jsonl"
        keep = [ln for ln in (agent_runs / f"{name}.jsonl").read_text().splitlines()
                if json.loads(ln)["instance_id"] in ids]
        out.write_text("\n".join(keep) + "\n")
        import_run(store, ds, out, name, kind="agent")
    yield store, study
    store.close()
