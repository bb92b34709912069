"""Human − model: on the same items (issue 22: the humans answer the study's sample, a run every instance; the
'same items' columns restrict both sides to the instances both answered, the items McNemar's test pairs on), and
computed whole or assembled as the dashboards do (the humans' side prepared once, then one model's rows at a
time): the same numbers, to the last bit."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rose_core.analysis.answers import AnalysisInputError
from rose_core.analysis.difference import DIFFERENCE_COLUMNS, human_model_difference, human_side
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

BOOT = 200


@pytest.mark.parametrize("seed,models", [(0, 3), (5, 1), (9, 4)])
def test_one_model_at_a_time_against_a_prepared_side_is_the_whole_table(seed, models):
    df = synthetic(seed, people=9, scenes=14, share=0.75, models=models)
    whole = human_model_difference(df, n_boot=BOOT)
    assert set(whole["solver"]) == {f"m{k}" for k in range(models)} and len(whole) == 6 * models
    side = human_side(df, n_boot=BOOT)
    assert side is not None and set(side.humans["solver_kind"]) == {"human"}
    parts = [human_model_difference(g, n_boot=BOOT, side=side)
             for _, g in df[df["solver_kind"] != "human"].groupby("solver", sort=False)]
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), whole, check_exact=True)
    # a model's frame may carry the human rows too: they are not read when the side is given
    one = df[df["solver"].isin(["Human", "m0"])]
    pd.testing.assert_frame_equal(human_model_difference(one, n_boot=BOOT, side=side),
                                  whole[whole["solver"] == "m0"].reset_index(drop=True), check_exact=True)


def test_the_side_is_refused_when_prepared_with_other_resamples():
    df = synthetic(1, people=6, scenes=8)
    side = human_side(df, n_boot=BOOT)
    with pytest.raises(ValueError, match="n_boot=200, seed=0; asked for n_boot=100"):
        human_model_difference(df[df["solver"] == "m0"], n_boot=100, side=side)


def test_no_humans_no_models_and_a_repeated_answer():
    df = synthetic(2, people=5, scenes=6)
    assert human_side(df[df["solver_kind"] != "human"], n_boot=BOOT) is None
    empty = human_model_difference(df[df["solver_kind"] != "human"], n_boot=BOOT)
    assert empty.empty and list(empty.columns) == DIFFERENCE_COLUMNS
    assert human_model_difference(df[df["solver_kind"] == "human"], n_boot=BOOT).empty
    side = human_side(df, n_boot=BOOT)
    assert human_model_difference(df[df["solver_kind"] == "human"], n_boot=BOOT, side=side).empty
    humans = df[(df["solver_kind"] == "human") & (df["template"] == "T1")]
    twice = pd.concat([df, humans.iloc[:1]], ignore_index=True)
    with pytest.raises(AnalysisInputError, match=r"participant 'p00' answers instance '.*' 2 times"):
        human_side(twice, n_boot=BOOT)


def test_the_counts_from_the_prepared_side_are_the_plain_counts():
    """The humans' per-template counts, majority and answered instances are prepared once (`HumanSide`): each
    model's row must show what a plain computation from the rows gives."""
    df = synthetic(3, people=7, scenes=12, share=0.6, models=2)
    d = human_model_difference(df, n_boot=BOOT).set_index(["solver", "template"])
    humans = df[df["solver_kind"] == "human"]
    for solver in ("m0", "m1"):
        model = df[df["solver"] == solver]
        for t, lab in TEMPLATE_LABEL.items():
            if t not in MAIN_TEMPLATES:
                continue
            h, m = humans[humans["template"] == t], model[model["template"] == t]
            share = h.groupby("instance_id")["passed"].mean()
            answered = set(h["instance_id"]) & set(m["instance_id"])
            row = d.loc[(solver, lab)]
            assert row["human responses"] == len(h) and row["model responses"] == len(m)
            assert row["shared items"] == sum(share[i] != 0.5 for i in answered)
            assert row["tied items"] == sum(share[i] == 0.5 for i in answered)


def test_the_humans_side_serves_threads_at_once_as_it_serves_one():
    """The dashboards share one humans' side between the sessions and the warm-up thread: its sets of items both
    answered (`HumanSide.humans_on`, the last SAME_ITEMS_KEPT kept) are added and dropped under a lock, and every
    thread gets what one thread alone gets."""
    import threading

    from rose_core.analysis.difference import SAME_ITEMS_KEPT

    df = synthetic(7, people=8, scenes=24, models=0)
    ids = sorted(df["instance_id"].unique())
    sets = [pd.Index(ids[k:k + 40]) for k in range(0, 3 * SAME_ITEMS_KEPT)]
    alone = human_side(df, n_boot=50)
    want = [alone.humans_on(items) for items in sets]
    shared = human_side(df, n_boot=50)
    got: dict[int, list] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            got[k] = [shared.humans_on(items) for items in sets[k % 3:] + sets[:k % 3]]
        except BaseException as e:  # noqa: BLE001  reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(shared.same_items) == SAME_ITEMS_KEPT
    for k, results in got.items():
        for items, (rows, (summary, resamples)) in zip(sets[k % 3:] + sets[:k % 3], results):
            w_rows, (w_summary, w_resamples) = want[next(j for j, s in enumerate(sets) if s.equals(items))]
            pd.testing.assert_frame_equal(rows, w_rows)
            assert summary == w_summary and resamples.n_units == w_resamples.n_units
            assert resamples.stats.keys() == w_resamples.stats.keys()
            assert all(np.array_equal(resamples.stats[n], w_resamples.stats[n], equal_nan=True)
                       for n in resamples.stats)
