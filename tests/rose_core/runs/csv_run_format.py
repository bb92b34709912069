"""A throwaway run format, written as a module of `rose_core/runs/formats/` is: a CSV answer sheet with an
`instance_id,response` header. The tests register it with `monkeypatch.setitem(FORMATS, NAME, module)` (its line
in the registry) and import files of it through the CLI and the app with no other change, which is what adding a
format must take."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterator

from rose_core.benchmarks.rose.dataset import Dataset
from rose_core.runs.formats.probe import Probe, Sniff
from rose_core.runs.records import Findings, Limits, RunRecord

NAME = "csvtest"
CLUE = "an instance_id,response header (a CSV answer sheet)"
EXTENSIONS = ("csv",)


def sniff(p: Probe) -> Sniff | None:
    if p.name.endswith(".csv") and p.first_line is not None and p.first_line.split(",")[:2] == ["instance_id",
                                                                                                   "response"]:
        return Sniff(2, "a .csv with an instance_id,response header (CSV answer sheet)")
    return None


def read(path: Path, ds: Dataset, limits: Limits, found: Findings) -> Iterator[RunRecord]:
    with path.open(newline="", encoding="utf-8-sig") as f:
        for no, row in enumerate(csv.DictReader(f), start=2):
            where = f"{path}:{no}"
            if not row.get("instance_id"):
                found.problems.append(f"{where}: field 'instance_id' missing")
                continue
            yield RunRecord(where, row.get("response") or "", instance_id=row["instance_id"])

