"""What reading a run file yields: the records, the findings beside them, the bounds, the refusal.

Shared by every format module (`formats/`), the checks (`resolve`) and the import (`importer`), so none of them
imports another to name a record.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from ..common.problems import ProblemsError

# A format's NAME (see `formats.FORMATS`): a plain string, so a new format is one module, not an edit here too.
RunFormat = str
Status = Literal["answered", "errored", "truncated", "not_run"]

SHOWN_MISMATCHES = 10


@dataclass(frozen=True)
class Limits:
    """Bounds on the work a run file may cause (stated in docs/model-runs.md)."""
    max_expanded_bytes: int = 512 * 2**20    # all archive members (.eval, .xlsx) together, and a .json log
    max_response_chars: int = 1_000_000      # one response
    max_line_bytes: int = 32 * 2**20         # one JSON line


class RunImportError(ProblemsError):
    """A run file that cannot be imported; nothing was stored."""


@dataclass(frozen=True)
class RunRecord:
    """One response as a format read it, before it is placed on an instance and checked (`resolve`)."""
    where: str                      # "file:3", "file:row 7", "file:samples/x.json"
    response: str
    instance_id: str | None = None  # an instance id the file names
    position: int | None = None     # an integer position from a field the format defines as one
    order: Literal["task", "global"] | None = None   # what the position counts: the task's own rows, or ours
    dataset_hash: str | None = None
    target: str | None = None       # the gold answer the harness saw, to verify against ours
    prompt: str | None = None       # the prompt the harness sent, to verify against ours
    status: Status = "answered"
    detail: str = ""                # for errored/truncated records: what was found


@dataclass
class Findings:
    """What a reader finds beside its records: problems refuse the file (all of them are named), notes are told
    to the user, counts are kept with the run (`no_id`, `later_epochs`, then the statuses)."""
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)


@dataclass
class ImportResult:
    run_id: str
    solver: str
    format: RunFormat
    detected: str       # why this format was chosen
    responses: int
    replaced: bool
    notes: list[str]
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class ReadRun:
    format: RunFormat
    detected: str
    resolved: list[tuple[RunRecord, str]]
    notes: list[str]
    counts: dict[str, int]
