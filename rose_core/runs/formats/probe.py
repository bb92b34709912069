"""What detection reads of a file, read once and shared by every format's `sniff`.

A file is first told apart by its container (its shape): a zip archive, a tab-separated table, one JSON document
(a `.json` name: often one line, so never read as lines), or JSON lines. The shape's content is read here with
the bounds and refusals of the container (binary data, a first line that is not JSON); a format's `sniff` then
looks only at what is already read, so adding a format adds no read of the file.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...common.problems import iter_lines, parse_json
from ..archive import json_document
from ..records import Limits, RunImportError

Shape = Literal["zip", "table", "document", "lines"]


@dataclass(frozen=True)
class Probe:
    path: Path
    name: str            # the file name, lower-cased
    shape: Shape
    content: Any = None  # "document": the JSON document; "lines": the first non-empty line's JSON value


@dataclass(frozen=True)
class Sniff:
    """A format's claim on a file. The most specific claim wins (the highest `score`); a claim with `refuse`
    set is a file the format recognises as its own but not importable (the message says what to import)."""
    score: int
    why: str             # told to the user: "format: inspect (a zip archive (inspect_ai .eval log))"
    refuse: str | None = None


def _binary(path: Path) -> RunImportError:
    return RunImportError([f"{path}: not text, not a zip archive: binary data cannot be a run file"])


def _first_line(path: Path, limits: Limits) -> bytes:
    """The first non-empty line, however long (up to the line limit): detection is not limited to a prefix."""
    scratch: list[str] = []
    for _, line in iter_lines(path, scratch, limits.max_line_bytes):
        if line.strip():
            return line.strip()
    if scratch:
        raise RunImportError(scratch[:1])
    return b""


def probe(path: Path, limits: Limits) -> Probe:
    """The file's shape and the content its formats are told apart by; refuses what no format can be."""
    name = path.name.lower()
    with path.open("rb") as f:
        magic = f.read(4)
    if magic[:2] == b"PK":
        return Probe(path, name, "zip")
    if name.endswith(".tsv"):
        return Probe(path, name, "table")
    if name.endswith(".json"):
        if b"\x00" in magic:
            raise _binary(path)
        return Probe(path, name, "document", json_document(path, limits))
    first = _first_line(path, limits)
    if b"\x00" in first:
        raise _binary(path)
    try:
        text = first.decode("utf-8-sig")  # a byte-order mark is not part of the line
    except UnicodeDecodeError:
        raise _binary(path) from None
    try:
        obj = parse_json(text)
    except ValueError as e:
        raise RunImportError([f"{path}:1: cannot tell the format: the first line is not usable JSON ({e}) and the "
                              "name does not end in .eval, .json, .xlsx or .tsv"]) from None
    return Probe(path, name, "lines", obj)


def first_object_has(p: Probe, key: str) -> bool:
    """The first JSON line is an object with `key` (how the line formats are told apart)."""
    return p.shape == "lines" and isinstance(p.content, dict) and key in p.content
