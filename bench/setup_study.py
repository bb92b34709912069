"""A ready-to-run study for the benchmarks: small dataset, fresh database, participants joined."""
from __future__ import annotations

import tomllib
from pathlib import Path

from rose_core import Dataset, build_dataset
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.joining import join
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.session import ParticipantSession
from rose_core.storage import open_store

# The shipped example facts (a fictional lab): a study with them is open, as the participant page requires.
EXAMPLE_INFO = tomllib.loads((Path(__file__).resolve().parents[1] / "docs/examples/texts/info.toml")
                            .read_text(encoding="utf-8"))["info"]


def prepare(tmp: Path, participants: int, scale: float = 0.05, intro: bool = True, db: Path | str | None = None,
            **config) -> tuple[Path, Path, str, list[str]]:
    """Build (once) a small dataset and a study; `intro=True` takes every participant past consent and
    instructions (the click benchmark), `intro=False` leaves them at the consent screen (the flow benchmark).
    `db`: the database (default: a new SQLite file in `tmp`)."""
    ds_root = tmp / "ds"
    if not (ds_root / "manifest.json").exists():
        build_dataset(ds_root, scale=scale)
    ds = Dataset.load(ds_root)
    db_file = db or tmp / "bench.db"
    store = open_store(db_file)
    cfg = dict(name="bench", split="all", templates=["G-Clk", "T3", "T4"], items_per_participant=1000,
               target_per_instance=10_000, practice_items=0, attention_every=0, same_scene_multiple_templates=True,
               info=EXAMPLE_INFO, allow_phones=True)  # the protocol-level clients run no JS, so no browser reports its window
    cfg.update(config)
    study = create_study(store, ds, StudyConfig(**cfg))
    ids = []
    for i in range(participants):
        ext = f"B{i:04d}"
        ids.append(ext)
        if intro:
            p = join(store, study, ext, "prolific")
            s = ParticipantSession(store, ds, study, p.participant_id)
            s.consent()
            s.finish_instructions()
    return ds_root, db_file, study.study_id, ids
