"""Score one response against one instance: VALID, PASS and a failure kind.

VALID: the final answer (read by `protocol.parse`) follows the template's grammar
(right terminal action, every click readable, coordinates inside the grid, no
negative numbers, no clicks before a COUNT).
PASS: it is exactly right (the clicked set equals the target set with no repeat;
the count equals the number of targets in context). Every non-PASS gets one
primary failure kind, plus every kind that applies in `errors`, so a dashboard can
stack them without double counting.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .protocol import Parsed, parse
from .records import TEMPLATE_OUTPUT, Cell, Instance, Output, Scene

Failure = Literal[
    "invalid", "failure_to_abstain", "region_ignored", "count_anchoring",
    "false_click", "missed_target", "repeated_click", "miscount",
]
FAILURES: tuple[Failure, ...] = (
    "invalid", "failure_to_abstain", "region_ignored", "count_anchoring",
    "false_click", "missed_target", "repeated_click", "miscount",
)
InvalidReason = Literal[
    "no_answer", "no_terminal", "wrong_terminal", "out_of_grid", "negative_number", "clicks_before_count",
    "malformed_click",
]
INVALID_REASONS: tuple[InvalidReason, ...] = (
    "no_answer", "no_terminal", "wrong_terminal", "out_of_grid", "negative_number", "clicks_before_count",
    "malformed_click",
)
# Which reading of responses produced a stored verdict. "1": the upper-case, contiguous-CLICKs parser
# of v0.1; "2": the careful reader of protocol.py (NFKC, markdown, separators, malformed_click); "3": keywords
# decorated or written another way are read (`**CLICK**(R2,C3)`, `CLICK: R2,C3`, `Click on (R2,C3)`), look-alike
# letters normalised, a safety net makes unread click-like text malformed_click, a repeated bare terminal restates;
# "4": symbol/emoji bullets, `**Step 1:**` labels, table rows and other languages' and/then join a sequence, bidi
# marks and dotless/dotted i normalised, `<seed:think>`/`◁think▷`/`<|begin_of_thought|>` blocks, a cell written
# without CLICK joined to the answer (`R5C2, then DONE`) or clicks left open before a bare DONE/SUBMIT refused;
# "5": before an answer that clicks nothing, a cell heading the line of the answer or the line before it refused
# whatever note follows it (`- R2C3 – odd` + `- DONE`), a JSON/tool-call cell (`"coordinate": [2, 3]`) is
# click-like (not beside a COUNT: `{"cells": [[2, 3]]}` describes what was counted), and an answer that clicks
# followed in the same paragraph by a bare one (`CLICK(R2,C3); DONE` + `Final answer: DONE`) refused.
# "6": after an answer, a click said not to have been made ("I did not click R1C1", "would not CLICK(R1,C1)", "no need
# to click", "without clicking") is commentary: scorer 5 refused the answer (`no_terminal` / `malformed_click`); a cell
# written without CLICK at the start of a line heads it whatever ends the line before (scorer 5 let
# "The grid is uniform.\nR5C2 – odd\nDONE" pass an abstention item, and refused it without the full stop).
# "7": clicks as tool calls (`{"name": "click", ...}`, `<tool_call>`, Claude `tool_use`, Gemini `functionCall`, OpenAI
# `tool_calls`) and cells written `第3行第2列`, `4行目3列目`, `R3-C1`, `cell 4-1`, `the third row, first column`, `2,6`
# refused as malformed_click (scorer 6 let them PASS an abstention item); a click said to be only considered,
# avoided or possible after the answer ("You could click R7,C4 to verify") is commentary, and labelled groups
# (`**Clicks:**` list + `**Submit:** SUBMIT(2)`) are one answer (scorer 6 refused both as malformed_click).
# Bump it whenever a response could get another verdict; `python -m rose_core rescore` re-scores.
SCORER_VERSION = "7"
_TERMINAL: dict[Output, str] = {"count": "COUNT", "click": "DONE", "click_submit": "SUBMIT"}


@dataclass(frozen=True)
class ScoreKey:
    """What the scorer needs of an instance and its scene; built once, reused for every response."""

    instance_id: str
    template: str
    output: Output
    rows: int
    cols: int
    gold_count: int              # targets in context
    gold_cells: frozenset[Cell]  # targets in context
    global_count: int            # targets in the whole grid
    outside_targets: frozenset[Cell]  # targets outside the context
    terminal: str                # the action the template must end with

    @staticmethod
    def build(instance: Instance, scene: Scene) -> ScoreKey:
        in_ctx = frozenset(t for t in scene.targets if instance.in_context(t))
        return ScoreKey(
            instance_id=instance.instance_id, template=instance.template,
            output=TEMPLATE_OUTPUT[instance.template], rows=scene.rows, cols=scene.cols,
            gold_count=len(in_ctx), gold_cells=in_ctx, global_count=len(scene.targets),
            outside_targets=frozenset(scene.targets) - in_ctx,
            terminal=_TERMINAL[TEMPLATE_OUTPUT[instance.template]],
        )


@dataclass(slots=True)
class Score:
    """One scored response (read-only by convention; slots, not frozen, for speed)."""

    instance_id: str
    template: str
    valid: bool
    passed: bool
    failure: Failure | None          # primary kind; None when passed
    errors: tuple[str, ...]          # every kind that applies (and the invalid reason)
    invalid_reason: InvalidReason | None
    parsed: Parsed

    def to_json(self) -> dict:
        return {"instance_id": self.instance_id, "template": self.template, "valid": self.valid,
                "pass": self.passed, "failure": self.failure, "errors": list(self.errors),
                "invalid_reason": self.invalid_reason, "parsed": self.parsed.to_json()}


def _invalid(key: ScoreKey, parsed: Parsed, reason: InvalidReason) -> Score:
    return Score(key.instance_id, key.template, False, False, "invalid", ("invalid", reason), reason, parsed)


def score_parsed(key: ScoreKey, parsed: Parsed) -> Score:
    if parsed.problem is not None:
        return _invalid(key, parsed, parsed.problem)
    if parsed.action != key.terminal:
        return _invalid(key, parsed, "wrong_terminal")
    clicks = parsed.clicks
    if key.output == "count":
        if clicks:
            return _invalid(key, parsed, "clicks_before_count")
        if parsed.count == key.gold_count:
            return Score(key.instance_id, key.template, True, True, None, (), None, parsed)
        kind: Failure = "count_anchoring" if parsed.count == key.global_count else "miscount"
        return Score(key.instance_id, key.template, True, False, kind, (kind,), None, parsed)
    rows, cols = key.rows, key.cols
    for r, c in clicks:
        if not (1 <= r <= rows and 1 <= c <= cols):
            return _invalid(key, parsed, "out_of_grid")
    clicked = frozenset(clicks)
    gold = key.gold_cells
    repeated = len(clicked) != len(clicks)
    count_ok = key.output == "click" or parsed.count == key.gold_count
    if clicked == gold and not repeated and count_ok:
        return Score(key.instance_id, key.template, True, True, None, (), None, parsed)
    errors: list[str] = []
    if not gold and clicked:
        errors.append("failure_to_abstain")
    if clicked & key.outside_targets:
        errors.append("region_ignored")
    anchored = len(clicked) == key.global_count != key.gold_count
    if key.output == "click_submit" and parsed.count != key.gold_count:
        anchored = anchored or parsed.count == key.global_count
        if parsed.count != key.global_count:
            errors.append("miscount")
    if anchored:
        errors.append("count_anchoring")
    if clicked - gold - key.outside_targets:
        errors.append("false_click")
    if gold - clicked:
        errors.append("missed_target")
    if repeated:
        errors.append("repeated_click")
    primary = next(f for f in FAILURES if f in errors)
    return Score(key.instance_id, key.template, True, False, primary, tuple(errors), None, parsed)


def score(key: ScoreKey, response: object) -> Score:
    """Parse and score one response; never raises, whatever the response is."""
    return score_parsed(key, parse(response))
