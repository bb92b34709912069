"""`python -m rose_core study …`: a study as a file. Create one from a TOML study file, show, list, close, clone,
and write its settings back as a file that creates the same study.

Further sub-commands live in their own modules (`simulate`, `approvals`, `manage`), imported here: each has
`add_parser(study_subparsers)`, which registers its sub-commands with the function each runs."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ..benchmarks.rose.dataset import Dataset, dataset_dir
from ..benchmarks.sgp.dataset import SgpDataset, sgp_dataset_dir
from ..instrument.config import Study, StudyError
from ..instrument.page_data import PUBLIC_URL_ENV, participant_links
from ..storage.connection import database_exists, db_location, masked
from . import approvals, manage, simulate
from .options import DB_HELP

DEFAULT_ACCURACY = 0.9             # `study show`'s expected accuracy for the planner's interval widths


def _store(a: argparse.Namespace, create: bool = False):
    from ..storage import open_store

    if not create and not database_exists(a.db):
        raise StudyError(f"no database at {masked(a.db)}")
    return open_store(a.db)


def _dataset(a: argparse.Namespace, benchmark: str) -> Any:
    return SgpDataset.load(a.episodes) if benchmark == "sgp" else Dataset.load(a.dataset)


def _find(store, ref: str) -> Study:
    """A study by id, or by name when exactly one has it."""
    from ..instrument.study import get_study, list_studies

    s = get_study(store, ref)
    if s is not None:
        return s
    named = [s for s in list_studies(store) if s.name == ref]
    if len(named) == 1:
        return named[0]
    if named:
        raise StudyError(f"{len(named)} studies are named {ref!r}: give the id ({', '.join(s.study_id for s in named)})")
    raise StudyError(f"no study {ref!r} (see `study list`)")


def _link_lines(study: Study, base_url: str | None) -> list[str]:
    base = (base_url or os.environ.get(PUBLIC_URL_ENV) or "").strip().rstrip("/")
    if not base:
        return [f"participant link: <app address>/?study={study.study_id}  (set ${PUBLIC_URL_ENV} or --base-url "
                "for the full link)"]
    prolific, plain = participant_links(base, study.study_id)
    return [f"participant link (Prolific): {prolific}", f"participant link (plain): {plain}"]


def cmd_create(a: argparse.Namespace) -> int:
    from ..instrument.study_edit import create_any
    from ..instrument.study_file import load_study_file

    cfg = load_study_file(a.file)
    ds = _dataset(a, cfg.benchmark)
    store = _store(a, create=True)
    try:
        study = create_any(store, ds, cfg)
    except StudyError as e:
        raise StudyError(f"{a.file}: {_toml_words(str(e))}; nothing was created") from None
    print(f"created study {study.study_id} ({study.name}), version {study.version}, dataset {study.dataset_hash}")
    print("\n".join(_link_lines(study, a.base_url)))
    if not study.active and cfg.benchmark == "rose":
        from ..instrument.texts import opening_problems

        print("DRAFT: closed to participants until these are filled in (the study file's [info] and [texts], or the "
              "Studies page):\n" + "\n".join(f"  {p}" for p in opening_problems(study.config)))
    return 0


def _toml_words(message: str) -> str:
    from ..instrument.study_file import toml_message

    return "; ".join(toml_message(m) for m in message.split("; "))


def show_data(store, study: Study, ds: Any, accuracy: float, seconds: float | None) -> dict:
    """`study show --json`: the study, its settings (as the study file names them), pool, progress and plan."""
    from ..instrument.study_file import settings

    out: dict[str, Any] = {
        "study": {"study_id": study.study_id, "name": study.name, "version": study.version,
                  "active": study.active, "dataset_hash": study.dataset_hash,
                  "created_at": dt.datetime.fromtimestamp(study.created_at, dt.timezone.utc).isoformat()},
        "settings": settings(study.config)}
    if study.config.benchmark == "sgp":
        from ..instrument.episode_session import sgp_coverage

        out["progress"] = sgp_coverage(store, ds, study)
        return out
    from ..analysis.plan import plan_for_config
    from ..instrument.monitor import coverage
    from ..instrument.policy import main_pool
    from ..instrument.sample import describe

    pool = main_pool(ds, study.config)
    cells = Counter(f"{i.template} × {i.subset}" for i in pool)
    out["pool"] = {"instances": len(pool), "scenes": len({i.scene_id for i in pool}), "sample": describe(study.config),
                   "cells": dict(sorted(cells.items())), "instance_ids": [i.instance_id for i in pool]}
    out["progress"] = coverage(store, ds, study)
    out["plan"] = plan_for_config(ds, study.config, accuracy, store, seconds, None, study.study_id).to_json()
    return out


def cmd_show(a: argparse.Namespace) -> int:
    store = _store(a)
    study = _find(store, a.study)
    if study.config.benchmark == "rose":
        ds = Dataset.load(a.dataset)
    else:
        ds = SgpDataset.load(a.episodes)
    if ds.dataset_hash != study.dataset_hash:
        print(f"WARNING: the study was created on dataset {study.dataset_hash}; {ds.dataset_hash} is loaded",
              file=sys.stderr)
    data = show_data(store, study, ds, a.accuracy, a.seconds_per_item)
    if a.json:
        print(json.dumps(data, indent=1, ensure_ascii=False, default=str))
        return 0
    s = data["study"]
    print(f"study {s['study_id']}: {s['name']}  version {s['version']}  "
          f"{'open' if s['active'] else 'closed'}  created {s['created_at']}  dataset {s['dataset_hash']}")
    print("\n".join(_link_lines(study, a.base_url)))
    from ..instrument.study_file import dump_study

    print("\nsettings (as a study file):")
    print("\n".join(f"  {ln}" if ln else "" for ln in dump_study(study.config).splitlines()))
    prog = data["progress"]
    if "pool" in data:
        pool = data["pool"]
        print(f"\npool: {pool['instances']} instances on {pool['scenes']} scenes. {pool['sample']}")
        if pool["scenes"] < pool["instances"] and not study.config.same_scene_multiple_templates:
            print(f"note: items share scenes and a participant sees a scene once, so a participant takes at most "
                  f"{pool['scenes']} of them and the last participants may end early (or set "
                  "same_scene_multiple_templates = true)")
        print("  " + ", ".join(f"{c}: {n}" for c, n in pool["cells"].items()))
        print(f"\nprogress: {prog['answers']} main answers; {prog['complete_instances']} / {prog['pool']} instances at "
              f"{prog['target']} raters ({100 * prog['progress']:.1f} %); answers per instance: "
              + (", ".join(f"{k}×: {v}" for k, v in prog["histogram"].items()) or "none"))
        print(f"participants: {prog['participants_completed']} completed of {prog['participants_needed']} needed; "
              "by status: " + (", ".join(f"{k}: {v}" for k, v in prog["participants_by_status"].items()) or "none"))
        from ..analysis.plan import StudyPlan, plan_rows, summary_lines

        import pandas as pd

        plan = StudyPlan(**data["plan"])
        print(f"\nplan (expected accuracy {a.accuracy:g}):")
        print(pd.DataFrame(plan_rows(plan)).to_string(index=False))
        print("\n".join(summary_lines(plan)))
    else:
        print("\nprogress: " + json.dumps(prog, default=str))
    return 0


def cmd_list(a: argparse.Namespace) -> int:
    from ..instrument.study import list_studies

    if not database_exists(a.db):
        print(f"no database at {masked(a.db)}: no study yet")
        return 0
    rows = list_studies(_store(a))
    if not rows:
        print("no study yet")
    for s in rows:
        when = dt.datetime.fromtimestamp(s.created_at, dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
        print(f"{s.study_id:24s} v{s.version:<3d} {'open  ' if s.active else 'closed'} {s.config.benchmark:5s} "
              f"{when}  {s.name}")
    return 0


def cmd_close(a: argparse.Namespace) -> int:
    from ..instrument.study import set_active

    store = _store(a)
    study = _find(store, a.study)
    set_active(store, study.study_id, False)
    print(f"closed study {study.study_id} ({study.name}): whoever opens its link now is told the study is "
          "closed")
    return 0


def cmd_clone(a: argparse.Namespace) -> int:
    from ..instrument.study_edit import clone_study

    store = _store(a)
    study = _find(store, a.study)
    ds = _dataset(a, study.config.benchmark)
    new = clone_study(store, ds, study, a.name)
    same = new.config.sample_ids == study.config.sample_ids
    print(f"created study {new.study_id} ({new.name}) with the settings of {study.study_id} "
          f"(version {study.version})" + ("" if same else "; the item sample was drawn again on this dataset"))
    print("\n".join(_link_lines(new, a.base_url)))
    return 0


def cmd_export_config(a: argparse.Namespace) -> int:
    from ..instrument.study_file import dump_study

    store = _store(a)
    study = _find(store, a.study)
    header = (f"ROSE Studio study file: study {study.study_id}, version {study.version}, dataset {study.dataset_hash}\n"
              "`python -m rose_core study create THIS.toml` creates a study with these settings "
              "(docs/running-a-study.md).")
    text = dump_study(study.config, header)
    if a.out:
        Path(a.out).write_text(text, encoding="utf-8")
        print(f"wrote {a.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def add_study_parser(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """`study …`, registered by the command line; returns its sub-parsers."""
    p = sub.add_parser("study", help="a study as a file: create from TOML, show, list, close, clone, export-config")
    ss = p.add_subparsers(dest="study_cmd", required=True)

    def add(name: str, help: str, fn, datasets: bool = True, link: bool = False,
            study: bool = True) -> argparse.ArgumentParser:
        """One sub-command with the options they share (the study, the database, datasets, the link's address)."""
        q = ss.add_parser(name, help=help)
        if study:
            q.add_argument("study", help="study id (or its name, if unique)")
        q.add_argument("--db", default=db_location(), help=DB_HELP)
        if datasets:
            q.add_argument("--dataset", default=str(dataset_dir()), help="the ROSE dataset build (ROSE studies; default: "
                                "$ROSE_DATASET_DIR or data/datasets/rose-v0.1)")
            q.add_argument("--episodes", default=str(sgp_dataset_dir()), help="the SGP dataset build (SGP studies; default: "
                                "$ROSE_SGP_DATASET_DIR or data/datasets/sgp)")
        if link:
            q.add_argument("--base-url", default=None,
                           help=f"the app's public address for the participant link (default: ${PUBLIC_URL_ENV})")
        q.set_defaults(fn=fn)
        return q

    c = add("create", "create a study from a TOML study file; prints its id and participant link", cmd_create,
            link=True, study=False)
    c.add_argument("file", help="the study file (docs/running-a-study.md lists every key)")
    s = add("show", "a study's settings, pool, progress and the planner's figures", cmd_show, link=True)
    s.add_argument("--json", action="store_true", help="print the study's figures as JSON")
    s.add_argument("--accuracy", type=float, default=DEFAULT_ACCURACY,
                   help=f"expected share right for the planner's interval widths, 0..1 (default: {DEFAULT_ACCURACY})")
    s.add_argument("--seconds-per-item", type=float, default=None,
                   help="for the planner's time (default: the study's median server time so far, else the default)")
    add("list", "every study: id, version, open or closed, benchmark, created, name", cmd_list, datasets=False,
        study=False)
    add("close", "close a study to participants", cmd_close, datasets=False)
    cn = add("clone", "a new study with a study's settings (the same item sample on the same dataset)", cmd_clone,
             link=True)
    cn.add_argument("--name", required=True, help="the new study's name")
    e = add("export-config", "a study's settings as a study file that creates the same study", cmd_export_config,
            datasets=False)
    e.add_argument("--out", default=None, help="write to this file (default: standard output)")
    simulate.add_parser(ss)
    approvals.add_parser(ss)
    manage.add_parser(ss)
    return ss
