"""`python -m rose_core study approvals ID --out FILE.csv`: the review of a Prolific study, one row per participant
(`analysis.approvals`), for Prolific's submission review."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..storage.connection import database_exists, db_location


def add_parser(study_subparsers) -> None:
    """Register `approvals` under the `study` command group."""
    p = study_subparsers.add_parser(
        "approvals", help="the approvals CSV of a Prolific study: approve, reject (with reason), return, screened "
                          "out or still working, per Prolific id")
    p.add_argument("study_id", help="the study's id (Studies page, or `study list`)")
    p.add_argument("--out", required=True, help="the CSV file to write")
    p.add_argument("--no-exclusions", dest="exclusions", action="store_false",
                   help="approve every completed participant (the analyses' exclusion rules not applied)")
    p.add_argument("--db", default=db_location())
    p.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.approvals import review
    from ..analysis.selection import ExclusionRules
    from ..common.csv_safety import frame_bytes
    from ..instrument.study import get_study
    from ..storage import open_store

    if not database_exists(args.db):
        print(f"error: no database at {args.db}", file=sys.stderr)
        return 2
    store = open_store(args.db)
    study = get_study(store, args.study_id)
    if study is None:
        print(f"error: unknown study {args.study_id!r} in {args.db}", file=sys.stderr)
        return 2
    rules = ExclusionRules() if args.exclusions else ExclusionRules(False, None, None, True, False)
    r = review(store, study, rules)
    out = Path(args.out)
    tmp = out.with_name(f".{out.name}.part")
    tmp.write_bytes(frame_bytes(r.rows, "csv"))
    tmp.replace(out)
    counts = ", ".join(f"{k}: {v}" for k, v in r.counts().items()) or "no Prolific participant yet"
    print(f"wrote {len(r.rows)} rows to {out} ({counts})")
    if r.left_out:
        print(f"{r.left_out} participants did not come from Prolific (no submission to review): not in the file")
    return 0
