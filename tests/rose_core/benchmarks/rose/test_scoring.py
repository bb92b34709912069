import copy
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rose_core import FAILURES, TEMPLATE_OUTPUT, Gold, Instance, Region, Scene, ScoreKey, score
from rose_core.benchmarks.rose.instances import derive_instances

# A 4x5 scene with targets at (1,1), (2,3), (4,5); regions chosen to test each failure kind.
SCENE = Scene(
    scene_id="S", subset="ChineseGlyph", index=0, split="dev", rows=4, cols=5,
    targets=[(1, 1), (2, 3), (4, 5)],
    regions={"T2": Region("row", 2, 1, 2, 5), "T3": Region("column", 1, 3, 4, 3),
             "T4": Region("rect", 3, 1, 4, 2), "T5": Region("rect", 1, 1, 2, 3)},
    params={}, images={"base": "b.png", "highlight": "h.png"},
)
INST = {i.template: i for i in derive_instances(SCENE)}


def key(t: str) -> ScoreKey:
    return ScoreKey.build(INST[t], SCENE)


def test_gold_answers_follow_the_scene():
    assert INST["T1"].gold == Gold(3, None)
    assert INST["T2"].gold == Gold(1, None)
    assert INST["T3"].gold == Gold(None, [(2, 3)])
    assert INST["T4"].gold == Gold(None, [])          # abstention case
    assert INST["T5"].gold == Gold(1, [(4, 5)])       # outside the excluded rect
    assert INST["G-Clk"].gold.cells == [(1, 1), (2, 3), (4, 5)]
    assert INST["mL-Cnt"].context == INST["T3"].context and INST["mL-Cnt"].gold.count == 1


@pytest.mark.parametrize("t", ["T1", "T2", "T3", "T4", "T5", "G-Clk", "mL-Cnt"])
def test_gold_protocol_answer_passes(t):
    s = score(key(t), "Thinking out loud first. " + INST[t].protocol_answer)
    assert s.valid and s.passed and s.failure is None


@pytest.mark.parametrize("t,response,failure,reason", [
    ("T2", "COUNT(3)", "count_anchoring", None),
    ("T2", "COUNT(2)", "miscount", None),
    ("T1", "COUNT(2)", "miscount", None),
    ("T4", "CLICK(R3,C1); DONE", "failure_to_abstain", None),
    ("T4", "DONE", None, None),
    ("T3", "CLICK(R1,C1); CLICK(R2,C3); CLICK(R4,C5); DONE", "region_ignored", None),
    ("T3", "CLICK(R2,C3); CLICK(R3,C3); CLICK(R4,C3); DONE", "count_anchoring", None),
    ("T3", "CLICK(R2,C3); CLICK(R3,C3); DONE", "false_click", None),
    ("T3", "DONE", "missed_target", None),
    ("T3", "CLICK(R2,C3); CLICK(R2,C3); DONE", "repeated_click", None),
    ("T5", "CLICK(R4,C5); SUBMIT(3)", "count_anchoring", None),
    ("T5", "CLICK(R4,C5); SUBMIT(2)", "miscount", None),
    ("T5", "CLICK(R4,C5); CLICK(R1,C1); SUBMIT(2)", "region_ignored", None),
    ("T3", "CLICK(R2,C3); SUBMIT(1)", "invalid", "wrong_terminal"),
    ("T2", "CLICK(R2,C3); DONE", "invalid", "wrong_terminal"),
    ("T2", "CLICK(R2,C3); COUNT(1)", "invalid", "clicks_before_count"),
    ("T3", "CLICK(R5,C3); DONE", "invalid", "out_of_grid"),
    ("T3", "CLICK(R0,C3); DONE", "invalid", "out_of_grid"),
    ("T1", "I see three.", "invalid", "no_answer"),
    ("T3", "CLICK(R2,C3)", "invalid", "no_terminal"),
    ("T1", "COUNT(-3)", "invalid", "negative_number"),
])
def test_failure_kinds(t, response, failure, reason):
    s = score(key(t), response)
    assert s.failure == failure
    assert s.invalid_reason == reason
    assert s.valid == (failure != "invalid")
    assert s.passed == (failure is None)
    if failure:
        assert failure in s.errors


def test_region_ignoring_also_records_count_anchoring():
    s = score(key("T3"), "CLICK(R1,C1); CLICK(R2,C3); CLICK(R4,C5); DONE")
    assert s.errors == ("region_ignored", "count_anchoring")


@given(st.permutations([(1, 1), (2, 3), (4, 5)]))
def test_click_order_does_not_matter(order):
    text = "".join(f"CLICK(R{r},C{c}); " for r, c in order) + "DONE"
    assert score(key("G-Clk"), text).passed


@given(st.tuples(st.integers(1, 4), st.integers(1, 5)))
def test_any_extra_click_fails(extra):
    gold = INST["G-Clk"].gold.cells
    clicks = gold + [extra]
    text = "".join(f"CLICK(R{r},C{c}); " for r, c in clicks) + "DONE"
    s = score(key("G-Clk"), text)
    assert not s.passed
    assert s.failure == ("repeated_click" if extra in gold else "false_click")


@given(st.text())
def test_score_never_raises(text):
    for t in INST:
        s = score(key(t), text)
        assert s.passed in (True, False)
        assert (s.failure is None) == s.passed


def test_instance_records_round_trip():
    for inst in INST.values():
        assert Instance.from_json(inst.to_json()) == inst
    assert Scene.from_json(SCENE.to_json()) == SCENE


# --- The realistic corpus: model outputs as GPT-4o, Claude, Qwen, Gemini, GLM, InternVL and LLaVA write them,
# each with the verdict a careful reader gives under the README's decision table. Keys are built by hand from
# the gold context in each line, so the corpus does not depend on the dataset build.
CORPUS = Path(__file__).parent / "data" / "model_outputs.jsonl"


def corpus_key(rec: dict) -> ScoreKey:
    g = rec["gold"]
    inside = frozenset(tuple(c) for c in g["targets_in_context"])
    outside = frozenset(tuple(c) for c in g["targets_outside"])
    output = TEMPLATE_OUTPUT[rec["template"]]
    return ScoreKey(instance_id=rec["id"], template=rec["template"], output=output, rows=g["rows"],
                    cols=g["cols"], gold_count=len(inside), gold_cells=inside,
                    global_count=len(inside) + len(outside), outside_targets=outside,
                    terminal={"count": "COUNT", "click": "DONE", "click_submit": "SUBMIT"}[output])


def corpus() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def test_corpus_is_large_varied_and_unique():
    recs = corpus()
    assert len(recs) >= 200
    assert len({(r["template"], r["response"]) for r in recs}) == len(recs)
    assert {r["style"] for r in recs} >= {"gpt-4o", "claude", "qwen", "gemini", "glm", "internvl", "llava"}
    reasons = {r["expect"]["invalid_reason"] for r in recs}
    assert reasons >= {"no_answer", "no_terminal", "wrong_terminal", "out_of_grid", "negative_number",
                       "clicks_before_count", "malformed_click"}
    assert {r["expect"]["failure"] for r in recs} >= set(FAILURES) | {None}


@pytest.mark.parametrize("rec", corpus(), ids=lambda r: r["id"])
def test_corpus_verdicts(rec):
    s = score(corpus_key(rec), rec["response"])
    got = {"valid": s.valid, "pass": s.passed, "failure": s.failure, "invalid_reason": s.invalid_reason,
           "canonical": s.parsed.canonical}
    assert got == rec["expect"], rec["response"]


def test_records_pickle_and_copy():
    """Keys, scores and parsed answers survive pickle and deepcopy, equal and with the same hash."""
    k = ScoreKey("i", "T3", "click", 3, 3, 1, frozenset({(1, 2)}), 1, frozenset(), "DONE")
    s = score(k, "CLICK(R1,C2); DONE")
    for value in (k, s, s.parsed):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value
    assert hash(pickle.loads(pickle.dumps(k))) == hash(k)
