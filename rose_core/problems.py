"""Reading user files with every problem collected (file and line named) before anything is used."""
from __future__ import annotations

import json
from pathlib import Path


class ProblemsError(ValueError):
    """One or more problems with an input file; `problems` lists them all, the message the first 25."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        shown = problems[:25] + ([f"... and {len(problems) - 25} more"] if len(problems) > 25 else [])
        super().__init__("\n".join(shown))


def jsonl_objects(path: Path, data: bytes, problems: list[str]) -> list[tuple[int, dict]]:
    """(line number, object) for every JSON-object line; bad lines are added to `problems`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        problems.append(f"{path}:{line}: not UTF-8 text (byte {e.start}): binary garbage in a JSON-lines file")
        return []
    out = []
    lines = text.splitlines()
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            hint = " (the file looks truncated)" if no == len(lines) and not text.endswith("\n") else ""
            problems.append(f"{path}:{no}: not valid JSON ({e.msg} at column {e.colno}){hint}")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{path}:{no}: expected a JSON object, got {type(obj).__name__}")
            continue
        out.append((no, obj))
    return out
