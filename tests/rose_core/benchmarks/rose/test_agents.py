"""Reference agents: their expected scores follow from their definitions."""
import json

import pytest

from rose_core import score
from rose_core.benchmarks.rose.agents import AGENTS


@pytest.fixture(scope="module")
def runs(small_dataset, agent_runs):
    """Each agent's verdicts; its run written by run_agent once per test run (tests/conftest.py: agent_runs)."""
    out = {}
    for name in AGENTS:
        path = agent_runs / f"{name}.jsonl"
        out[name] = {}
        for line in path.read_text().splitlines():
            o = json.loads(line)
            out[name][o["instance_id"]] = score(small_dataset.key(o["instance_id"]), o["response"])
    return out


def outside_targets(ds, inst):
    return [t for t in ds.scenes[inst.scene_id].targets if not inst.in_context(t)]


def test_every_agent_answers_every_instance_validly(runs, small_dataset):
    for name, scores in runs.items():
        assert set(scores) == set(small_dataset.instances), name
        assert all(s.valid for s in scores.values()), name


def test_oracle_is_always_right(runs):
    assert all(s.passed for s in runs["oracle"].values())


def test_region_ignoring_fails_exactly_where_targets_lie_outside(runs, small_dataset):
    for iid, s in runs["region-ignoring"].items():
        inst = small_dataset.instances[iid]
        assert s.passed == (not outside_targets(small_dataset, inst)), iid
        if not s.passed and inst.template != "T1" and inst.gold.cells:
            assert s.failure == "region_ignored"


def test_count_anchored_fails_only_counts_with_targets_outside(runs, small_dataset):
    for iid, s in runs["count-anchored"].items():
        inst = small_dataset.instances[iid]
        asks_count = inst.template in ("T1", "T2", "mL-Cnt", "T5")
        assert s.passed == (not asks_count or not outside_targets(small_dataset, inst)), iid
        if not s.passed:
            assert s.failure == "count_anchoring"


def test_never_abstains_fails_exactly_on_empty_click_contexts(runs, small_dataset):
    for iid, s in runs["never-abstains"].items():
        inst = small_dataset.instances[iid]
        empty_click = inst.gold.cells == []
        assert s.passed == (not empty_click), iid
        if empty_click:
            assert s.failure == "failure_to_abstain"


def test_random_is_near_the_floor(runs):
    clicks = [s for s in runs["random"].values() if s.template in ("T3", "T4", "G-Clk")]
    assert sum(s.passed for s in clicks) / len(clicks) < 0.2


def test_pixel_baseline_reads_the_png(runs, small_dataset):
    rate = sum(s.passed for s in runs["pixel"].values()) / len(runs["pixel"])
    assert rate > 0.9  # identical rendering makes the odd cells pixel-different: perception is easy here
    t4 = [s for s in runs["pixel"].values() if s.template == "T4"]
    assert sum(s.passed for s in t4) / len(t4) > 0.85  # it finds the highlight in the pixels too
