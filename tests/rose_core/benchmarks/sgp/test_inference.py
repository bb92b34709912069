"""Board-state inference: Hungarian matching into correct, missed, hallucinated, mismatches, format errors."""
from rose_core.benchmarks.sgp import parse_board_text, score_inference

from .helpers import state

TRUTH = state(red_cube="A1", blue_sphere="B2")


def counts(s):
    return (s.correct, s.missed, s.hallucinated, s.coord_errors, s.color_errors, s.shape_errors, s.format_errors)


def test_a_perfect_answer_in_any_accepted_form():
    for text in ("red cube: A1\nblue sphere: B2", "board:\n- blue sphere at b2\n- red cube: A1",
                 "1. A1: red square\n2. B2: blue circle", "red cube A1, blue sphere B2"):
        assert counts(score_inference(TRUTH, text)) == (2, 0, 0, 0, 0, 0, 0), text


def test_swapped_coordinates_are_two_coordinate_mismatches():
    assert counts(score_inference(TRUTH, "red cube: B2\nblue sphere: A1")) == (0, 0, 0, 2, 0, 0, 0)


def test_a_wrong_colour_is_matched_by_shape():
    assert counts(score_inference(TRUTH, "green cube: A1\nblue sphere: B2")) == (1, 0, 0, 0, 1, 0, 0)


def test_sharing_neither_colour_nor_shape_is_missed_plus_hallucinated():
    assert counts(score_inference(TRUTH, "red cube: A1\ngreen pyramid: C3")) == (1, 1, 1, 0, 0, 0, 0)
    assert counts(score_inference(TRUTH, "")) == (0, 2, 0, 0, 0, 0, 0)


def test_matching_maximises_the_pairs_before_minimising_mismatches():
    # red sphere B2 could pair with the red cube (shape + coordinate wrong) and leave the green cube alone;
    # the optimal assignment pairs each prediction with the other truth: two colour mismatches, nothing missed.
    s = score_inference(TRUTH, "red sphere: B2\ngreen cube: A1")
    assert counts(s) == (0, 0, 0, 0, 2, 0, 0)
    assert {(t.color, p.color) for t, p in s.pairs} == {("red", "green"), ("blue", "red")}


def test_extra_predictions_of_the_same_geom_are_hallucinated():
    assert counts(score_inference(TRUTH, "red cube: A1\nred cube: A2\nblue sphere: B2")) == (2, 0, 1, 0, 0, 0, 0)


def test_format_errors_are_counted_per_item_after_the_board_marker():
    text = ("I see a red cube somewhere.\n**Board:**\n- red cube: A1\n- empty: B1\n- red cone: C1\n"
            "- blue sphere: E5\n- cube red: D1")
    preds, problems = parse_board_text(text, 4)
    assert [(p.color, p.shape, p.coord) for p in preds] == [("red", "cube", "A1")]
    assert len(problems) == 4 and "off the 4x4 board" in problems[2]
    assert counts(score_inference(TRUTH, text)) == (1, 1, 0, 0, 0, 0, 4)
