"""Placing each record on an instance, and checking it there, before anything is scored.

A run is attributed to instances only when the way back is certain. Every record is checked where the file
allows it: the dataset hash it carries, its `target` against the instance's gold answer, its prompt against
the instance's prompt. Any mismatch refuses the whole file, naming the first bad lines. A run with no hash and
nothing to verify is refused unless the user says `trust_ids`. Identifiers are instance ids; an integer is
taken as a position only from a field the format defines as one (lmms-eval `doc_id`, VLMEvalKit `index`),
never from a string like "12".
"""
from __future__ import annotations

import re
from pathlib import Path

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import MAIN_TEMPLATES
from ..common.problems import parse_json
from .records import SHOWN_MISMATCHES, RunImportError, RunRecord

_WS = re.compile(r"\s+")


def _norm(s: str) -> str:
    return _WS.sub(" ", s).strip()


def export_orders(ds: Dataset, manifest: list[str] | None) -> list[tuple[str, list[str]]]:
    """Candidate meanings of a task-relative position: the export's own order first when known."""
    out = [("the export manifest's order", manifest)] if manifest else []
    out.append(("the whole dataset (an export without --split)", ds.by_index))
    for split in ("dev", "test"):
        out.append((f"a --split {split} export", [i.instance_id for i in ds.select(split=split)]))
        out.append((f"a --split {split} export of T1-T5", [i.instance_id for i in ds.select(split=split,
                                                                                           templates=MAIN_TEMPLATES)]))
    out.append(("an export of T1-T5", [i.instance_id for i in ds.select(templates=MAIN_TEMPLATES)]))
    return out


def mismatch(ds: Dataset, rec: RunRecord, iid: str) -> str | None:
    """Why the record is not instance `iid`'s (its target or prompt differ), or None when nothing contradicts it."""
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
    lines = [(r, r.position) for r in task_recs if r.position is not None and r.position >= 0]
    fits = [(label, order) for label, order in export_orders(ds, manifest) if (manifest is None or order is manifest)
            and all(p < len(order) and mismatch(ds, r, order[p]) is None for r, p in lines)]
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
    differ = [other for other, o in fits[1:] if any(o[p] != order[p] for _, p in lines)]
    if differ:
        first, at = next((r, p) for r, p in lines if any(o[p] != order[p] for _, o in fits))
        problems.append(f"{first.where}: doc_id cannot be placed with certainty: the targets and prompts match under "
                        f"{label} and under {', '.join(differ)}, which put the lines on different instances (e.g. "
                        f"doc_id {at}: {order[at]} or {next(o for _, o in fits if o[at] != order[at])[at]}). "
                        "Give the export's manifest (--export-manifest) or use the task folder `export --format "
                        "lmms-eval-task` writes")
        return order
    notes.append(f"doc_id read as a position in {label} ({len(order)} rows): every line's target and prompt match")
    return order


def resolve(ds: Dataset, recs: list[RunRecord], problems: list[str], notes: list[str], trust_ids: bool,
            manifest: list[str] | None) -> list[tuple[RunRecord, str]]:
    """(record, instance id) for every record placed and verified; what is not is added to `problems`."""
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
        shown: str | int | None
        if rec.instance_id is not None:
            iid = rec.instance_id if rec.instance_id in ds.instances else None
            shown = rec.instance_id
        else:
            order = task_order if rec.order == "task" else ds.by_index
            pos = rec.position   # set whenever the instance id is not (the readers write one or the other)
            iid = order[pos] if order is not None and pos is not None and 0 <= pos < len(order) else None
            shown = pos
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
        bad = mismatch(ds, rec, iid)
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
