"""VLMEvalKit's predictions: the .xlsx its inference writes, a .tsv or JSON made from it, or JSON lines.

A row names its instance (`instance_id`) or its row `index` in our export (a global position); `question` and
`answer` are checked against the instance. A workbook is bounded before openpyxl parses any of it (rows,
cells, shared strings, tags and the longest text are counted on the decompressed XML), because openpyxl's
cost per cell would let a small hostile file keep a core busy for minutes.
"""
from __future__ import annotations

import re
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from ...benchmarks.rose.dataset import Dataset
from ...common.problems import iter_lines, jsonl_objects
from ..archive import check_declared, json_document, member_chunks
from ..records import Findings, Limits, RunImportError, RunRecord, Status
from .probe import Probe, Sniff, first_object_has

NAME = "vlmevalkit"
CLUE = "a VLMEvalKit .xlsx/.tsv/.json"
EXTENSIONS = ("xlsx", "tsv", "json", "jsonl")   # the file names it is written under (the app's upload accepts their union)

EXCEL_CELL_LIMIT = 32767                         # Excel's cell limit: VLMEvalKit's .xlsx cuts predictions there
VLMEVALKIT_FAIL = "Failed to obtain answer via API"   # VLMEvalKit's BaseAPI fail_msg (and its ': Failed with ...')


def sniff(p: Probe) -> Sniff | None:
    if p.shape == "zip" and p.name.endswith(".xlsx"):
        return Sniff(2, "an .xlsx workbook (VLMEvalKit predictions)")
    if p.shape == "table":
        return Sniff(1, "a .tsv table (VLMEvalKit predictions)")
    if p.shape == "document":
        return Sniff(1, "a JSON document without inspect's samples (VLMEvalKit prediction dump)")
    if first_object_has(p, "prediction"):
        return Sniff(1, "JSON lines with prediction (VLMEvalKit predictions)")
    return None


def _status(pred: str) -> tuple[Status, str]:
    """A prediction of exactly Excel's cell limit was cut there (pandas cuts longer strings to it when
    VLMEvalKit writes its .xlsx; a TSV or JSON made from that file keeps the cut). A longer one was not cut:
    it is a whole answer, scored like any other."""
    if VLMEVALKIT_FAIL in pred:
        return "errored", f"VLMEvalKit's API failure text {pred[:80]!r}"
    if len(pred) == EXCEL_CELL_LIMIT:
        return "truncated", f"{len(pred):,} characters: cut at Excel's {EXCEL_CELL_LIMIT:,}-character cell limit"
    return "answered", ""


def _record(where: str, r: dict, problems: list[str]) -> RunRecord | None:
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
    status, detail = _status(pred)
    return RunRecord(where, pred, instance_id=str(iid) if iid is not None else None,
                     position=pos if iid is None else None, order="global",
                     dataset_hash=None if cell("dataset_hash") is None else str(cell("dataset_hash")),
                     target=None if cell("answer") is None else str(cell("answer")),
                     prompt=None if cell("question") is None else str(cell("question")), status=status, detail=detail)


_XLSX_ELEMENT = re.compile(rb"<(?:[A-Za-z_][\w.\-]{0,31}:)?(row|c|si)[\s/>]")
XLSX_MAX_COLUMNS = 100   # VLMEvalKit writes about ten; a row is refused long before this


def longest_text(piece: bytes, gap: int, window: int) -> tuple[int, int]:
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
    seen: Counter = Counter()

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
            for piece in member_chunks(path, f, info, budget):
                budget -= len(piece)
                tags += piece.count(b"<")
                if tags > max_tags:
                    raise RunImportError([f"{where}: more than {max_tags:,} XML tags, more than a run on this dataset "
                                          "can hold: refused before reading the workbook"])
                longest, gap = longest_text(piece, gap, max_text // 2)
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


def read(path: Path, ds: Dataset, limits: Limits, found: Findings) -> Iterator[RunRecord]:
    """The rows of a workbook, table or JSON dump; a workbook may hold one row per instance and a header."""
    import pandas as pd

    problems = found.problems
    max_rows = len(ds.instances) + 1
    with path.open("rb") as f:
        magic = f.read(2)
    if magic == b"PK":
        try:
            z = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as e:
            raise RunImportError([f"{path}: not a readable .xlsx workbook ({e}) - truncated?"]) from None
        with z:
            check_declared(path, z.infolist(), limits)  # openpyxl never reads past a member's declared size
        _check_xlsx_elements(path, limits, max_rows)
        try:
            frames = [pd.read_excel(path, dtype=object)]
        except Exception as e:  # openpyxl raises many kinds for a broken workbook
            raise RunImportError([f"{path}: cannot read the workbook ({type(e).__name__}: {e}) - truncated?"]) from None
    elif path.name.lower().endswith((".json", ".jsonl")):
        rows = _json_rows(path, limits, problems)
        for where, r in rows:
            if (rec := _record(where, r, problems)) is not None:
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
                if (rec := _record(f"{path}:row {k}", r, problems)) is not None:
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


def _json_rows(path: Path, limits: Limits, problems: list[str]) -> list[tuple[str, dict]]:
    """VLMEvalKit's JSON dump: a list of row objects, {"index": prediction}, or JSON lines of rows."""
    if path.name.lower().endswith(".jsonl"):
        return [(f"{path}:{no}", obj) for no, obj in jsonl_objects(path, problems, limits.max_line_bytes)]
    doc = json_document(path, limits)
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
