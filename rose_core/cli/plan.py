"""`python -m rose_core plan`: its options, and the plan printed as a table and summary lines (or `--json`); the
planning itself is `analysis.plan`'s."""
from __future__ import annotations

import argparse
import json

from ..analysis.plan import DEFAULT_SECONDS_PER_ITEM, plan_for_config, plan_rows, summary_lines
from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import MAIN_TEMPLATES
from ..instrument.config import StudyConfig
from ..storage import open_store
from ..storage.connection import database_exists, masked


def add_command(sub: argparse._SubParsersAction, db_default: str, dataset_default: str) -> None:
    """`python -m rose_core plan`: registered by the command line (`cli.main`)."""
    from ..benchmarks.rose.records import SUBSETS, TEMPLATES

    p = sub.add_parser("plan", help="plan a human study: participants needed, expected interval widths, time, cost")
    p.add_argument("--dataset", default=dataset_default,
                   help="the ROSE dataset folder (default: $ROSE_DATASET_DIR or data/datasets/rose-v0.1)")
    p.add_argument("--db", default=db_default, help="for the median time per item so far (and --study): a SQLite file path or a "
                   "postgresql:// URL (default: $ROSE_DB or data/rose.db)")
    p.add_argument("--study", default=None, help="plan with this study's configuration and its own timing")
    p.add_argument("--study-file", default=None, help="plan with the settings of this TOML study file (before "
                   "creating it: its item sample as it will be drawn)")
    p.add_argument("--split", choices=["dev", "test", "all"], default="test",
                   help="the split the study draws its items from (default: test)")
    p.add_argument("--subsets", nargs="+", choices=list(SUBSETS), default=list(SUBSETS),
                   help="the subsets the study covers (default: all of them)")
    p.add_argument("--templates", nargs="+", choices=list(TEMPLATES), default=list(MAIN_TEMPLATES),
                   help=f"the templates the study covers (default: {' '.join(MAIN_TEMPLATES)})")
    p.add_argument("--items-per-participant", type=int, default=20,
                   help="main items each participant answers (default: 20)")
    p.add_argument("--participants-per-instance", type=int, default=3,
                   help="answers wanted per instance, each from a different participant (default: 3)")
    p.add_argument("--accuracy", type=float, required=True, help="expected share right, 0..1 (e.g. 0.95)")
    p.add_argument("--seconds-per-item", type=float, default=None,
                   help="default: the median server time per item so far, else "
                        f"{DEFAULT_SECONDS_PER_ITEM:g} s")
    p.add_argument("--practice-items", type=int, default=4,
                   help="items in one practice round, counted in the time (default: 4)")
    p.add_argument("--attention-every", type=int, default=10,
                   help="one attention check after every N main items; 0 = none (default: 10)")
    p.add_argument("--per-cell", type=int, default=None,
                   help="plan on an item sample of this many instances per cell (default: every instance)")
    p.add_argument("--by", nargs="*", choices=["template", "subset", "split"], default=["template", "subset"],
                   help="the sample's cells, with --per-cell (default: template subset)")
    p.add_argument("--sample-seed", type=int, default=1, help="the sample's seed, with --per-cell (default: 1)")
    p.add_argument("--sample-scenes", choices=["distinct", "shared"], default="distinct",
                   help="with --per-cell: items on distinct scenes, or templates drawn on shared scenes "
                        "(default: distinct)")
    p.add_argument("--hourly-rate", type=float, default=None,
                   help="pay per participant hour, for the cost (default: no cost shown)")
    p.add_argument("--currency", default="", help="written before each amount, e.g. '£' (default: none)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(fn=cmd_plan)


def cmd_plan(a: argparse.Namespace) -> int:
    ds = Dataset.load(a.dataset)
    store = open_store(a.db) if database_exists(a.db) else None
    if a.study:
        from ..instrument.study import list_studies

        if store is None:
            raise ValueError(f"--study {a.study}: no database at {masked(a.db)}")
        found = [s for s in list_studies(store) if a.study in (s.study_id, s.name)]
        if not found:
            raise ValueError(f"--study {a.study}: no such study in {masked(a.db)}")
        if found[0].config.benchmark != "rose":
            raise ValueError(f"--study {a.study}: an {found[0].config.benchmark.upper()} study; plan plans ROSE "
                             "studies (an SGP study's coverage is on its Studies page)")
        cfg, study_id = found[0].config, found[0].study_id
    elif a.study_file:
        from ..instrument.study_file import load_study_file

        cfg, study_id = load_study_file(a.study_file), None
        if cfg.benchmark != "rose":
            raise ValueError(f"--study-file {a.study_file}: an {cfg.benchmark.upper()} study; plan plans ROSE studies")
    else:
        from ..instrument.config import ItemSample

        cfg = StudyConfig(name="plan", split=a.split, subsets=a.subsets, templates=a.templates,
                          items_per_participant=a.items_per_participant,
                          target_per_instance=a.participants_per_instance, practice_items=a.practice_items,
                          attention_every=a.attention_every,
                          sample=None if a.per_cell is None else ItemSample(a.per_cell, list(a.by), a.sample_seed, a.sample_scenes))
        problems = cfg.problems()
        if problems:
            raise ValueError("; ".join(problems))
        study_id = None
    plan = plan_for_config(ds, cfg, a.accuracy, store, a.seconds_per_item, a.hourly_rate, study_id)
    if a.json:
        print(json.dumps(plan.to_json(), indent=1))
        return 0
    import pandas as pd

    print(pd.DataFrame(plan_rows(plan)).to_string(index=False))
    for line in summary_lines(plan, a.currency):
        print(line)
    return 0
