"""Read a JSON-lines file of responses, with an error per bad line that names file and line.

`{"instance_id": ..., "response": ..., "solver": optional}` per line. Several solvers may share a
file (the `score` command groups by solver). Every problem is collected before failing, so a user
fixes a file in one pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..benchmarks.rose.dataset import Dataset
from ..common.problems import ProblemsError, jsonl_objects


class ResponseFileError(ProblemsError):
    """A responses file with unusable lines; `problems` lists them all."""


@dataclass(frozen=True)
class ResponseLine:
    line: int
    instance_id: str
    response: str
    solver: str | None


def read_responses(path: Path | str, dataset: Dataset, default_solver: str | None = None) -> list[ResponseLine]:
    path = Path(path)
    if not path.is_file():
        raise ResponseFileError([f"{path}: cannot read (no such file)"])
    problems: list[str] = []
    out: list[ResponseLine] = []
    seen: dict[tuple[str | None, str], int] = {}
    for no, obj in jsonl_objects(path, problems):
        where = f"{path}:{no}"
        iid, resp, solver = obj.get("instance_id"), obj.get("response"), obj.get("solver", default_solver)
        if not isinstance(iid, str):
            problems.append(f"{where}: field 'instance_id' {'missing' if iid is None else 'must be a string'}")
            continue
        if "response" not in obj:
            problems.append(f"{where}: field 'response' missing")
            continue
        if not isinstance(resp, str):
            problems.append(f"{where}: field 'response' must be a string, got {type(resp).__name__}")
            continue
        if solver is not None and not isinstance(solver, str):
            problems.append(f"{where}: field 'solver' must be a string")
            continue
        if iid not in dataset.instances:
            problems.append(f"{where}: unknown instance_id {iid!r} (not in dataset {dataset.root}, "
                            f"hash {dataset.dataset_hash})")
            continue
        if (solver, iid) in seen:
            problems.append(f"{where}: duplicate response for {iid!r}"
                            f"{f' by solver {solver!r}' if solver else ''} (first at line {seen[(solver, iid)]})")
            continue
        seen[(solver, iid)] = no
        out.append(ResponseLine(no, iid, resp, solver))
    if problems:
        raise ResponseFileError(problems)
    if not out:
        raise ResponseFileError([f"{path}: no responses (empty file)"])
    return out
