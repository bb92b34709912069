"""`python -m rose_core …`: build, check, score, export, import runs, run agents and models."""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from ..benchmarks.rose.composition import DEFAULT_SEED
from ..benchmarks.rose.dataset import (
    Dataset,
    DatasetError,
    build_dataset,
    dataset_dir,
    visibility_lines,
)
from ..benchmarks.rose.metrics import ScoredRow, format_summary, summarize
from ..benchmarks.rose.scoring import score
from ..runs.response_file import ResponseFileError, read_responses
from ..runs.settings import FIELDS as SETTINGS_FIELDS
from ..storage.connection import database_exists, db_location
from .options import DATASET_HELP, DB_HELP
from .progress import progress_bar, report_run


def cmd_build(a: argparse.Namespace) -> int:
    manifest = build_dataset(Path(a.out), seed=a.seed, scale=a.scale, workers=a.workers,
                             progress=progress_bar("build"), replace=a.force)
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
    print("\n".join(visibility_lines(manifest)))
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
    from ..instrument.exports import export_table
    from ..storage import open_store

    if not database_exists(a.db):
        print(f"error: no database at {a.db}", file=sys.stderr)
        return 2
    n = export_table(open_store(a.db), a.table, a.format, Path(a.out), a.study)
    print(f"wrote {n} {a.table} rows to {a.out}")
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    from ..benchmarks.rose.harness_export import export_dataset, manifest_path

    ds = Dataset.load(a.dataset)
    n = export_dataset(ds, a.format, Path(a.out), split=a.split, templates=a.templates)
    print(f"exported {n} instances as {a.format} to {a.out} (manifest: {manifest_path(a.out, a.format)})")
    return 0


def cmd_import_run(a: argparse.Namespace) -> int:
    from ..runs.importer import Limits, RunImportError, import_run
    from ..storage import open_store

    from ..runs.settings import RunSettingsError, read_settings, sidecar

    ds = Dataset.load(a.dataset)
    limits = Limits(max_expanded_bytes=a.max_expanded_mb * 2**20, max_response_chars=a.max_response_chars)
    # --settings FILE.toml, else the file run-model wrote beside its answers, if there is one
    settings_file = Path(a.settings) if a.settings else (sidecar(a.file) if sidecar(a.file).is_file() else None)
    try:
        settings = read_settings(settings_file) if settings_file else None
        res = import_run(open_store(a.db), ds, a.file, a.solver, fmt=a.format, kind=a.kind, replace=a.replace,
                         trust_ids=a.trust_ids, errored=a.errored, limits=limits, manifest=a.export_manifest,
                         settings=settings)
    except (RunImportError, RunSettingsError) as e:
        print(f"error: import refused, nothing was stored:\n{e}", file=sys.stderr)
        return 2
    print(f"settings: {'from ' + str(settings_file) if settings_file else 'none recorded (--settings FILE.toml)'}")
    print(f"format: {res.format} ({res.detected})")
    print(f"imported {res.responses} responses as run {res.run_id}{' (replaced the earlier one)' if res.replaced else ''}")
    for note in res.notes:
        print(f"note: {note}")
    return 0


def cmd_agent(a: argparse.Namespace) -> int:
    from ..benchmarks.rose.agents import run_agent

    ds = Dataset.load(a.dataset)
    n = run_agent(a.name, ds, Path(a.out), split=a.split, seed=a.seed, progress=progress_bar(a.name))
    print(f"wrote {n} responses of agent {a.name} to {a.out}")
    return 0


def cmd_run_model(a: argparse.Namespace) -> int:
    from ..runs.model import run_model

    from ..runs.settings import RunSettingsError

    ds = Dataset.load(a.dataset)
    try:
        res = run_model(ds, a.base_url, a.model, Path(a.out), split=a.split, templates=a.templates,
                        concurrency=a.concurrency, max_retries=a.retries, timeout=a.timeout, max_tokens=a.max_tokens,
                        temperature=a.temperature, api_key_env=a.api_key_env, limit=a.limit,
                        progress=progress_bar(a.model))
    except RunSettingsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return report_run(res, "answers")


def cmd_runs(a: argparse.Namespace) -> int:
    from ..storage import open_store
    from ..storage.runs import list_runs

    if not database_exists(a.db):  # opening it would create an empty one
        print(f"error: no database at {a.db}", file=sys.stderr)
        return 2
    for r in list_runs(open_store(a.db)):
        print(f"{r['run_id']:40s} {r['solver_kind']:6s} {r['format'] or '':16s} {r['responses']:7d} responses  "
              f"dataset {r['dataset_hash']}")
    return 0


def cmd_report(a: argparse.Namespace) -> int:
    if not database_exists(a.db):
        print(f"error: no database at {a.db}", file=sys.stderr)
        return 2
    from ..analysis import report_data
    from ..storage import open_store

    if a.out or a.tables:
        if a.include_simulated:
            print("error: --include-simulated is for a dry run's main table (report, report --json): a paper bundle "
                  "never counts simulated participants", file=sys.stderr)
            return 2
        return _paper_bundle(a)
    report, table = report_data(open_store(a.db), a.split, a.exclusions, not a.no_published, a.boot, a.seed,
                                a.include_simulated)
    if a.json:
        print(json.dumps(report, indent=1))
    else:
        from ..analysis import table_columns

        print(table_columns(table).to_string(index=False))
        print(f"exclusions: {report['exclusions']} ({report['participants_excluded']} participants excluded)")
        print(f"intervals: {report['intervals']}")
        print("scored by: " + (", ".join(f"scorer {v} ({n:,} responses)" for v, n in report["scorer_versions"].items())
                               or "no responses"))
        inf = report["sgp_inference"]
        if inf["rows"]:
            from .sgp import inference_lines

            print("\nSGP board-state inference (per build, solver and modality):")
            for h in dict.fromkeys(r["dataset_hash"] for r in inf["rows"]):
                print(f"build {h}")
                print("\n".join(inference_lines([r for r in inf["rows"] if r["dataset_hash"] == h])))
            print(inf["definition"])
    _print_warnings(report)
    return 0


def _print_warnings(report: dict) -> None:
    """What a report says beside its numbers (stale verdicts, runs that left samples out, people in two pooled
    studies), on stderr so `--json` output stays parseable."""
    for warning in (report["scorer_warning"], report["runs_warning"], report["people_warning"],
                    report.get("simulated_warning")):
        if warning:
            print(f"WARNING: {warning}", file=sys.stderr)


def _paper_bundle(a: argparse.Namespace) -> int:
    """`report --out DIR` (the paper bundle) and `report --json --tables` (its numbers)."""
    from ..analysis.bundle import BundleError, paper_report, write_bundle
    from ..storage import open_store

    store, ds = open_store(a.db), Dataset.load(a.dataset)
    opts = dict(split=a.split, exclusions=a.exclusions, published=not a.no_published, n_boot=a.boot, seed=a.seed)
    try:
        if a.out:
            m = write_bundle(store, ds, Path(a.out), figures=a.figures, force=a.force, figure_width=a.figure_width,
                             **opts)
            print(f"wrote {a.out}: {len(m['files'])} files (tables as Markdown, LaTeX and CSV; "
                  f"{len(m['figures']) if isinstance(m['figures'], list) else 0} figures as SVG, PDF and PNG at "
                  f"{m['figure_width']['inches']} in; "
                  f"checklist.md, methods.md, manifest.json)")
            report = json.loads((Path(a.out) / "report.json").read_text(encoding="utf-8"))
            if a.json:
                print(json.dumps(report, indent=1, ensure_ascii=False))
        else:
            report = paper_report(store, ds, **opts).report
            print(json.dumps(report, indent=1, ensure_ascii=False))
    except BundleError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    _print_warnings(report)
    return 0


def cmd_rescore(a: argparse.Namespace) -> int:
    from ..runs.rescore import RescoreError, rescore
    from ..storage import open_store

    if not database_exists(a.db):
        print(f"error: no database at {a.db}", file=sys.stderr)
        return 2
    try:
        report = rescore(open_store(a.db), Dataset.load(a.dataset), dry_run=a.dry_run)
    except RescoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_json(), indent=1) if a.json else report.format())
    return 0


def build_parser(prog: str = "python -m rose_core") -> argparse.ArgumentParser:
    """The whole command line, every sub-command registered (docs/gen_cli.py walks it for docs/cli.md); `prog` is
    how the usage lines name the command (`rose` when run as the installed script)."""
    ap = argparse.ArgumentParser(prog=prog, description="ROSE Studio core: build the dataset, "
                                 "score responses, export it for harnesses, import and run models, report.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="generate scenes, renderings and instances into a dataset folder")
    b.add_argument("--out", default=str(dataset_dir()),
                   help="the dataset folder to write (default: $ROSE_DATASET_DIR or data/datasets/rose-v0.1)")
    b.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"seed of the scene composition: the same seed builds the same dataset (default: {DEFAULT_SEED})")
    b.add_argument("--scale", type=float, default=1.0, help="fraction of v0.1's scenes per subset, in (0, 1] (default: 1)")
    b.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    b.add_argument("--force", action="store_true", help="replace an existing dataset folder")
    b.set_defaults(fn=cmd_build)
    c = sub.add_parser("check", help="score one response to one instance, as JSON")
    c.add_argument("--dataset", default=str(dataset_dir()), help=DATASET_HELP)
    c.add_argument("--instance", required=True, help="the instance id, e.g. as listed in the dataset's instances")
    c.add_argument("--response", required=True, help="the response text to score, as a solver would give it")
    c.set_defaults(fn=cmd_check)
    s = sub.add_parser("score", help="score a JSON-lines file of responses")
    s.add_argument("--dataset", default=str(dataset_dir()), help=DATASET_HELP)
    s.add_argument("--responses", required=True,
                   help="JSON-lines file of responses: one {instance_id, response, solver?} object a line")
    s.add_argument("--solver", default=None, help="solver name for lines without a 'solver' field")
    s.add_argument("--json", action="store_true", help="print the summary per solver as JSON")
    s.set_defaults(fn=cmd_score)
    e = sub.add_parser("export-table", help="a table from the database as CSV or Parquet: ROSE's responses or events, "
                                            "SGP's episode results or moves")
    e.add_argument("--db", default=db_location(), help=DB_HELP)
    e.add_argument("--table", choices=["responses", "events", "episode_results", "episode_steps", "participant_flags"],
                   default="responses", help="which table to write (default: responses)")
    e.add_argument("--format", choices=["csv", "parquet"], default="csv", help="the file format (default: csv)")
    e.add_argument("--study", default=None, help="only this study (default: everything)")
    e.add_argument("--out", required=True, help="the file to write")
    e.set_defaults(fn=cmd_export_table)
    from ..benchmarks.rose.agents import AGENTS
    from ..benchmarks.rose.harness_export import FORMATS
    from ..runs.formats import run_formats

    x = sub.add_parser("export", help="the benchmark for model harnesses: data files, or a task folder "
                                           "ready to run in lmms-eval, inspect_ai or VLMEvalKit")
    x.add_argument("--dataset", default=str(dataset_dir()), help=DATASET_HELP)
    x.add_argument("--format", choices=FORMATS, required=True,
                   help="what to write: plain data files, or a task folder for that harness")
    x.add_argument("--out", required=True, help="the folder to write the export into")
    x.add_argument("--split", choices=["dev", "test"], default=None, help="only this split (default: both)")
    x.add_argument("--templates", nargs="*", default=None,
                   help="only these templates, e.g. T1 T2 (default: every template)")
    x.set_defaults(fn=cmd_export)
    i = sub.add_parser("import-run", help="score and store a model run (auto-detects the format)")
    i.add_argument("file", help=f"the run file, in one of the formats {', '.join(run_formats())}")
    i.add_argument("--solver", required=True, help="the name the run is stored and shown under")
    i.add_argument("--format", choices=["auto", *run_formats()], default="auto",
                   help="the run file's format (default: auto, detected from the file)")
    i.add_argument("--kind", choices=["model", "agent"], default="model",
                   help="what made the run: a model or a scripted agent (default: model)")
    i.add_argument("--replace", action="store_true", help="replace an earlier run of the same solver")
    i.add_argument("--trust-ids", action="store_true",
                   help="accept a run that carries no dataset hash and nothing to verify its samples by")
    i.add_argument("--errored", choices=["skip", "invalid"], default="skip",
                   help="harness/API failures, samples a stopped inspect eval never ran and predictions cut at "
                        "Excel's cell limit: not stored but counted (skip), or stored as invalid answers (default: skip)")
    i.add_argument("--export-manifest", default=None,
                   help="the rose_export.json of the export the harness ran on (fixes lmms-eval doc_id positions)")
    i.add_argument("--max-expanded-mb", type=int, default=512,
                   help="refuse archives (.eval, .xlsx) and .json logs larger than this many MiB once expanded "
                        "(default: 512)")
    i.add_argument("--max-response-chars", type=int, default=1_000_000, help="refuse a response longer than this many characters "
                                                                                   "(default: 1000000)")
    i.add_argument("--settings", default=None, help=f"the run's settings as TOML ({', '.join(SETTINGS_FIELDS)}; "
                   "unknown keys refused), stored with the run for the paper's checklist; default: "
                   "FILE.settings.toml when run-model wrote one")
    i.add_argument("--dataset", default=str(dataset_dir()), help=DATASET_HELP)
    i.add_argument("--db", default=db_location(), help=DB_HELP)
    i.set_defaults(fn=cmd_import_run)
    g = sub.add_parser("agent", help="run a reference agent, writing a plain JSONL run")
    g.add_argument("name", choices=AGENTS, help="the reference agent to run")
    g.add_argument("--dataset", default=str(dataset_dir()), help=DATASET_HELP)
    g.add_argument("--out", required=True, help="the JSONL run file to write")
    g.add_argument("--split", choices=["dev", "test"], default=None, help="only this split (default: both)")
    g.add_argument("--seed", type=int, default=0, help="seed of the random agents' choices (default: 0)")
    g.set_defaults(fn=cmd_agent)
    m = sub.add_parser("run-model", help="query an OpenAI-compatible chat endpoint (resumable)")
    m.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
    m.add_argument("--model", required=True, help="the model's name at the endpoint")
    m.add_argument("--out", required=True,
                   help="the JSONL answers file: appended to, and what it already answers is skipped")
    m.add_argument("--dataset", default=str(dataset_dir()), help=DATASET_HELP)
    m.add_argument("--split", choices=["dev", "test"], default=None, help="only this split (default: both)")
    m.add_argument("--templates", nargs="*", default=None,
                   help="only these templates, e.g. T1 T2 (default: every template)")
    m.add_argument("--concurrency", type=int, default=4, help="requests in flight at once (default: 4)")
    m.add_argument("--retries", type=int, default=5,
                   help="retries of a failed request, with backoff, before the instance counts as failed (default: 5)")
    m.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for one response (default: 120)")
    m.add_argument("--max-tokens", type=int, default=2048, help="the response's token limit (default: 2048)")
    m.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default: 0; recorded "
                   "with the answers in OUT.settings.toml, as are the model, endpoint, prompt variant, max tokens "
                   "and date)")
    m.add_argument("--limit", type=int, default=None,
                   help="at most this many instances in this call (default: every one not yet answered)")
    m.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="the environment variable holding the API key (default: OPENAI_API_KEY; unset: no key sent)")
    m.set_defaults(fn=cmd_run_model)
    r = sub.add_parser("runs", help="list the runs in the database")
    r.add_argument("--db", default=db_location(), help=DB_HELP)
    r.set_defaults(fn=cmd_runs)
    rp = sub.add_parser("report", help="the main ROSE table from the database (for scripts: --json)")
    rp.add_argument("--db", default=db_location(), help=DB_HELP)
    rp.add_argument("--json", action="store_true", help="print the report as JSON, for scripts")
    rp.add_argument("--split", choices=["dev", "test"], default=None, help="only this split (default: both)")
    rp.add_argument("--boot", type=int, default=None, help="bootstrap resamples for the Avg intervals (default 1000, "
                    "as the dashboards)")
    rp.add_argument("--seed", type=int, default=None, help="base seed of the per-solver bootstrap (default 0, as the "
                    "dashboards)")
    rp.add_argument("--no-exclusions", dest="exclusions", action="store_false",
                    help="keep every participant (default: apply the standard exclusion rules)")
    rp.add_argument("--no-published", action="store_true", help="leave out the paper's published rows")
    rp.add_argument("--include-simulated", action="store_true", help="count a dry run's simulated participants "
                    "(`study simulate`) beside the real ones, with a warning; never with --out or --tables")
    rp.add_argument("--out", default=None, help="write the paper bundle to this new folder: every table (Markdown, "
                    "LaTeX, CSV), the figures (SVG, PDF, PNG), the human-baseline checklist, methods and a manifest")
    rp.add_argument("--tables", action="store_true", help="with --json: every paper table, not only the main one")
    rp.add_argument("--dataset", default=str(dataset_dir()), help="the dataset build the database was scored "
                    "against (for --out and --tables; default: $ROSE_DATASET_DIR or data/datasets/rose-v0.1)")
    rp.add_argument("--no-figures", dest="figures", action="store_false", help="with --out: no figures (faster)")
    rp.add_argument("--figure-width", choices=["single", "double"], default="single",
                    help="with --out: figures one column wide (3.25 in, the default) or the text's width (6.75 in)")
    rp.add_argument("--force", action="store_true", help="with --out: replace the folder if it exists")
    rp.set_defaults(fn=cmd_report)
    rs = sub.add_parser("rescore", help="re-score every stored response with the current scorer (one transaction)")
    rs.add_argument("--db", default=db_location(), help=DB_HELP)
    rs.add_argument("--dataset", default=str(dataset_dir()), help=DATASET_HELP)
    rs.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    rs.add_argument("--json", action="store_true", help="print what changed as JSON")
    rs.set_defaults(fn=cmd_rescore)
    from .sgp import add_sgp_parser

    add_sgp_parser(sub)
    from .plan import add_command as add_plan_command

    add_plan_command(sub, db_location(), str(dataset_dir()))
    from .study import add_study_parser

    add_study_parser(sub)
    return ap


# The locations sub-commands share, each declared only where the command reads it, and what a command without it
# does not read: named when one is given to a command that takes none.
_LOCATIONS = {"--db": "opens no database", "--dataset": "reads no ROSE dataset build",
              "--episodes": "reads no SGP dataset build"}


def _chosen(parser: argparse.ArgumentParser, a: argparse.Namespace) -> tuple[argparse.ArgumentParser, list[str]]:
    """The sub-command's own parser `a` was parsed by (`study approvals`'s, not the top level's), and its name."""
    names: list[str] = []
    while True:
        subs = [x for x in parser._actions if isinstance(x, argparse._SubParsersAction)]
        name = getattr(a, subs[0].dest, None) if subs else None
        if name is None:
            return parser, names
        names.append(name)
        parser = subs[0].choices[name]


def _refuse_unrecognized(parser: argparse.ArgumentParser, a: argparse.Namespace, extra: list[str]) -> None:
    """Arguments the chosen sub-command does not take, refused by that sub-command (its usage, its name), saying
    why for a location it does not read (argparse refuses them with the top level's usage, which names none)."""
    leaf, names = _chosen(parser, a)
    takes = {o for x in leaf._actions for o in x.option_strings}
    why = []
    for opt in dict.fromkeys(x.split("=", 1)[0] for x in extra if x.startswith("--")):
        if opt in _LOCATIONS and opt not in takes:
            why.append(f"{' '.join(names)} {_LOCATIONS[opt]}: it takes no {opt}"
                       + (" (an SGP build is given as --episodes)" if opt == "--dataset" and "--episodes" in takes
                          else ""))
    leaf.error(f"unrecognized arguments: {' '.join(extra)}" + "".join(f"; {w}" for w in why))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser("rose" if Path(sys.argv[0]).name == "rose" else "python -m rose_core")
    a, extra = parser.parse_known_args(argv)
    if extra:
        _refuse_unrecognized(parser, a, extra)
    try:
        return a.fn(a)
    except (DatasetError, ResponseFileError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
