"""The ROSE output protocol: find the final answer inside any text.

Grammar (what a solver must end with):

    COUNT(n)
    CLICK(Rr,Cc); CLICK(Rr,Cc); ...; DONE
    CLICK(Rr,Cc); ...; SUBMIT(n)

Models think aloud, so the parser scans the whole text and takes the *last*
terminal action (COUNT, DONE or SUBMIT) together with the CLICKs written right
before it, separated only by spaces, newlines, ';' or ','. `COUNT`, `CLICK` and
`SUBMIT` match in any letter case (their parentheses make them unambiguous);
`DONE` must be upper case, so "I am done" in prose is not an answer.

One compiled regex over the text, no nested quantifiers: linear time on any
input, and `parse` never raises.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .records import Cell

Action = Literal["COUNT", "DONE", "SUBMIT"]
Problem = Literal["no_answer", "no_terminal", "negative_number"]

_TOKEN = re.compile(
    r"(?i:(COUNT|SUBMIT)\s*\(\s*([+-]?\d+)\s*\)"
    r"|CLICK\s*\(\s*R\s*([+-]?\d+)\s*,\s*C\s*([+-]?\d+)\s*\))"
    r"|\b(DONE)\b"
)
_SEPARATOR = re.compile(r"[\s;,]*")
_MAX_DIGITS = 12  # beyond this a number is only "very large": int() of a huge string is slow


def _number(digits: str) -> int:
    sign = -1 if digits[0] == "-" else 1
    body = digits.lstrip("+-").lstrip("0") or "0"
    if len(body) > _MAX_DIGITS:
        return sign * 10**_MAX_DIGITS
    return sign * int(body)


@dataclass(frozen=True)
class Parsed:
    """The final protocol answer found in a response, or why there is none."""

    action: Action | None
    count: int | None
    clicks: tuple[Cell, ...]
    problem: Problem | None

    @property
    def canonical(self) -> str | None:
        """The answer re-written in canonical form (None when there is no answer)."""
        if self.action is None:
            return None
        clicks = "".join(f"CLICK(R{r},C{c}); " for r, c in self.clicks)
        if self.action == "COUNT":
            return clicks + f"COUNT({self.count})"
        if self.action == "DONE":
            return clicks + "DONE"
        return clicks + f"SUBMIT({self.count})"

    def to_json(self) -> dict:
        return {"action": self.action, "count": self.count, "clicks": [list(c) for c in self.clicks],
                "problem": self.problem, "canonical": self.canonical}


def parse(text: object) -> Parsed:
    """The last terminal action in `text` with the CLICKs that directly precede it."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    tokens = list(_TOKEN.finditer(text))
    i = len(tokens) - 1
    while i >= 0 and tokens[i].group(3) is not None:  # trailing CLICKs with no terminal after them
        i -= 1
    if i < 0:
        return Parsed(None, None, (), "no_terminal" if tokens else "no_answer")
    term = tokens[i]
    kind = term.group(1)
    action: Action = "DONE" if kind is None else ("COUNT" if kind.upper() == "COUNT" else "SUBMIT")
    count = _number(term.group(2)) if kind is not None else None
    clicks: list[Cell] = []
    negative = count is not None and count < 0
    start = term.start()
    j = i - 1
    while j >= 0:
        tok = tokens[j]
        if tok.group(3) is None or _SEPARATOR.fullmatch(text, tok.end(), start) is None:
            break
        r, c = _number(tok.group(3)), _number(tok.group(4))
        negative = negative or r < 0 or c < 0
        clicks.append((r, c))
        start = tok.start()
        j -= 1
    clicks.reverse()
    return Parsed(action, count, tuple(clicks), "negative_number" if negative else None)
