from hypothesis import given, settings
from hypothesis import strategies as st

from rose_core import parse
from rose_core.instances import protocol_string

cells = st.lists(st.tuples(st.integers(1, 12), st.integers(1, 12)), max_size=12)


def test_count_inside_free_text():
    p = parse("Let me count... I see three odd ones.\n\n**Answer:** COUNT(3)")
    assert (p.action, p.count, p.clicks, p.problem) == ("COUNT", 3, (), None)


def test_last_terminal_wins_and_takes_only_contiguous_clicks():
    text = "First guess CLICK(R1,C1); DONE. On reflection:\nCLICK(R2,C3);\nCLICK( R4 , C5 ), DONE"
    p = parse(text)
    assert p.action == "DONE" and p.clicks == ((2, 3), (4, 5))


def test_prose_between_clicks_breaks_the_sequence():
    p = parse("CLICK(R1,C1) and then CLICK(R2,C2); DONE")
    assert p.clicks == ((2, 2),)


def test_lowercase_words_in_prose_are_not_answers():
    assert parse("I am done looking, CLICK(R1,C1)").problem == "no_terminal"
    assert parse("done").problem == "no_answer"
    assert parse("click(r1,c2); count(3)").problem == "no_answer"


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
@settings(max_examples=500)
def test_parse_never_raises_on_any_text(text):
    p = parse(text)
    assert p.problem in (None, "no_answer", "no_terminal", "negative_number")


@given(st.binary())
def test_parse_accepts_non_text_inputs(data):
    assert parse(data).action in (None, "COUNT", "DONE", "SUBMIT")
    assert parse(None).problem == "no_answer"


@given(cells, st.integers(0, 50), st.sampled_from(["count", "click", "click_submit"]), st.text(max_size=40))
def test_canonical_round_trip_after_prose(clicks, n, output, prose):
    s = protocol_string(output, n, clicks)
    p = parse(prose.replace("DONE", "") + "\n" + s)
    assert p.canonical == protocol_string(output, n, clicks if output != "count" else [])


def test_megabyte_responses_parse():
    # Linear-time regex: these would take minutes with a backtracking blow-up.
    for text in ("CLICK(" + " " * 1_000_000, "CLICK(R" + "1" * 1_000_000, "COUNT(" * 200_000,
                 "CLICK(R1,C1); " * 70_000 + "DONE", "x" * 1_000_000 + "COUNT(2)"):
        parse(text)
    assert len(parse("CLICK(R1,C1); " * 70_000 + "DONE").clicks) == 70_000
