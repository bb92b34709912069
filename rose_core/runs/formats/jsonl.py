"""Plain ROSE runs: JSON lines of {"instance_id", "response"}, as `export`, `agent` and `run-model` write them.

Plain runs name instances, never positions; a line may carry `dataset_hash`, `target` and `prompt` to be
verified against the dataset.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ...benchmarks.rose.dataset import Dataset
from ...common.problems import jsonl_objects
from ..records import Findings, Limits, RunRecord
from .fields import str_or_none
from .probe import Probe, Sniff, first_object_has

NAME = "jsonl"
CLUE = "instance_id (plain JSONL)"   # what detection looks for, in the message for a file no format claims
EXTENSIONS = ("jsonl",)   # the file names it is written under (the app's upload accepts their union)


def sniff(p: Probe) -> Sniff | None:
    if first_object_has(p, "instance_id"):
        return Sniff(2, "JSON lines with instance_id (plain ROSE run)")
    return None


def read(path: Path, ds: Dataset, limits: Limits, found: Findings) -> Iterator[RunRecord]:
    problems = found.problems
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
            yield RunRecord(where, resp, instance_id=iid, dataset_hash=str_or_none(obj.get("dataset_hash")),
                            target=str_or_none(obj.get("target")), prompt=str_or_none(obj.get("prompt")))
