"""The scorer's fast path (`protocol._read_fast`) is proven equal to the full reader (`parse_full`).

`parse` answers the common shapes without the careful reader's token loop. Wherever the fast path answers,
its answer must be exactly the full reader's (same action, count, clicks and problem, so the same verdict and
INVALID reason); elsewhere it must decline. The strategy below writes the near misses a guard can get wrong:
case, spaces, look-alike and invisible characters, markdown, LaTeX, reasoning tags, prose around, keywords
glued to letters or to `\\text{..}`, cut-off texts, two answers, and every character the guard looks at.
"""
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rose_core.benchmarks.rose import protocol
from rose_core.benchmarks.rose.protocol import parse, parse_full

from .test_scoring import CORPUS

DERANDOMIZED = settings(derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def fast(text: object) -> protocol.Parsed | None:
    """What the fast path alone says (None: it declines)."""
    prepared, cut = protocol._prepare(text)
    return protocol._read_fast(prepared, cut) if prepared.isascii() else None


def assert_same(text: object) -> None:
    got, want = parse(text), parse_full(text)
    assert got == want, (text, got, want)
    f = fast(text)
    assert f is None or f == want, (text, f, want)


# --- pieces of near-miss texts -------------------------------------------------------------------------

# Mostly grid-sized numbers; sometimes the widths the fast path stops at (3 digits) and the reader caps (12).
NUMBER = st.one_of(st.integers(0, 12), st.integers(1, 6), st.integers(0, 99),
                   st.sampled_from([0, 999, 1000, 12345, 10**12, 10**13]))
CLICK_FORMS = [
    "CLICK(R{r},C{c})", "CLICK(R{r},C{c})", "CLICK(R{r},C{c})", "click(r{r},c{c})", "Click(R{r}, C{c})",
    "CLICK( R{r} , C{c} )", "CLICK(R {r},C {c})", "CLICK(R{r} ,C{c})", "CLICK (R{r},C{c})", "CLICK(  R{r},C{c})",
    "CLICK(\nR{r},C{c})", "CLICK(R{r},\tC{c})", "cLiCk(R{r},c{c})", "CLICK(R0{r},C{c})", "CLICK(R+{r},C{c})",
    "CLICK(R-{r},C{c})", "CLICK({r},{c})", "CLICK(R{r})", "CLICK(R{r}C{c})", "CLICK[R{r},C{c}]", "CLICK R{r} C{c}",
    "CLICK: R{r},C{c}", "CLICK at (R{r},C{c})", "Click on (R{r},C{c})", "Click cell (R{r},C{c})", "CLICK<R{r},C{c}>",
    "CLICK(R{r};C{c})", "CLICK(R{r},C{c}", "CLICK(row {r}, col {c})", "CLICKS(R{r},C{c})", "CLICKED(R{r},C{c})",
    "**CLICK**(R{r},C{c})", "`CLICK`(R{r},C{c})", "__CLICK__(R{r},C{c})", "~~CLICK~~(R{r},C{c})",
    "\\text{{CLICK}}(R{r},C{c})", "\\text{{click}}CLICK(R{r},C{c})", "**CLICK(R{r},C{c})**", "`CLICK(R{r},C{c})`",
    "xCLICK(R{r},C{c})", "1CLICK(R{r},C{c})", "_CLICK(R{r},C{c})", "CLICK(R{r},C{c})x", "CLICKCLICK(R{r},C{c})",
    "\u0421LICK(R{r},C{c})", "CLI\u200bCK(R{r},C{c})", "CLIC\u212a(R{r},C{c})", "CLICK\uff08R{r}\uff0cC{c}\uff09",
    "\uff23\uff2c\uff29\uff23\uff2b(R{r},C{c})", "CLICK(R{r},C{c}\u200f)", "CLICK(R\u00b2,C{c})", "CLICK(R{r},C\u2460)",
    "TAP(R{r},C{c})", "SELECT(R{r},C{c})", "R{r}C{c}", "(R{r},C{c})", "({r},{c})", "row {r}, column {c}",
]
TERMINALS = [
    "DONE", "DONE", "done", "Done", "DONE.", "**DONE**", "`done`", "\"done\"", "DONEx", "xDONE", "DONE_", "_DONE",
    "DONE1", "D O N E", "\\text{{DONE}}", "\\text{{done}}DONE", "DON\u0395", "DONE\u200b", "\uff24\uff2f\uff2e\uff25",
    "COUNT({n})", "COUNT({n})", "count({n})", "Count( {n} )", "COUNT ({n})", "COUNT({n}", "COUNT(-{n})", "COUNT(+{n})",
    "COUNT(0{n})", "COUNT(four)", "COUNT({n}.)", "COUNT{n}", "xCOUNT({n})", "COUNTS({n})", "**COUNT**({n})",
    "`count`({n})", "\\text{{count}}COUNT({n})", "\\text{{COUNT}}({n})", "**count**: COUNT({n})", "**Count**COUNT({n})",
    "SUBMIT({n})", "SUBMIT({n})", "submit({n})", "SUBMIT( {n})", "SUBMIT(-{n})", "SUBMIT({n}", "SUBMITTED({n})",
    "\\text{{submit}}SUBMIT({n})", "**SUBMIT**({n})", "SUBMIT\uff08{n}\uff09", "SUBMIT({n}\u00b2)",
]
SEPARATORS = [
    "; ", "; ", ";", ", ", " ", "\n", "\n\n", " and ", " then ", ", then ", " and then ", "and", "then", "\n- ",
    "\n* ", "\n+ ", "\n1. ", "\n2) ", "\n10. ", "\n1234. ", "- ", "1. ", " -> ", " => ", " \u2192 ", " | ", "|",
    "<br>", "<br/>", " y ", " und ", " et ", " \u548c ", " \u2705 ", "\n\U0001f449 ", "\n\u274c ", " x ", " (odd) ",
    " because it is odd, ", "**", "** and **", "`", "\n```\n", "~", ".", ":", "\t", "\r\n", "\x0b", "\x0c", "\x1c",
    "\xa0", "\u3000", "\u2028", "\uff1b", "\uff0c", "\u3001", "; ;", ",,", " ; ", "\n\nStep 2: ", "\nAction: ",
    "\n- [x] ", "\n| 2 | ", " \u2014 ", "\n> ", "\n# ", "_", "__", "*", "'", "\"", "[", "]", ">",
]
PROSE = [
    "", "Let me look at the grid.", "I count 3 odd cells.", "I count the differing cells row by row.",
    "I am done.", "done", "Done", "I'm done:", "so the answer is DONE.", "Row 5, column 2 is odd.", "R5C2", "R5, C2",
    "(5,2)", "(R5,C2)", "The odd cell is (R5,C2).", "I will click the cells at (2,3) and (5,3):", "I clicked them.",
    "click", "clicks", "tap", "Select", "press", "pick", "marked", "Final answer:", "**Answer:**", "Answer: ",
    "Step 1:", "- ", "1. ", "<think>", "</think>", "<think>Maybe CLICK(R6,C6); DONE.</think>", "<thinking>",
    "</thinking>", "\u25c1think\u25b7", "\u25c1/think\u25b7", "<|begin_of_thought|>", "<|end_of_thought|>",
    "<seed:think>", "</seed:think>", "<answer>", "</answer>", "<|begin_of_box|>", "```", "```text", "```json",
    '{"answer": "', '"}', '{"clicks": [[2, 3]]}', "count", "Count:", "submit", "Submitted.", "x", "1", "12", "(",
    ")", "\\", "\\(", "*", "**", "_", "`", "<", ">", "|", "-", "+", "#", "> ", "  ", "\n", "\n\n", "\r", "\t",
    "\u7b54\u6848\uff1a", "\u6c35", "\u00e9", "\u0130", "\u1e9e", "\ufb01", "\u00b2", "\u2460", "\u212a", "\u017f",
    "\u0131", "\u03a3", "\u200b", "\u200f", "\u202e", "\ufeff", "\u00ad", "\u2705", "\u274c", "\U0001f449",
    "The cell", "because", "and", "then", "Note: CLICK(R5,C5) is outside, so I left it.", "I mark (1,2).",
]
# Single characters the guard looks at (or that change what `lower()`, NFKC or the look-alike table do).
CHARS = list("()<>\\*_`~|-+.:;,!?[]{}\"'#0123456789 \t\n\rcdlikonetsubmCDLIKONETSUBMaprxyAPRXY") + [
    "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u0130", "\u212a", "\u017f", "\u0131", "\u0421", "\u0441", "\u041e",
    "\u0435", "\u200b", "\u200e", "\u202e", "\ufeff", "\u25c1", "\u25b7", "\uff08", "\uff09", "\uff0c", "\uff1b",
    "\u3001", "\u3002", "\u00b2", "\u2460", "\u2705", "\u274c", "\ufe0f", "\u20e3",
]


# What the fast path is for: plain prose around an answer written the way it reads (before a near miss is put in).
PLAIN_CLICKS = ["CLICK(R{r},C{c})", "click(r{r},c{c})", "Click(R{r}, C{c})", "CLICK( R{r} , C{c} )", "CLICK(R {r},C{c})"]
PLAIN_TERMINALS = ["DONE", "done", "Done", "COUNT({n})", "count({n})", "COUNT( {n} )", "SUBMIT({n})", "Submit({n})"]
PLAIN_SEPARATORS = ["; ", ";", ", ", " ", "\n", "\n\n", " and ", " then ", ", then ", "\n- ", "\n1. ", "\n2) ",
                    "** and **", "`; `", ".\n", ": ", "\t", "\r\n", " ~ ", "_"]
PLAIN_PROSE = ["", "", "Let me look at the grid carefully.", "**Answer:**", "Final answer:", "Row 2 looks odd.",
               "I count 4 odd cells.", "The odd ones are in rows 2 and 5.", "Answer - ", "1.", "```", "```\n",
               "\n\n", "**", "Here it is:\n\n", "Rows 1-6 checked; cells 2, 3 differ.", "R5C2 is odd.", "R5C2;",
               "r5 c2,", "Row 5, column 2 and", "- R5C2\n"]
PLAIN_TAILS = ["", "", ".", "**", "\n```", "`", "\n", "\n\nThese cells differ from the majority.",
               "\n\nI checked every row.", " (4 cells)", "!"]


@st.composite
def click(draw, forms: list = CLICK_FORMS) -> str:
    return draw(st.sampled_from(forms)).format(r=draw(NUMBER), c=draw(NUMBER))


@st.composite
def answer(draw, forms: list = CLICK_FORMS, terminals: list = TERMINALS, separators: list = SEPARATORS) -> str:
    """Clicks joined by separators, then a terminal (sometimes none, sometimes a bare one)."""
    parts = [draw(click(forms)) for _ in range(draw(st.integers(0, 4)))]
    if draw(st.integers(0, 7)):
        parts.append(draw(st.sampled_from(terminals)).format(n=draw(NUMBER)))
    text = parts[0] if parts else ""
    for part in parts[1:]:
        text += draw(st.sampled_from(separators)) + part
    return text


# Whole near misses: a click-ish word with coordinates (the safety net's business), a terminal on its own line
# (a new answer or a restatement), a cell written without CLICK (the cell-reference rule).
PHRASES = ["tap R6C1", "I mark row 6 ", "press r2, c3", "pick row 2", "select R2 C3", "clicked row 2", "taps (6",
           "\nDONE", "\n\nDone.", "\n- DONE\n", " DONE", "\nCOUNT(3)", "\nSUBMIT(0)", "\n**DONE**", "\nI'm done.",
           "R5C2, ", "\nR5C2\n", "(5,2), ", "row 5, col 2; ", "R5, C2 and ", "\n\n", "\nCLICK(R2,C2)", "CLICK(R1,C1); ",
           # letters that case-insensitive matching reads as ASCII (dotless i, long s, Kelvin, dotted I): not ASCII
           "I cl\u0131cked row 5", "\u017felect R2C3", "CL\u0130CK(R2,C2); ", "\u212aLICK(R2,C2)", "don\u0130"]
NEAR = st.one_of(st.sampled_from(PHRASES), st.sampled_from(PHRASES), click(),
                 st.sampled_from(TERMINALS).map(lambda t: t.format(n=3)), st.sampled_from(SEPARATORS),
                 st.sampled_from(PROSE), st.sampled_from(CHARS))


@st.composite
def perturbed(draw) -> str:
    """A text the fast path answers (plain prose, a plain answer, a plain tail) with up to three near misses put in
    anywhere (the end, after the answer, most often): where a guard one check short would give another verdict."""
    text = draw(st.sampled_from(PLAIN_PROSE)) + draw(st.sampled_from(["", " ", "\n", "\n\n"])) \
        + draw(answer(PLAIN_CLICKS, PLAIN_TERMINALS, PLAIN_SEPARATORS)) + draw(st.sampled_from(PLAIN_TAILS))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.one_of(st.just(len(text)), st.integers(0, len(text))))
        op = draw(st.sampled_from(["insert", "insert", "insert", "replace", "upper", "delete", "truncate"]))
        if op == "insert":
            text = text[:at] + draw(NEAR) + text[at:]
        elif op == "replace":
            text = text[:at] + draw(NEAR) + text[at + draw(st.integers(1, 4)):]
        elif op == "upper":
            text = text[:at] + text[at:at + 1].upper() + text[at + 1:]
        elif op == "delete":
            text = text[:at] + text[at + 1:]
        else:
            text = text[:at]  # cut off
    return text


@st.composite
def jumble(draw) -> str:
    """Prose, answers (one, two, none) and loose characters in any order."""
    pieces = draw(st.lists(st.one_of(answer(), st.sampled_from(PROSE), st.sampled_from(CHARS)), min_size=1, max_size=5))
    return draw(st.sampled_from(["", " ", "\n", "\n\n"])).join(pieces)


@given(perturbed())
@settings(DERANDOMIZED, max_examples=2000)
def test_fast_path_equals_the_full_reader_on_near_misses(text):
    assert_same(text)


@given(jumble())
@settings(DERANDOMIZED, max_examples=500)
def test_fast_path_equals_the_full_reader_on_jumbled_answers(text):
    assert_same(text)


@given(st.lists(st.sampled_from(CHARS), max_size=30).map("".join))
@settings(DERANDOMIZED, max_examples=500)
def test_fast_path_equals_the_full_reader_on_the_characters_it_looks_at(text):
    assert_same(text)
    assert_same("CLICK(R1,C2); " + text + "DONE")
    assert_same(text + "COUNT(3)" + text)


# Every near-miss phrase (and every pair of them) before and after plain answers: the combinations a random
# draw reaches too rarely (a click-ish word before a bare DONE, a cell reference then a restated DONE).
PLAIN_ANSWERS = ["DONE", "SUBMIT(0)", "COUNT(3)", "CLICK(R2,C3); DONE", "CLICK(R2,C3); SUBMIT(1)", "done",
                 "click(r2,c3) and done", "- CLICK(R2,C3)\n- DONE", "**DONE**", "COUNT( 3 )"]


def test_fast_path_equals_the_full_reader_on_every_phrase_around_plain_answers():
    for answer_text in PLAIN_ANSWERS:
        for glue in ("", " ", "\n", "\n\n"):
            for phrase in PHRASES + PLAIN_PROSE:
                assert_same(phrase + glue + answer_text)
                assert_same(answer_text + glue + phrase)
    for first in PHRASES:
        for second in PHRASES:
            for answer_text in PLAIN_ANSWERS[:4]:
                assert_same(first + second + "\n" + answer_text)


def test_fast_path_equals_the_full_reader_on_the_corpus():
    recs = [json.loads(line) for line in Path(CORPUS).read_text(encoding="utf-8").splitlines()]
    answered = 0
    for rec in recs:
        assert_same(rec["response"])
        answered += fast(rec["response"]) is not None
    assert answered >= len(recs) // 4, answered  # the corpus exercises the fast path, not only its declines


# The shapes the fast path exists for (the bench's mix): it must answer them, and answer them right.
ANSWERED = {
    "CLICK(R2,C3); CLICK(R5,C3); DONE": ("DONE", None, ((2, 3), (5, 3)), None),
    "Let me look at the grid carefully. CLICK(R2,C3); DONE": ("DONE", None, ((2, 3),), None),
    "I count the differing cells row by row. Final answer: COUNT(4)": ("COUNT", 4, (), None),
    "CLICK(R1,C1); SUBMIT(1)": ("SUBMIT", 1, ((1, 1),), None),
    "SUBMIT(0)": ("SUBMIT", 0, (), None),
    "**CLICK(R2,C3)** and **DONE**": ("DONE", None, ((2, 3),), None),
    "Final answer:\n- CLICK(R2,C3)\n- CLICK(R5,C3)\n- DONE": ("DONE", None, ((2, 3), (5, 3)), None),
    "click(r2,c3); done": ("DONE", None, ((2, 3),), None),
    "CLICK\uff08R2\uff0cC3\uff09\uff1bDONE": ("DONE", None, ((2, 3),), None),
    "<think>\nRow 2 looks odd.\n</think>\n\nCLICK(R2,C3); DONE": ("DONE", None, ((2, 3),), None),
    "```\nCLICK(R2,C3)\nDONE\n```": ("DONE", None, ((2, 3),), None),
    "CLICK( R2 , C3 ) then CLICK(R5,C3), DONE.": ("DONE", None, ((2, 3), (5, 3)), None),
    "1. CLICK(R2,C3)\n2. DONE": ("DONE", None, ((2, 3),), None),
    "Done.": ("DONE", None, (), None),
    "I think there are 3 odd cells, but I cannot click.": (None, None, (), "no_answer"),
    "I am done.": (None, None, (), "no_answer"),
    "CLICK(R1,C1); CLICK(R2,C2)": (None, None, (), "no_terminal"),
    "The cell R5C2 is odd.\nR5C2, DONE": (None, None, (), "malformed_click"),
}


def test_fast_path_answers_the_common_shapes_as_the_full_reader_does():
    for text, want in ANSWERED.items():
        f = fast(text)
        assert f is not None, text
        assert (f.action, f.count, f.clicks, f.problem) == want, text
        assert f == parse_full(text), text


# Near misses written out: the fast path leaves them to the full reader or answers exactly as it does
# (`\text{count}COUNT(4)` is the one a fast path on text before `_prepare` got wrong: the reader sees `countCOUNT(4)`).
NEAR_MISSES = [
    "\\text{count}COUNT(4)", "\\text{COUNT}(4)", "**count**COUNT(4)", "DONE**count**: COUNT(4)", "countCOUNT(4)",
    "CLICK(R1,C1) (red), CLICK(R2,C2); DONE", "TAP(R6,C1); DONE", "CLICK(R1,C1); DONE\nDONE", "COUNT(4)\nCOUNT(5)",
    "CLICK(R1,C1); DONE\n\nFinal: CLICK(R1,C1); CLICK(R2,C2)", "CLICK(R2); DONE", "CLICK(R1234,C1); DONE",
    "COUNT(1234)", "COUNT(-1)", "I will click (2,3).\nDONE", "Odd cell: (R6,C1)\nDONE", "CLICK(R1,C1)\u2192DONE",
    "xCLICK(R1,C1); DONE", "CLICK(R1,C1); DONEx", "CLICK(R1,C1);\x0bDONE", "<think>CLICK(R1,C1); DONE",
    "CLICK(R1,C1); CLI", "\u212aLICK", "so the answer is DONE.", "I'm done: DONE",
]


def test_fast_path_near_misses_get_the_full_readers_verdict():
    for text in NEAR_MISSES:
        assert_same(text)
