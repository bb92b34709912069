"""The ROSE output protocol: find the final answer inside any text.

Grammar (what a solver must end with):

    COUNT(n)
    CLICK(Rr,Cc); CLICK(Rr,Cc); ...; DONE
    CLICK(Rr,Cc); ...; SUBMIT(n)

Models think aloud, so the parser scans the whole text and takes the *last*
terminal action (COUNT, DONE or SUBMIT) together with the CLICKs written right
before it, separated only by spaces, newlines, ';' or ','. CLICKs after the last
terminal are ignored. Keywords and the R/C of a coordinate are upper case as the
protocol writes them ("I am done" or "click(r1,c2)" in prose is not an answer);
spaces inside a call are tolerated: `CLICK( R3 , C4 )`.

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
    r"(COUNT|SUBMIT)\s*\(\s*([+-]?\d+)\s*\)"
    r"|CLICK\s*\(\s*R\s*([+-]?\d+)\s*,\s*C\s*([+-]?\d+)\s*\)"
    r"|\b(DONE)\b"
)
_SEPARATORS = " \t\r\n;,"
_MAX_DIGITS = 12  # beyond this a number is only "very large": int() of a huge string is slow


def _number(digits: str) -> int:
    if len(digits) <= _MAX_DIGITS:
        return int(digits)
    sign = -1 if digits[0] == "-" else 1
    body = digits.lstrip("+-").lstrip("0") or "0"
    return sign * (10**_MAX_DIGITS if len(body) > _MAX_DIGITS else int(body))


@dataclass(slots=True)
class Parsed:
    """The final protocol answer found in a response, or why there is none.

    Not frozen: a frozen dataclass costs ~5x more to create, and the scorer makes
    one per response on the hot path. Treat it as read-only.
    """

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


_NO_ANSWER = Parsed(None, None, (), "no_answer")
_NO_TERMINAL = Parsed(None, None, (), "no_terminal")


def parse(text: object) -> Parsed:
    """The last terminal action in `text` with the CLICKs that directly precede it.

    One pass over the tokens: a run of CLICKs separated only by separators is
    kept until a terminal closes it (the answer so far) or prose breaks it.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    run: list[tuple[str, str]] = []   # the current run of contiguous CLICKs
    run_end = -1
    answer: tuple[list[tuple[str, str]], str | None, str | None] | None = None
    saw_click = False
    for m in _TOKEN.finditer(text):
        kind, digits, r, c, _ = m.groups()
        if run:
            start = m.start()
            if run_end != start and text[run_end:start].strip(_SEPARATORS):
                run = []  # prose since the last CLICK breaks the run
        if r is not None:
            saw_click = True
            run.append((r, c))
            run_end = m.end()
        else:
            answer = (run, kind, digits)
            run = []
    if answer is None:
        return _NO_TERMINAL if saw_click else _NO_ANSWER
    raw_clicks, kind, digits = answer
    if kind is None:
        action: Action = "DONE"
        count = None
        negative = False
    else:
        action = "COUNT" if kind == "COUNT" else "SUBMIT"
        count = int(digits) if len(digits) <= _MAX_DIGITS else _number(digits)  # type: ignore[arg-type]
        negative = count < 0
    if raw_clicks:
        clicks = tuple([(int(r) if len(r) <= _MAX_DIGITS else _number(r),
                         int(c) if len(c) <= _MAX_DIGITS else _number(c)) for r, c in raw_clicks])
        negative = negative or any(r < 0 or c < 0 for r, c in clicks)
    else:
        clicks = ()
    return Parsed(action, count, clicks, "negative_number" if negative else None)
