"""Import model runs: plain JSONL, lmms-eval samples, VLMEvalKit xlsx/tsv/json, inspect_ai .eval/.json logs.

A run is attributed to instances only when the way back is certain. Every record is checked where the
file allows it: the dataset hash it carries, its `target` against the instance's gold answer, its
prompt against the instance's prompt. Any mismatch refuses the whole file, naming the first bad
lines. A run with no hash and nothing to verify is refused unless the user says `trust_ids`.
Identifiers are instance ids; an integer is taken as a position only from a field the format
defines as one (lmms-eval `doc_id`, VLMEvalKit `index`), never from a string like "12".

Work on hostile files is bounded: archives are checked against a decompressed-size limit before
anything is expanded (and while expanding, in case the sizes lie), lines and responses have length
limits, files are read as streams. Scoring and storing happen only after the whole file passed; the
store is one transaction in `_store_run`, so a refused file leaves the database as it was.
"""
from __future__ import annotations

import io
import json
import re
import struct
import tempfile
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

from ..benchmarks.rose.dataset import Dataset
from ..common.solver_labels import refused_name
from ..common.problems import MAX_PROBLEMS, ProblemsError, iter_lines, jsonl_objects, parse_json
from ..benchmarks.rose.records import MAIN_TEMPLATES
from ..benchmarks.rose.scoring import SCORER_VERSION, score
from ..storage.responses import ResponseRow, write_responses
from ..storage.connection import Store, now

RunFormat = Literal["jsonl", "lmms-eval", "vlmevalkit", "inspect"]
RUN_FORMATS: tuple[RunFormat, ...] = ("jsonl", "lmms-eval", "vlmevalkit", "inspect")
SolverKind = Literal["model", "agent"]
ErroredPolicy = Literal["skip", "invalid"]
ERRORED_POLICIES: tuple[ErroredPolicy, ...] = ("skip", "invalid")
Status = Literal["answered", "errored", "truncated", "not_run"]

EXCEL_CELL_LIMIT = 32767                         # Excel's cell limit: VLMEvalKit's .xlsx cuts predictions there
VLMEVALKIT_FAIL = "Failed to obtain answer via API"   # VLMEvalKit's BaseAPI fail_msg (and its ': Failed with ...')
# What lmms-eval (0.6 on, its API model wrappers) logs in place of an answer when a request failed after its
# retries, or when its token budget ran out before the request was sent.
LMMS_FAILED = "[LMMS_EVAL_REQUEST_FAILED"
LMMS_BUDGET = "[LMMS_EVAL_BUDGET_EXCEEDED]"
SHOWN_MISMATCHES = 10


@dataclass(frozen=True)
class Limits:
    """Bounds on the work a run file may cause (stated in the README)."""
    max_expanded_bytes: int = 512 * 2**20    # all archive members (.eval, .xlsx) together, and a .json log
    max_response_chars: int = 1_000_000      # one response
    max_line_bytes: int = 32 * 2**20         # one JSON line


class RunImportError(ProblemsError):
    """A run file that cannot be imported; nothing was stored."""


@dataclass(frozen=True)
class RunRecord:
    where: str                      # "file:3", "file:row 7", "file:samples/x.json"
    response: str
    instance_id: str | None = None  # an instance id the file names
    position: int | None = None     # an integer position from a field the format defines as one
    order: Literal["task", "global"] | None = None   # what the position counts: the task's own rows, or ours
    dataset_hash: str | None = None
    target: str | None = None       # the gold answer the harness saw, to verify against ours
    prompt: str | None = None       # the prompt the harness sent, to verify against ours
    status: Status = "answered"
    detail: str = ""                # for errored/truncated records: what was found


@dataclass
class ImportResult:
    run_id: str
    solver: str
    format: RunFormat
    detected: str       # why this format was chosen
    responses: int
    replaced: bool
    notes: list[str]
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class ReadRun:
    format: RunFormat
    detected: str
    resolved: list[tuple[RunRecord, str]]
    notes: list[str]
    counts: dict[str, int]


# --------------------------------------------------------------------------- detection

def _first_line(path: Path, limits: Limits) -> bytes:
    """The first non-empty line, however long (up to the line limit): detection is not limited to a prefix."""
    scratch: list[str] = []
    for _, line in iter_lines(path, scratch, limits.max_line_bytes):
        if line.strip():
            return line.strip()
    if scratch:
        raise RunImportError(scratch[:1])
    return b""


def detect_format(path: Path, limits: Limits = Limits()) -> tuple[RunFormat, str]:
    name = path.name.lower()
    with path.open("rb") as f:
        magic = f.read(4)
    if magic[:2] == b"PK":
        if name.endswith(".xlsx"):
            return "vlmevalkit", "an .xlsx workbook (VLMEvalKit predictions)"
        return "inspect", "a zip archive (inspect_ai .eval log)"
    if name.endswith(".tsv"):
        return "vlmevalkit", "a .tsv table (VLMEvalKit predictions)"
    if name.endswith(".json"):  # one document, often on one line (pandas, json.dump): never read as lines
        if b"\x00" in magic:
            raise RunImportError([f"{path}: not text, not a zip archive: binary data cannot be a run file"])
        doc = _json_document(path, limits)
        if isinstance(doc, dict) and ("samples" in doc or "eval" in doc):
            return "inspect", "a JSON document with samples (inspect_ai JSON log)"
        if isinstance(doc, dict) and "results" in doc and "configs" in doc:
            raise RunImportError([f"{path}: lmms-eval's aggregated results, not its samples: import the "
                                  "*_samples_<task>.jsonl beside it (run lmms-eval with --log_samples)"])
        return "vlmevalkit", "a JSON document without inspect's samples (VLMEvalKit prediction dump)"
    first = _first_line(path, limits)
    if b"\x00" in first:
        raise RunImportError([f"{path}: not text, not a zip archive: binary data cannot be a run file"])
    try:
        text = first.decode("utf-8-sig")  # a byte-order mark is not part of the line
    except UnicodeDecodeError:
        raise RunImportError([f"{path}: not text, not a zip archive: binary data cannot be a run file"]) from None
    try:
        obj = parse_json(text)
    except ValueError as e:
        raise RunImportError([f"{path}:1: cannot tell the format: the first line is not usable JSON ({e}) and the "
                              "name does not end in .eval, .json, .xlsx or .tsv"]) from None
    if isinstance(obj, dict) and "doc_id" in obj:
        return "lmms-eval", "JSON lines with doc_id (lmms-eval samples)"
    if isinstance(obj, dict) and "instance_id" in obj:
        return "jsonl", "JSON lines with instance_id (plain ROSE run)"
    if isinstance(obj, dict) and "prediction" in obj:
        return "vlmevalkit", "JSON lines with prediction (VLMEvalKit predictions)"
    raise RunImportError([f"{path}:1: cannot tell the format: expected instance_id (plain JSONL), doc_id "
                          "(lmms-eval), an .eval/.json inspect log or a VLMEvalKit .xlsx/.tsv/.json"])


# --------------------------------------------------------------------------- bounded archive reading

def _check_declared(path: Path, infos: list[zipfile.ZipInfo], limits: Limits) -> None:
    declared = sum(i.file_size for i in infos)
    if declared > limits.max_expanded_bytes:
        raise RunImportError([f"{path}: the archive declares {declared:,} bytes once expanded, above the limit of "
                              f"{limits.max_expanded_bytes:,} (--max-expanded-mb): refused before expanding it"])


CHUNK = 16 * 2**20   # decompression step


def _member_chunks(path: Path, f: io.BufferedReader, info: zipfile.ZipInfo, budget: int) -> Iterator[bytes]:
    """One member's bytes in bounded steps (stored, deflate or Zstandard); never more than min(its declared
    size, budget) in all - a member that tries to expand further is a zip bomb - and its checksum checked."""
    where = f"{path}:{info.filename}"
    f.seek(info.header_offset)
    head = f.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise RunImportError([f"{where}: broken local header (truncated or corrupt archive)"])
    n, m = struct.unpack("<HH", head[26:30])
    f.seek(info.header_offset + 30 + n + m)
    raw = f.read(info.compress_size)
    if len(raw) < info.compress_size:
        raise RunImportError([f"{where}: the archive ends inside this member - truncated?"])
    cap = min(info.file_size, budget)
    if info.compress_type == zipfile.ZIP_STORED:
        pieces: Iterator[bytes] = iter([raw])
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        pieces = _inflate(where, raw)
    elif info.compress_type == 93:  # Zstandard, what current inspect_ai writes
        pieces = _unzstd(where, raw)
    else:
        raise RunImportError([f"{where}: compression method {info.compress_type} is not supported (stored, deflate "
                              "and Zstandard are)"])
    size, crc = 0, 0
    for piece in pieces:
        size += len(piece)
        if size > cap:
            raise RunImportError([f"{where}: expands beyond "
                                  f"{'its declared size' if cap == info.file_size else 'the limit'} ({cap:,} bytes): "
                                  "a zip bomb? Refused"])
        crc = zlib.crc32(piece, crc)
        yield piece
    if crc != info.CRC:
        raise RunImportError([f"{where}: checksum mismatch (corrupt or truncated archive)"])


def _inflate(where: str, raw: bytes) -> Iterator[bytes]:
    d = zlib.decompressobj(-15)
    data = raw
    try:
        while data and not d.eof:
            out = d.decompress(data, CHUNK)
            data = d.unconsumed_tail
            if out:
                yield out
        if tail := d.flush():
            yield tail
    except zlib.error as e:
        raise RunImportError([f"{where}: corrupt deflate data ({e})"]) from None


def _unzstd(where: str, raw: bytes) -> Iterator[bytes]:
    import zstandard

    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True) as r:
            while out := r.read(CHUNK):
                yield out
    except zstandard.ZstdError as e:
        raise RunImportError([f"{where}: corrupt Zstandard data ({e})"]) from None


def _read_member(path: Path, f: io.BufferedReader, info: zipfile.ZipInfo, budget: int) -> bytes:
    return b"".join(_member_chunks(path, f, info, budget))


def _zip_members(path: Path, limits: Limits, want) -> Iterator[tuple[str, bytes]]:
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise RunImportError([f"{path}: not a readable zip archive ({e}) - truncated?"]) from None
    with z, path.open("rb") as f:
        infos = sorted((i for i in z.infolist() if want(i.filename)), key=lambda i: i.filename)
        _check_declared(path, infos, limits)
        budget = limits.max_expanded_bytes
        for info in infos:
            data = _read_member(path, f, info, budget)
            budget -= len(data)
            yield info.filename, data


def _json_document(path: Path, limits: Limits) -> Any:
    size = path.stat().st_size
    if size > limits.max_expanded_bytes:
        raise RunImportError([f"{path}: {size:,} bytes, above the limit of {limits.max_expanded_bytes:,} for one JSON "
                              "document (--max-expanded-mb)"])
    data = path.read_bytes()
    try:
        return parse_json(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise RunImportError([f"{path}:{line}: not UTF-8 text: binary garbage in a JSON document"]) from None
    except json.JSONDecodeError as e:
        raise RunImportError([f"{path}:{e.lineno}: not valid JSON ({e.msg} at column {e.colno}) - truncated?"]) from None
    except ValueError as e:
        raise RunImportError([f"{path}: not usable JSON ({e})"]) from None


# --------------------------------------------------------------------------- readers

def _unwrap(v: Any) -> Any:
    while isinstance(v, list) and v:
        v = v[0]
    return v


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _read_jsonl(path: Path, limits: Limits, problems: list[str]) -> Iterator[RunRecord]:
    for no, obj in jsonl_objects(path, problems, limits.max_line_bytes):
        where = f"{path}:{no}"
        iid, resp = obj.get("instance_id"), obj.get("response")
        if iid is None:
            problems.append(f"{where}: field 'instance_id' missing")
        elif not isinstance(iid, str):
            problems.append(f"{where}: field 'instance_id' must be an instance id string, got {iid!r} (plain runs "
                            "name instances, never positions)")
        elif "response" not in obj:
            problems.append(f"{where}: field 'response' missing")
        elif not isinstance(resp, str):
            problems.append(f"{where}: field 'response' must be a string, got {type(resp).__name__}")
        else:
            yield RunRecord(where, resp, instance_id=iid, dataset_hash=_str_or_none(obj.get("dataset_hash")),
                            target=_str_or_none(obj.get("target")), prompt=_str_or_none(obj.get("prompt")))


def _lmms_target(target: Any) -> tuple[str | None, str | None, str | None]:
    """(instance_id, dataset_hash, gold answer) from a target; our task's doc_to_target writes a JSON object."""
    if isinstance(target, list):
        target = _unwrap(target)
    if not isinstance(target, str):
        return None, None, None
    if target.lstrip().startswith("{"):
        try:
            t = json.loads(target)
        except ValueError:
            t = None
        if isinstance(t, dict) and isinstance(t.get("instance_id"), str):
            return t["instance_id"], _str_or_none(t.get("dataset_hash")), _str_or_none(t.get("answer"))
    return None, None, target


def _read_lmms(path: Path, limits: Limits, problems: list[str]) -> Iterator[RunRecord]:
    for no, obj in jsonl_objects(path, problems, limits.max_line_bytes):
        where = f"{path}:{no}"
        doc = obj.get("doc") if isinstance(obj.get("doc"), dict) else {}
        t_iid, t_hash, target = _lmms_target(obj.get("target"))
        iid = _str_or_none(doc.get("instance_id")) or t_iid
        doc_id = obj.get("doc_id")
        if iid is None and doc_id is None:
            problems.append(f"{where}: field 'doc_id' missing")
            continue
        if iid is None and not _is_int(doc_id):
            problems.append(f"{where}: 'doc_id' must be an integer position, got {doc_id!r}")
            continue
        for fld in ("filtered_resps", "resps"):
            if fld in obj:
                resp = _unwrap(obj[fld])
                break
        else:
            problems.append(f"{where}: neither 'filtered_resps' nor 'resps' present")
            continue
        if not isinstance(resp, str):
            problems.append(f"{where}: the response in '{fld}' is {type(resp).__name__}, expected a string")
            continue
        prompt = obj.get("input")
        if prompt is None and isinstance(obj.get("arguments"), list):
            prompt = _unwrap(obj["arguments"])
        status, detail = _lmms_status(resp)
        yield RunRecord(where, resp, instance_id=iid, position=None if iid else doc_id, order="task",
                        dataset_hash=_str_or_none(doc.get("dataset_hash")) or t_hash,
                        target=_str_or_none(doc.get("answer")) or target, prompt=_str_or_none(prompt),
                        status=status, detail=detail)


def _vlm_status(pred: str) -> tuple[Status, str]:
    """A prediction of exactly Excel's cell limit was cut there (pandas cuts longer strings to it when
    VLMEvalKit writes its .xlsx; a TSV or JSON made from that file keeps the cut). A longer one was not cut:
    it is a whole answer, scored like any other."""
    if VLMEVALKIT_FAIL in pred:
        return "errored", f"VLMEvalKit's API failure text {pred[:80]!r}"
    if len(pred) == EXCEL_CELL_LIMIT:
        return "truncated", f"{len(pred):,} characters: cut at Excel's {EXCEL_CELL_LIMIT:,}-character cell limit"
    return "answered", ""


def _lmms_status(resp: str) -> tuple[Status, str]:
    if resp.lstrip().startswith(LMMS_FAILED) or resp.strip() == LMMS_BUDGET:
        return "errored", f"lmms-eval's request failure text {resp.strip()[:100]!r}"
    return "answered", ""


def _vlm_record(where: str, r: dict, problems: list[str]) -> RunRecord | None:
    def cell(k: str) -> Any:
        v = r.get(k)
        return None if v is None or (isinstance(v, float) and v != v) or v == "" else v

    iid = cell("instance_id")
    index = cell("index")
    pos = None
    if index is not None:
        try:
            pos = int(str(index).strip()) if not isinstance(index, float) or index.is_integer() else None
        except ValueError:
            pos = None
        if pos is None and iid is None:
            problems.append(f"{where}: 'index' {index!r} is not an integer row index")
            return None
    if iid is None and pos is None:
        problems.append(f"{where}: neither 'instance_id' nor 'index'")
        return None
    pred = cell("prediction")
    pred = "" if pred is None else str(pred)
    status, detail = _vlm_status(pred)
    return RunRecord(where, pred, instance_id=str(iid) if iid is not None else None,
                     position=pos if iid is None else None, order="global",
                     dataset_hash=None if cell("dataset_hash") is None else str(cell("dataset_hash")),
                     target=None if cell("answer") is None else str(cell("answer")),
                     prompt=None if cell("question") is None else str(cell("question")), status=status, detail=detail)


_XLSX_ELEMENT = re.compile(rb"<(?:[A-Za-z_][\w.\-]{0,31}:)?(row|c|si)[\s/>]")
XLSX_MAX_COLUMNS = 100   # VLMEvalKit writes about ten; a row is refused long before this


def _longest_text(piece: bytes, gap: int, window: int) -> tuple[int, int]:
    """(the longest run without a '<' that ends inside `piece`, counting the `gap` bytes of run carried in, exact
    when it exceeds 2·window; the run this piece carries out, still open). A run longer than 2·window holds a whole
    window of bytes without '<' starting at one of the steps tried, so a few C-level finds per piece do."""
    first = piece.find(b"<")
    if first < 0:
        return gap + len(piece), gap + len(piece)
    last = piece.rfind(b"<")
    longest = gap + first
    for at in range(first, last, window):
        if at + window <= last and piece.find(b"<", at, at + window) < 0:
            longest = max(longest, piece.find(b"<", at + window) - piece.rfind(b"<", 0, at) - 1)
    return longest, len(piece) - last - 1


def _check_xlsx_elements(path: Path, limits: Limits, max_rows: int) -> None:
    """Refuse a workbook that holds more rows, cells or shared strings than a run on this dataset can (one row
    per instance), counted on the decompressed XML before openpyxl parses any of it. openpyxl costs tens of
    microseconds per cell: a 2 MB workbook that expands to 512 MiB of cells would keep a core busy for
    minutes, where a real run's workbook is read in seconds."""
    caps = {b"row": max_rows, b"c": max_rows * XLSX_MAX_COLUMNS, b"si": max_rows * XLSX_MAX_COLUMNS}
    what = {b"row": "rows", b"c": "cells", b"si": "shared strings"}
    seen = Counter()

    def want(name: str) -> bool:
        return name.startswith("xl/worksheets/") and name.endswith(".xml") or name == "xl/sharedStrings.xml"

    def check(where: str) -> None:
        for kind, n in seen.items():
            if n > caps[kind]:
                raise RunImportError([f"{where}: more than {caps[kind]:,} {what[kind]}, more than a run on this "
                                      f"dataset can hold ({max_rows - 1:,} instances, one row each): refused "
                                      "before reading the workbook"])

    # One cell's text: a response may be max_response_chars long, and XML writes a character in up to 6 bytes
    # (`&quot;`); a longer stretch without a tag would only be refused after openpyxl held all of it in memory.
    max_text = 6 * limits.max_response_chars + 4096
    max_tags, tags = caps[b"c"] * 16, 0   # a cell is a handful of tags (<c><is><t>…</t></is></c>)
    with zipfile.ZipFile(path) as z, path.open("rb") as f:
        budget = limits.max_expanded_bytes
        for info in sorted((i for i in z.infolist() if want(i.filename)), key=lambda i: i.filename):
            where, carry, gap = f"{path}:{info.filename}", b"", 0
            for piece in _member_chunks(path, f, info, budget):
                budget -= len(piece)
                tags += piece.count(b"<")
                if tags > max_tags:
                    raise RunImportError([f"{where}: more than {max_tags:,} XML tags, more than a run on this dataset "
                                          "can hold: refused before reading the workbook"])
                longest, gap = _longest_text(piece, gap, max_text // 2)
                if longest > max_text:
                    raise RunImportError([f"{where}: a text of more than {max_text:,} bytes without a tag, longer than "
                                          "any response may be (--max-response-chars): refused before reading the "
                                          "workbook"])
                # Count the elements before the last '<' (no element spans a '<'); the rest waits for the next piece.
                buf = carry + piece
                cut = buf.rfind(b"<")
                if cut > 0:
                    seen.update(_XLSX_ELEMENT.findall(buf, 0, cut))
                    check(where)
                carry = buf[cut:] if cut >= 0 else b""
            seen.update(_XLSX_ELEMENT.findall(carry))
            check(where)
            if gap > max_text:
                raise RunImportError([f"{where}: a text of more than {max_text:,} bytes without a tag at its end: "
                                      "refused before reading the workbook"])


def _read_vlmevalkit(path: Path, limits: Limits, problems: list[str], max_rows: int) -> Iterator[RunRecord]:
    import pandas as pd

    with path.open("rb") as f:
        magic = f.read(2)
    if magic == b"PK":
        try:
            z = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as e:
            raise RunImportError([f"{path}: not a readable .xlsx workbook ({e}) - truncated?"]) from None
        with z:
            _check_declared(path, z.infolist(), limits)  # openpyxl never reads past a member's declared size
        _check_xlsx_elements(path, limits, max_rows)
        try:
            frames = [pd.read_excel(path, dtype=object)]
        except Exception as e:  # openpyxl raises many kinds for a broken workbook
            raise RunImportError([f"{path}: cannot read the workbook ({type(e).__name__}: {e}) - truncated?"]) from None
    elif path.name.lower().endswith((".json", ".jsonl")):
        rows = _vlm_json_rows(path, limits, problems)
        for where, r in rows:
            if (rec := _vlm_record(where, r, problems)) is not None:
                yield rec
        return
    else:
        bad = _first_non_utf8_line(path, limits)
        if bad:
            raise RunImportError([f"{path}:{bad}: not UTF-8 text (binary garbage): not a VLMEvalKit .tsv"])
        try:
            frames = pd.read_csv(path, sep="\t", dtype=object, keep_default_na=False, chunksize=5000)
        except Exception as e:
            raise RunImportError([f"{path}: cannot read the table ({type(e).__name__}: {e})"]) from None
    k = 2  # row 1 is the header
    try:
        for df in frames:
            missing = [c for c in ("prediction",) if c not in df.columns]
            if missing or not ({"index", "instance_id"} & set(df.columns)):
                raise RunImportError([f"{path}: column(s) {', '.join(missing) or 'index or instance_id'} missing "
                                      f"(have: {', '.join(map(str, df.columns))})"])
            for r in df.to_dict("records"):
                if (rec := _vlm_record(f"{path}:row {k}", r, problems)) is not None:
                    yield rec
                k += 1
    except RunImportError:
        raise
    except Exception as e:  # pandas raises many kinds for a broken table
        raise RunImportError([f"{path}:row {k}: cannot read the table ({type(e).__name__}: {e}) - truncated or not a "
                              "VLMEvalKit .tsv?"]) from None


def _first_non_utf8_line(path: Path, limits: Limits) -> int | None:
    """The number of the first line that is not UTF-8 (a streaming pass: pandas names no line)."""
    scratch: list[str] = []
    for no, line in iter_lines(path, scratch, limits.max_line_bytes):
        try:
            line.decode("utf-8-sig" if no == 1 else "utf-8")
        except UnicodeDecodeError:
            return no
    return None


def _vlm_json_rows(path: Path, limits: Limits, problems: list[str]) -> list[tuple[str, dict]]:
    """VLMEvalKit's JSON dump: a list of row objects, {"index": prediction}, or JSON lines of rows."""
    if path.name.lower().endswith(".jsonl"):
        return [(f"{path}:{no}", obj) for no, obj in jsonl_objects(path, problems, limits.max_line_bytes)]
    doc = _json_document(path, limits)
    if isinstance(doc, list):
        out = []
        for k, r in enumerate(doc):
            if isinstance(r, dict):
                out.append((f"{path}:[{k}]", r))
            else:
                problems.append(f"{path}:[{k}]: expected a row object, got {type(r).__name__}")
        return out
    if isinstance(doc, dict) and all(isinstance(v, str) for v in doc.values()):
        return [(f"{path}:[{k!r}]", {"index": k, "prediction": v}) for k, v in doc.items()]
    raise RunImportError([f"{path}: a VLMEvalKit JSON dump is a list of rows (index, prediction, ...) or an "
                          "{index: prediction} object"])


def _message_text(m: Any) -> str:
    if isinstance(m, str):
        return m
    if isinstance(m, dict):
        c = m.get("content", m.get("text"))
        if isinstance(c, str):
            return c
        if isinstance(c, list):
            return "\n".join(x["text"] for x in c
                             if isinstance(x, dict) and x.get("type") == "text" and isinstance(x.get("text"), str))
    return ""


def _inspect_record(where: str, s: dict, problems: list[str], counts: Counter) -> RunRecord | None:
    meta = s.get("metadata") if isinstance(s.get("metadata"), dict) else {}
    sid = s.get("id")
    iid = _str_or_none(meta.get("instance_id"))
    if sid is None and iid is None:
        counts["no_id"] += 1
        problems.append(f"{where}: sample has no 'id' (and no metadata.instance_id): cannot say which instance")
        return None
    if iid is None:
        if not isinstance(sid, str):
            problems.append(f"{where}: sample id {sid!r} is not an instance id (inspect ids are names, not positions: "
                            "use the task file `export --format inspect` writes)")
            return None
        iid = sid
    elif isinstance(sid, str) and sid != iid:
        problems.append(f"{where}: sample id {sid!r} differs from metadata.instance_id {iid!r}")
        return None
    inp = s.get("input")
    prompt = "\n".join(_message_text(m) for m in inp) if isinstance(inp, list) else _str_or_none(inp)
    target = s.get("target")
    target = "\n".join(map(str, target)) if isinstance(target, list) else _str_or_none(target)
    common = dict(instance_id=iid, dataset_hash=_str_or_none(meta.get("dataset_hash")), target=target, prompt=prompt)
    if s.get("error"):
        err = s["error"]
        msg = err.get("message") if isinstance(err, dict) else str(err)
        return RunRecord(where, "", status="errored", detail=f"inspect error: {str(msg)[:120]}", **common)
    out = s.get("output") or {}
    completion = out.get("completion") if isinstance(out, dict) else None
    if completion is None and isinstance(out, dict):
        try:
            completion = _message_text(out["choices"][0]["message"])
        except (KeyError, IndexError, TypeError):
            completion = None
    if not isinstance(completion, str):
        problems.append(f"{where}: sample {iid!r} has neither an error nor output.completion")
        return None
    return RunRecord(where, completion, **common)


_LATER_EPOCH = re.compile(r"_epoch_(\d+)\.json$")
HEADER_BYTES = 64 * 2**20   # an .eval's header (its spec lists the sample ids: ~30 bytes each)


def _later_epoch_member(name: str) -> bool:
    """inspect names a sample `samples/<id>_epoch_<n>.json`: a later epoch is left out unexpanded."""
    m = _LATER_EPOCH.search(name)
    return bool(m) and int(m.group(1)) > 1


def _eval_header(path: Path, limits: Limits) -> tuple[dict | None, str]:
    """The log's header (status, eval spec) from `header.json`, or `_journal/start.json` when the process ended
    before writing it, and which member it came from; (None, why) when neither is readable."""
    small = Limits(min(limits.max_expanded_bytes, HEADER_BYTES), limits.max_response_chars, limits.max_line_bytes)
    for member in ("header.json", "_journal/start.json"):
        for _, data in _zip_members(path, small, lambda n, m=member: n == m):
            try:
                head = parse_json(data.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                return None, f"its {member} is unreadable"
            if isinstance(head, dict):
                return head, member
    return None, "it has no header.json"


def _read_inspect(path: Path, limits: Limits, problems: list[str], notes: list[str], counts: Counter
                  ) -> Iterator[RunRecord]:
    with path.open("rb") as f:
        is_zip = f.read(2) == b"PK"
    seen: set = set()   # ids of the first epoch's samples in the log
    if is_zip:
        found = False
        later: list[str] = []

        def want(n: str) -> bool:
            if not (n.startswith("samples/") and n.endswith(".json")):
                return False
            if _later_epoch_member(n):
                later.append(n)
                return False
            return True

        for name, data in _zip_members(path, limits, want):
            found = True
            try:
                s = parse_json(data.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                problems.append(f"{path}:{name}: unreadable sample ({type(e).__name__}: {e})")
                continue
            yield from _inspect_one(f"{path}:{name}", s, problems, counts, seen)
        counts["later_epochs"] += len(later)
        if not found:
            problems.append(f"{path}: an .eval archive with no samples/*.json of the first epoch")
        head, source = _eval_header(path, limits)
    else:
        doc = _json_document(path, limits)
        if not isinstance(doc, dict) or not isinstance(doc.get("samples"), list):
            raise RunImportError([f"{path}: an inspect JSON log needs a 'samples' list"])
        for k, s in enumerate(doc["samples"]):
            yield from _inspect_one(f"{path}:samples[{k}]", s, problems, counts, seen)
        head, source = doc, "the log"
    if counts["later_epochs"]:
        notes.append(f"{counts['later_epochs']} samples of epochs after the first were left out (one response per "
                     "instance: the first epoch's)")
    yield from _not_run(path, head, source, seen, notes)


def _not_run(path: Path, head: dict | None, source: str, seen: set, notes: list[str]) -> Iterator[RunRecord]:
    """The samples the eval was to run but the log does not hold: an eval that stopped (inspect stops at the
    first sample error unless told otherwise) or was cancelled leaves a log of the samples done so far. Each
    becomes a `not_run` record, counted and reported like an errored sample, never a silently smaller run."""
    if head is None:
        notes.append(f"cannot tell whether the eval finished: {source}")
        return
    status = head.get("status", "started") if source != "_journal/start.json" else "started"
    ev = head.get("eval") if isinstance(head.get("eval"), dict) else {}
    dataset = ev.get("dataset") if isinstance(ev.get("dataset"), dict) else {}
    ids = dataset.get("sample_ids")
    if status != "success":
        err = head.get("error") if isinstance(head.get("error"), dict) else {}
        why = f": {str(err.get('message'))[:120]}" if err.get("message") else ""
        notes.append(f"the eval did not finish (status {status!r}{why}); `inspect eval-retry` on the log completes it")
    if not isinstance(ids, list):
        if status != "success":
            notes.append("the log does not list its samples: which ones never ran cannot be counted")
        return
    missing = [i for i in ids if isinstance(i, (str, int)) and not isinstance(i, bool) and i not in seen]
    for i in missing:
        yield RunRecord(f"{path}:{source}", "", instance_id=str(i), status="not_run",
                        detail=f"never run: the eval ended with status {status!r}")


def _inspect_one(where: str, s: Any, problems: list[str], counts: Counter, seen: set) -> Iterator[RunRecord]:
    if not isinstance(s, dict):
        problems.append(f"{where}: a sample must be a JSON object")
        return
    if s.get("epoch", 1) not in (1, None):
        counts["later_epochs"] += 1
        return
    if isinstance(s.get("id"), (str, int)):
        seen.add(s["id"])
    rec = _inspect_record(where, s, problems, counts)
    if rec is not None:
        yield rec


# --------------------------------------------------------------------------- identity and verification

_WS = re.compile(r"\s+")


def _norm(s: str) -> str:
    return _WS.sub(" ", s).strip()


def _orders(ds: Dataset, manifest: list[str] | None) -> list[tuple[str, list[str]]]:
    """Candidate meanings of a task-relative position: the export's own order first when known."""
    out = [("the export manifest's order", manifest)] if manifest else []
    out.append(("the whole dataset (an export without --split)", ds.by_index))
    for split in ("dev", "test"):
        out.append((f"a --split {split} export", [i.instance_id for i in ds.select(split=split)]))
        out.append((f"a --split {split} export of T1-T5", [i.instance_id for i in ds.select(split=split,
                                                                                           templates=MAIN_TEMPLATES)]))
    out.append(("an export of T1-T5", [i.instance_id for i in ds.select(templates=MAIN_TEMPLATES)]))
    return out


def _mismatch(ds: Dataset, rec: RunRecord, iid: str) -> str | None:
    inst = ds.instances[iid]
    if rec.target is not None and _norm(rec.target) != _norm(inst.protocol_answer):
        return (f"{rec.where}: target {rec.target[:60]!r} is not the gold answer of {iid} "
                f"({inst.protocol_answer!r}): the line belongs to another instance or another build")
    if rec.prompt is not None and _norm(inst.prompt) not in _norm(rec.prompt):
        return (f"{rec.where}: the prompt sent is not {iid}'s prompt (it starts {rec.prompt[:60]!r}): the line "
                "belongs to another instance or another build")
    return None


def _task_order(ds: Dataset, task_recs: list[RunRecord], manifest: list[str] | None, problems: list[str],
                notes: list[str]) -> list[str]:
    """The export order under which every line's target and prompt match its instance. With a manifest, its
    order is the only candidate (the user said which export). Several fitting orders that put a line on
    different instances are refused: which one the run was made on cannot be told (tiny files, e.g. a
    `--limit 1` smoke test, where one T1 line fits the first T1 of several exports)."""
    lines = [r for r in task_recs if r.position >= 0]
    fits = [(label, order) for label, order in _orders(ds, manifest) if (manifest is None or order is manifest)
            and all(r.position < len(order) and _mismatch(ds, r, order[r.position]) is None for r in lines)]
    if not fits:
        if manifest is not None:
            problems.append("the export manifest's order does not fit this file: under it the targets and prompts do "
                            "not match ours (a manifest of another export?). First mismatches:")
            return manifest
        problems.append("no export order fits this file: doc_id is a position in the lmms-eval task's own dataset, "
                        "and under none of the orders of `export` (whole, --split dev/test, T1-T5) do the targets "
                        "and prompts match ours (an export with other filters: give its manifest with "
                        "--export-manifest). First mismatches with the whole dataset's order:")
        return ds.by_index
    label, order = fits[0]
    differ = [other for other, o in fits[1:] if any(o[r.position] != order[r.position] for r in lines)]
    if differ:
        first = next(r for r in lines if any(o[r.position] != order[r.position] for _, o in fits))
        problems.append(f"{first.where}: doc_id cannot be placed with certainty: the targets and prompts match under "
                        f"{label} and under {', '.join(differ)}, which put the lines on different instances (e.g. "
                        f"doc_id {first.position}: {order[first.position]} or "
                        f"{next(o for _, o in fits if o[first.position] != order[first.position])[first.position]}). "
                        "Give the export's manifest (--export-manifest) or use the task folder `export --format "
                        "lmms-eval-task` writes")
        return order
    notes.append(f"doc_id read as a position in {label} ({len(order)} rows): every line's target and prompt match")
    return order


def _resolve(ds: Dataset, recs: list[RunRecord], problems: list[str], notes: list[str], trust_ids: bool,
             manifest: list[str] | None) -> list[tuple[RunRecord, str]]:
    task_recs = [r for r in recs if r.instance_id is None and r.order == "task"]
    task_order: list[str] | None = None
    if task_recs:
        checkable = [r for r in task_recs if r.target is not None or r.prompt is not None]
        if checkable:
            task_order = _task_order(ds, task_recs, manifest, problems, notes)
        elif manifest:
            task_order = manifest
            notes.append("doc_id read as a position in the export manifest's order (nothing in the file to verify it)")
        elif trust_ids:
            task_order = ds.by_index
            notes.append("doc_id read as our global index without verification (--trust-ids)")
        else:
            problems.append(f"{task_recs[0].where}: lmms-eval lines with doc_id only (no doc, no target, no input): "
                            "doc_id is a position in the task's own dataset and nothing says which; use the task "
                            "folder `export --format lmms-eval` writes, give the export's manifest, or pass "
                            "--trust-ids if doc_id is our global index")
            return []
    out: list[tuple[RunRecord, str]] = []
    seen: dict[str, str] = {}
    unknown = mismatches = 0
    unverified: list[RunRecord] = []
    for rec in recs:
        if rec.instance_id is not None:
            iid = rec.instance_id if rec.instance_id in ds.instances else None
            shown = rec.instance_id
        else:
            order = task_order if rec.order == "task" else ds.by_index
            iid = order[rec.position] if order is not None and 0 <= rec.position < len(order) else None
            shown = rec.position
        if iid is None:
            unknown += 1
            if unknown <= SHOWN_MISMATCHES:
                problems.append(f"{rec.where}: unknown instance {shown!r} (not an instance id"
                                f"{'' if rec.instance_id else ' nor a position in the export'} of dataset "
                                f"{ds.dataset_hash})")
            continue
        if rec.dataset_hash is not None and rec.dataset_hash != ds.dataset_hash:
            problems.append(f"{rec.where}: dataset_hash {rec.dataset_hash!r} is not this dataset's "
                            f"({ds.dataset_hash}): a run on another build of the dataset (wrong dataset)")
            continue
        bad = _mismatch(ds, rec, iid)
        if bad:
            mismatches += 1
            if mismatches <= SHOWN_MISMATCHES:
                problems.append(bad)
            continue
        via_manifest = rec.instance_id is None and rec.order == "task" and manifest is not None and task_order is manifest
        if rec.dataset_hash is None and rec.target is None and rec.prompt is None and not via_manifest \
                and rec.status != "not_run":  # (a sample never run is stored, if at all, as an empty answer)
            unverified.append(rec)  # (a manifest's order is checked against this dataset's hash when read)
        if iid in seen:
            problems.append(f"{rec.where}: duplicate response for {iid} (first at {seen[iid]})")
            continue
        seen[iid] = rec.where
        out.append((rec, iid))
    if unknown > SHOWN_MISMATCHES:
        problems.append(f"... {unknown - SHOWN_MISMATCHES} more unknown instances")
    if mismatches > SHOWN_MISMATCHES:
        problems.append(f"... {mismatches - SHOWN_MISMATCHES} more lines that do not match their instance")
    if recs and unknown > len(recs) / 2:
        problems.insert(0, f"most ids ({unknown} of {len(recs)}) are unknown: is this a run on another dataset? "
                           f"(this one is {ds.dataset_hash})")
    if unverified and not trust_ids:
        problems.append(f"{len(unverified)} of {len(recs)} responses carry no dataset hash and nothing to verify them "
                        f"by (no target, no prompt), first at {unverified[0].where}: a run on another build would be "
                        f"scored silently. Use the files `export`/`agent`/`run-model` write (they carry the hash), "
                        f"or pass --trust-ids if you are sure the run was made on dataset {ds.dataset_hash}")
    elif unverified:
        notes.append(f"{len(unverified)} responses imported on trust (--trust-ids): no hash, nothing to verify")
    return out


def read_manifest(path: Path | str | None, ds: Dataset) -> list[str] | None:
    """The instance order of an export, from the `rose_export.json` manifest `export` writes."""
    if path is None:
        return None
    path = Path(path)
    try:
        man = parse_json(path.read_text())
    except (OSError, ValueError) as e:
        raise RunImportError([f"{path}: cannot read the export manifest ({e})"]) from None
    if not isinstance(man, dict) or not isinstance(man.get("instance_ids"), list):
        raise RunImportError([f"{path}: an export manifest needs 'instance_ids' (written by `export`)"])
    if man.get("dataset_hash") != ds.dataset_hash:
        raise RunImportError([f"{path}: the export manifest is for dataset {man.get('dataset_hash')!r}, not this one "
                              f"({ds.dataset_hash})"])
    return man["instance_ids"]


def read_run(path: Path | str, ds: Dataset, fmt: RunFormat | Literal["auto"] = "auto", trust_ids: bool = False,
             limits: Limits = Limits(), manifest: list[str] | None = None) -> ReadRun:
    """Parse and check a run file completely. Raises RunImportError naming every problem found."""
    path = Path(path)
    if not path.is_file():
        raise RunImportError([f"{path}: cannot read (no such file)"])
    if path.stat().st_size == 0:
        raise RunImportError([f"{path}: empty file"])
    if fmt == "auto":
        fmt, why = detect_format(path, limits)
    elif fmt in RUN_FORMATS:
        why = "given with --format"
    else:
        raise RunImportError([f"unknown format {fmt!r}: expected auto or one of {', '.join(RUN_FORMATS)}"])
    problems: list[str] = []
    notes: list[str] = []
    counts: Counter = Counter()
    if fmt == "jsonl":
        it = _read_jsonl(path, limits, problems)
    elif fmt == "lmms-eval":
        it = _read_lmms(path, limits, problems)
    elif fmt == "vlmevalkit":
        it = _read_vlmevalkit(path, limits, problems, max_rows=len(ds.instances) + 1)
    else:
        it = _read_inspect(path, limits, problems, notes, counts)
    recs = []
    for rec in it:
        if len(rec.response) > limits.max_response_chars:
            problems.append(f"{rec.where}: response of {len(rec.response):,} characters, above the limit of "
                            f"{limits.max_response_chars:,}")
            continue
        recs.append(rec)
        if len(problems) >= MAX_PROBLEMS:
            break
    if counts["no_id"]:
        problems.insert(0, f"{counts['no_id']} samples have no id: they cannot be attributed to instances")
    resolved = _resolve(ds, recs, problems, notes, trust_ids, manifest) if recs else []
    if problems:
        raise RunImportError(problems)
    if not resolved:
        raise RunImportError([f"{path}: no responses found"])
    for status in ("errored", "truncated", "not_run"):
        counts[status] = sum(r.status == status for r, _ in resolved)
    return ReadRun(fmt, why, resolved, notes, {k: v for k, v in counts.items() if v})


def run_id_for(kind: SolverKind, solver: str) -> str:
    return f"{kind}:{solver}"


def _run_exists(store: Store, run_id: str) -> bool:
    return bool(store.query("SELECT 1 AS x FROM runs WHERE run_id = ?", (run_id,)))


def _store_run(store: Store, run_id: str, kind: SolverKind, solver: str, source: str, fmt: RunFormat,
               dataset_hash: str, meta: dict, rows: list[ResponseRow], replace: bool) -> bool:
    """The one place a run is written: delete-and-insert in one transaction; True when a run was replaced."""
    with store.write() as c:
        exists = c.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if exists and not replace:
            raise RunImportError([f"a run for {kind} {solver!r} is already imported: choose another solver name or "
                                  "replace it explicitly (--replace)"])
        # One database holds one build's verdicts (as `rescore` requires): the builds share instance ids, so
        # runs of two builds would sit in one table and be paired by id with no word of it.
        others = c.execute("SELECT r.run_id, r.dataset_hash FROM runs r WHERE r.run_id <> ? AND r.dataset_hash <> ? "
                           "AND EXISTS (SELECT 1 FROM responses x WHERE x.run_id = r.run_id) ORDER BY r.run_id",
                           (run_id, dataset_hash)).fetchall()
        if others:
            raise RunImportError([f"this run was scored against dataset {dataset_hash}, but the database holds runs "
                                  f"of dataset {others[0][1]} ({', '.join(r[0] for r in others[:5])}"
                                  f"{', …' if len(others) > 5 else ''}): the builds share instance ids, so their "
                                  "numbers would be shown and paired as one table. Import it into another database "
                                  "(--db), or give the dataset those runs were made on (--dataset)"])
        if exists:
            c.execute("DELETE FROM responses WHERE run_id = ?", (run_id,))
            c.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
        c.execute("INSERT INTO runs(run_id, solver_kind, solver_name, source_file, format, dataset_hash, imported_at, "
                  "meta) VALUES (?,?,?,?,?,?,?,?)",
                  (run_id, kind, solver, source, fmt, dataset_hash, now(), json.dumps(meta)))
        write_responses(c, rows)
    return bool(exists)


def _as_named(texts: list[str], path: Path | str, source_name: str | None) -> list[str]:
    """Messages about a copy of a file (an upload's temporary file) name the file as the user named it, not the
    server's temporary path; its folder is named nowhere either (a library's message may quote it)."""
    if not source_name:
        return texts
    real = Path(path)
    return [t.replace(str(real), source_name).replace(str(real.parent) + "/", "") for t in texts]


def import_upload(store: Store, ds: Dataset, name: str, data: bytes, solver: str | None = None,
                  **kw: Any) -> ImportResult:
    """Import an uploaded run: the bytes go to a temporary file under the upload's own base name (its suffix
    tells the format apart), and every message names the upload (`name`), never the temporary path."""
    base = "".join(ch if ch.isprintable() else "_" for ch in Path(name.replace("\\", "/")).name).strip()
    if base in ("", ".", ".."):
        base = "upload"
    with tempfile.TemporaryDirectory(prefix="rose-upload-") as tmp:
        path = Path(tmp) / base
        path.write_bytes(data)
        return import_run(store, ds, path, (solver or "").strip() or Path(base).stem, source_name=name, **kw)


def import_run(store: Store, ds: Dataset, path: Path | str, solver: str,
               fmt: RunFormat | Literal["auto"] = "auto", kind: SolverKind = "model", replace: bool = False,
               meta: dict | None = None, source_name: str | None = None, trust_ids: bool = False,
               errored: ErroredPolicy = "skip", limits: Limits = Limits(),
               manifest: Path | str | None = None) -> ImportResult:
    """Check, read, verify, score and store a run in one transaction; re-importing a solver needs replace=True.

    errored="skip": harness failures (inspect sample errors, samples an inspect eval that stopped never ran,
    lmms-eval's and VLMEvalKit's API failure texts, predictions cut at Excel's cell limit) are not stored, only
    counted; "invalid": stored as an empty, invalid answer.
    """
    solver = solver.strip()
    if not solver:
        raise RunImportError(["solver name: must not be empty"])
    if refused_name(solver):
        raise RunImportError([f"solver name {solver!r}: reads as another solver's label in the tables (the pooled "
                              "humans are 'Human', an agent 'x (agent)', a published row 'x (published)', a model renamed to stay "
                              "apart 'x (model)'): choose another name"])
    if errored not in ERRORED_POLICIES:
        raise RunImportError([f"errored={errored!r}: expected one of {', '.join(ERRORED_POLICIES)}"])
    run_id = run_id_for(kind, solver)
    if not replace and _run_exists(store, run_id):  # before reading a possibly large file
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
                 "errored_policy": errored, "trust_ids": trust_ids, "failures": failures[:1000]}
    replaced = _store_run(store, run_id, kind, solver, source_name or str(path), run.format, ds.dataset_hash,
                          full_meta, rows, replace)
    return ImportResult(run_id, solver, run.format, run.detected, len(rows), replaced, notes, counts)


def skipped_samples(store: Store, run_ids: Iterable[str]) -> dict[str, dict[str, int]]:
    """Per run among `run_ids`, the samples its import left out (`--errored skip`): errored, never run and
    truncated counts from the run's stored import record; runs that left nothing out are absent."""
    wanted = set(run_ids)
    out: dict[str, dict[str, int]] = {}
    for r in store.query("SELECT run_id, meta FROM runs WHERE solver_kind != 'human'"):
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


def list_runs(store: Store) -> list[dict]:
    return store.query("SELECT r.*, (SELECT count(*) FROM responses x WHERE x.run_id = r.run_id) AS responses "
                       "FROM runs r ORDER BY r.imported_at DESC")


def delete_run(store: Store, run_id: str) -> None:
    with store.write() as c:
        if c.execute("SELECT solver_kind FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0] == "human":
            raise RunImportError(["human runs belong to a study and are not deleted here"])
        c.execute("DELETE FROM responses WHERE run_id = ?", (run_id,))
        c.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
