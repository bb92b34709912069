"""Board-state inference: Hungarian matching into correct, missed, hallucinated, mismatches, format errors."""
import json
import math

import pandas as pd
import pytest

from rose_core.common.stats import wilson
from rose_core.benchmarks.sgp import parse_board_text, score_inference
from rose_core.benchmarks.sgp.inference import InferenceFileError, inference_items, read_answers, scored_rows
from rose_core.benchmarks.sgp.metrics import MetricsInputError, inference_table

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


# ------------------------------------------------------------------------------ items, answer files, the table

def test_items_are_every_episodes_start_and_goal(sgp_dataset):
    items = inference_items(sgp_dataset)
    assert len(items) == 2 * len(sgp_dataset.episodes)
    first = next(iter(sgp_dataset.episodes.values()))
    start, goal = items[0], items[1]
    assert (start.item_id, goal.item_id) == (f"{first.episode_id}:start", f"{first.episode_id}:goal")
    assert start.state == first.start_state() and goal.state == first.goal_state()
    assert [i.board for i in inference_items(sgp_dataset, ("goal",))] == ["goal"] * len(sgp_dataset.episodes)


def _truth_text(state):
    return "board:\n" + "\n".join(f"{g['color']} {g['shape']}: {g['coord']}" for g in state["geoms"])


def test_answer_files_are_checked_line_by_line_and_all_or_nothing(sgp_dataset, tmp_path):
    eid = next(iter(sgp_dataset.episodes))
    ep = sgp_dataset.episodes[eid]
    good = {"item_id": f"{eid}:start", "response": _truth_text(ep.start_state()), "solver": "m", "modality": "3d",
            "dataset_hash": sgp_dataset.dataset_hash, "latency_s": 1.5}
    f = tmp_path / "a.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in [
        good,
        {"episode_id": eid, "board": "goal", "response": "board:\nred cube: A1"},     # solver/modality by default
    ]) + "\n")
    answers = read_answers(f, sgp_dataset, solver="dflt", modality="2d")
    assert [(a.solver, a.modality, a.item_id, a.ms) for a in answers] == [
        ("m", "3d", f"{eid}:start", 1500.0), ("dflt", "2d", f"{eid}:goal", None)]
    rows = scored_rows(answers, sgp_dataset)
    assert rows[0]["correct"] == rows[0]["truth"] == ep.n_geoms and rows[0]["format_errors"] == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([
        json.dumps(good),
        "not json",
        json.dumps({**good, "item_id": "nope:start"}),
        json.dumps({**good, "item_id": f"{eid}:middle"}),
        json.dumps({**good, "dataset_hash": "0" * 16}),
        json.dumps({**good, "response": 3}),
        json.dumps({**good, "modality": "4d"}),
        json.dumps({**good, "sample": -1}),
        json.dumps({**good, "latency_s": "fast"}),
        json.dumps(good),                                                            # the same answer again
        json.dumps({k: v for k, v in good.items() if k != "solver"}),              # no solver, no default
    ]) + "\n")
    with pytest.raises(InferenceFileError) as e:
        read_answers(bad, sgp_dataset)
    lines = str(e.value).splitlines()
    assert [ln.split(": ", 1)[0] for ln in lines] == [f"{bad}:{k}" for k in range(2, 12)]
    assert "not valid JSON" in lines[0] and "'nope' is not in this build" in lines[1]
    assert "board: expected start or goal" in lines[2] and "is not this build's" in lines[3]
    assert "response: expected the reply's text" in lines[4] and "modality: expected" in lines[5]
    assert "sample:" in lines[6] and "latency_s:" in lines[7] and "already on line 1" in lines[8]
    assert "solver: missing" in lines[9]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InferenceFileError, match="no answers"):
        read_answers(empty, sgp_dataset)


def _row(solver, episode, truth, correct, missed=0, hallucinated=0, fmt=0, modality="2d"):
    predicted = correct + (truth - correct - missed) + hallucinated
    return {"solver": solver, "modality": modality, "episode_id": episode, "truth": truth, "predicted": predicted,
            "correct": correct, "missed": missed, "hallucinated": hallucinated, "coord_errors": truth - correct - missed,
            "color_errors": 0, "shape_errors": 0, "format_errors": fmt}


def test_the_inference_table_on_hand_worked_answers():
    rows = pd.DataFrame([
        _row("m", "e1", 2, 2),                        # exact
        _row("m", "e1", 2, 1, missed=1),              # one geom not written
        _row("m", "e2", 3, 3, hallucinated=1),        # all right plus an invented geom: not exact
        _row("n", "e1", 2, 2, fmt=1),                 # all right plus a line that is not a geom: not exact
    ])
    t = inference_table(rows, n_boot=1000, seed=0).set_index("solver")
    m = t.loc["m"]
    assert (m["boards"], m["episodes"], m["geoms"]) == (3, 2, 7)
    assert m["exact"] == pytest.approx(100 / 3)
    assert (m["exact lo"], m["exact hi"]) == pytest.approx(wilson(1, 3))
    assert m["correct"] == pytest.approx(600 / 7) and m["missed"] == pytest.approx(100 / 7)
    assert m["hallucinated"] == pytest.approx(100 / 7) and m["coord_errors"] == 0 and m["format_errors"] == 0
    # resampling the two episodes: e1 twice gives 3/4, e2 twice 3/3, one of each 6/7
    assert (m["correct lo"], m["correct hi"]) == pytest.approx((75.0, 100.0))
    n = t.loc["n"]
    assert n["exact"] == 0 and n["correct"] == 100 and n["format_errors"] == 50
    assert math.isnan(n["correct lo"]) and math.isnan(n["correct hi"])        # one episode: no interval
    with pytest.raises(MetricsInputError):
        inference_table(rows.iloc[0:0])


def test_words_of_the_originals_further_geoms_count_only_on_boards_that_have_them():
    paper = state(yellow_cube="A1", red_sphere="B2")
    s = score_inference(paper, "orange cube: A1\nred sphere: B2")     # the paper's words on the paper's boards
    assert (s.correct, s.format_errors, s.color_errors) == (1, 1, 0)
    extra = state(orange_cone="A1", yellow_cube="B2")
    s = score_inference(extra, "orange cone: A1\norange cube: B2")
    assert (s.correct, s.format_errors, s.color_errors) == (1, 0, 1)
    s = score_inference(extra, "orange star: A1")                       # the 2D name of a cone
    assert (s.correct, s.missed) == (1, 1)


def test_the_inference_table_also_gives_the_papers_unit_mean_counts_per_board():
    rows = pd.DataFrame([_row("m", "e1", 2, 2), _row("m", "e1", 2, 1, missed=1),
                         _row("m", "e2", 3, 3, hallucinated=1)])
    m = inference_table(rows, n_boot=1000, seed=0).set_index("solver").loc["m"]
    assert m["correct per board"] == pytest.approx(6 / 3) and m["missed per board"] == pytest.approx(1 / 3)
    assert m["hallucinated per board"] == pytest.approx(1 / 3) and m["format_errors per board"] == 0
    # resampling the two episodes: e1 twice gives 3/2 correct per board, e2 twice 3
    assert (m["correct per board lo"], m["correct per board hi"]) == pytest.approx((1.5, 3.0))
    # the per-100-geoms figures are unchanged by the added columns (same seeded stream, drawn first)
    assert m["correct"] == pytest.approx(600 / 7) and (m["correct lo"], m["correct hi"]) == pytest.approx((75, 100))
