"""A ready-to-click study for the benchmarks: small dataset, fresh database, participants past the intro."""
from __future__ import annotations

from pathlib import Path

from rose_core import Dataset, build_dataset
from rose_core.store import Store
from rose_core.study import StudyConfig, create_study, finish_instructions, get_participant, give_consent, join


def prepare(tmp: Path, participants: int, scale: float = 0.05) -> tuple[Path, Path, str, list[str]]:
    ds_root = tmp / "ds"
    if not (ds_root / "manifest.json").exists():
        build_dataset(ds_root, scale=scale)
    ds = Dataset.load(ds_root)
    db_file = tmp / "bench.db"
    store = Store(db_file)
    study = create_study(store, ds, StudyConfig(
        name="bench", split="all", templates=["G-Clk", "T3", "T4"], items_per_participant=1000,
        target_per_instance=10_000, practice_items=0, attention_every=0, same_scene_multiple_templates=True))
    ids = []
    for i in range(participants):
        p = join(store, study, f"B{i:04d}", "prolific")
        give_consent(store, p)
        finish_instructions(store, get_participant(store, p.participant_id))
        ids.append(f"B{i:04d}")
    return ds_root, db_file, study.study_id, ids
