from hypothesis import given, settings
from hypothesis import strategies as st

from rose_core import TEMPLATE_OUTPUT, ScoreKey, parse, score
from rose_core.benchmarks.rose.instances import protocol_string
from rose_core.benchmarks.rose import protocol

cells = st.lists(st.tuples(st.integers(1, 12), st.integers(1, 12)), max_size=12)
NO_DEADLINE = settings(deadline=None)  # hypothesis's 200 ms deadline fails runs on a loaded machine, not bugs


def test_count_inside_free_text():
    p = parse("Let me count... I see three odd ones.\n\n**Answer:** COUNT(3)")
    assert (p.action, p.count, p.clicks, p.problem) == ("COUNT", 3, (), None)


def test_last_sequence_wins_and_earlier_candidates_are_discarded():
    text = "First guess CLICK(R1,C1); DONE. On reflection:\nCLICK(R2,C3);\nCLICK( R4 , C5 ), DONE"
    p = parse(text)
    assert p.action == "DONE" and p.clicks == ((2, 3), (4, 5))


def test_and_then_join_clicks():
    assert parse("CLICK(R1,C1) and then CLICK(R2,C2); DONE").clicks == ((1, 1), (2, 2))


def test_prose_between_clicks_of_the_final_answer_is_refused_not_dropped():
    # The old reader kept only (2,2) here; a careful reader sees two clicks it cannot join.
    assert parse("CLICK(R1,C1) because it is odd, CLICK(R2,C2); DONE").problem == "malformed_click"
    # a blank line ends the paragraph: what came before is reasoning, not the answer
    assert parse("I first thought of CLICK(R1,C1), but it matches.\n\nCLICK(R2,C2); DONE").clicks == ((2, 2),)
    # only separators between: one sequence, blank lines or not
    assert parse("CLICK(R1,C1).\n\nCLICK(R2,C2); DONE").clicks == ((1, 1), (2, 2))


def test_case_insensitive_calls_and_prose_terminals():
    assert parse("click(r1,c2); Click(R3, C4); done").canonical == "CLICK(R1,C2); CLICK(R3,C4); DONE"
    assert parse("I am done looking, CLICK(R1,C1)").problem == "no_terminal"
    assert parse("I am done.").problem == "no_answer"
    assert parse("done").canonical == "DONE"          # alone on its line
    assert parse("Final answer: **Done**").canonical == "DONE"
    assert parse("So the answer is DONE.").canonical == "DONE"  # weak: the only answer there is
    assert parse("CLICK(R2,C3); DONE\n\nI wrote DONE because I finished.").clicks == ((2, 3),)


def test_reasoning_blocks():
    assert parse("<think>CLICK(R1,C1); DONE</think>\nCLICK(R2,C2); DONE").clicks == ((2, 2),)
    assert parse("<think>CLICK(R1,C1); DONE</think>").problem == "no_answer"
    assert parse("<think>row 1 ... CLICK(R1,C1); DONE").problem == "no_terminal"   # cut off while thinking
    assert parse("...reasoning without an opening tag</think>COUNT(2)").count == 2


def test_unreadable_clicks_in_the_final_answer():
    for text in ("CLICK(R2); DONE", "CLICK(2,3); DONE", "CLICK(row 2, col 3); DONE", "CLICK R2 C3\nDONE",
                 "CLICK(R2C3); DONE", "CLICK[R2,C3]; DONE", '{"clicks": [[2, 3]], "final": "DONE"}',
                 "The cell CLICK(R2,C3) is odd, so the answer is DONE."):
        assert parse(text).problem == "malformed_click", text


# The shapes models write most (the scoring bench's mix), read as the rules say.
COMMON_SHAPES = {
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
# Near misses of those shapes: a keyword glued to a word or to `\text{..}` (the reader sees `countCOUNT(4)`: no
# token), a click-ish word or a bare cell beside the answer, two answers, huge or negative numbers, cut-off texts.
NEAR_MISSES = {
    "\\text{count}COUNT(4)": (None, None, (), "no_answer"),
    "\\text{COUNT}(4)": ("COUNT", 4, (), None),
    "**count**COUNT(4)": ("COUNT", 4, (), None),
    "DONE**count**: COUNT(4)": ("COUNT", 4, (), None),
    "countCOUNT(4)": (None, None, (), "no_answer"),
    "CLICK(R1,C1) (red), CLICK(R2,C2); DONE": (None, None, (), "malformed_click"),
    "TAP(R6,C1); DONE": (None, None, (), "malformed_click"),
    "CLICK(R1,C1); DONE\nDONE": ("DONE", None, ((1, 1),), None),
    "COUNT(4)\nCOUNT(5)": ("COUNT", 5, (), None),
    "CLICK(R1,C1); DONE\n\nFinal: CLICK(R1,C1); CLICK(R2,C2)": (None, None, (), "no_terminal"),
    "CLICK(R2); DONE": (None, None, (), "malformed_click"),
    "CLICK(R1234,C1); DONE": ("DONE", None, ((1234, 1),), None),
    "COUNT(1234)": ("COUNT", 1234, (), None),
    "COUNT(-1)": ("COUNT", -1, (), "negative_number"),
    "I will click (2,3).\nDONE": (None, None, (), "malformed_click"),
    "Odd cell: (R6,C1)\nDONE": (None, None, (), "malformed_click"),
    "CLICK(R1,C1)\u2192DONE": ("DONE", None, ((1, 1),), None),
    "xCLICK(R1,C1); DONE": (None, None, (), "malformed_click"),
    "CLICK(R1,C1); DONEx": (None, None, (), "no_terminal"),
    "CLICK(R1,C1);\x0bDONE": ("DONE", None, ((1, 1),), None),
    "<think>CLICK(R1,C1); DONE": (None, None, (), "no_terminal"),
    "CLICK(R1,C1); CLI": (None, None, (), "no_terminal"),
    "\u212aLICK": (None, None, (), "no_answer"),
    "so the answer is DONE.": ("DONE", None, (), None),
    "I'm done: DONE": ("DONE", None, (), None),
}


def test_common_shapes_and_their_near_misses():
    for text, want in {**COMMON_SHAPES, **NEAR_MISSES}.items():
        p = parse(text)
        assert (p.action, p.count, p.clicks, p.problem) == want, text


def test_cut_off_and_commentary_after_the_answer():
    assert parse("CLICK(R1,C1); DONE\n\nFinal: CLICK(R1,C1); CLICK(R2,C2)").problem == "no_terminal"
    assert parse("CLICK(R1,C1); DONE\n\nFinal: CLICK(R1,C1); CLI").problem == "no_terminal"
    assert parse("CLICK(R1,C1); DONE\n\nI clicked CLICK(R1,C1).").clicks == ((1, 1),)
    assert parse("CLICK(R1,C1); DONE\n\nNote: CLICK(R5,C5) is outside, so I left it.").clicks == ((1, 1),)


def test_submit_with_spaces_inside_calls():
    p = parse("CLICK( R1 ,C2 );\nCLICK(R3, C4)  SUBMIT( 2 )")
    assert (p.action, p.count, p.clicks) == ("SUBMIT", 2, ((1, 2), (3, 4)))


def test_negative_numbers_are_flagged():
    assert parse("COUNT(-1)").problem == "negative_number"
    assert parse("CLICK(R-1,C2); DONE").problem == "negative_number"


def test_missing_answer_kinds_are_told_apart():
    assert parse("").problem == "no_answer"
    assert parse("I cannot tell.").problem == "no_answer"
    assert parse("CLICK(R1,C1); CLICK(R2,C2)").problem == "no_terminal"


def test_huge_numbers_do_not_raise():
    p = parse("COUNT(" + "9" * 100_000 + ")")
    assert p.action == "COUNT" and p.count >= 10**12


@given(st.text())
@settings(NO_DEADLINE, max_examples=500)
def test_parse_never_raises_on_any_text(text):
    p = parse(text)
    assert p.problem in (None, "no_answer", "no_terminal", "negative_number", "malformed_click")


PIECES = ["CLICK(", "click", "(R", "r", ",C", "c", ")", "DONE", "done", "COUNT(", "SUBMIT(", "1", "23", "-", ";",
          ",", " and ", " then ", "\n", "\n\n", "**", "`", "```", "- ", "1. ", "<think>", "</think>", "（", "）",
          "，", "；", '"clicks": [', "[", "]", "Answer:", " ", "x"]


@given(st.lists(st.sampled_from(PIECES), max_size=60))
@settings(NO_DEADLINE, max_examples=1000)
def test_parse_never_raises_on_protocol_fragments(parts):
    p = parse("".join(parts))
    assert (p.action is None) == (p.problem in ("no_answer", "no_terminal", "malformed_click"))


@given(st.binary())
@settings(NO_DEADLINE)
def test_parse_accepts_non_text_inputs(data):
    assert parse(data).action in (None, "COUNT", "DONE", "SUBMIT")
    assert parse(None).problem == "no_answer"


@given(cells, st.integers(0, 50), st.sampled_from(["count", "click", "click_submit"]),
       st.text(alphabet="abcdefghij .,!?\n", max_size=40))
@settings(NO_DEADLINE)
def test_canonical_round_trip_after_prose(clicks, n, output, prose):
    s = protocol_string(output, n, clicks)
    p = parse(prose.replace("done", "") + "\n\n" + s)
    assert p.canonical == protocol_string(output, n, clicks if output != "count" else [])


def test_megabyte_responses_parse():
    # Linear-time regexes: these would take minutes with a backtracking blow-up (bench/bench_score.py times them).
    for text in ("CLICK(" + " " * 1_000_000, "CLICK(R" + "1" * 1_000_000, "COUNT(" * 200_000,
                 "CLICK(R1,C1); " * 70_000 + "DONE", "x" * 1_000_000 + "COUNT(2)", "CLICK(R1,C1)" + "*`_" * 300_000,
                 "CLICK(R1,C1)" + "```" * 300_000 + "x", "- CLICK(R1,C1) " + "y" * 1_000_000,
                 "done " * 200_000, "<think>" * 100_000, "CLICK(R1,C1) x " * 70_000 + "DONE",
                 # scorer 7's shapes: CJK cells and click words, bare pairs, tool calls, commentary, labels
                 "\u7b2c" * 1_000_000 + "DONE", "1\u884c" * 500_000 + "\nDONE", "1," * 500_000 + "\nDONE",
                 "1" + " " * 1_000_000 + "x\nDONE", '"click"' + " " * 1_000_000 + "\nDONE",
                 '{"name": "click"}, ' * 50_000 + '{"name": "done"}', "DONE\n" + "could " * 160_000 + "click R1C1",
                 "the first row " * 70_000 + "\nDONE", "cell 1-" * 140_000 + "\nDONE",
                 "CLICK(R1,C1)\n**Submit:** " * 40_000 + "SUBMIT(1)", "\u70b9\u51fb " * 330_000 + "\nDONE"):
        parse(text)
    assert len(parse("CLICK(R1,C1); " * 70_000 + "DONE").clicks) == 70_000


# --- Invariants of the careful reader (hypothesis): formatting never changes a verdict it should not.

def _key(template: str, rows: int, cols: int, inside: set, outside: set) -> ScoreKey:
    output = TEMPLATE_OUTPUT[template]
    return ScoreKey(instance_id="I", template=template, output=output, rows=rows, cols=cols,
                    gold_count=len(inside), gold_cells=frozenset(inside), global_count=len(inside) + len(outside),
                    outside_targets=frozenset(outside),
                    terminal={"count": "COUNT", "click": "DONE", "click_submit": "SUBMIT"}[output])


ABSTAIN = _key("T4", 6, 6, set(), {(1, 1), (2, 3)})
PROSE = ["", "Looking at the highlighted region carefully.", "The majority glyph is 氵; the odd ones differ.",
         "**Answer:**", "Final answer:", "I checked every row.\nRow 1 matches.", "答案：", "Let me think step by step."]
FULL_WIDTH = str.maketrans("(),;", "（），；")


def _fmt_click(style: str, case: str, r: int, c: int) -> str:
    call = {"upper": f"CLICK(R{r},C{c})", "lower": f"click(r{r},c{c})", "title": f"Click(R{r}, C{c})",
            "spaced": f"CLICK( R{r} , C{c} )"}[case]
    kw, rest = call[:5], call[5:]
    return {"plain": call, "bold": f"**{call}**", "under": f"__{call}__", "code": f"`{call}`",
            "italic": f"*{call}*", "full": call.translate(FULL_WIDTH), "kw-bold": f"**{kw}**{rest}",
            "kw-code": f"`{kw}`{rest}", "kw-latex": f"\\text{{{kw}}}{rest}", "kw-colon": f"{kw}: R{r},C{c}",
            "kw-on": f"{kw} on ({rest.strip('( )').replace(' ', '')})", "kw-angle": f"{kw}<R{r},C{c}>",
            "confusable": "\u0421" + call[1:3] + "\u200b" + call[3:]}[style]


def _fmt_terminal(style: str, case: str, word: str) -> str:
    word = {"upper": word, "lower": word.lower(), "title": word.title(), "spaced": word.replace("(", "( ")}[case]
    if style.startswith("kw-") or style == "confusable":
        return f"**{word}**" if style == "kw-bold" and "(" not in word else word
    return {"plain": word, "bold": f"**{word}**", "under": f"__{word}__", "code": f"`{word}`",
            "italic": f"*{word}*", "full": word.translate(FULL_WIDTH)}[style]


SEPARATORS = ["; ", ", ", " and ", " then ", ", then ", "\n", ";\n", " → ", "、", "；", " 和 "]
LISTS = ["- ", "* ", "1. ", "1) ", "• "]


@st.composite
def formatted_answer(draw, clicks: list, terminal: str) -> str:
    """One way a model writes `clicks` + `terminal`, in any supported style."""
    style = draw(st.sampled_from(["plain", "bold", "under", "code", "italic", "full", "kw-bold", "kw-code",
                                  "kw-latex", "kw-colon", "kw-on", "kw-angle", "confusable"]))
    case = draw(st.sampled_from(["upper", "lower", "title", "spaced"]))
    actions = [_fmt_click(style, case, r, c) for r, c in clicks] + [_fmt_terminal(style, case, terminal)]
    layout = draw(st.sampled_from(["inline", "list", "numbered", "lines", "steps", "actions", "tasks", "br",
                                   "labelled"]))
    if layout == "labelled":  # scorer 7: `**Clicks:**` list, then `**Submit:** SUBMIT(2)` / `**Finish:** DONE`
        head, tail = draw(st.sampled_from([("**Clicks:**", "**Submit:**" if "(" in terminal else "**Finish:**"),
                                           ("**Actions:**", "**Finish:**"),
                                           ("Clicks:", "Submit:" if "(" in terminal else "Done:")]))
        blank = draw(st.sampled_from(["\n", "\n\n"]))
        body = (head + "\n" + "\n".join("- " + a for a in actions[:-1]) + blank if len(actions) > 1 else "") \
            + tail + " " + actions[-1]
    elif layout == "inline":
        sep = draw(st.sampled_from(SEPARATORS))
        body = sep.join(actions)
    elif layout == "list":
        marker = draw(st.sampled_from(LISTS))
        body = "\n".join(marker + a for a in actions)
    elif layout == "numbered":
        paren = draw(st.sampled_from([". ", ") "]))
        body = "\n".join(f"{i}{paren}{a}" for i, a in enumerate(actions, 1))
    elif layout == "steps":
        body = "\n".join(f"Step {i}: {a}" for i, a in enumerate(actions, 1))
    elif layout == "actions":
        body = "\n".join(f"Action: {a}" for a in actions)
    elif layout == "tasks":
        body = "\n".join(f"- [x] {a}" for a in actions)
    elif layout == "br":
        body = "<br>".join(actions)
    else:
        body = "\n".join(actions)
    wrap = draw(st.sampled_from(["none", "code", "fence", "fence-lang", "json"]))
    if wrap == "code" and style != "code":
        body = f"`{body}`" if layout == "inline" else body
    elif wrap == "fence":
        body = f"```\n{body}\n```"
    elif wrap == "fence-lang":
        body = f"```text\n{body}\n```"
    elif wrap == "json" and layout == "inline" and style in ("plain", "full") and "\n" not in body:
        body = '{"answer": "' + body + '"}'
    return body


@st.composite
def response(draw, clicks: list, terminal: str) -> str:
    prose = draw(st.sampled_from(PROSE))
    think = draw(st.sampled_from(["", "<think>\nMaybe CLICK(R6,C6); DONE? Or COUNT(9). Not sure.\n</think>\n",
                                  "<thinking>I am done thinking.</thinking>\n\n"]))
    after = draw(st.sampled_from(["", "\n\nThese cells differ from the majority.", "\n",
                                  "\n\nI am done.", "RESTATE",
                                  # scorer 6: a click said not to have been made, after the answer, is commentary
                                  "\n\nI did not click R4C4 because it matches the majority.",
                                  "\n\nNo need to click (R4,C4): it only looks darker.",
                                  # scorer 7: a click only considered, avoided or offered, after the answer
                                  "\n\nI briefly considered clicking R4,C4, but it matches the majority.",
                                  "\nAvoid clicking R4,C4: it is outside the region.",
                                  "\n\nYou could click CLICK(R4,C4) to verify."]))
    answer = draw(formatted_answer(clicks, terminal))
    if after == "RESTATE":  # the bare terminal written again: a restatement, the answer keeps its clicks
        after = draw(st.sampled_from(["\n\n", ".\n", "\n"])) + terminal
    return think + prose + ("\n\n" if prose else "") + answer + after


T3 = _key("T3", 6, 6, {(2, 3), (5, 3)}, {(1, 1)})
G = _key("G-Clk", 12, 12, {(1, 2), (3, 3), (12, 10)}, set())
T5 = _key("T5", 6, 6, {(3, 4), (6, 2)}, {(1, 1)})


@given(st.data())
@settings(NO_DEADLINE, max_examples=400)
def test_a_correct_answer_passes_in_any_supported_style(data):
    key, terminal = data.draw(st.sampled_from([(T3, "DONE"), (G, "DONE"), (T5, "SUBMIT(2)"), (ABSTAIN, "DONE")]))
    clicks = data.draw(st.permutations(sorted(key.gold_cells)))
    text = data.draw(response(list(clicks), terminal))
    s = score(key, text)
    assert s.passed, (text, s.to_json())


@given(st.data())
@settings(NO_DEADLINE, max_examples=400)
def test_a_correct_count_passes_in_any_supported_style(data):
    key = _key("T1", 5, 5, {(1, 1), (2, 2), (3, 3)}, set())
    text = data.draw(response([], "COUNT(3)"))
    assert score(key, text).passed, text
    # a bare DONE after a COUNT answer is not a new answer
    tail = data.draw(st.sampled_from(["\nDONE", "\n\nDone.", "\n**DONE**", " DONE"]))
    if text.rstrip().endswith(("COUNT(3)", "COUNT(3)**", "COUNT(3)`", "COUNT（3）", "count(3)", "Count(3)", "COUNT( 3)")):
        assert score(key, text + tail).passed, text + tail


UNREADABLE = ["CLICK({r},{c})", "CLICK(R{r})", "CLICK(row {r}, col {c})", "CLICK R{r} C{c}", "CLICK(R{r}C{c})",
              "CLICK[R{r},C{c}]", "click(r{r}, {c})", "CLICK(R{r};C{c})", "TAP(R{r},C{c})", "SELECT(R{r},C{c})",
              "C L I C K(R{r},C{c})", "~~CLICK~~(R{r},C{c})", "Clicks: (R{r},C{c})", "Odd cell: (R{r},C{c})",
              '{{"action": "CLICK", "row": {r}, "col": {c}}}', "**Click** on (R{r},C{c})", "click row {r}",
              # scorer 5: a note after a cell written without CLICK; a tool call's cell far from its click word
              "R{r}C{c} – the odd stroke", "R{r}C{c} (odd stroke)", "Row {r}, Column {c}: the mirrored glyph",
              '{{"action": "left_click", "coordinate": [{r}, {c}]}}', '{{"action": "click", "x": {r}, "y": {c}}}',
              '{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [{r}, {c}]}}}}',
              # scorer 7: tool calls with a string cell or short keys, CJK cells, other cell spellings
              '{{"name": "click", "arguments": {{"cell": "R{r},C{c}"}}}}', '{{"name": "click", "arguments": {{"r": {r}, "c": {c}}}}}',
              '<tool_call>{{"name": "click", "arguments": {{"r": {r}, "c": {c}}}}}</tool_call>',
              '{{"type": "tool_use", "name": "click", "input": {{"cell": "R{r},C{c}"}}}}',
              '{{"functionCall": {{"name": "click", "args": {{"r": {r}, "c": {c}}}}}}}',
              '{{"function": {{"name": "click", "arguments": "{{\\"cell\\": \\"R{r},C{c}\\"}}"}}}}',
              "点击第{r}行第{c}列", "第{r}行第{c}列", "クリック: {r}行目{c}列目", "{r}行目{c}列目", "点击（第{r}行，第{c}列）",
              "Click R{r}-C{c}", "R{r}-C{c}", "cell {r}-{c}", "Click cell {r}-{c}", "{r},{c}", "click {r},{c}",
              "the {r}th row, {c}th column", "Click the cell in the {r}th row, {c}th column", "row {r}, column {c}"]


@given(st.data())
@settings(NO_DEADLINE, max_examples=400)
def test_on_an_abstention_item_no_answer_that_clicks_passes(data):
    """The issue's measured failure: formatted clicks dropped, a bare DONE left, PASS. Never again."""
    n = data.draw(st.integers(1, 3))
    clicks = data.draw(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=n, max_size=n))
    text = data.draw(response(clicks, "DONE"))
    assert not score(ABSTAIN, text).passed, text
    # the same with some of the clicks written in a form the protocol cannot read
    bad = data.draw(st.sampled_from(UNREADABLE)).format(r=clicks[0][0], c=clicks[0][1])
    sep = data.draw(st.sampled_from(["; ", "\n", " and ", "\n- "]))
    texts = [bad + sep + "DONE", "Answer: " + bad + sep + "DONE", bad + "\nDONE", "**" + bad + "**" + sep + "**DONE**"]
    if any(w in bad.lower() for w in ("click", "tap", "select")):  # a bare pair counts only in the answer's paragraph
        texts.append(bad + "\n\nDONE")
    for text in texts:
        s = score(ABSTAIN, text)
        assert not s.passed and s.invalid_reason == "malformed_click", text


# --- The prepare step's shortcuts give what the plain regex passes gave ------------------------------------------

def _strip_reasoning_by_finditer(text: str) -> tuple[str, bool]:
    """The reasoning-block rule as written before tags were matched only at `<`/`◁` (the reference)."""
    tags = list(protocol._REASONING.finditer(text))
    if not tags:
        return text, False
    closes = [m for m in tags if m.group(1) or m.group(2)]
    if closes:
        text = text[closes[-1].end():]
    opened = protocol._REASONING.search(text)
    if opened is not None and not (opened.group(1) or opened.group(2)):
        return text[:opened.start()], True
    return text, False


TAG_PIECES = ["<think>", "</think>", "<THINK >", "</thinking>", "<reasoning>", "</reasoning>", "<seed:think>",
              "</seed:think>", "\u25c1think\u25b7", "\u25c1/think\u25b7", "<|begin_of_thought|>", "<|end_of_thought|>",
              "<", "<<", "</", "<think", "think>", "\u25c1", " ", "\n", "DONE", "CLICK(R1,C1); ", "COUNT(2)", "x"]
DECOR_PIECES = ["**", "*", "_", "__", "`", "CLICK", "click", "COUNT", "Submit", "(R1,C1)", "(2)", ":", " ", "DONE",
                "\\text{CLICK}", "\\", "x", "\n", "<"]


@given(st.lists(st.sampled_from(TAG_PIECES), max_size=12).map("".join))
@settings(NO_DEADLINE, derandomize=True, max_examples=1500)
def test_reasoning_tags_matched_at_their_opener_equal_the_finditer_rule(text):
    assert protocol._strip_reasoning(text) == _strip_reasoning_by_finditer(text), text


DECORATED = st.builds(lambda d, w, tail: d + w + d + tail, st.sampled_from(["*", "**", "***", "_", "__", "`"]),
                      st.sampled_from(["CLICK", "click", "Count", "SUBMIT", "submit"]),
                      st.sampled_from(["(R1,C1)", " (2)", ": R1,C1", "<R1,C1>", "x", ""]))


@given(st.lists(st.one_of(st.sampled_from(DECOR_PIECES), DECORATED), max_size=12).map("".join))
@settings(NO_DEADLINE, derandomize=True, max_examples=1500)
def test_the_decoration_prefilter_never_skips_a_decorated_keyword(text):
    if not protocol._maybe_decorated(text):
        assert protocol._KEYWORD_DECOR.sub(protocol._keyword, text) == text, text


# --- Scorer 7: answers a reader of the spec alone wrote (issue 23) -----------------------------------------------
# Each class: on an abstention item the click-like text never passes, on an item with targets it is refused as
# malformed_click (never dropped), and commentary after a correct answer changes nothing.

TOOL_CALLS = [
    '{{"name": "click", "arguments": {{"cell": "R{r},C{c}"}}}}\n{{"name": "done", "arguments": {{}}}}',
    '{{"name": "click", "arguments": {{"r": {r}, "c": {c}}}}}\n{{"name": "done"}}',
    '<tool_call>\n{{"name": "click", "arguments": {{"row": {r}, "col": {c}}}}}\n</tool_call>\n'
    '<tool_call>\n{{"name": "done", "arguments": {{}}}}\n</tool_call>',
    '<tool_call>{{"name": "click", "arguments": {{"cell": "R{r},C{c}"}}}}</tool_call>\n\n'
    '<tool_call>{{"name": "done"}}</tool_call>',
    '[{{"type": "tool_use", "id": "toolu_01", "name": "click", "input": {{"cell": "R{r},C{c}"}}}},\n'
    ' {{"type": "tool_use", "id": "toolu_02", "name": "done", "input": {{}}}}]',
    '{{"functionCall": {{"name": "click", "args": {{"r": {r}, "c": {c}}}}}}}\n{{"functionCall": {{"name": "done", "args": {{}}}}}}',
    '{{"tool_calls": [{{"id": "call_1", "type": "function", "function": {{"name": "click", "arguments": '
    '"{{\\"cell\\": \\"R{r},C{c}\\"}}"}}}}, {{"id": "call_2", "type": "function", "function": {{"name": "done", '
    '"arguments": "{{}}"}}}}]}}',
    '<tool_call>{{"name": "left_click", "arguments": {{"cell": [{r}, {c}]}}}}</tool_call>\nDONE',
    '{{"name": "clickCell", "arguments": {{"r": {r}, "c": {c}}}}}\n{{"name": "done"}}',
    '{{"name": "select_cell", "arguments": {{"r": {r}, "c": {c}}}}}\nSUBMIT(1)',
    # an action taken, wherever it stands after the reasoning, and beside a COUNT too
    '<tool_call>{{"name": "click", "arguments": {{"cell": "R{r},C{c}"}}}}</tool_call>\n\nThe cell is odd.\n\nDONE',
    '{{"name": "click", "arguments": {{"r": {r}, "c": {c}}}}}\nCOUNT(1)',
    '<function_calls>\n<invoke name="click">\n<parameter name="cell">R{r},C{c}</parameter>\n</invoke>\n'
    '<invoke name="done">\n</invoke>\n</function_calls>',
]
CJK_CELLS = ["点击第{r}行第{c}列\nDONE", "点击 第{r}行第{c}列，然后 DONE", "クリック: {r}行目{c}列目\nDONE",
             "第{r}行第{c}列\nDONE", "答案：点击（第{r}行，第{c}列），完成。\nDONE", "{r}行目{c}列目をクリック。\nDONE",
             "- 第{r}行第{c}列\n- DONE", "{r}행 {c}열 클릭\nDONE", "点击第三行第二列\nDONE", "第十二行第十列，然后 DONE",
             "行{r}列{c}\nDONE", "点击R{r}C{c}\nDONE"]
OTHER_SPELLINGS = ["Click R{r}-C{c}, then DONE", "Click cell {r}-{c}.\nDONE", "Final answer: cell {r}-{c}\nDONE",
                   "Click the cell in the {o} row, first column.\nDONE", "Answer: {r},{c}\nDONE",
                   "- {r},{c}\n- DONE", "Click {r},{c} then DONE", "Click R{r}/C{c}; DONE",
                   "Final answer: row {w}, column one, then DONE", "Click column {c}, row {r}.\nDONE",
                   "the first column, {o} row, then DONE", "Click r={r}, c={c} then DONE",
                   "Row {r} / Column {c}\nDONE", "Click the {r}rd row, {c}st column.\nDONE"]
ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth"}
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _cases(shapes: list, r: int, c: int) -> list:
    return [s.format(r=r, c=c, o=ORDINALS[r], w=WORDS[r]) for s in shapes]


def test_tool_call_clicks_are_refused_never_dropped():
    for r, c in ((2, 3), (1, 4)):
        for text in _cases(TOOL_CALLS, r, c):
            p = parse(text)
            assert p.problem == "malformed_click", text
            assert not score(ABSTAIN, text).passed, text


def test_cells_written_in_chinese_or_japanese_are_refused():
    for text in _cases(CJK_CELLS, 3, 2):
        assert parse(text).problem == "malformed_click", text


def test_other_cell_spellings_in_the_final_answer_are_refused():
    for text in _cases(OTHER_SPELLINGS, 3, 1):
        assert parse(text).problem == "malformed_click", text


COMMENTARY = ["I briefly considered clicking R7,C4, but it matches the majority.", "Avoid clicking R7,C4: it is outside.",
              "You could click R7,C4 to verify.", "You could also click CLICK(R7,C4) to double-check.",
              "One might click (R7,C4) by mistake: it only looks darker.", "I was tempted to click R7C4.",
              "Rather than clicking R7,C4, I left it.", "You may click R7,C4 if unsure.",
              "If you click R7,C4 you will see it matches.", "Note: clicking R7,C4 would be wrong, it is outside.",
              "Selecting (R7,C4) would be a mistake."]


def test_commentary_after_the_answer_changes_nothing():
    for note in COMMENTARY:
        for answer, want in (("DONE", ()), ("CLICK(R2,C3); DONE", ((2, 3),))):
            for sep in ("\n\n", "\n", " "):
                p = parse(answer + "." * (sep == " ") + sep + note)
                assert (p.action, p.clicks, p.problem) == ("DONE", want, None), answer + sep + note
    # an assertion of another click stays refused; "would click" at the end stays a cut-off answer
    assert parse("CLICK(R2,C3); DONE\nI clicked R1C1 too").problem == "malformed_click"
    assert parse("DONE\nI would click R1C1.").problem == "no_terminal"
    assert parse("DONE\nAlso click R6,C1, it is odd.").problem == "malformed_click"  # an instruction, not a mention


LABELLED = {
    "**Clicks:**\n- CLICK(R2,C3)\n- CLICK(R5,C3)\n\n**Submit:** SUBMIT(2)": ("SUBMIT", ((2, 3), (5, 3))),
    "**Actions:**\n1. CLICK(R2,C3)\n2. CLICK(R5,C3)\n\n**Finish:** DONE": ("DONE", ((2, 3), (5, 3))),
    "**Clicks:** CLICK(R2,C3), CLICK(R5,C3)\n**Submit:** SUBMIT(2)": ("SUBMIT", ((2, 3), (5, 3))),
    "Clicks:\n- CLICK(R2,C3)\n- CLICK(R5,C3)\n\nDone: DONE": ("DONE", ((2, 3), (5, 3))),
    "**Actions:** CLICK(R2,C3)\n**Done:** DONE": ("DONE", ((2, 3),)),
    "**Clicks:** CLICK(R2,C3)\n**Terminal:** DONE": ("DONE", ((2, 3),)),
    "### Clicks\n- CLICK(R2,C3)\n- CLICK(R5,C3)\n\n### Submit\nSUBMIT(2)": ("SUBMIT", ((2, 3), (5, 3))),
}


def test_labelled_groups_are_one_answer():
    for text, (action, clicks) in LABELLED.items():
        p = parse(text)
        assert (p.action, p.clicks, p.problem) == (action, clicks, None), text


CELL_PIECES = ["R3C1", "R3-C1", "r=3, c=1", "(3,1)", "cell 4-1", "第3行第2列", "第三行", "二列", "4行目3列目", "行3列2",
               "2,6", "1, 3, 5", "rows ", "column 1", "the first", "third", " col ", "row", "ro", "w", " ", ",", "\n",
               "x", "3", "and ", "the ", "first column, third "]


@given(st.lists(st.sampled_from(CELL_PIECES), max_size=14).map("".join))
@settings(NO_DEADLINE, derandomize=True, max_examples=1500)
def test_the_cell_regex_without_row_words_equals_the_full_one_where_no_row_is_written(text):
    """`_joined_ref` uses the cheaper regex when its region has no "row": the two must then find the same cells."""
    if "row" in text.lower():
        return
    full = [(m.span(), protocol._ref_cell(m)) for m in protocol._CELL_REF.finditer(text)]
    cheap = [(m.span(), protocol._ref_cell(m)) for m in protocol._CELL_REF_NO_ROW.finditer(text)]
    assert full == cheap, text


def test_an_unmarked_chinese_row_column_pair_is_a_cell_only_where_it_starts_a_phrase():
    # `网格为6行6列` is the grid's size; `第6行第6列`, `6行目6列目` and a phrase-initial `6行6列` name a cell
    assert score(ABSTAIN, "网格为6行6列。区域内所有字形都相同。\nDONE").passed
    assert score(ABSTAIN, "网格为6行6列。\nDONE").passed
    for text in ("6行6列\nDONE", "答案：6行6列\nDONE", "- 6行6列\n- DONE", "第6行第6列。\nDONE", "6行目6列目。\nDONE"):
        assert parse(text).problem == "malformed_click", text
