"""Reading user files with every problem collected (file and line named) before anything is used.

Lines are read one at a time with a length cap, so a hostile file (one endless line, deep nesting,
binary garbage) costs bounded memory and gets a `file:line` error instead of a crash.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator, TypeVar

MAX_LINE_BYTES = 32 * 2**20   # one JSON line; a 1M-character response with its prompt fits many times
MAX_PROBLEMS = 1000           # stop collecting after this many (the first ones are what a user fixes)


class ProblemsError(ValueError):
    """One or more problems with an input file; `problems` lists them all, the message the first 25."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        shown = problems[:25] + ([f"... and {len(problems) - 25} more"] if len(problems) > 25 else [])
        super().__init__("\n".join(shown))


def parse_json(text: str | bytes) -> Any:
    """json.loads that turns absurd nesting into a ValueError (the C parser raises RecursionError)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def iter_lines(path: Path, problems: list[str], max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) for every line, read in bounded pieces; an over-long line is a problem."""
    with path.open("rb") as f:
        no = 0
        while True:
            line = f.readline(max_line_bytes + 1)
            if not line:
                return
            no += 1
            if len(line) > max_line_bytes and not line.endswith(b"\n"):
                problems.append(f"{path}:{no}: line longer than {max_line_bytes:,} bytes: not a run file line")
                while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                continue
            yield no, line


def jsonl_objects(path: Path, problems: list[str], max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every JSON-object line; bad lines are added to `problems`."""
    for no, raw in iter_lines(path, problems, max_line_bytes):
        if len(problems) >= MAX_PROBLEMS:
            problems.append(f"{path}: stopped after {MAX_PROBLEMS} problems")
            return
        if not raw.strip():
            continue
        try:
            # A byte-order mark starts files that Windows tools write: it is not part of the first object.
            text = raw.decode("utf-8-sig" if no == 1 else "utf-8")
        except UnicodeDecodeError as e:
            problems.append(f"{path}:{no}: not UTF-8 text (byte {e.start} of the line): binary garbage in a "
                            "JSON-lines file")
            continue
        try:
            obj = parse_json(text)
        except json.JSONDecodeError as e:
            hint = " (the file looks truncated)" if not raw.endswith(b"\n") else ""
            problems.append(f"{path}:{no}: not valid JSON ({e.msg} at column {e.colno}){hint}")
            continue
        except ValueError as e:
            problems.append(f"{path}:{no}: not usable JSON ({e})")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{path}:{no}: expected a JSON object, got {type(obj).__name__}")
            continue
        yield no, obj


T = TypeVar("T")


def checked_records(path: Path, check: Callable[[dict], "tuple[T | None, list[str]]"], key: Callable[[T], Hashable],
                    name: Callable[[T], str]) -> tuple[list[T], list[str]]:
    """Every JSON-object line of `path` through `check` (the record, or what is wrong with the line), each record
    once by `key` (a repeat names the line it was first on): (records, problems as `FILE:LINE: …`). The callers
    use the records only when there is no problem at all."""
    problems: list[str] = []
    out: list[T] = []
    seen: dict[Hashable, int] = {}
    for no, obj in jsonl_objects(Path(path), problems):
        rec, errs = check(obj)
        problems += [f"{path}:{no}: {e}" for e in errs]
        if rec is None:
            continue
        k = key(rec)
        if k in seen:
            problems.append(f"{path}:{no}: {name(rec)} was already on line {seen[k]}")
            continue
        seen[k] = no
        out.append(rec)
    return out, problems
