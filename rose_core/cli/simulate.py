"""`python -m rose_core study simulate ID`: a dry run of a study with simulated participants of known truth,
and `--clear` to delete them again."""
from __future__ import annotations

import argparse
import json
import sys
import time

from ..benchmarks.rose.dataset import Dataset, dataset_dir
from ..storage.connection import database_exists, db_location
from .options import DB_HELP


def add_parser(study_subparsers) -> None:
    """Register `study simulate` under the `study` command group."""
    p = study_subparsers.add_parser(
        "simulate", help="dry-run a study: drive simulated participants of known truth through its real session "
                         "(stored as 'simulated', never counted), or delete them again with --clear")
    p.add_argument("study_id", metavar="ID", help="the study to dry-run")
    p.add_argument("--participants", type=int, default=None, help="how many simulated participants to drive")
    p.add_argument("--truth", default=None, help="the TRUTH.toml error model (docs/examples/truth.toml)")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulation: the same seed gives the same rows (default: 0)")
    p.add_argument("--clear", action="store_true",
                   help="delete every simulated participant of the study and all their rows (one transaction)")
    p.add_argument("--json", action="store_true", help="print the ground truth as JSON")
    p.add_argument("--db", default=db_location(), help=DB_HELP)
    p.add_argument("--dataset", default=str(dataset_dir()), help="the dataset build the study was made on (default: $ROSE_DATASET_DIR or "
                                                       "data/datasets/rose-v0.1)")
    p.set_defaults(fn=run)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from ..instrument.config import StudyError, load_study
    from ..instrument.simulate import TruthError, clear_simulated, load_truth, simulate
    from ..instrument.storage_errors import StorageError
    from ..storage import open_store

    if args.clear and (args.participants is not None or args.truth is not None):
        return _fail("--clear deletes a dry run: give it without --participants and --truth")
    if not args.clear and (args.participants is None or args.truth is None):
        return _fail("study simulate needs --participants N and --truth TRUTH.toml (or --clear)")
    if not database_exists(args.db):
        return _fail(f"no database at {args.db}")
    store = open_store(args.db)
    try:
        with store.connect() as c:
            study = load_study(c, args.study_id)
        if study is None:
            return _fail(f"no study {args.study_id!r} in {args.db}")
        if args.clear:
            deleted = clear_simulated(store, study)
            print(json.dumps(deleted) if args.json else
                  f"deleted {deleted['participants']:,} simulated participants of study {study.study_id} "
                  f"({deleted['responses']:,} responses, {deleted['events']:,} events, "
                  f"{deleted['assignments']:,} assignments)")
            return 0
        truth = load_truth(args.truth)
        ds = Dataset.load(args.dataset)
        started = time.perf_counter()
        sim = simulate(store, ds, study, truth, args.participants, args.seed)
        took = time.perf_counter() - started
    except (TruthError, StudyError, StorageError) as e:
        return _fail(str(e))
    finally:
        store.close()
    summary = {**sim.summary(), "seconds": round(took, 2)}
    if args.json:
        summary["participants_truth"] = [
            {"external_id": p.external_id, "participant_id": p.participant_id, "role": p.role,
             "end_reason": p.end_reason, "main_answered": p.main_answered, "main_right": p.main_right,
             "attention_failed": p.attention_failed, "should_be_excluded": p.should_be_excluded}
            for p in sim.participants]
        print(json.dumps(summary, indent=1))
        return 0
    roles = ", ".join(f"{n} {r.replace('_', ' ')}" for r, n in summary["roles"].items() if n)
    ends = ", ".join(f"{n} {r.replace('_', ' ')}" for r, n in summary["end_reasons"].items())
    print(f"simulated {summary['participants']} participants in study {study.study_id} (seed {args.seed}; "
          f"{took:.1f} s; {summary['simulated_hours']:g} h of study time): {roles}")
    print(f"ended: {ends}")
    print(f"answers: {summary['main_answers']:,} main ({summary['main_right']:,} right), "
          f"{summary['attention_answers']:,} attention ({summary['attention_failed']:,} failed), "
          f"{summary['practice_answers']:,} practice")
    print("the exclusion rules should remove: " + (", ".join(summary["should_be_excluded"]) or "nobody"))
    print(f"they are stored as 'simulated' and never counted; to analyse them: report --include-simulated; "
          f"to delete them: study simulate {study.study_id} --clear")
    return 0
