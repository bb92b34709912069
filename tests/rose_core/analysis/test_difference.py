"""Human − model on the same items (issue 22): the humans answer the study's sample, a run every instance; the
'same items' columns restrict both sides to the instances both answered, the items McNemar's test pairs on."""
import pandas as pd
import pytest

from rose_core.analysis.difference import human_model_difference
from rose_core.benchmarks.rose.records import MAIN_TEMPLATES, TEMPLATE_LABEL

from .test_vectorised import synthetic


def _rate(f: pd.DataFrame, t: str) -> float:
    return 100 * f.loc[f["template"] == t, "passed"].mean()


def test_same_items_columns_rest_on_the_instances_both_answered():
    df = synthetic(5, people=10, scenes=30, models=1)
    sampled = sorted(df.loc[df["solver_kind"] == "human", "scene_id"].unique())[:12]   # the study's sample
    df = df[(df["solver_kind"] != "human") | df["scene_id"].isin(sampled)]
    humans = df[(df["solver_kind"] == "human") & df["template"].isin(MAIN_TEMPLATES)]
    model = df[(df["solver"] == "m0") & df["template"].isin(MAIN_TEMPLATES)]
    d = human_model_difference(df, n_boot=100).set_index(["solver", "template"])
    for t in MAIN_TEMPLATES:
        row = d.loc[("m0", TEMPLATE_LABEL[t])]
        both = set(humans.loc[humans["template"] == t, "instance_id"]) & set(model.loc[model["template"] == t,
                                                                                         "instance_id"])
        m_same = model[model["instance_id"].isin(both)]
        h_same = humans[humans["instance_id"].isin(both)]
        assert row["human items"] == humans.loc[humans["template"] == t, "instance_id"].nunique()
        assert row["model items"] == (model["template"] == t).sum() > row["items both answered"] == len(both)
        assert row["model (same items)"] == pytest.approx(_rate(m_same, t))
        assert row["model"] == pytest.approx(_rate(model, t)) and row["model"] != row["model (same items)"]
        assert row["human − model (same items)"] == pytest.approx(_rate(h_same, t) - _rate(m_same, t))
        lo, hi = row["human − model (same items) lo"], row["human − model (same items) hi"]
        assert lo < row["human − model (same items)"] < hi
        # McNemar pairs on the same items: those with a human majority, plus the tied ones
        assert row["shared items"] + row["tied items"] == row["items both answered"]
    assert str(d["items both answered"].dtype) == "Int64"


def test_same_items_equal_the_full_columns_when_both_answered_everything():
    df = synthetic(6, people=8, scenes=10, models=1)
    df = df[df["instance_id"].isin(set(df.loc[df["solver_kind"] == "human", "instance_id"]))]
    df = df[df["instance_id"].isin(set(df.loc[df["solver_kind"] != "human", "instance_id"]))]
    d = human_model_difference(df, n_boot=100)
    for a, b in (("human", "human (same items)"), ("model", "model (same items)"),
                 ("human − model lo", "human − model (same items) lo")):
        assert d[a].tolist() == pytest.approx(d[b].tolist(), nan_ok=True)
