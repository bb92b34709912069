"""Import model runs: plain JSONL, lmms-eval samples, VLMEvalKit xlsx/tsv, inspect_ai .eval/.json logs.

Every response is scored with the same scorer as participants' answers and stored beside them
(`runs.solver_kind` = model or agent). A file is read completely and checked before anything is
written; the import is then one transaction, so a bad file leaves the database as it was. Problems
name the file and the line, row or sample.
"""
from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .dataset import Dataset
from .problems import ProblemsError, jsonl_objects
from .records import MAIN_TEMPLATES
from .scoring import SCORER_VERSION, score
from .store import Store, now

RunFormat = Literal["jsonl", "lmms-eval", "vlmevalkit", "inspect"]
RUN_FORMATS: tuple[RunFormat, ...] = ("jsonl", "lmms-eval", "vlmevalkit", "inspect")
SolverKind = Literal["model", "agent"]


class RunImportError(ProblemsError):
    """A run file that cannot be imported; nothing was stored."""


@dataclass(frozen=True)
class RunRecord:
    where: str          # "file:line 3", "file:row 7", "file:samples/x.json"
    key: Any            # the id as found in the file (instance id, or an integer index)
    response: str


@dataclass
class ImportResult:
    run_id: str
    solver: str
    format: RunFormat
    detected: str       # why this format was chosen
    responses: int
    replaced: bool
    notes: list[str]


# --------------------------------------------------------------------------- detection

def detect_format(path: Path, head: bytes) -> tuple[RunFormat, str]:
    name = path.name.lower()
    if head[:2] == b"PK":
        if name.endswith(".xlsx"):
            return "vlmevalkit", "an .xlsx workbook (VLMEvalKit predictions)"
        return "inspect", "a zip archive (inspect_ai .eval log)"
    if name.endswith(".tsv"):
        return "vlmevalkit", "a .tsv table (VLMEvalKit predictions)"
    first_line = head.lstrip().split(b"\n", 1)[0]
    if b"\x00" in first_line:
        raise RunImportError([f"{path}: not text, not a zip archive: binary data cannot be a run file"])
    try:
        text = first_line.decode("utf-8")
    except UnicodeDecodeError:
        raise RunImportError([f"{path}: not text, not a zip archive: binary data cannot be a run file"]) from None
    if name.endswith(".json") and text.startswith("{") and not text.rstrip().endswith("}"):
        return "inspect", "a .json document (inspect_ai JSON log)"
    stripped = text.lstrip()
    first = stripped
    try:
        obj = json.loads(first)
    except json.JSONDecodeError:
        if name.endswith(".json"):
            return "inspect", "a .json document (inspect_ai JSON log)"
        raise RunImportError([f"{path}:1: cannot tell the format: the first line is not JSON and the name does "
                              "not end in .eval, .json, .xlsx or .tsv"]) from None
    if isinstance(obj, dict) and "doc_id" in obj:
        return "lmms-eval", "JSON lines with doc_id (lmms-eval samples)"
    if isinstance(obj, dict) and "instance_id" in obj:
        return "jsonl", "JSON lines with instance_id (plain ROSE run)"
    if isinstance(obj, dict) and ("samples" in obj or "eval" in obj):
        return "inspect", "a JSON document with samples (inspect_ai JSON log)"
    raise RunImportError([f"{path}:1: cannot tell the format: expected instance_id (plain JSONL), doc_id "
                          "(lmms-eval), an .eval/.json inspect log or a VLMEvalKit .xlsx/.tsv"])


# --------------------------------------------------------------------------- readers

def _unwrap(v: Any) -> Any:
    while isinstance(v, list) and v:
        v = v[0]
    return v


def _read_jsonl(path: Path, data: bytes, ds: Dataset, problems: list[str]) -> list[RunRecord]:
    recs = []
    for no, obj in jsonl_objects(path, data, problems):
        where = f"{path}:{no}"
        if obj.get("dataset_hash") not in (None, ds.dataset_hash):
            problems.append(f"{where}: dataset_hash {obj['dataset_hash']!r} is not this dataset's "
                            f"({ds.dataset_hash}): wrong dataset")
            continue
        if "instance_id" not in obj:
            problems.append(f"{where}: field 'instance_id' missing")
            continue
        if "response" not in obj:
            problems.append(f"{where}: field 'response' missing")
            continue
        if not isinstance(obj["response"], str):
            problems.append(f"{where}: field 'response' must be a string, got {type(obj['response']).__name__}")
            continue
        recs.append(RunRecord(where, obj["instance_id"], obj["response"]))
    return recs


def _read_lmms(path: Path, data: bytes, ds: Dataset, problems: list[str]) -> list[RunRecord]:
    recs = []
    for no, obj in jsonl_objects(path, data, problems):
        where = f"{path}:{no}"
        doc = obj.get("doc") if isinstance(obj.get("doc"), dict) else {}
        key = doc.get("instance_id", obj.get("doc_id"))
        if key is None:
            problems.append(f"{where}: field 'doc_id' missing")
            continue
        resp = None
        for field in ("filtered_resps", "resps"):
            if field in obj:
                resp = _unwrap(obj[field])
                break
        else:
            problems.append(f"{where}: neither 'filtered_resps' nor 'resps' present")
            continue
        if not isinstance(resp, str):
            problems.append(f"{where}: the response in '{field}' is {type(resp).__name__}, expected a string")
            continue
        recs.append(RunRecord(where, key, resp))
    return recs


def _read_vlmevalkit(path: Path, data: bytes, ds: Dataset, problems: list[str]) -> list[RunRecord]:
    import pandas as pd

    try:
        if data[:2] == b"PK":
            df = pd.read_excel(io.BytesIO(data), dtype=object)
            row0 = 2  # row 1 is the header in a spreadsheet
        else:
            df = pd.read_csv(io.BytesIO(data), sep="\t", dtype=object, keep_default_na=False)
            row0 = 2
    except Exception as e:  # pandas raises many kinds for a broken table
        problems.append(f"{path}: cannot read the table ({type(e).__name__}: {e}) - truncated or not a "
                        "VLMEvalKit .xlsx/.tsv?")
        return []
    missing = [c for c in ("index", "prediction") if c not in df.columns]
    if missing:
        problems.append(f"{path}: column(s) {', '.join(missing)} missing (have: {', '.join(map(str, df.columns))})")
        return []
    recs = []
    for k, row in enumerate(df.itertuples(index=False), row0):
        where = f"{path}:row {k}"
        r = row._asdict()
        key = r.get("instance_id") or r["index"]
        pred = r["prediction"]
        if pred is None or (isinstance(pred, float) and pred != pred):
            pred = ""
        recs.append(RunRecord(where, key, str(pred)))
    return recs


def _inspect_sample(where: str, s: Any, problems: list[str]) -> RunRecord | None:
    if not isinstance(s, dict) or "id" not in s:
        problems.append(f"{where}: sample has no 'id'")
        return None
    out = s.get("output") or {}
    completion = out.get("completion") if isinstance(out, dict) else None
    if completion is None and isinstance(out, dict):
        try:
            content = out["choices"][0]["message"]["content"]
            completion = content if isinstance(content, str) else " ".join(
                c.get("text", "") for c in content if isinstance(c, dict))
        except (KeyError, IndexError, TypeError):
            completion = None
    if not isinstance(completion, str):
        problems.append(f"{where}: sample {s['id']!r} has no output.completion")
        return None
    return RunRecord(where, s["id"], completion)


def _read_inspect(path: Path, data: bytes, ds: Dataset, problems: list[str], notes: list[str]) -> list[RunRecord]:
    samples: list[tuple[str, Any]] = []
    if data[:2] == b"PK":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                names = sorted(n for n in z.namelist() if n.startswith("samples/") and n.endswith(".json"))
                if not names:
                    problems.append(f"{path}: an .eval archive with no samples/*.json")
                for n in names:
                    try:
                        samples.append((f"{path}:{n}", json.loads(z.read(n))))
                    except (json.JSONDecodeError, UnicodeDecodeError, zipfile.BadZipFile, OSError) as e:
                        problems.append(f"{path}:{n}: unreadable sample ({type(e).__name__})")
        except zipfile.BadZipFile as e:
            problems.append(f"{path}: not a readable .eval (zip) archive ({e}) - truncated?")
            return []
    else:
        try:
            doc = json.loads(data.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            problems.append(f"{path}: not a readable inspect JSON log ({type(e).__name__}: {e}) - truncated?")
            return []
        if not isinstance(doc, dict) or not isinstance(doc.get("samples"), list):
            problems.append(f"{path}: an inspect JSON log needs a 'samples' list")
            return []
        samples = [(f"{path}:samples[{k}]", s) for k, s in enumerate(doc["samples"])]
    recs = []
    later_epochs = 0
    for where, s in samples:
        if isinstance(s, dict) and s.get("epoch", 1) not in (1, None):
            later_epochs += 1
            continue
        rec = _inspect_sample(where, s, problems)
        if rec:
            recs.append(rec)
    if later_epochs:
        notes.append(f"{later_epochs} samples of epochs after the first were left out (one response per instance)")
    return recs


# --------------------------------------------------------------------------- resolve, import

def _resolve(ds: Dataset, recs: list[RunRecord], problems: list[str]) -> list[tuple[RunRecord, str]]:
    out: list[tuple[RunRecord, str]] = []
    seen: dict[str, str] = {}
    unknown = 0
    for rec in recs:
        key = rec.key
        iid = None
        if isinstance(key, str) and key in ds.instances:
            iid = key
        else:
            try:
                k = int(str(key).strip())
                iid = ds.by_index[k] if 0 <= k < len(ds.by_index) else None
            except ValueError:
                iid = None
        if iid is None:
            unknown += 1
            problems.append(f"{rec.where}: unknown instance {key!r} (neither an instance id nor an index 0.."
                            f"{len(ds.by_index) - 1} of dataset {ds.dataset_hash})")
            continue
        if iid in seen:
            problems.append(f"{rec.where}: duplicate response for {iid} (first at {seen[iid]})")
            continue
        seen[iid] = rec.where
        out.append((rec, iid))
    if recs and unknown > len(recs) / 2:
        problems.insert(0, f"most ids ({unknown} of {len(recs)}) are unknown: is this a run on another dataset? "
                           f"(this one is {ds.dataset_hash})")
    return out


def read_run(path: Path | str, ds: Dataset, fmt: RunFormat | Literal["auto"] = "auto"
             ) -> tuple[RunFormat, str, list[tuple[RunRecord, str]], list[str]]:
    """Parse and check a run file: (format, why, [(record, instance_id)], notes). Raises RunImportError."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise RunImportError([f"{path}: cannot read ({e.strerror})"]) from e
    if not data.strip():
        raise RunImportError([f"{path}: empty file"])
    if fmt == "auto":
        fmt, why = detect_format(path, data[:4096])
    elif fmt in RUN_FORMATS:
        why = "given with --format"
    else:
        raise RunImportError([f"unknown format {fmt!r}: expected auto or one of {', '.join(RUN_FORMATS)}"])
    problems: list[str] = []
    notes: list[str] = []
    if fmt == "jsonl":
        recs = _read_jsonl(path, data, ds, problems)
    elif fmt == "lmms-eval":
        recs = _read_lmms(path, data, ds, problems)
    elif fmt == "vlmevalkit":
        recs = _read_vlmevalkit(path, data, ds, problems)
    else:
        recs = _read_inspect(path, data, ds, problems, notes)
    resolved = _resolve(ds, recs, problems)
    if problems:
        raise RunImportError(problems)
    if not resolved:
        raise RunImportError([f"{path}: no responses found"])
    return fmt, why, resolved, notes


def run_id_for(kind: SolverKind, solver: str) -> str:
    return f"{kind}:{solver}"


def import_run(store: Store, ds: Dataset, path: Path | str, solver: str,
               fmt: RunFormat | Literal["auto"] = "auto", kind: SolverKind = "model", replace: bool = False,
               meta: dict | None = None, source_name: str | None = None) -> ImportResult:
    """Read, check, score and store a run in one transaction; re-importing a solver needs replace=True."""
    solver = solver.strip()
    if not solver:
        raise RunImportError(["solver name: must not be empty"])
    fmt_used, why, resolved, notes = read_run(path, ds, fmt)
    run_id = run_id_for(kind, solver)
    rows = []
    t = now()
    for rec, iid in resolved:
        inst = ds.instances[iid]
        s = score(ds.key(iid), rec.response)
        rows.append((run_id, iid, inst.template, inst.subset, inst.split, inst.scene_id, rec.response,
                     s.parsed.canonical, json.dumps(s.parsed.to_json()), int(s.valid), int(s.passed), s.failure,
                     json.dumps(list(s.errors)), t, SCORER_VERSION))
    covered = {ds.instances[iid].template for _, iid in resolved}
    missing = [tmpl for tmpl in MAIN_TEMPLATES if tmpl not in covered]
    if missing:
        notes.append(f"no responses for {', '.join(missing)}")
    with store.write() as c:
        exists = c.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if exists and not replace:
            raise RunImportError([f"a run for {kind} {solver!r} is already imported: choose another solver name or "
                                  "replace it explicitly (--replace)"])
        if exists:
            c.execute("DELETE FROM responses WHERE run_id = ?", (run_id,))
            c.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
        c.execute("INSERT INTO runs(run_id, solver_kind, solver_name, source_file, format, dataset_hash, imported_at, "
                  "meta) VALUES (?,?,?,?,?,?,?,?)",
                  (run_id, kind, solver, source_name or str(path), fmt_used, ds.dataset_hash, t,
                   json.dumps({**(meta or {}), "detected": why, "notes": notes})))
        c.executemany(
            "INSERT INTO responses(run_id, instance_id, template, subset, split, scene_id, response, protocol, parsed, "
            "valid, passed, failure, errors, submitted_at, scorer_version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    return ImportResult(run_id, solver, fmt_used, why, len(rows), bool(exists), notes)


def list_runs(store: Store) -> list[dict]:
    return store.query("SELECT r.*, (SELECT count(*) FROM responses x WHERE x.run_id = r.run_id) AS responses "
                       "FROM runs r ORDER BY r.imported_at DESC")


def delete_run(store: Store, run_id: str) -> None:
    with store.write() as c:
        if c.execute("SELECT solver_kind FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0] == "human":
            raise RunImportError(["human runs belong to a study and are not deleted here"])
        c.execute("DELETE FROM responses WHERE run_id = ?", (run_id,))
        c.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
