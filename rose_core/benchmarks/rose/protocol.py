"""The ROSE output protocol: read the final answer a careful reader would read.

Grammar (what a solver must end with):

    COUNT(n)
    CLICK(Rr,Cc); CLICK(Rr,Cc); ...; DONE
    CLICK(Rr,Cc); ...; SUBMIT(n)

Real models wrap that in markdown, lists, code fences, reasoning blocks and other
scripts' punctuation. The rules (docs/dataset.md, "Protocol and scoring decisions", has the
decision table; tests/rose_core/data/model_outputs.jsonl the realistic cases):

1. Text is NFKC-normalised (only when not ASCII), `、` `。` read as `,` `.`, look-alike letters NFKC
   keeps (Cyrillic/Greek C K I O E …) become Latin, zero-width characters go. A keyword written as its
   own token is the keyword: `**CLICK**(R2,C3)`, `` `CLICK`(R2,C3) ``, `\\text{CLICK}(R2,C3)`.
2. Reasoning: text up to the last closing `</think>` (`</thinking>`, `</reasoning>`,
   `</thought>`) is not the answer. A reasoning block opened and never closed is a
   response cut off while thinking: what it holds is not an answer (`no_terminal`
   if nothing else answers).
3. Actions, keyword and R/C case-insensitive, spaces allowed inside the call:
   `CLICK(R2,C5)`, `click( r2 , c5 )`, `COUNT(3)`, `SUBMIT(2)`, `DONE`; a click also as
   `CLICK: R2,C5`, `CLICK at (R2,C5)`, `Click on (R2,C5)`, `Click cell (R2,C5)`, `CLICK<R2,C5>`.
4. A *sequence* is CLICKs closed by a terminal, joined only by separators: white
   space, `;` `,` `.` `:`, `and`, `then`, `和`, `然后`, `以及`, `->`, `=>`, `→`,
   dashes, markdown emphasis, quotes and code (`*` `_` `~` `` ` `` `>`, fences),
   brackets (JSON-ish lists), table bars with a step number, list markers (`-` `+`
   `•` `1.` `1)`), task boxes `[x]`, line labels `Step N:` `Action:` and group labels `Clicks:` `Actions:`
   `Submit:` `Finish:` `Done:`, tags `<answer>` `<br>`. A CLICK that begins its line (after a list marker, emphasis or a
   `Label:`) may carry an annotation up to the end of that line
   ("- CLICK(R2,C3) – the odd stroke").
5. DONE is a terminal when it closes CLICKs, when it stands alone on its line
   (after list marker / emphasis / a `Label:`, before trailing punctuation), or
   when it is written as a token (backticks, emphasis, quotes). Upper-case `DONE`
   inside a sentence ("so the answer is DONE.") is a *weak* terminal: used only
   when the response has no other answer. Any other `done` ("I am done.") is prose.
6. The final answer is the last sequence. Earlier candidates are discarded; a
   restatement after it (same cells) changes nothing; commentary after it is ignored, and a click
   said not to have been made after it (`I did not click R1C1`, `would not CLICK(R1,C1)`, `no need to
   click`, `without clicking`: a negation right before the click word) is commentary, and so is a click only
   considered, avoided or offered ("I briefly considered clicking R7,C4", "You could click R7,C4 to verify").
   A bare terminal right after the answer (only white space, punctuation, emphasis, closing
   brackets or tags between) restates it when it is the same terminal (same number) or DONE
   after a COUNT/SUBMIT answer: the answer keeps its clicks.
7. Nothing is dropped silently:
   - a click-like text that cannot be read (`CLICK(R2)`, `CLICK(2,3)`,
     `CLICK(row 2, col 3)`, `CLICK R2 C3`, a JSON `"clicks": [...]`) inside the
     final sequence, or any click in the final answer's paragraph (no blank line
     between) that is neither part of it nor one of its cells: `malformed_click`;
   - clicks after the final answer that end the text, or a cut-off action at the
     end (the response was cut while writing a new answer): `no_terminal`;
   - safety net (`_unread_click`): any other click-like text in the answer's region
     (`TAP(R6,C1)`, `Clicks: (R6,C1)`, a bare `(R6,C1)` beside a DONE, `点击第3行第2列`): `malformed_click`;
   - a click written as a tool call (`{"name": "click", ...}`, `<tool_call>`, `tool_use`, `functionCall`,
     `tool_calls`): `malformed_click` (the protocol's actions are text; a vendor's schema is not read);
   - a cell written without CLICK joined to the answer (`R5C2`, `R3-C1`, `cell 4-1`, `the third row, first
     column`, `第3行第2列`, `4行目3列目`, a bare `2,6`): `malformed_click`.

One compiled token regex over the text plus bounded checks of the gaps between
tokens: linear time on any input, and `parse` never raises.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from .records import Cell

Action = Literal["COUNT", "DONE", "SUBMIT"]
Problem = Literal["no_answer", "no_terminal", "negative_number", "malformed_click"]

# Groups by m.lastindex: 2 COUNT/SUBMIT, 4 CLICK, 5 CLICK written another way (`CLICK: R2,C3`,
# `Click on (R2,C3)`, `CLICK at (R2,C3)`, `Click cell (R2,C3)`, `CLICK<R2,C3>`; digits in 6-11),
# 12 unreadable click, 13 DONE.
_TOKEN = re.compile(
    r"(?=[cdsCDS])(?<![a-zA-Z])(?:"  # the look-ahead gives the engine a first-character set: ~1.3x faster
    r"(count|submit)\s*\(\s*([+-]?\d+)\s*\)"
    r"|click(?:\s*\(\s*r\s*([+-]?\d+)\s*,\s*c\s*([+-]?\d+)\s*\)"  # one `click` prefix for the three forms
    r"|((?:\s*:\s*|\s+(?:on|at)\s+(?:cell\s+)?|\s+cell\s+|\s*(?=<))"
    r"(?:\(\s*r\s*([+-]?\d+)\s*,\s*c\s*([+-]?\d+)\s*\)|<\s*r\s*([+-]?\d+)\s*,\s*c\s*([+-]?\d+)\s*>"
    r"|r\s*([+-]?\d+)\s*,\s*c\s*([+-]?\d+)(?![\w(\[]|\s*[)\]])))"
    r"|(\s*[(\[{][^()\[\]{}\n]{0,40}[)\]}]?|\s+(?:r\s*\d+\s*[,;]?\s*c\s*\d+|row\s*\d+\s*,?\s*col(?:umn)?\s*\d+|(?=r\s*\d|row\b))"
    r"|(?:s|ed)?\"\s*:\s*\[\s*[^\]\s]))"
    r"|(done)(?![a-z])"
    r")",
    re.IGNORECASE,
)
# Anything that looks like a click (safety net, run over the final answer's region after parsing):
# group 1 a click-ish word followed closely by something coordinate-like, groups 2-3 a bare `(Rr,Cc)`.
_JSON_CELL_KEY = (r'"(?:coordinates?|coords?|x|y|r|c|rows?|cols?|columns?|cells?|position|point|targets?)"'
                  r'\s*:\s*[\[{(]?\s*"?\s*(?:r\s*)?[+-]?\d')
# Number words a cell may be written with ("the third row, first column", "row three, column one").
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth")
_CARDINALS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_NUMBER_WORDS = {w: i for words in (_ORDINALS, _CARDINALS) for i, w in enumerate(words, 1)}
_ORD = r"(?:" + "|".join(_ORDINALS) + r"|\d{1,3}(?:st|nd|rd|th))"
_NUM = r"(?:\d{1,3}|" + "|".join(_CARDINALS) + r")"
_HAN_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_HAN = r"(?:\d{1,3}|十?[一二两三四五六七八九]|[一二三四五六七八九]?十)"  # 1-99 written 3, 三, 十二, 二十
# Click words in Chinese, Japanese and Korean (click, tap, select).
_CJK_CLICK = "点击|點擊|单击|單擊|点選|クリック|タップ|클릭|선택"
_CLICK_LIKE = re.compile(
    r"(?=[ctspmCTSPM(\"点點单單クタ클선])(?:"
    r"(?<![a-zA-Z])((?:click(?:s|ed|ing)?|tap(?:s|ped|ping)?|select(?:s|ed|ing)?|press(?:es|ed|ing)?"
    r"|pick(?:s|ed|ing)?|mark(?:s|ed|ing)?|" + _CJK_CLICK + r")(?![a-z])"
    r"(?:(?!click)[^\n点點单單クタ클선]){0,16}?"
    r"(?:[(\[<{]\s*r?\s*[+-]?\d|(?<![a-z])r\s*\d|(?<![a-z])row(?![a-z])|\d+\s*[,/\-–]\s*\d+|第\s*\d|\d+\s*(?:行|행)"
    r"|(?<![a-z])cell\s*\d)"
    r"|" + _JSON_CELL_KEY + r")"  # a tool call's or JSON answer's cell: `{"action": "left_click", "coordinate": [2, 3]}`
    r"|\(\s*r\s*([+-]?\d+)\s*,\s*c\s*([+-]?\d+)\s*\)"
    r")",
    re.IGNORECASE,
)
_JSON_CELL = re.compile(_JSON_CELL_KEY, re.IGNORECASE)
# A tool call that clicks: `{"name": "click", ...}`, `"function": {"name": "left_click"`, `{"select_cell": ...}`. An
# action the model took, not a candidate answer: refused wherever it stands after the reasoning (scorer 7).
_TOOL_CLICK = re.compile(r'"(?:left_|right_|double_)?(?:click|tap|select|press)(?:[_ ]?(?:cell|at|on|grid))?"\s*[,}:\]>/)]',
                         re.IGNORECASE)
_CJK_CLICK_RE = re.compile(_CJK_CLICK)
# A click-ish word written as a call (`TAP(`, `SELECT[`): never a description of cells.
_CALL_LIKE = re.compile(r"[a-z]+\s*[(\[<{]", re.IGNORECASE)
# A keyword written as its own token: `**CLICK**(R2,C3)`, `` `CLICK`(R2,C3) ``, `\text{CLICK}(R2,C3)`.
_KEYWORD_DECOR = re.compile(
    r"(?=[*_`\\])(?:"  # a first-character set for the engine: 2x faster on markdown text
    r"(\*{1,3}|_{1,3}|`)(click|count|submit)\1(?=\s*[(:<])"
    r"|\\(?:text|mathrm|textbf|texttt|mathtt|operatorname|mathbf)\s*\{\s*(click|count|submit|done)\s*\})",
    re.IGNORECASE,
)
# After NFKC: CJK comma and full stop, look-alikes NFKC keeps (Cyrillic/Greek letters for C L I K D O N E S U B M T R,
# Turkish i/I) and invisible characters.
_NORMALISE = str.maketrans({
    "、": ",", "。": ".",
    "\u0421": "C", "\u0441": "c", "\u03f9": "C", "\u03f2": "c", "\u041a": "K", "\u043a": "k", "\u039a": "K",
    "\u03ba": "k", "\u0406": "I", "\u0456": "i", "\u04c0": "I", "\u0399": "I", "\u03b9": "i", "\u041e": "O",
    "\u043e": "o", "\u039f": "O", "\u03bf": "o", "\u0415": "E", "\u0435": "e", "\u0395": "E", "\u039d": "N",
    "\u0405": "S", "\u0455": "s", "\u0412": "B", "\u0392": "B", "\u041c": "M", "\u039c": "M", "\u0422": "T",
    "\u03a4": "T", "\u0420": "R", "\u0440": "r", "\u03a1": "R", "\u0410": "A", "\u0430": "a", "\u0391": "A",
    "\u0443": "y", "\u0425": "X", "\u0445": "x",
    # dotless i and dotted I: case-insensitive regexes read them as i/I (NFKC already folds long s and Kelvin K)
    "\u0131": "i", "\u0130": "I",
    "\u200b": None, "\u200c": None, "\u200d": None, "\u2060": None, "\ufeff": None, "\u00ad": None,
    "\u180e": None,
    # bidirectional marks and embeddings (right-to-left text around an answer): invisible, never content
    "\u200e": None, "\u200f": None, "\u061c": None, "\u202a": None, "\u202b": None, "\u202c": None,
    "\u202d": None, "\u202e": None, "\u2066": None, "\u2067": None, "\u2068": None, "\u2069": None,
})


def _symbol_class(ranges: tuple[tuple[int, int], ...], exclude: frozenset[int]) -> str:
    """A regex class of the symbol/emoji ranges without the excluded code points."""
    parts = []
    for lo, hi in ranges:
        start = lo
        for x in sorted(c for c in exclude if lo <= c <= hi) + [hi + 1]:
            if start <= x - 1:
                parts.append(f"\\U{start:08x}-\\U{x - 1:08x}")
            start = x + 1
    return "[" + "".join(parts) + "]"


# A symbol or emoji used as a bullet (`✅ CLICK(R2,C3)`, `👉 DONE`, `1️⃣`): arrows, shapes, dingbats, pictographs.
# Marks that may mean "not this one" (❌ ✗ ☒ ⛔ 🚫 ❓ ⚠ 👎 ...) are no bullet: a click after one is not read as
# part of a sequence (the response is refused as malformed_click rather than scored on a guess).
_BULLET = _symbol_class(
    ((0x2190, 0x21FF), (0x2300, 0x23FF), (0x25A0, 0x25FF), (0x2600, 0x27BF), (0x2B00, 0x2BFF), (0x1F300, 0x1FAFF)),
    frozenset({0x2610, 0x2612, 0x2613, 0x26A0, 0x26D4, 0x2715, 0x2716, 0x2717, 0x2718, 0x274C, 0x274E, 0x2753,
               0x2754, 0x2755, 0x2756, 0x2757, 0x1F44E, 0x1F645, 0x1F6AB, 0x1F6D1}),
) + "\ufe0f?|\\d\ufe0f?\u20e3"
# A label of an action or a group of actions (`Step 1:`, `**Clicks:**`, `**Submit:**`, `**Finish:**`, `### Clicks`).
_LABEL = r"(?:steps?|actions?|moves?|clicks?|submit(?:[ \t]+count)?|finish(?:ed)?|done|end|terminal|terminate|stop)"
# What may stand between two actions of one sequence (possessive: no backtracking; the order of the
# alternatives matters: a label is tried before the emphasis characters it may start with).
_GAP = re.compile(
    r"(?:```[a-z]*|\|[ \t]*\d{1,3}[ \t]*(?=\|)|\s|\[[ xX]\](?=\s)|"
    r"(?<!\S)(?:[-+*•][ \t]+)?[*_]{0,3}" + _LABEL + r"[ \t]*\d{0,3}[ \t]*:[*_]{0,3}|"
    r"(?<!\S)#{1,6}[ \t]+" + _LABEL + r"[ \t]*:?(?=[ \t]*\n)|"  # a Markdown heading `### Submit`
    r"[;,.:*_~`\"'\[\]|>—–]|->|=>|→|"
    r"\b(?:and|then|y|luego|despu[eé]s|und|dann|et|puis|ensuite|e|poi|depois|\u0438|\u0437a\u0442e\u043c|\u043fo\u0442o\u043c)\b|"
    r"和|然后|以及|并且|そして|と|그리고|및|<\|?/?(?:answer|final_answer|br|p|b|strong|code|box|begin_of_box|end_of_box)\s*/?\|?>|"
    r"(?<!\S)(?:[-+•]|\d{1,3}[.)]|" + _BULLET + r")(?=\s))*+",
    re.IGNORECASE,
)
# What may stand before an action on its own line: quote/heading/list marker, table cells with a step number,
# a bullet symbol, emphasis, "Label:".
_LINE_HEAD = re.compile(
    r"(?:\|[ \t]*\d{1,3}[ \t]*(?=\|)|[ \t>#*_~`\-+•|]|<\|?[a-z_]+\|?>|\[[ xX]\]|" + _BULLET + r")*+"
    r"(?:\d{1,3}[.)][ \t]*)?+[*_~` \t]*+(?:[^\n:()]{1,40}:[*_~` \t]*)?+",
    re.IGNORECASE,
)
_LINE_TAIL = re.compile(r"(?:[*_~` \t.!)\]\"'|]|<\|?/?[a-z_]+\|?>|" + _BULLET + r")*+(?:\n|$)", re.IGNORECASE)
# What may stand between an answer and the same terminal written again (a restatement, rule 6).
_RESTATE_GAP = re.compile(r"(?:\s|[;,.:!*_~`\"'>)\]}]|<\|?/?[a-z_]+\|?>|<br\s*/?>)*+", re.IGNORECASE)
# Reasoning blocks: `<think>` (also thinking/reasoning/thought, `<seed:think>`), Kimi-VL's `◁think▷`, and
# `<|begin_of_thought|>`. Group 1 "/" or group 2 "end": a closing tag.
_REASONING = re.compile(
    r"[<\u25c1](/?)(?:seed:)?(?:think|thinking|reasoning|thought)\s*[>\u25b7]|<\|(?:begin|(end))_of_thought\|>",
    re.IGNORECASE,
)
# A cell written without CLICK: `R5C2`, `R5, C2`, `(R5,C2)`, `(5,2)`, `row 5, column 2`. It begins at its `(` or its
# `r`, never at white space before it: where it begins decides whether it heads its line, and an engine trying
# every position of a long blank run (each attempt scanning the rest of the run) took quadratic time.
# Also (scorer 7) `R3-C1`, `R3/C1`, `cell 4-1`, `row three, column one`, `the third row, first column`, `第3行第2列`,
# `4行目3列目`, `3행 2열` and a bare `2,6`.
_CELL_BASIC = (
    r"(?:\(\s*)?r\s*[=:]?\s*(\d{1,3})\s*[,;/\-–]?\s*c\s*[=:]?\s*(\d{1,3})\s*\)?|\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)"
    r"|cell\s*(\d{1,3})\s*[-–,/]\s*(\d{1,3})"
    # `第3行第2列`, `4行目3列目` (ordinal: a cell); an unmarked `6行6列` may be the grid's size (`网格为6行6列`): a
    # cell only where it starts a phrase (after white space, `:`, `(`, a list marker or emphasis)
    r"|第\s*(" + _HAN + r")\s*行\s*,?\s*(?:第\s*)?(" + _HAN + r")\s*列"
    r"|(" + _HAN + r")\s*行目\s*,?\s*(" + _HAN + r")\s*列目?"
    r"|(?<![^\s:(\[*_\-])(" + _HAN + r")\s*(?:行|행)\s*,?\s*(" + _HAN + r")\s*(?:列|열)"
    r"|行\s*(" + _HAN + r")\s*,?\s*列\s*(" + _HAN + r")"
    # a bare pair: not one of a list of numbers (`rows 1, 3, 5`), not rows or columns named by number
    r"|(?<![\d,])(?<![\d,]\s)(?<!rows\s)(?<!cols\s)(?<!columns\s)(\d{1,2})\s*,\s*(\d{1,2})(?!\s*,\s*\d)"
)
# Without the word "row" the forms that name it cannot match: the cheaper regex (its first characters are rarer).
_CELL_REF_NO_ROW = re.compile(
    r"(?=[(rc\d第一二两三四五六七八九十行])(?<![a-z0-9])(?:" + _CELL_BASIC + r")(?![a-z0-9])", re.IGNORECASE)
_CELL_REF = re.compile(
    r"(?=[(rcfsten\d第一二两三四五六七八九十行])(?<![a-z0-9])(?:" + _CELL_BASIC
    + r"|(?:\(\s*)?row\s*[=:#]?\s*(" + _NUM + r")\s*[,/]?\s*(?:and\s+)?col(?:umn)?\s*[=:#]?\s*(" + _NUM + r")\s*\)?"
    r"|(?:the\s+)?(" + _ORD + r")\s+row\s*,?\s*(?:and\s+|in\s+)?(?:the\s+)?(" + _ORD + r")\s+col(?:umn)?"
    # column first (`column 1, row 3`, `the first column, third row`): the last alternative, read swapped
    r"|(?:the\s+)?(?:col(?:umn)?\s*(" + _NUM + r")|(" + _ORD + r")\s+col(?:umn)?)\s*,?\s*(?:and\s+|of\s+|in\s+)?"
    r"(?:the\s+)?(?:row\s*(" + _NUM + r")|(" + _ORD + r")\s+row))(?![a-z0-9])",
    re.IGNORECASE,
)
_ROW_WORD = re.compile("row", re.IGNORECASE)
# A click said not to have been made, right before the click word: "I did not click R1C1", "would not CLICK(R1,C1)",
# "never click", "no need to click", "without clicking". After an answer such a mention is commentary (rule 6).
_NEGATED = re.compile(
    r"(?:\bnot|n't|\bnever|\bno\s+need\s+to|\bwithout|\bavoid(?:ed|ing|s)?|\bconsider(?:ed|ing|s)?|\bcould|\bmight"
    r"|\bmay|\bcan|\btempted|\brather\s+than|\binstead\s+of|\bthought\s+(?:about|of)|\bif\s+(?:you|i|we|one))"
    r"\s+(?:(?:also|still|briefly|even|just|then|optionally)\s+)?(?:to\s+)?(?:click(?:ing)?\s+(?:on\s+)?)?$",
    re.IGNORECASE)
_GERUND = re.compile(r"(?:click|tapp|select|press|pick|mark)ing(?![a-z])", re.IGNORECASE)
_SEPARATORS = " \t\r\n;,"
_DECORATION = ("*", "_", "`")
_HEAD_CHARS = 80
_DECORATED_WORDS = tuple(d + w + d for d in "*_`" for w in ("click", "count", "submit"))  # `**CLICK**(`
_ACTION_WORDS = ("click(", "done", "count(", "submit(")
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
_MALFORMED = Parsed(None, None, (), "malformed_click")


def _joined(text: str, a: int, b: int) -> bool:
    """Only separators between positions a and b."""
    return a == b or not text[a:b].strip(_SEPARATORS) or _GAP.fullmatch(text, a, b) is not None


def _heads_line(text: str, pos: int) -> bool:
    """The token at pos is the first thing on its line (after markers, emphasis, a label).

    Looks back at most _HEAD_CHARS: a longer line head is prose (and a bounded look-back
    keeps a megabyte line of "done done ..." linear).
    """
    lo = pos - _HEAD_CHARS if pos > _HEAD_CHARS else 0
    nl = text.rfind("\n", lo, pos)
    if nl < 0 and lo > 0:
        return False
    return _LINE_HEAD.fullmatch(text, nl + 1, pos) is not None


def _annotated(text: str, click_start: int, a: int, b: int) -> bool:
    """The gap a..b is an annotation to the end of a line-heading CLICK, then separators."""
    nl = text.find("\n", a, b)
    return nl >= 0 and _joined(text, nl, b) and _heads_line(text, click_start)


def _done_kind(text: str, s: int, e: int, word: str) -> int:
    """2 strong terminal, 1 weak (upper-case DONE in a sentence), 0 prose."""
    before = text[s - 1] if s else "\n"
    after = text[e] if e < len(text) else "\n"
    if before == "\n" and after == "\n":
        return 2
    if before in _DECORATION or after in _DECORATION or (before == after and before in "\"'"):
        return 2  # `done`, **done**, "done": written as a token
    if _heads_line(text, s) and _LINE_TAIL.match(text, e) is not None:
        return 2
    return 1 if word == "DONE" else 0


def _cut_off(text: str, run: list, run_end: int, cells: set) -> bool:
    """CLICKs after the final answer that end the text: a new answer cut off before its terminal.

    A restatement of the answer's cells is not; neither is a run followed by prose (commentary).
    A fragment of an action at the very end ("CLICK(R1,C1); CLI") is a cut-off too.
    """
    tail = text[run_end:].strip(_SEPARATORS).lower()
    if tail and any(w.startswith(tail) for w in _ACTION_WORDS):
        return True
    return _joined(text, run_end, len(text)) and (None in run or not cells.issuperset(run))


def _strip_reasoning(text: str) -> tuple[str, bool]:
    """The text after the last closed reasoning block; cut at a block that never closes.

    Tags are matched only where a `<` or `◁` stands (found with `str.find`; a tag holds no other one): as
    `finditer` would find them, without the engine trying every position of the text.
    """
    tags = []
    for opener in ("<", "\u25c1"):
        i = text.find(opener)
        while i >= 0:
            m = _REASONING.match(text, i)
            if m is not None:
                tags.append(m)
            i = text.find(opener, i + 1)
    if not tags:
        return text, False
    if len(tags) > 1:
        tags.sort(key=_start)
    cut = 0
    for m in tags:
        if m.group(1) or m.group(2):
            cut = m.end()
    for m in tags:
        if m.start() >= cut:
            if not (m.group(1) or m.group(2)):
                return text[cut:m.start()], True
            break
    return text[cut:], False


def _start(m: re.Match) -> int:
    return m.start()


def _negated(text: str, pos: int) -> bool:
    """A negation right before the click word at `pos` (`_NEGATED`)."""
    return _NEGATED.search(text, max(0, pos - 48), pos) is not None


def _gerund(text: str, pos: int) -> bool:
    """A click word at `pos` written as a gerund (`clicking R7,C4`, `tapping`, `selecting`): a click talked about,
    never an action; after the answer it is commentary ("Note: clicking R1,C1 would be wrong")."""
    return _GERUND.match(text, pos) is not None


def _suspect(text: str, clicks_read: int) -> bool:
    """A `click` that is not a CLICK call read, or another click-ish word: run the full safety net."""
    low = text.lower()
    return low.count("click") != clicks_read or "tap" in low or "select" in low or "press" in low \
        or "pick" in low or "mark" in low or '"' in text and _JSON_CELL.search(text) is not None \
        or not text.isascii() and _CJK_CLICK_RE.search(text) is not None


def _keyword(m: re.Match) -> str:
    return m.group(2) or m.group(3)


def _as_int(digits: str) -> int:
    return int(digits) if len(digits) <= _MAX_DIGITS else _number(digits)


def _region_start(text: str, answer_start: int) -> int:
    """Where the final answer's region begins: its paragraph, and the paragraph before it too when the
    answer begins its paragraph (`TAP(R6,C1)` + blank line + `DONE`). Blank lines may be several."""
    para = text.rfind("\n\n", 0, answer_start)
    if para < 0:
        return 0
    if _LINE_HEAD.fullmatch(text, para + 2, answer_start) is None:
        return para + 2
    prev = text.rfind("\n\n", 0, len(text[:para].rstrip()))
    return 0 if prev < 0 else prev + 2


def _joined_ref(text: str, answer_start: int, cells: set | tuple) -> bool:
    """A cell written without CLICK (`R5C2`, `(5,2)`, `row 5, column 2`) joined to the final answer by
    separators only (`Final answer: R5C2, then DONE`, a list item before `- DONE`) that is not one of its cells:
    a click the answer holds but cannot be read."""
    lo = _region_start(text, answer_start)
    cell_ref = _CELL_REF if _ROW_WORD.search(text, lo, answer_start) is not None else _CELL_REF_NO_ROW
    refs = list(cell_ref.finditer(text, lo, answer_start))
    if not cells and refs and _heads_answer(text, refs[-1], answer_start):
        return True  # `- R2C3 – the odd one` + `- DONE`: a note after the cell does not make it prose
    pos = answer_start
    for m in reversed(refs):
        if not _joined(text, m.end(), pos):
            return False
        if _ref_cell(m) not in cells:
            return True
        pos = m.start()
    return False


def _ref_cell(m: re.Match) -> tuple[int, int]:
    """The (row, col) a `_CELL_REF` match names, number words read."""
    r, c = (_word_number(g) for g in m.groups() if g is not None)
    return (c, r) if m.re is _CELL_REF and m.lastindex is not None and m.lastindex > _CELL_REF.groups - 4 else (r, c)


def _word_number(word: str) -> int:
    low = word.lower()
    if low[0] in _HAN_DIGITS or low[0] == "十":
        tens, _, ones = low.rpartition("十")
        return (_HAN_DIGITS.get(tens, 1) * 10 if "十" in low else 0) + _HAN_DIGITS.get(ones, 0)
    if low[-2:] in ("st", "nd", "rd", "th") and low[0].isdigit():
        low = low[:-2]
    return int(low) if low.isdigit() else _NUMBER_WORDS[low]


def _heads_answer(text: str, ref: re.Match, answer_start: int) -> bool:
    """A cell reference that heads its line (a list item, `Answer: R2C3 …`) on the answer's own line or on the line
    just before it: written as the answer's click, whatever note follows it on that line."""
    if not _heads_line(text, ref.start()):
        return False
    nl = text.find("\n", ref.end(), answer_start)
    return nl < 0 or _joined(text, nl, answer_start)


def _unread_click(text: str, answer_start: int, answer_end: int, answer: list, count: bool) -> bool:
    """Safety net: something click-like in the final answer's region that the answer does not hold.

    Region: from the answer's paragraph start (the paragraph before it too when the answer begins
    its paragraph) to the end of the text. Flagged there: a click-ish
    word (`click`, `tap`, `select`, `press`, `pick`, `mark`) followed closely by coordinates that
    is not a readable CLICK (before an answer that clicks or counts, such a word announces or
    describes cells and only bare pairs are checked). In the answer's own paragraph also a readable CLICK after the answer
    that is not one of its cells (commentary in a later paragraph may name other cells). Bare
    `(Rr,Cc)` pairs are flagged only in the answer's own paragraph, when not one of its cells and
    the answer is not a COUNT (prose describing cells before a COUNT is normal).
    """
    para = text.rfind("\n\n", 0, answer_start)
    para = 0 if para < 0 else para + 2
    end = text.find("\n\n", answer_end)
    para_end = len(text) if end < 0 else end
    if '"' in text and _TOOL_CLICK.search(text) is not None:
        return True  # a click as a tool call: not the protocol's form, and never dropped
    pos = _region_start(text, answer_start)
    cells = {(_as_int(r), _as_int(c)) for r, c in answer if r is not None}
    while True:
        m = _CLICK_LIKE.search(text, pos)
        if m is None:
            return False
        if m.lastindex == 1 and m.start() >= answer_end and (_negated(text, m.start()) or _gerund(text, m.start())):
            pos = m.end()  # "I did not click R1C1", "clicking R1C1 would be wrong" after the answer: commentary
            continue
        if m.lastindex == 1:
            if count and text[m.start()] == '"':
                pos = m.end()  # JSON cells beside a COUNT describe what was counted
                continue
            t = _TOKEN.match(text, m.start())
            if t is None or t.lastindex not in (4, 5):
                if m.start() < answer_start and (cells or count and _CALL_LIKE.match(text, m.start()) is None):
                    pos = m.start() + 1  # "I will click (2,3) and (5,3):" announcing the clicks that follow,
                    continue             # or describing the cells a COUNT counts ("I mark (1,2), ...")
                return True
            if answer_end <= t.start() < para_end:
                r, c = t.group(3, 4) if t.lastindex == 4 else _ext_digits(t)
                if (_as_int(r), _as_int(c)) not in cells:
                    return True
            pos = t.end()
            continue
        if para <= m.start() < para_end and not count and (_as_int(m.group(2)), _as_int(m.group(3))) not in cells:
            return True
        pos = m.end()


def _ext_digits(m: re.Match) -> tuple[str, str]:
    """The (row, col) digits of a CLICK written another way (groups 6-11 of _TOKEN)."""
    if m.group(6) is not None:
        return m.group(6, 7)
    if m.group(8) is not None:
        return m.group(8, 9)
    return m.group(10, 11)


def _prepare(text: object) -> tuple[str, bool]:
    """Normalised text without its reasoning blocks, and whether a reasoning block was cut off (rules 1-2)."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        if not text.isascii():  # every character _NORMALISE maps is outside ASCII
            text = text.translate(_NORMALISE)
    if ("*" in text or "`" in text or "_" in text or "\\" in text) and _maybe_decorated(text):
        text = _KEYWORD_DECOR.sub(_keyword, text)
    if "<" in text or "\u25c1" in text:
        return _strip_reasoning(text)
    return text, False


def _maybe_decorated(text: str) -> bool:
    """Whether `_KEYWORD_DECOR` may match: on ASCII text only where a keyword stands between two of the same
    decoration character (or a backslash is written); other text is always searched (case folding beyond
    `lower()`)."""
    if "\\" in text or not text.isascii():
        return True
    low = text.lower()
    return any(w in low for w in _DECORATED_WORDS)


def parse(text: object) -> Parsed:
    """The final answer in `text` (see the module docstring for the rules)."""
    text, cut = _prepare(text)
    return _read(text, cut)


def _read(text: str, cut: bool) -> Parsed:
    """The careful reader (rules 3-7): one pass over the tokens, then the checks on the final answer."""
    first = _TOKEN.search(text)
    if first is None:
        return _NO_TERMINAL if cut else _NO_ANSWER
    s = first.start()
    run: list = []  # the open sequence: (r, c) digit pairs, None for an unreadable click
    run_start = run_end = last_click = answer_end = answer_start = clicked_end = 0
    strays: list[tuple[int, int, list]] = []  # sequences broken by prose, never closed: (start, end, clicks)
    between = (0, 0)  # strays[between[0]:between[1]]: those after the answer before the final one
    answer: list | None = None  # the final sequence's clicks
    kind: str | None = None
    digits: str | None = None
    weak = -1
    calls = clicks_read = 0  # readable CLICK(...), COUNT(...), SUBMIT(...) tokens: for the safety net's shortcut
    for m in _TOKEN.finditer(text, s):  # from the first token: its look-behind still sees the text before
        li = m.lastindex
        s = m.start()
        if run and run_end != s and text[run_end:s].strip(_SEPARATORS) \
                and _GAP.fullmatch(text, run_end, s) is None \
                and (run[-1] is None or not _annotated(text, last_click, run_end, s)):
            strays.append((run_start, run_end, run))
            run = []  # prose since the last CLICK breaks the sequence
        if (li == 4 or li == 5 or li == 12) and not run and (answer is not None or weak >= 0) \
                and _negated(text, s):
            clicks_read += li == 4
            continue  # "I did not click R1C1" after an answer: commentary naming a cell it did not click
        if li == 4 or li == 5:
            clicks_read += li == 4
            if not run:
                run_start = s
            run.append(m.group(3, 4) if li == 4 else _ext_digits(m))
            run_end = m.end()
            last_click = s
            continue
        if li == 12:
            if not run:
                run_start = s
            run.append(None)
            run_end = m.end()
            continue
        if not run and answer is not None and _RESTATE_GAP.fullmatch(text, answer_end, s) is not None:
            # A bare terminal right after the answer: the same terminal again, or DONE after a
            # COUNT/SUBMIT answer, restates it (the answer keeps its clicks). Anything else is a new answer.
            new_kind = "DONE" if li == 13 else m.group(1).upper()
            if new_kind == "DONE" and kind != "DONE" or (new_kind == kind and (li == 13 or m.group(2) == digits)):
                answer_end = m.end()
                continue
        if li == 2:
            calls += 1
            kind, digits = m.group(1).upper(), m.group(2)
        else:
            if run:
                kind = "DONE"
            else:
                strength = _done_kind(text, s, m.end(), m.group(13))
                if strength == 1:
                    weak = s
                if strength < 2:
                    continue
                kind = "DONE"
            digits = None
        if answer:
            clicked_end = answer_end  # the last answer before this one that clicks
        answer, answer_start, answer_end = run, run_start if run else s, m.end()
        between = (between[1], len(strays))
        run = []
    if answer is None:
        if weak < 0:
            return _NO_TERMINAL if run or strays or cut else _NO_ANSWER
        answer, answer_start, answer_end, kind = [], weak, weak + 4, "DONE"
        between = (0, sum(1 for st in strays if st[1] <= weak))
    if answer and None in answer:
        return _MALFORMED
    if run or strays:
        cells = set(answer)
        if run and run_start >= answer_end and _cut_off(text, run, run_end, cells):
            return _NO_TERMINAL  # cut off while writing a new answer
        paragraph = text.rfind("\n\n", 0, answer_start) + 1
        for k in range(len(strays) - 1, -1, -1):
            end, stray = strays[k][1], strays[k][2]
            if end <= paragraph:
                break
            if end <= answer_start and (None in stray or not cells.issuperset(stray)):
                return _MALFORMED  # a click beside the final answer that is not part of it
    if (run or strays or calls + clicks_read != text.count("(") or _suspect(text, clicks_read)) \
            and _unread_click(text, answer_start, answer_end, answer, kind == "COUNT"):
        return _MALFORMED  # shortcut: every "(" and every "click" is a call read, no other click word
    if kind != "COUNT":
        if not answer and any(_heads_line(text, st[0]) for st in strays[between[0]:between[1]]):
            # Clicks written as actions (each heading its line), never closed, then prose, then a bare
            # DONE/SUBMIT: "then I'm done:" (the clicks belong to the answer) and "wait, that one is the
            # same" (they were withdrawn) look alike to a reader of the protocol. Refused, never guessed.
            return _MALFORMED
        if not answer and clicked_end and clicked_end > text.rfind("\n\n", 0, answer_start):
            # `CLICK(R2,C3); DONE` + `Final answer: DONE` in one paragraph: the clicks restated as done, or withdrawn?
            # Refused, never guessed (after a blank line the bare answer is a correction: it stands).
            return _MALFORMED
        cells = {(_as_int(r), _as_int(c)) for r, c in answer}
        if _joined_ref(text, answer_start, cells):
            return _MALFORMED  # `Final answer: R5C2, then DONE`
    if kind == "DONE":
        count = None
        negative = False
    else:
        count = int(digits) if len(digits) <= _MAX_DIGITS else _number(digits)  # type: ignore[arg-type]
        negative = count < 0
    if answer:
        clicks = tuple([(int(r) if len(r) <= _MAX_DIGITS else _number(r),
                         int(c) if len(c) <= _MAX_DIGITS else _number(c)) for r, c in answer])
        negative = negative or ("-" in text and any(r < 0 or c < 0 for r, c in clicks))
    else:
        clicks = ()
    return Parsed(kind, count, clicks, "negative_number" if negative else None)  # type: ignore[arg-type]
