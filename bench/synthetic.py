"""A large database for the dashboard benchmark: many participants and model runs, written with the real
scorer (responses are scored exactly as the app scores them) and stored through the storage layer's writers
(`storage.participants`, `storage.responses.write_responses`, `storage.runs.store_run`), a run at a time."""
from __future__ import annotations

import json
import random
from pathlib import Path

from rose_core import Dataset, score
from rose_core.benchmarks.rose.instances import protocol_string
from rose_core.benchmarks.rose.records import TEMPLATE_OUTPUT
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store
from rose_core.storage.connection import Store, now
from rose_core.storage.participants import finish, insert_participant, set_consent, set_instructions, set_practice
from rose_core.storage.responses import ResponseRow, write_responses
from rose_core.storage.runs import ImportedRun, store_run

PROFILES = {  # per-template chance of a right answer, roughly like the paper's models
    "model-A": (0.93, 0.97, 0.93, 0.84, 0.92), "model-B": (0.92, 0.93, 0.75, 0.64, 0.70),
    "model-C": (0.80, 0.65, 0.40, 0.38, 0.29), "model-D": (0.64, 0.57, 0.21, 0.21, 0.06),
    "model-E": (0.66, 0.31, 0.04, 0.06, 0.03), "model-F": (0.48, 0.22, 0.01, 0.01, 0.01),
    "model-G": (0.62, 0.22, 0.10, 0.21, 0.05), "model-H": (0.64, 0.21, 0.10, 0.21, 0.05),
    "model-I": (0.61, 0.31, 0.05, 0.05, 0.03), "model-J": (0.90, 0.85, 0.60, 0.55, 0.50),
}
T_INDEX = {"T1": 0, "T2": 1, "T3": 2, "T4": 3, "T5": 4, "G-Clk": 2, "mL-Cnt": 1}


def _answer(inst, scene, right: bool, rng: random.Random) -> str:
    out = TEMPLATE_OUTPUT[inst.template]
    if right:
        return inst.protocol_answer
    cells = list(inst.gold.cells or [])
    if cells and rng.random() < 0.5:
        cells.pop(rng.randrange(len(cells)))
    else:
        cells.append((rng.randint(1, scene.rows), rng.randint(1, scene.cols)))
    count = (inst.gold.count or 0) + rng.choice([-1, 1, 2])
    return protocol_string(out, max(0, count), cells)


# The scorer version the rows carry: the schema's for rows stored before versions were recorded, so a rescore
# (bench_parser.py) rewrites every one.
SCORER_VERSION = "1"


def _row(run_id, pid, inst, text, t, rng, human) -> ResponseRow:
    s = score_key(inst)(text)
    return ResponseRow(run_id, inst.instance_id, inst.template, inst.subset, inst.split, inst.scene_id, text,
                       s.parsed.canonical, json.dumps(s.parsed.to_json()), int(s.valid), int(s.passed), s.failure,
                       json.dumps(list(s.errors)) if s.errors else "[]", t, participant_id=pid,  # most have none
                       total_ms=rng.lognormvariate(8.5, 0.5) if human else None,   # drawn in this order
                       first_action_ms=rng.lognormvariate(7.3, 0.5) if human else None, scorer_version=SCORER_VERSION)


_DS: Dataset | None = None


def score_key(inst):
    key = _DS.key(inst.instance_id)
    return lambda text: score(key, text)


def store_model_run(store: Store, ds: Dataset, run_id: str, name: str, rows: list[ResponseRow], t: float) -> None:
    """A synthetic model run and its rows, in one transaction (as an imported run is stored)."""
    store_run(store, ImportedRun(run_id, "model", name, None, "synthetic", ds.dataset_hash, {}), rows, replace=False,
              imported_at=t)


def populate(db_file: Path, ds: Dataset, human_responses: int = 100_000, items_each: int = 50,
             models: int = 10, seed: int = 0) -> Store:
    global _DS
    _DS = ds
    rng = random.Random(seed)
    store = open_store(db_file)
    study = create_study(store, ds, StudyConfig(name="bench", split="all", practice_items=0,
                                                templates=["T1", "T2", "T3", "T4", "T5", "G-Clk", "mL-Cnt"],
                                                items_per_participant=items_each, target_per_instance=1000))
    insts = list(ds.instances.values())
    n_part = human_responses // items_each
    t = now()
    rows, pids = [], []
    for k in range(n_part):
        pid = f"p{k:06d}"
        pids.append(pid)
        for inst in rng.sample(insts, items_each):
            scene = ds.scenes[inst.scene_id]
            rows.append(_row(study.run_id, pid, inst, _answer(inst, scene, rng.random() < 0.97, rng), t, rng, True))
    with store.write() as c:
        for k, pid in enumerate(pids):   # each a finished participant: consent, instructions, practice passed
            insert_participant(c, pid, study.study_id, f"BENCH{k}", "prolific", None, None, t)
            set_consent(c, pid, t)
            set_instructions(c, pid, t)
            set_practice(c, pid, True, 0)
            finish(c, pid, "completed", t)
        write_responses(c, rows)
    for name in list(PROFILES)[:models]:
        prof = PROFILES[name]
        run_id = f"model:{name}"
        mrows = [_row(run_id, "", inst, _answer(inst, ds.scenes[inst.scene_id],
                                                rng.random() < prof[T_INDEX[inst.template]], rng), t, rng, False)
                 for inst in insts]
        store_model_run(store, ds, run_id, name, mrows, t)
    return store
