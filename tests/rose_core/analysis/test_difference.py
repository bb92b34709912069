"""The human − model table computed whole, and assembled as the dashboards do (the humans' side prepared once,
then one model's rows at a time): the same numbers, to the last bit."""
from __future__ import annotations

import pandas as pd
import pytest

from rose_core.analysis.answers import AnalysisInputError
from rose_core.analysis.difference import DIFFERENCE_COLUMNS, human_model_difference, human_side
from rose_core.benchmarks.rose.records import MAIN_TEMPLATES, TEMPLATE_LABEL

from .test_vectorised import synthetic

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
