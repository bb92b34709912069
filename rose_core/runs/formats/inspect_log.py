"""inspect_ai logs: the .eval zip archive (one member per sample, Zstandard or deflate) and the JSON log.

A sample names its instance by its id or `metadata.instance_id` (never a position). Only the first epoch is
read: later epochs' members are left out unexpanded. The samples the eval was to run but the log does not
hold (an eval that stopped or was cancelled) become `not_run` records, counted like errored samples, so a
stopped eval is never a silently smaller run.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from ...benchmarks.rose.dataset import Dataset
from ...common.problems import parse_json
from ..archive import json_document, zip_members
from ..records import Findings, Limits, RunImportError, RunRecord
from .fields import str_or_none
from .probe import Probe, Sniff

NAME = "inspect"
CLUE = "an .eval/.json inspect log"
EXTENSIONS = ("eval", "json")   # the file names it is written under (the app's upload accepts their union)

_LATER_EPOCH = re.compile(r"_epoch_(\d+)\.json$")
HEADER_BYTES = 64 * 2**20   # an .eval's header (its spec lists the sample ids: ~30 bytes each)


def sniff(p: Probe) -> Sniff | None:
    if p.shape == "zip":
        return Sniff(1, "a zip archive (inspect_ai .eval log)")
    if p.shape == "document" and isinstance(p.content, dict) and ("samples" in p.content or "eval" in p.content):
        return Sniff(3, "a JSON document with samples (inspect_ai JSON log)")
    return None


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


def _record(where: str, s: dict, problems: list[str], counts: Counter) -> RunRecord | None:
    meta: dict = s["metadata"] if isinstance(s.get("metadata"), dict) else {}
    sid = s.get("id")
    iid = str_or_none(meta.get("instance_id"))
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
    prompt = "\n".join(_message_text(m) for m in inp) if isinstance(inp, list) else str_or_none(inp)
    target = s.get("target")
    target = "\n".join(map(str, target)) if isinstance(target, list) else str_or_none(target)
    dataset_hash = str_or_none(meta.get("dataset_hash"))
    if s.get("error"):
        err = s["error"]
        msg = err.get("message") if isinstance(err, dict) else str(err)
        return RunRecord(where, "", instance_id=iid, dataset_hash=dataset_hash, target=target, prompt=prompt,
                         status="errored", detail=f"inspect error: {str(msg)[:120]}")
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
    return RunRecord(where, completion, instance_id=iid, dataset_hash=dataset_hash, target=target, prompt=prompt)


def _later_epoch_member(name: str) -> bool:
    """inspect names a sample `samples/<id>_epoch_<n>.json`: a later epoch is left out unexpanded."""
    m = _LATER_EPOCH.search(name)
    return m is not None and int(m.group(1)) > 1


def _eval_header(path: Path, limits: Limits) -> tuple[dict | None, str]:
    """The log's header (status, eval spec) from `header.json`, or `_journal/start.json` when the process ended
    before writing it, and which member it came from; (None, why) when neither is readable."""
    small = Limits(min(limits.max_expanded_bytes, HEADER_BYTES), limits.max_response_chars, limits.max_line_bytes)
    for member in ("header.json", "_journal/start.json"):
        for _, data in zip_members(path, small, member.__eq__):
            try:
                head = parse_json(data.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                return None, f"its {member} is unreadable"
            if isinstance(head, dict):
                return head, member
    return None, "it has no header.json"


def read(path: Path, ds: Dataset, limits: Limits, found: Findings) -> Iterator[RunRecord]:
    problems, notes, counts = found.problems, found.notes, found.counts
    with path.open("rb") as f:
        is_zip = f.read(2) == b"PK"
    seen: set = set()   # ids of the first epoch's samples in the log
    if is_zip:
        any_sample = False
        later: list[str] = []

        def want(n: str) -> bool:
            if not (n.startswith("samples/") and n.endswith(".json")):
                return False
            if _later_epoch_member(n):
                later.append(n)
                return False
            return True

        for name, data in zip_members(path, limits, want):
            any_sample = True
            try:
                s = parse_json(data.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                problems.append(f"{path}:{name}: unreadable sample ({type(e).__name__}: {e})")
                continue
            yield from _one(f"{path}:{name}", s, problems, counts, seen)
        counts["later_epochs"] += len(later)
        if not any_sample:
            problems.append(f"{path}: an .eval archive with no samples/*.json of the first epoch")
        head, source = _eval_header(path, limits)
    else:
        doc = json_document(path, limits)
        if not isinstance(doc, dict) or not isinstance(doc.get("samples"), list):
            raise RunImportError([f"{path}: an inspect JSON log needs a 'samples' list"])
        for k, s in enumerate(doc["samples"]):
            yield from _one(f"{path}:samples[{k}]", s, problems, counts, seen)
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
    ev: dict = head["eval"] if isinstance(head.get("eval"), dict) else {}
    dataset: dict = ev["dataset"] if isinstance(ev.get("dataset"), dict) else {}
    ids = dataset.get("sample_ids")
    if status != "success":
        err: dict = head["error"] if isinstance(head.get("error"), dict) else {}
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


def _one(where: str, s: Any, problems: list[str], counts: Counter, seen: set) -> Iterator[RunRecord]:
    if not isinstance(s, dict):
        problems.append(f"{where}: a sample must be a JSON object")
        return
    if s.get("epoch", 1) not in (1, None):
        counts["later_epochs"] += 1
        return
    if isinstance(s.get("id"), (str, int)):
        seen.add(s["id"])
    rec = _record(where, s, problems, counts)
    if rec is not None:
        yield rec
