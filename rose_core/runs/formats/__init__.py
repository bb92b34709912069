"""The run-file formats, one module each, as inspect_ai keeps its log recorders: adding a format is one module
(plus its test) and one line in `_MODULES`. Everything else that names the formats (`--format`'s choices, the
app's format choice, upload types and label, the refusal of a file no format claims) is derived from the
registry, `FORMATS`, when it is asked, so a format registered is offered everywhere.

Each module exposes the same small interface:
- `NAME`: what `--format` and the stored run call it;
- `CLUE`: what detection looks for, named in the refusal of a file no format claims and in the app's upload label;
- `EXTENSIONS`: the file-name endings it is written under (the app's upload accepts their union);
- `sniff(probe) -> Sniff | None`: its claim on a file, from what `probe.probe` read once for all formats; every
  format is asked about every file (a zip, a .tsv, a .json document, JSON lines, other text or binary data), the
  most specific claim (the highest score) wins, so no format needs to know the others;
- `read(path, ds, limits, found) -> Iterator[RunRecord]`: the records, every problem added to `found`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, Protocol

from ...benchmarks.rose.dataset import Dataset
from ..records import Findings, Limits, RunImportError, RunRecord
from . import inspect_log, jsonl, lmms_eval, vlmevalkit
from .probe import LINES_EXTENSION, Probe, Sniff, binary_refusal, probe


class RunFileFormat(Protocol):
    """The interface of a format module (checked by the registry test)."""
    NAME: str
    CLUE: str
    EXTENSIONS: tuple[str, ...]

    def sniff(self, p: Probe) -> Sniff | None: ...

    def read(self, path: Path, ds: Dataset, limits: Limits, found: Findings) -> Iterator[RunRecord]: ...


# The registry. Its order is the order formats are offered in (`--format`, the app's choice) and named in messages.
_MODULES: tuple[RunFileFormat, ...] = (jsonl, lmms_eval, vlmevalkit, inspect_log)
FORMATS: dict[str, RunFileFormat] = {m.NAME: m for m in _MODULES}


def run_formats() -> tuple[str, ...]:
    """The formats' names, in the registry's order."""
    return tuple(FORMATS)


def file_extensions() -> tuple[str, ...]:
    """Every file-name ending a format is written under, sorted: what the app's upload accepts."""
    return tuple(sorted({e for f in FORMATS.values() for e in f.EXTENSIONS}))


def expected() -> str:
    """What detection looks for, every format's CLUE: "instance_id (plain JSONL), … or an .eval/.json inspect log"."""
    return _either([f.CLUE for f in FORMATS.values()])


def get(name: str) -> RunFileFormat:
    """The format called `name`; refused naming the formats there are."""
    try:
        return FORMATS[name]
    except KeyError:
        raise RunImportError([f"unknown format {name!r}: expected auto or one of "
                              f"{', '.join(run_formats())}"]) from None


def _either(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " or " + items[-1] if len(items) > 1 else "".join(items)


def _other_names() -> list[str]:
    """The endings formats are written under other than JSON lines', the last registered format's first (with the
    formats that ship: .eval, .json, .xlsx, .tsv)."""
    out: list[str] = []
    for fmt in reversed(FORMATS.values()):
        out += [e for e in fmt.EXTENSIONS if e != LINES_EXTENSION and e not in out]
    return out


def _unclaimed(p: Probe) -> str:
    """The refusal of a file no format claims, by its shape."""
    if p.shape == "binary":
        return binary_refusal(p.path)
    if p.shape == "text":
        return (f"{p.path}:1: cannot tell the format: the first line is not usable JSON ({p.not_json}) and the name "
                f"does not end in {_either(['.' + e for e in _other_names()])}")
    return f"{p.path}:1: cannot tell the format: expected {expected()}"


def detect(path: Path, limits: Limits = Limits()) -> tuple[str, str]:
    """(format name, why) for a file: the most specific claim of any format (the first registered on a tie).
    Refuses a file no format claims, naming what the formats look for."""
    p = probe(path, limits)
    best: tuple[Sniff, str] | None = None
    for fmt in FORMATS.values():
        claim = fmt.sniff(p)
        if claim is not None and (best is None or claim.score > best[0].score):
            best = (claim, fmt.NAME)
    if best is None:
        raise RunImportError([_unclaimed(p)])
    claim, name = best
    if claim.refuse:
        raise RunImportError([claim.refuse])
    return name, claim.why


__all__ = ["FORMATS", "RunFileFormat", "Probe", "Sniff", "detect", "expected", "file_extensions", "get",
           "run_formats"]
