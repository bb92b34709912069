"""One rule for the humans' majority (issue 22): `agreement_human`'s panel, `agreement_model`'s panel figures and
`human_model_difference`'s McNemar test leave the same tied instances out and count them alike."""
import numpy as np
import pandas as pd
import pytest

from rose_core.analysis.agreement import human_agreement, panel_consistency
from rose_core.analysis.difference import human_model_difference
from rose_core.analysis.majority import majority, majority_outcome
from rose_core.benchmarks.rose.instances import protocol_string


def test_majority_of_binary_votes():
    got = majority(np.array([0, 1, 2, 1, 2]), np.array([2, 2, 2, 4, 4]))
    assert got[[0, 2, 3]].tolist() == [0.0, 1.0, 0.0] and np.isnan(got[1]) and np.isnan(got[4])
    vote, tied = majority_outcome(pd.DataFrame({"instance_id": ["a", "a", "b", "b", "c", "c", "c"],
                                                "passed": [1, 1, 1, 0, 0, 0, 1]}))
    assert vote.to_dict() == {"a": 1, "c": 0} and list(tied) == ["b"]


def _tied_study(ds):
    """Two participants on eight L-Clk instances: both right on three, both wrong (the same wrong click) on two,
    split one right, one wrong on three (no majority); a model answers all eight."""
    insts = []
    for i in sorted(ds.instances.values(), key=lambda i: i.instance_id):
        if i.template != "T3" or not i.gold.cells:
            continue
        scene = ds.scenes[i.scene_id]
        spare = [(r, c) for r in range(1, scene.rows + 1) for c in range(1, scene.cols + 1)
                 if i.in_context((r, c)) and (r, c) not in i.gold.cells]
        if spare:
            insts.append((i, sorted(i.gold.cells), sorted(i.gold.cells) + spare[:1]))
    assert len(insts) >= 8, "the small dataset has too few L-Clk instances for this fixture"
    plan = ["right"] * 3 + ["wrong"] * 2 + ["tie"] * 3
    rows = []
    for (inst, gold, wrong), how in zip(insts, plan):
        answers = {"right": (gold, gold), "wrong": (wrong, wrong), "tie": (gold, wrong)}[how]
        for k, a in enumerate(answers):
            rows.append({"solver": "Human", "solver_kind": "human", "participant_id": f"h{k}", "unit": f"h{k}",
                         "instance_id": inst.instance_id, "template": "T3", "subset": inst.subset,
                         "scene_id": inst.scene_id, "passed": int(a == gold), "valid": 1,
                         "protocol": protocol_string("click", None, a)})
        rows.append({"solver": "m1", "solver_kind": "model", "participant_id": "", "unit": inst.scene_id,
                     "instance_id": inst.instance_id, "template": "T3", "subset": inst.subset,
                     "scene_id": inst.scene_id, "passed": int(how != "right"), "valid": 1,
                     "protocol": protocol_string("click", None, gold)})
    return pd.DataFrame(rows)


def test_the_three_majority_figures_share_one_tie_rule(small_dataset):
    df = _tied_study(small_dataset)
    ha = human_agreement(df[df["solver_kind"] == "human"], small_dataset)
    # the panel: 3 right and 2 wrong with a majority, 3 tied left out; the individuals on the same 5
    assert (ha.panel_items, ha.panel_tied) == (5, 3)
    assert ha.panel_accuracy == pytest.approx(60.0) and ha.individual_accuracy == pytest.approx(60.0)
    pc = panel_consistency(df).set_index("solver").loc["m1"]
    assert (pc["panel: shared items"], pc["panel: tied items"]) == (5, 3)
    assert pc["panel: human acc"] == pytest.approx(ha.panel_accuracy)
    d = human_model_difference(df, n_boot=50).set_index(["solver", "template"]).loc[("m1", "L-Clk")]
    assert (d["shared items"], d["tied items"]) == (5, 3)
    # McNemar on those 5: humans right where the model is wrong on 3, the reverse on 2
    from scipy.stats import binomtest
    assert d["p (McNemar exact)"] == pytest.approx(binomtest(3, 5, 0.5).pvalue)
