"""`python -m rose_core study delete | exclude | include | mark-test`: what the Studies page does to a study and
its participants, from the command line (`instrument.manage`)."""
from __future__ import annotations

import argparse
import getpass
import sys

from ..storage.connection import database_exists, db_location
from .options import DB_HELP


def add_parser(study_subparsers) -> None:
    """Register `delete`, `exclude`, `include` and `mark-test` under the `study` command group."""
    d = study_subparsers.add_parser("delete", help="delete a study and everything it stored (its name, exactly, as --confirm NAME)")
    d.add_argument("study_id", help="the study's id")
    d.add_argument("--confirm", required=True, metavar="NAME", help="the study's name, exactly: nothing is "
                                                                    "deleted otherwise")
    d.add_argument("--db", default=db_location(), help=DB_HELP)
    d.set_defaults(fn=run_delete)
    for name, helptext in (("exclude", "exclude a participant by hand, with a reason (audited)"),
                           ("include", "lift a participant's exclusion (the decision stays in the audit trail)"),
                           ("mark-test", "mark a participant as a test: out of every number, export and approval")):
        p = study_subparsers.add_parser(name, help=helptext)
        p.add_argument("study_id", help="the study's id")
        p.add_argument("participant", help="the participant's external id (e.g. their Prolific id)")
        if name == "exclude":
            p.add_argument("--reason", required=True, help="why, in words: kept with the exclusion for the audit")
        if name == "mark-test":
            p.add_argument("--undo", action="store_true", help="count the participant again")
        p.add_argument("--by", help="who decides (default: the system user's name)")
        p.add_argument("--db", default=db_location(), help=DB_HELP)
        p.set_defaults(fn=run_participant, action=name)


def _store(db: str):
    from ..storage import open_store

    if not database_exists(db):
        raise ValueError(f"no database at {db}")
    return open_store(db)


def run_delete(args: argparse.Namespace) -> int:
    from ..instrument.manage import delete_study
    from ..instrument.config import StudyError

    try:
        gone = delete_study(_store(args.db), args.study_id, args.confirm)
    except StudyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"deleted study {gone.study_id} ({gone.name}): "
          + ", ".join(f"{n} {t}" for t, n in gone.rows.items() if n))
    return 0


def run_participant(args: argparse.Namespace) -> int:
    from ..instrument import manage
    from ..instrument.config import StudyError
    from ..storage import participants

    store = _store(args.db)
    args.by = args.by or getpass.getuser()
    with store.connect() as c:
        p = participants.find_participant(c, args.study_id, args.participant)
    if p is None:
        print(f"error: study {args.study_id!r} has no participant {args.participant!r}", file=sys.stderr)
        return 2
    try:
        if args.action == "exclude":
            manage.exclude(store, p.participant_id, args.reason, args.by)
        elif args.action == "include":
            manage.lift_exclusion(store, p.participant_id, args.by)
        else:
            manage.mark_test(store, p.participant_id, not args.undo, args.by)
    except StudyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{args.action}{' --undo' if getattr(args, 'undo', False) else ''}: {args.participant} (by {args.by})")
    return 0
