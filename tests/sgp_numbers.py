"""Every SGP number the one-session change must keep: the optimal and random baselines (solved rate, mean step
deviation with its interval, regret curve, outcome counts) and a human episode study played through the
participant session and read back by the analysis. `tests/fixtures/sgp/numbers.json` holds them as computed on
the code before the change (`python -m tests.sgp_numbers --write`); the suite pins them.

Changed on purpose since (issue 22, the reviewer's finding on the SGP human rows): the human summary row's
`lo`/`hi` (solved %) and `lo_dev`/`hi_dev` (deviation) now resample participants, not plays or episodes, and
the row carries `participants` (3), and the human regret band's `regret_lo`/`regret_hi` resample participants
too; every agent number and every other human number (rates, means, counts) is the one pinned before. Only
`human.summary` and `human.regret` were rewritten (`python -m tests.sgp_numbers --write-human-summary`)."""
from __future__ import annotations

import argparse
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

FIXTURE = Path(__file__).parent / "fixtures" / "sgp" / "numbers.json"
BOOT, SEED = 200, 7


def _clean(v: Any) -> Any:
    """JSON-able and exact: floats as repr-stable floats, NaN as the string "nan" (never 0)."""
    if v is pd.NA:
        return None
    if isinstance(v, float):
        return "nan" if math.isnan(v) else v
    if hasattr(v, "item"):
        return _clean(v.item())
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def _frame(df) -> list[dict]:
    return [_clean(r) for r in df.to_dict(orient="records")]


def baselines(ds) -> dict:
    """The optimal agent once and the random agent 3 times per episode, cap 20, through the analysis."""
    from rose_core.analysis.sgp import agent_logs, results_tables

    logs = agent_logs(ds, tuple(sorted(ds.episodes)), samples=3, seed=SEED, step_cap=20)
    t = results_tables(logs, n_boot=BOOT, seed=SEED)
    return {"summary": _frame(t["summary"]), "outcomes": _frame(t["outcomes"]), "regret": _frame(t["regret"])}


def human_study(store, ds) -> dict:
    """Three participants through the session (one solves everything, one spends the cap on words no engine
    reads, one walks a piece away and back first), then the analysis' human figures and the study's coverage."""
    from rose_core.analysis.sgp import SgpExclusions, human_episodes, results_tables, select_human, sgp_participants
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.joining import join
    from tests.sgp_players import open_sgp_session, create_sgp, run_to_end, detour

    clock = FakeClock()
    cfg = StudyConfig(name="sgp numbers", benchmark="sgp", items_per_participant=3, target_per_instance=2,
                      practice_items=1, practice_max_attempts=2, practice_pass_fraction=0.5, attention_every=0,
                      seed=5)
    study = create_sgp(store, ds, cfg, SequentialIds("num"), clock)
    plays = {"P1": lambda s: True, "P2": lambda s: s.kind == "practice", "P3": "detour"}
    ends = {}
    for ext, how in plays.items():
        p = join(store, study, ext, "prolific", "S", ext, ids=SequentialIds(ext), clock=clock)
        s = open_sgp_session(store, ds, study, p.participant_id, clock)
        s.consent()
        s.finish_instructions()
        if how == "detour":
            kinds, end = run_to_end(s, solved=lambda sc: True, clock=clock, first=detour)
        else:
            kinds, end = run_to_end(s, solved=how, clock=clock)
        ends[ext] = [list(kinds), end.reason]
    df = human_episodes(store)
    people = sgp_participants(store, ds.dataset_hash)
    sel = select_human(df, ds, SgpExclusions(), 20, people=people)
    t = results_tables(sel.logs, n_boot=BOOT, seed=SEED)
    keep = ["episode_id", "modality", "step_cap", "ended", "steps", "response", "parsed", "passed", "total_ms"]
    return {"ends": ends, "episodes": _frame(df[keep]), "summary": _frame(t["summary"]),
            "outcomes": _frame(t["outcomes"]), "regret": _frame(t["regret"]),
            "excluded": sel.n_excluded, "other_cap": sel.other_cap}


def compute(store, ds) -> dict:
    return {"dataset_hash": ds.dataset_hash, "baselines": baselines(ds), "human": human_study(store, ds)}


def small_dataset(root: Path):
    """The suite's small SGP build (tests/conftest.py `sgp_small`)."""
    from rose_core.benchmarks.sgp.dataset import SgpDataset, build_sgp_dataset
    from rose_core.benchmarks.sgp.generate import BuildParams

    build_sgp_dataset(root, BuildParams(seed=1, geoms=(2, 3), c1=(2, 3), per_cell=3), workers=1)
    return SgpDataset.load(root)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--write-human-summary", action="store_true",
                    help="rewrite only the pinned human summary row and regret band (their intervals resample participants)")
    a = ap.parse_args()
    from rose_core.storage import open_store

    with tempfile.TemporaryDirectory() as d:
        ds = small_dataset(Path(d) / "sgp")
        store = open_store(Path(d) / "rose.db")
        numbers = compute(store, ds)
        store.close()
    text = json.dumps(numbers, indent=1, sort_keys=True)
    if a.write:
        FIXTURE.write_text(text + "\n")
    if a.write_human_summary:
        pinned = json.loads(FIXTURE.read_text())
        pinned["human"]["summary"] = json.loads(json.dumps(numbers["human"]["summary"]))
        pinned["human"]["regret"] = json.loads(json.dumps(numbers["human"]["regret"]))
        FIXTURE.write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n")
    print(text[:3000])
