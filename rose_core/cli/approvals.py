"""`python -m rose_core study approvals ID --out FILE.csv`: the review of a Prolific study, one row per participant
(`analysis.approvals`), for Prolific's submission review."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..storage.connection import database_exists, db_location
from .options import DB_HELP


def add_parser(study_subparsers) -> None:
    """Register `approvals` under the `study` command group."""
    p = study_subparsers.add_parser(
        "approvals", help="the approvals CSV of a Prolific study: approve, reject (with reason), return, screened "
                          "out or still working, per Prolific id")
    p.add_argument("study_id", help="the study's id (Studies page, or `study list`)")
    p.add_argument("--out", required=True, help="the CSV file to write")
    p.add_argument("--no-exclusions", dest="exclusions", action="store_false",
                   help="approve every completed participant (the analyses' exclusion rules not applied)")
    p.add_argument("--codes", metavar="CSV",
                   help="the completion codes the submissions reported (e.g. Prolific's submissions export: a "
                        "participant id and a completion code column): each is checked against the participant's "
                        "own code; a wrong one is rejected (BAD_CODE)")
    p.add_argument("--db", default=db_location(), help=DB_HELP)
    p.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.approvals import read_reported_codes, review
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
    try:
        reported = read_reported_codes(args.codes) if args.codes else None
    except ValueError as e:
        print(f"error: --codes: {e}", file=sys.stderr)
        return 2
    r = review(store, study, rules, reported)
    out = Path(args.out)
    tmp = out.with_name(f".{out.name}.part")
    tmp.write_bytes(frame_bytes(r.rows, "csv"))
    tmp.replace(out)
    counts = ", ".join(f"{k}: {v}" for k, v in r.counts().items()) or "no Prolific participant yet"
    print(f"wrote {len(r.rows)} rows to {out} ({counts})")
    if reported is not None:
        checks = r.rows["code_check"].value_counts()
        print("completion codes: " + ", ".join(f"{k}: {int(checks.get(k, 0))}" for k in ("ok", "wrong", "missing")))
    if r.left_out:
        print(f"{r.left_out} participants did not come from Prolific (no submission to review): not in the file")
    return 0
