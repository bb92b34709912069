"""What detection reads of a file, read once and shared by every format's `sniff`.

A file is first told apart by its container (its shape): a zip archive, a tab-separated table, one JSON document
(a `.json` name: often one line, so never read as lines), JSON lines, other text (a first line that is not
JSON), or binary data. The shape's content is read here with the bounds of the container (the line limit, the
document's size limit); a format's `sniff` then looks only at what is already read, so adding a format adds no
read of the file. Every shape is offered to every format, so a format of any shape is one module: what the
file is refused with when no format claims it is detection's (`formats.detect`), not the probe's.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...common.problems import iter_lines, parse_json
from ..archive import json_document
from ..records import Limits, RunImportError

Shape = Literal["zip", "table", "document", "lines", "text", "binary"]

LINES_EXTENSION = "jsonl"   # the name of JSON lines: what a file neither a zip, a .tsv nor a .json is read as
HEAD_BYTES = 64             # the file's first bytes, for formats told apart by a magic number


@dataclass(frozen=True)
class Probe:
    path: Path
    name: str            # the file name, lower-cased
    shape: Shape
    content: Any = None  # "document": the JSON document; "lines": the first non-empty line's JSON value
    head: bytes = b""    # the file's first HEAD_BYTES bytes (every shape)
    first_line: str | None = None  # "lines" and "text": the first non-empty line, decoded and stripped
    not_json: str | None = None    # "text": why the first line is not JSON


@dataclass(frozen=True)
class Sniff:
    """A format's claim on a file. The most specific claim wins (the highest `score`); a claim with `refuse`
    set is a file the format recognises as its own but not importable (the message says what to import)."""
    score: int
    why: str             # told to the user: "format: inspect (a zip archive (inspect_ai .eval log))"
    refuse: str | None = None


def binary_refusal(path: Path) -> str:
    """What a "binary" file no format claims is refused with."""
    return f"{path}: not text, not a zip archive: binary data cannot be a run file"


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
    """The file's shape and the content its formats are told apart by. Refuses only what is beyond the bounds
    (an over-long first line, a JSON document too large or not JSON); any other file is some shape."""
    name = path.name.lower()
    with path.open("rb") as f:
        head = f.read(HEAD_BYTES)
    magic = head[:4]
    if magic[:2] == b"PK":
        return Probe(path, name, "zip", head=head)
    if name.endswith(".tsv"):
        return Probe(path, name, "table", head=head)
    if name.endswith(".json"):
        if b"\x00" in magic:
            return Probe(path, name, "binary", head=head)
        return Probe(path, name, "document", json_document(path, limits), head=head)
    first = _first_line(path, limits)
    if b"\x00" in first:
        return Probe(path, name, "binary", head=head)
    try:
        text = first.decode("utf-8-sig")  # a byte-order mark is not part of the line
    except UnicodeDecodeError:
        return Probe(path, name, "binary", head=head)
    try:
        obj = parse_json(text)
    except ValueError as e:
        return Probe(path, name, "text", head=head, first_line=text, not_json=str(e))
    return Probe(path, name, "lines", obj, head=head, first_line=text)


def first_object_has(p: Probe, key: str) -> bool:
    """The first JSON line is an object with `key` (how the line formats are told apart)."""
    return p.shape == "lines" and isinstance(p.content, dict) and key in p.content
