"""The run-file formats, one module each, as inspect_ai keeps its log recorders: adding a format is one module
(plus its test) and one line in `_MODULES`.

Each module exposes the same small interface:
- `NAME`: what `--format` and the stored run call it;
- `CLUE`: what detection looks for, named in the refusal of a file no format claims;
- `EXTENSIONS`: the file-name endings it is written under (the app's upload accepts their union);
- `sniff(probe) -> Sniff | None`: its claim on a file, from what `probe.probe` read once for all formats; the
  most specific claim (the highest score) wins, so no format needs to know the others;
- `read(path, ds, limits, found) -> Iterator[RunRecord]`: the records, every problem added to `found`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, Protocol

from ...benchmarks.rose.dataset import Dataset
from ..records import Findings, Limits, RunImportError, RunRecord
from . import inspect_log, jsonl, lmms_eval, vlmevalkit
from .probe import Probe, Sniff, probe


class RunFileFormat(Protocol):
    """The interface of a format module (checked by the registry test)."""
    NAME: str
    CLUE: str
    EXTENSIONS: tuple[str, ...]

    def sniff(self, p: Probe) -> Sniff | None: ...

    def read(self, path: Path, ds: Dataset, limits: Limits, found: Findings) -> Iterator[RunRecord]: ...


# The order formats are offered in (`--format`, the app's choice) and named in messages.
_MODULES: tuple[RunFileFormat, ...] = (jsonl, lmms_eval, vlmevalkit, inspect_log)
FORMATS: dict[str, RunFileFormat] = {m.NAME: m for m in _MODULES}
RUN_FORMATS: tuple[str, ...] = tuple(FORMATS)
FILE_EXTENSIONS: tuple[str, ...] = tuple(sorted({e for m in _MODULES for e in m.EXTENSIONS}))


def get(name: str) -> RunFileFormat:
    """The format called `name`; refused naming the formats there are."""
    try:
        return FORMATS[name]
    except KeyError:
        raise RunImportError([f"unknown format {name!r}: expected auto or one of {', '.join(RUN_FORMATS)}"]) from None


def _either(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " or " + items[-1] if len(items) > 1 else "".join(items)


def detect(path: Path, limits: Limits = Limits()) -> tuple[str, str]:
    """(format name, why) for a file: the most specific claim of any format (the first registered on a tie).
    Refuses a file no format claims, naming what each format looks for."""
    p = probe(path, limits)
    best: tuple[Sniff, str] | None = None
    for fmt in FORMATS.values():
        claim = fmt.sniff(p)
        if claim is not None and (best is None or claim.score > best[0].score):
            best = (claim, fmt.NAME)
    if best is None:
        raise RunImportError([f"{path}:1: cannot tell the format: expected "
                              f"{_either([f.CLUE for f in FORMATS.values()])}"])
    claim, name = best
    if claim.refuse:
        raise RunImportError([claim.refuse])
    return name, claim.why


__all__ = ["FILE_EXTENSIONS", "FORMATS", "RUN_FORMATS", "RunFileFormat", "Probe", "Sniff", "detect", "get"]
