"""`python -m rose_core …`: build, check and score from the command line."""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from . import composition as comp
from .dataset import Dataset, DatasetError, build_dataset, dataset_dir
from .metrics import ScoredRow, format_summary, summarize
from .responses import ResponseFileError, read_responses
from .scoring import score


def _progress_bar(desc: str):
    from tqdm import tqdm

    bar = tqdm(total=0, desc=desc, unit="scene", file=sys.stderr, disable=None)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()
        if done == total:
            bar.close()

    return update


def cmd_build(a: argparse.Namespace) -> int:
    manifest = build_dataset(Path(a.out), seed=a.seed, scale=a.scale, workers=a.workers,
                             progress=_progress_bar("build"), replace=a.force)
    c = manifest["composition"]
    print(f"built {a.out}  (seed {a.seed}, scale {a.scale}, dataset hash {manifest['dataset_hash']})")
    print(f"scenes {c['scenes']}  images {c['images']}  instances T1-T5 {c['instances']}  "
          f"bridge instances {c['bridge_instances']}")
    print(f"{'subset':<14}{'scenes':>8}{'dev':>8}{'test':>8}")
    for s, v in c["by_subset"].items():
        print(f"{s:<14}{v['scenes']:>8}{v['dev']:>8}{v['test']:>8}")
    print(f"{'Total':<14}{c['scenes']:>8}{c['by_split']['dev']:>8}{c['by_split']['test']:>8}")
    print("zero-target (abstention) instances: " +
          ", ".join(f"{t} {n}" for t, n in c["zero_target_instances"].items() if n))
    return 0


def cmd_check(a: argparse.Namespace) -> int:
    ds = Dataset.load(a.dataset)
    if a.instance not in ds.instances:
        print(f"error: unknown instance {a.instance!r} in {a.dataset}", file=sys.stderr)
        return 2
    s = score(ds.key(a.instance), a.response)
    print(json.dumps(s.to_json(), ensure_ascii=False))
    return 0


def cmd_score(a: argparse.Namespace) -> int:
    ds = Dataset.load(a.dataset)
    lines = read_responses(a.responses, ds, default_solver=a.solver)
    by_solver: dict[str, list[ScoredRow]] = defaultdict(list)
    for ln in lines:
        inst = ds.instances[ln.instance_id]
        s = score(ds.key(ln.instance_id), ln.response)
        by_solver[ln.solver or Path(a.responses).stem].append(ScoredRow(inst.template, inst.subset, s.passed, s.valid))
    out = {}
    for solver, rows in by_solver.items():
        out[solver] = summarize(rows)
    if a.json:
        print(json.dumps({k: v.to_json() for k, v in out.items()}, indent=1))
    else:
        for solver, summ in out.items():
            print(format_summary(solver, summ))
            print()
    return 0


def cmd_export_table(a: argparse.Namespace) -> int:
    from .exports import export_table
    from .store import Store

    if not Path(a.db).exists():
        print(f"error: no database at {a.db}", file=sys.stderr)
        return 2
    n = export_table(Store(a.db), a.table, a.format, Path(a.out), a.study)
    print(f"wrote {n} {a.table} rows to {a.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rose_core", description="ROSE Studio core: build, check, score.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="generate scenes, renderings and instances into a dataset folder")
    b.add_argument("--out", default=str(dataset_dir()))
    b.add_argument("--seed", type=int, default=comp.DEFAULT_SEED)
    b.add_argument("--scale", type=float, default=1.0, help="fraction of v0.1's scenes per subset, in (0, 1]")
    b.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    b.add_argument("--force", action="store_true", help="replace an existing dataset folder")
    b.set_defaults(fn=cmd_build)
    c = sub.add_parser("check", help="score one response to one instance, as JSON")
    c.add_argument("--dataset", default=str(dataset_dir()))
    c.add_argument("--instance", required=True)
    c.add_argument("--response", required=True)
    c.set_defaults(fn=cmd_check)
    s = sub.add_parser("score", help="score a JSON-lines file of responses")
    s.add_argument("--dataset", default=str(dataset_dir()))
    s.add_argument("--responses", required=True)
    s.add_argument("--solver", default=None, help="solver name for lines without a 'solver' field")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_score)
    from .store import db_path

    e = sub.add_parser("export-table", help="responses or events from the database, as CSV or Parquet")
    e.add_argument("--db", default=str(db_path()))
    e.add_argument("--table", choices=["responses", "events"], default="responses")
    e.add_argument("--format", choices=["csv", "parquet"], default="csv")
    e.add_argument("--study", default=None, help="only this study (default: everything)")
    e.add_argument("--out", required=True)
    e.set_defaults(fn=cmd_export_table)
    a = ap.parse_args(argv)
    try:
        return a.fn(a)
    except (DatasetError, ResponseFileError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
