"""lmms-eval's samples (`--log_samples`: `*_samples_<task>.jsonl`), old style (with `doc`) and 0.6+.

`doc_id` is a position in the lmms-eval task's own dataset, so a line without an instance id (in its `doc` or
in the JSON target our task's `doc_to_target` writes) is placed by `resolve`, under the export order its
targets and prompts fit. The aggregated `results` JSON beside the samples is recognised and refused with what
to import instead.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from ...benchmarks.rose.dataset import Dataset
from ...common.problems import jsonl_objects
from ..records import Findings, Limits, RunRecord, Status
from .fields import is_int, str_or_none, unwrap
from .probe import Probe, Sniff, first_object_has

NAME = "lmms-eval"
CLUE = "doc_id (lmms-eval)"
EXTENSIONS = ("jsonl",)   # the file names it is written under (the app's upload accepts their union)

# What lmms-eval (0.6 on, its API model wrappers) logs in place of an answer when a request failed after its
# retries, or when its token budget ran out before the request was sent.
LMMS_FAILED = "[LMMS_EVAL_REQUEST_FAILED"
LMMS_BUDGET = "[LMMS_EVAL_BUDGET_EXCEEDED]"


def sniff(p: Probe) -> Sniff | None:
    if first_object_has(p, "doc_id"):
        return Sniff(3, "JSON lines with doc_id (lmms-eval samples)")
    if p.shape == "document" and isinstance(p.content, dict) and "results" in p.content and "configs" in p.content:
        return Sniff(2, "lmms-eval's aggregated results",
                     refuse=f"{p.path}: lmms-eval's aggregated results, not its samples: import the "
                            "*_samples_<task>.jsonl beside it (run lmms-eval with --log_samples)")
    return None


def _target(target: Any) -> tuple[str | None, str | None, str | None]:
    """(instance_id, dataset_hash, gold answer) from a target; our task's doc_to_target writes a JSON object."""
    if isinstance(target, list):
        target = unwrap(target)
    if not isinstance(target, str):
        return None, None, None
    if target.lstrip().startswith("{"):
        try:
            t = json.loads(target)
        except ValueError:
            t = None
        if isinstance(t, dict) and isinstance(t.get("instance_id"), str):
            return t["instance_id"], str_or_none(t.get("dataset_hash")), str_or_none(t.get("answer"))
    return None, None, target


def _status(resp: str) -> tuple[Status, str]:
    if resp.lstrip().startswith(LMMS_FAILED) or resp.strip() == LMMS_BUDGET:
        return "errored", f"lmms-eval's request failure text {resp.strip()[:100]!r}"
    return "answered", ""


def read(path: Path, ds: Dataset, limits: Limits, found: Findings) -> Iterator[RunRecord]:
    problems = found.problems
    for no, obj in jsonl_objects(path, problems, limits.max_line_bytes):
        where = f"{path}:{no}"
        doc: dict = obj["doc"] if isinstance(obj.get("doc"), dict) else {}
        t_iid, t_hash, target = _target(obj.get("target"))
        iid = str_or_none(doc.get("instance_id")) or t_iid
        doc_id = obj.get("doc_id")
        if iid is None and doc_id is None:
            problems.append(f"{where}: field 'doc_id' missing")
            continue
        if iid is None and not is_int(doc_id):
            problems.append(f"{where}: 'doc_id' must be an integer position, got {doc_id!r}")
            continue
        for fld in ("filtered_resps", "resps"):
            if fld in obj:
                resp = unwrap(obj[fld])
                break
        else:
            problems.append(f"{where}: neither 'filtered_resps' nor 'resps' present")
            continue
        if not isinstance(resp, str):
            problems.append(f"{where}: the response in '{fld}' is {type(resp).__name__}, expected a string")
            continue
        prompt = obj.get("input")
        if prompt is None and isinstance(obj.get("arguments"), list):
            prompt = unwrap(obj["arguments"])
        status, detail = _status(resp)
        yield RunRecord(where, resp, instance_id=iid, position=None if iid else doc_id, order="task",
                        dataset_hash=str_or_none(doc.get("dataset_hash")) or t_hash,
                        target=str_or_none(doc.get("answer")) or target, prompt=str_or_none(prompt),
                        status=status, detail=detail)
