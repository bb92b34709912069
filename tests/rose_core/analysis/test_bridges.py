"""Bridges pair answers by unit and scene; McNemar is the exact binomial test, always."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from rose_core.analysis import AnalysisInputError, bridge_table, mcnemar_p, paired, responses_frame


def pairs(both: int, only_a: int, only_b: int, neither: int) -> pd.DataFrame:
    rows = [(1, 1)] * both + [(1, 0)] * only_a + [(0, 1)] * only_b + [(0, 0)] * neither
    return pd.DataFrame(rows, columns=["passed_a", "passed_b"])


def test_no_difference_at_all_gives_p_one():
    # 33 discordant pairs each way: the continuity-corrected chi-square used before gave 0.902 here.
    assert mcnemar_p(pairs(10, 33, 33, 10)) == 1.0
    assert mcnemar_p(pairs(40, 0, 0, 2)) == 1.0       # no discordant pair at all
    assert mcnemar_p(pairs(0, 0, 0, 0)) is None       # nothing to test


def test_a_known_discordant_split_gives_the_exact_binomial_p():
    p = mcnemar_p(pairs(5, 20, 2, 7))
    assert p == pytest.approx(2 * (1 + 22 + 231) / 2 ** 22, rel=1e-12)   # 2 * P(X <= 2), X ~ Bin(22, 1/2)
    assert p == pytest.approx(binomtest(2, 22, 0.5).pvalue, rel=1e-12)
    assert mcnemar_p(pairs(0, 30, 31, 0)) == pytest.approx(binomtest(30, 61, 0.5).pvalue, rel=1e-12)


def test_mcnemar_refuses_what_is_not_a_paired_binary_outcome():
    with pytest.raises(AnalysisInputError, match="0/1"):
        mcnemar_p(pd.DataFrame({"passed_a": [1, 2], "passed_b": [0, 1]}))
    with pytest.raises(AnalysisInputError, match="0/1"):
        mcnemar_p(pd.DataFrame({"passed_a": [1, None], "passed_b": [0, 1]}))


def test_pairs_refuse_a_repeated_trial():
    g = pd.DataFrame({"solver": "m", "participant_id": "", "scene_id": ["s1", "s1", "s2", "s1", "s2"],
                      "template": ["T1", "T1", "T1", "G-Clk", "G-Clk"], "passed": [1, 0, 1, 1, 1]})
    with pytest.raises(AnalysisInputError, match="repeat a \\(unit, scene\\).*'s1'"):
        paired(g, "T1", "G-Clk")
    ok = paired(g.drop(index=1), "T1", "G-Clk")
    assert list(ok["scene_id"]) == ["s1", "s2"]


def test_bridges_pair_by_scene(populated_db):
    br = bridge_table(responses_frame(populated_db)).set_index("solver")
    assert br.loc["oracle (agent)", "L-Clk†"] == 100.0 and br.loc["oracle (agent)", "Fail†"] == 0.0
    assert br.loc["oracle (agent)", "p(mL-Cnt vs L-Clk)"] == 1.0
    ri = br.loc["region-ignoring (agent)"]
    assert ri["G-Cnt"] == 100.0 and ri["G-Clk"] == 100.0
    assert ri["p(G-Clk vs V-Clk)"] < 0.001                     # it clicks every target whatever the highlight


def test_matched_bridge_rates_are_on_the_pairs():
    """The matched count-to-click bridge compares mL-Cnt with L-Clk on the same (unit, scene) pairs: its mL-Cnt
    and L-Clk are PASS on those pairs, the trials its McNemar p and L-Clk† are computed on, not on every answer of
    either template (humans answer mL-Cnt and T3 of a scene mostly as different participants)."""
    g = pd.DataFrame({"solver": "Human", "solver_kind": "human", "participant_id": ["h1", "h1", "h2", "h3"],
                      "scene_id": ["s1", "s1", "s2", "s3"], "template": ["mL-Cnt", "T3", "mL-Cnt", "T3"],
                      "passed": [0, 0, 1, 1]})
    row = bridge_table(g).iloc[0]
    assert row["pairs"] == 1
    assert row["mL-Cnt"] == 0.0 and row["L-Clk"] == 0.0          # the one pair: both wrong
    assert np.isnan(row["L-Clk†"]) and row["p(mL-Cnt vs L-Clk)"] == 1.0


def test_global_bridge_p_values_carry_the_pairs_they_rest_on():
    """G-Cnt, G-Clk and V-Clk are over every answer, each p over the (unit, scene) pairs that answered both
    templates: the table says how many, so a p from three pairs is not read as one from hundreds."""
    g = pd.DataFrame({"solver": "Human", "solver_kind": "human",
                      "participant_id": ["h1", "h1", "h1", "h2", "h2", "h3"],
                      "scene_id": ["s1", "s1", "s1", "s2", "s2", "s3"],
                      "template": ["T1", "G-Clk", "T4", "T1", "T4", "G-Clk"], "passed": [1, 0, 1, 1, 1, 1]})
    row = bridge_table(g).iloc[0]
    assert row["pairs(G-Cnt, G-Clk)"] == 1 and row["pairs(G-Clk, V-Clk)"] == 1   # only h1 on s1 answered both
    assert row["G-Cnt"] == 100.0 and row["G-Clk"] == 50.0 and row["V-Clk"] == 100.0
    assert row["p(G-Cnt vs G-Clk)"] == 1.0
