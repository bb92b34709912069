"""Import model runs: read a file in one of the registered formats (`formats`), check every record against the
dataset (`resolve`), score it, store it (`storage.runs`), in that order.

Scoring and storing happen only after the whole file passed; the store is one transaction (`_store_run`), so a
refused file leaves the database as it was. Work on hostile files is bounded (`Limits`, `archive`): lines and
responses have length limits, archives and documents a decompressed-size limit, files are read as streams.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Iterable, Literal

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import MAIN_TEMPLATES
from ..benchmarks.rose.scoring import SCORER_VERSION, score
from ..common.problems import MAX_PROBLEMS
from ..common.solver_labels import refused_name
from ..storage import runs as stored_runs
from ..storage.connection import Store, now
from ..storage.responses import ResponseRow
from .formats import detect, get
from .formats.vlmevalkit import EXCEL_CELL_LIMIT
from .records import Findings, ImportResult, Limits, ReadRun, RunFormat, RunImportError, RunRecord
from .resolve import read_manifest, resolve
from .settings import RunSettingsError, check_settings

SolverKind = Literal["model", "agent"]
ErroredPolicy = Literal["skip", "invalid"]
ERRORED_POLICIES: tuple[ErroredPolicy, ...] = ("skip", "invalid")

__all__ = ["ERRORED_POLICIES", "EXCEL_CELL_LIMIT", "ErroredPolicy", "ImportResult", "Limits",
           "ReadRun", "RunFormat", "RunImportError", "RunRecord", "SolverKind", "delete_run", "import_run",
           "import_upload", "read_manifest", "read_run", "run_id_for", "skipped_note",
           "skipped_samples"]


def read_run(path: Path | str, ds: Dataset, fmt: RunFormat | Literal["auto"] = "auto", trust_ids: bool = False,
             limits: Limits = Limits(), manifest: list[str] | None = None) -> ReadRun:
    """Parse and check a run file completely. Raises RunImportError naming every problem found."""
    path = Path(path)
    if not path.is_file():
        raise RunImportError([f"{path}: cannot read (no such file)"])
    if path.stat().st_size == 0:
        raise RunImportError([f"{path}: empty file"])
    if fmt == "auto":
        fmt, why = detect(path, limits)
    else:
        why = "given with --format"
    reader = get(fmt)   # refuses an unknown name, naming the formats
    found = Findings()
    problems, notes, counts = found.problems, found.notes, found.counts
    recs = []
    for rec in reader.read(path, ds, limits, found):
        if len(rec.response) > limits.max_response_chars:
            problems.append(f"{rec.where}: response of {len(rec.response):,} characters, above the limit of "
                            f"{limits.max_response_chars:,}")
            continue
        recs.append(rec)
        if len(problems) >= MAX_PROBLEMS:
            break
    if counts["no_id"]:
        problems.insert(0, f"{counts['no_id']} samples have no id: they cannot be attributed to instances")
    resolved = resolve(ds, recs, problems, notes, trust_ids, manifest) if recs else []
    if problems:
        raise RunImportError(problems)
    if not resolved:
        raise RunImportError([f"{path}: no responses found"])
    for status in ("errored", "truncated", "not_run"):
        counts[status] = sum(r.status == status for r, _ in resolved)
    return ReadRun(fmt, why, resolved, notes, {k: v for k, v in counts.items() if v})


def run_id_for(kind: SolverKind, solver: str) -> str:
    return f"{kind}:{solver}"


def _store_run(store: Store, run_id: str, kind: SolverKind, solver: str, source: str, fmt: RunFormat,
               dataset_hash: str, meta: dict, rows: list[ResponseRow], replace: bool) -> bool:
    """The one place a run is written (`storage.runs.store_run`: delete-and-insert in one transaction); True when
    a run was replaced. Its refusals are said here, in the import's words."""
    run = stored_runs.ImportedRun(run_id, kind, solver, source, fmt, dataset_hash, meta)
    try:
        return stored_runs.store_run(store, run, rows, replace)
    except stored_runs.RunExists:
        raise RunImportError([f"a run for {kind} {solver!r} is already imported: choose another solver name or "
                              "replace it explicitly (--replace)"]) from None
    except stored_runs.OtherBuildRuns as e:
        others = e.others
        raise RunImportError([f"this run was scored against dataset {dataset_hash}, but the database holds runs "
                              f"of dataset {others[0][1]} ({', '.join(r[0] for r in others[:5])}"
                              f"{', …' if len(others) > 5 else ''}): the builds share instance ids, so their "
                              "numbers would be shown and paired as one table. Import it into another database "
                              "(--db), or give the dataset those runs were made on (--dataset)"]) from None


def _as_named(texts: list[str], path: Path | str, source_name: str | None) -> list[str]:
    """Messages about a copy of a file (an upload's temporary file) name the file as the user named it, not the
    server's temporary path; its folder is named nowhere either (a library's message may quote it)."""
    if not source_name:
        return texts
    real = Path(path)
    return [t.replace(str(real), source_name).replace(str(real.parent) + "/", "") for t in texts]


MAX_FILE_NAME_BYTES = 200   # a file system takes 255 bytes per name; a long non-ASCII name is 3-4 bytes a letter


def _file_name(name: str) -> str:
    """The upload's base name, safe as a file name here: printable, and cut to MAX_FILE_NAME_BYTES in UTF-8 at
    a letter's boundary, its suffix kept (the format is told by it): a file system refuses a longer name ("File
    name too long")."""
    base = "".join(ch if ch.isprintable() else "_" for ch in Path(name.replace("\\", "/")).name).strip()
    if base in ("", ".", ".."):
        return "upload"
    suffix = "".join(Path(base).suffixes[-2:])
    if len(suffix.encode("utf-8")) > 40:
        suffix = ""
    stem = base[:len(base) - len(suffix)] if suffix else base
    while len((stem + suffix).encode("utf-8")) > MAX_FILE_NAME_BYTES:
        stem = stem[:-1]
    return (stem.strip() or "upload") + suffix


def import_upload(store: Store, ds: Dataset, name: str, data: bytes, solver: str | None = None,
                  **kw: Any) -> ImportResult:
    """Import an uploaded run: the bytes go to a temporary file under the upload's own base name (its suffix
    tells the format apart), and every message names the upload (`name`), never the temporary path."""
    base = _file_name(name)
    with tempfile.TemporaryDirectory(prefix="rose-upload-") as tmp:
        path = Path(tmp) / base
        path.write_bytes(data)
        return import_run(store, ds, path, (solver or "").strip() or Path(base).stem, source_name=name, **kw)


MAX_SOLVER_CHARS = 120     # a label in every table and figure legend


def import_run(store: Store, ds: Dataset, path: Path | str, solver: str,
               fmt: RunFormat | Literal["auto"] = "auto", kind: SolverKind = "model", replace: bool = False,
               meta: dict | None = None, source_name: str | None = None, trust_ids: bool = False,
               errored: ErroredPolicy = "skip", limits: Limits = Limits(),
               manifest: Path | str | None = None, settings: dict | None = None) -> ImportResult:
    """Check, read, verify, score and store a run in one transaction; re-importing a solver needs replace=True.

    settings: the run's settings (`runs.settings`: prompt variant, temperature, max tokens, date, endpoint, …),
    checked (unknown keys refused) and stored in the run's meta under "settings" for the paper's checklist.

    errored="skip": harness failures (inspect sample errors, samples an inspect eval that stopped never ran,
    lmms-eval's and VLMEvalKit's API failure texts, predictions cut at Excel's cell limit) are not stored, only
    counted; "invalid": stored as an empty, invalid answer.
    """
    solver = solver.strip()
    if not solver:
        raise RunImportError(["solver name: must not be empty"])
    if len(solver) > MAX_SOLVER_CHARS:
        raise RunImportError([f"solver name: {len(solver):,} characters, at most {MAX_SOLVER_CHARS} (it is a label "
                              "in every table): choose a shorter name"])
    bad = next((ch for ch in solver if not ch.isprintable()), None)
    if bad is not None:
        raise RunImportError([f"solver name {solver[:60]!r}: holds a line break or an invisible control character "
                              f"(U+{ord(bad):04X}); a name is one line of visible text"])
    if refused_name(solver):
        raise RunImportError([f"solver name {solver!r}: reads as another solver's label in the tables (the pooled "
                              "humans are 'Human', an agent 'x (agent)', a published row 'x (published)', a model renamed to stay "
                              "apart 'x (model)'): choose another name"])
    if errored not in ERRORED_POLICIES:
        raise RunImportError([f"errored={errored!r}: expected one of {', '.join(ERRORED_POLICIES)}"])
    if settings is not None:
        try:
            settings = check_settings(settings, "settings")
        except RunSettingsError as e:
            raise RunImportError(str(e).splitlines()) from None
    run_id = run_id_for(kind, solver)
    if not replace and stored_runs.run_exists(store, run_id):  # before reading a possibly large file
        raise RunImportError([f"a run for {kind} {solver!r} is already imported: choose another solver name or "
                              "replace it explicitly (--replace)"])
    try:
        run = read_run(path, ds, fmt, trust_ids=trust_ids, limits=limits, manifest=read_manifest(manifest, ds))
    except RunImportError as e:
        raise RunImportError(_as_named(e.problems, path, source_name)) from None
    notes, counts = _as_named(run.notes, path, source_name), dict(run.counts)
    rows = []
    t = now()
    failures: list[dict] = []
    for rec, iid in run.resolved:
        text = rec.response
        if rec.status != "answered":
            failures.append({"instance_id": iid, "where": _as_named([rec.where], path, source_name)[0],
                             "status": rec.status, "detail": rec.detail})
            if errored == "skip":
                continue
            text = ""
        inst = ds.instances[iid]
        s = score(ds.key(iid), text)
        rows.append(ResponseRow.scored(run_id, iid, inst.template, inst.subset, inst.split, inst.scene_id, text,
                                       s.parsed.canonical, s.parsed.to_json(), s.valid, s.passed, s.failure,
                                       s.errors, t, scorer_version=SCORER_VERSION))
    for status, what in (("errored", "errored samples (harness/API failures)"),
                         ("not_run", "samples the eval never ran (it stopped before them)"),
                         ("truncated", f"predictions cut at Excel's {EXCEL_CELL_LIMIT:,}-character cell limit")):
        n = counts.get(status, 0)
        if n:
            first = next(f for f in failures if f["status"] == status)
            how = "not stored (--errored skip)" if errored == "skip" else "stored as invalid answers (--errored invalid)"
            notes.append(f"{n} {what}: {how}; first at {first['where']} ({first['detail']})")
    if not rows:
        raise RunImportError([f"{source_name or path}: no answered responses to store "
                              f"({counts.get('errored', 0)} errored, {counts.get('not_run', 0)} never run, "
                              f"{counts.get('truncated', 0)} truncated)"])
    covered = {r.template for r in rows}
    missing = [tmpl for tmpl in MAIN_TEMPLATES if tmpl not in covered]
    if missing:
        notes.append(f"no responses for {', '.join(missing)}")
    full_meta = {**(meta or {}), "detected": run.detected, "notes": notes, "counts": counts,
                 "errored_policy": errored, "trust_ids": trust_ids, "failures": failures[:1000],
                 **({"settings": settings} if settings is not None else {})}
    replaced = _store_run(store, run_id, kind, solver, source_name or str(path), run.format, ds.dataset_hash,
                          full_meta, rows, replace)
    return ImportResult(run_id, solver, run.format, run.detected, len(rows), replaced, notes, counts)


def skipped_samples(store: Store, run_ids: Iterable[str]) -> dict[str, dict[str, int]]:
    """Per run among `run_ids`, the samples its import left out (`--errored skip`): errored, never run and
    truncated counts from the run's stored import record; runs that left nothing out are absent."""
    wanted = set(run_ids)
    out: dict[str, dict[str, int]] = {}
    for r in stored_runs.imported_run_metas(store):
        if r["run_id"] not in wanted:
            continue
        meta = json.loads(r["meta"] or "{}")
        if meta.get("errored_policy", "skip") != "skip":   # a run stored before the switch was recorded: skipped
            continue
        counts = {k: int(meta.get("counts", {}).get(k, 0)) for k in ("errored", "not_run", "truncated")}
        if any(counts.values()):
            out[r["run_id"]] = counts
    return out


def skipped_note(skipped: dict[str, dict[str, int]]) -> str | None:
    """The loud sentence for runs whose rates leave samples out (None when none does)."""
    if not skipped:
        return None
    what = {"errored": "errored", "not_run": "never run", "truncated": "truncated"}
    parts = ["{}: {}".format(run, ", ".join(f"{n:,} {what[k]}" for k, n in c.items() if n))
             for run, c in sorted(skipped.items())]
    return (f"samples not stored (imported with --errored skip), so these runs' rates are over the samples they "
            f"answered only: {'; '.join(parts)}. Import again with --errored invalid to count them as failures")


def delete_run(store: Store, run_id: str) -> None:
    """Remove a model or agent run and its responses; a study's human runs and a run not stored (never imported,
    or removed meanwhile) are refused with RunImportError, nothing written."""
    try:
        stored_runs.delete_run(store, run_id)
    except stored_runs.HumanRun:
        raise RunImportError(["human runs belong to a study and are not deleted here"]) from None
    except stored_runs.UnknownRun:
        raise RunImportError([f"no run {run_id!r} is stored (never imported, or removed meanwhile)"]) from None
