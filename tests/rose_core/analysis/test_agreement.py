"""Agreement: Krippendorff's alpha checked against an independent reliability matrix; error consistency as
Geirhos, Meding & Wichmann (2020) define it (per individual human, then averaged); the majority-panel figures
under their own names."""
import krippendorff
import numpy as np
import pandas as pd
import pytest

from rose_core.analysis import (
    AnalysisInputError, ExclusionRules, apply_exclusions, decode_answer, error_consistency, error_consistency_pairs,
    error_consistency_summary, human_agreement, human_model_agreement, panel_consistency, participant_table,
    responses_frame,
)
from rose_core.benchmarks.rose.instances import protocol_string

from .conftest import PANEL


def reliability_alphas(df: pd.DataFrame, ds, store) -> tuple[float, float | None]:
    """Alpha from a raters x units matrix (the textbook input), not from the value counts the code builds: each
    answer decoded from its stored `parsed` record (not from the protocol text the code parses)."""
    from rose_core.analysis.frame import parsed_records

    h = df[df["solver_kind"] == "human"]
    h = h.assign(parsed=parsed_records(store, h))
    multi = h.groupby("instance_id")["participant_id"].nunique()
    h = h[h["instance_id"].isin(multi[multi >= 2].index)]
    raters = sorted(h["participant_id"].unique())
    cell_units, count_units = [], []
    for iid, g in h.groupby("instance_id"):
        inst = ds.instances[iid]
        said = {pid: decode_answer(p) for pid, p in zip(g["participant_id"], g["parsed"])}
        if inst.gold.cells is not None:
            scene = ds.scenes[inst.scene_id]
            for r in range(1, scene.rows + 1):
                for c in range(1, scene.cols + 1):
                    if inst.in_context((r, c)):
                        cell_units.append([float((r, c) in said[q].cells) if q in said else np.nan for q in raters])
        if inst.gold.count is not None:
            count_units.append([float(said[q].count) if q in said and said[q].count is not None else np.nan
                                for q in raters])
    cells = krippendorff.alpha(reliability_data=np.array(cell_units).T, level_of_measurement="nominal")
    counts = None
    if count_units and len({v for u in count_units for v in u if not np.isnan(v)}) > 1:
        counts = krippendorff.alpha(reliability_data=np.array(count_units).T, level_of_measurement="ratio")
    return float(cells), counts


def test_alpha_on_a_panel_that_answered_everything(panel, small_dataset):
    store, _ = panel
    df = responses_frame(store)
    ha = human_agreement(df, small_dataset)
    n_instances = df.loc[df["solver_kind"] == "human", "instance_id"].nunique()
    # 4 raters: an instance split 2–2 on a cell or a count has no majority and is left out, counted as tied
    assert ha.raters_per_item == {len(PANEL): n_instances} and ha.panel_items + ha.panel_tied == n_instances
    cells, counts = reliability_alphas(df, small_dataset, store)
    assert ha.alpha_cells == pytest.approx(cells, abs=1e-12)
    assert ha.alpha_counts == pytest.approx(counts, abs=1e-12)
    # 85 % right answers whose slips differ: the panel agrees well above chance, and better than one rater.
    assert 0.5 < ha.alpha_cells < 1
    assert ha.panel_accuracy > ha.individual_accuracy


def test_alpha_on_the_populated_study(populated_db, small_dataset):
    df, _ = apply_exclusions(responses_frame(populated_db), participant_table(populated_db, ExclusionRules()))
    ha = human_agreement(df, small_dataset)
    assert sum(ha.raters_per_item.values()) == df[df["solver_kind"] == "human"]["instance_id"].nunique()
    assert ha.panel_items > 0 and 0 <= ha.panel_accuracy <= 100
    cells, _ = reliability_alphas(df, small_dataset, populated_db)
    assert ha.alpha_cells == pytest.approx(cells, abs=1e-12)


def test_panel_vote_on_a_constructed_panel(small_dataset):
    inst = next(i for i in small_dataset.instances.values() if i.template == "G-Clk")
    gold = inst.gold.cells
    wrong = [(r, c) for r in range(1, 3) for c in range(1, 3) if (r, c) not in gold][:1]
    answers = [gold, gold, wrong]          # two of three right: the panel is right
    rows = [{"solver_kind": "human", "participant_id": f"h{k}", "instance_id": inst.instance_id,
             "passed": int(a == gold), "protocol": protocol_string("click", None, a)}
            for k, a in enumerate(answers)]
    ha = human_agreement(pd.DataFrame(rows), small_dataset)
    assert ha.panel_items == 1 and ha.panel_accuracy == 100.0
    assert ha.individual_accuracy == pytest.approx(200 / 3)
    assert ha.raters_per_item == {3: 1}
    with pytest.raises(AnalysisInputError, match="repeat a trial"):
        human_agreement(pd.DataFrame(rows + rows[:1]), small_dataset)


def test_panel_that_clicks_outside_the_context_is_wrong(small_dataset):
    """A majority click on a cell outside the instance's context makes the panel's answer wrong (region ignored),
    as it makes each of those answers fail: the panel must not pass where every rater failed."""
    inst = next(i for i in sorted(small_dataset.instances.values(), key=lambda i: i.instance_id)
                if i.template == "T3" and i.gold.cells)
    scene = small_dataset.scenes[inst.scene_id]
    outside = next((r, c) for r in range(1, scene.rows + 1) for c in range(1, scene.cols + 1)
                   if not inst.in_context((r, c)))
    answer = sorted(inst.gold.cells) + [outside]
    rows = [{"solver_kind": "human", "participant_id": f"h{k}", "instance_id": inst.instance_id, "passed": 0,
             "protocol": protocol_string("click", None, answer)} for k in range(3)]
    ha = human_agreement(pd.DataFrame(rows), small_dataset)
    assert ha.panel_items == 1 and ha.individual_accuracy == 0.0
    assert ha.panel_accuracy == 0.0


def s(values, ids=None):
    return pd.Series(values, index=ids or [f"i{k}" for k in range(len(values))])


def test_error_consistency_by_hand():
    a = s([1, 1, 1, 1, 0, 0, 1, 0, 1, 1])   # p1 = 0.7
    b = s([1, 1, 1, 0, 0, 1, 1, 0, 1, 0])   # p2 = 0.6; equal on 7 of 10
    ec = error_consistency(a, b)
    c_exp = 0.7 * 0.6 + 0.3 * 0.4
    assert (ec.c_obs, ec.trials) == (0.7, 10) and ec.c_exp == pytest.approx(c_exp)
    assert ec.kappa == pytest.approx((0.7 - c_exp) / (1 - c_exp))
    assert error_consistency(a, a).kappa == pytest.approx(1.0)
    assert error_consistency(a, s([1] * 10)).kappa == pytest.approx(0.0)   # a perfect observer shares no error
    assert error_consistency(s([1] * 10), s([1] * 10)).kappa is None       # c_exp = 1: undefined, said so
    assert error_consistency(a, 1 - a).kappa == pytest.approx((0 - 0.42) / (1 - 0.42))
    # the trials are matched by id, not by position
    assert error_consistency(a, b.iloc[::-1]).kappa == pytest.approx(ec.kappa)


def test_error_consistency_refuses_misaligned_inputs():
    a = s([1, 0, 1])
    with pytest.raises(AnalysisInputError, match="trials differ"):
        error_consistency(a, s([1, 0, 1], ["i0", "i1", "x"]))
    with pytest.raises(AnalysisInputError, match="more than once"):
        error_consistency(s([1, 0, 1], ["i0", "i0", "i1"]), a)
    with pytest.raises(AnalysisInputError, match="0/1"):
        error_consistency(a, s([1, 0, 2]))
    with pytest.raises(AnalysisInputError, match="no shared trial"):
        error_consistency(s([]), s([]))


def frame(humans: dict[str, dict[str, int]], models: dict[str, dict[str, int]]) -> pd.DataFrame:
    rows = [{"solver_kind": "human", "solver": "Human", "participant_id": pid, "instance_id": i, "passed": v}
            for pid, ans in humans.items() for i, v in ans.items()]
    rows += [{"solver_kind": "model", "solver": m, "participant_id": "", "instance_id": i, "passed": v}
             for m, ans in models.items() for i, v in ans.items()]
    return pd.DataFrame(rows)


def test_error_consistency_per_human_then_averaged_with_spread_and_skips():
    rng = np.random.default_rng(5)
    items = [f"i{k}" for k in range(30)]
    model = {i: int(v) for i, v in zip(items, rng.random(30) < 0.6)}
    humans = {f"h{k}": {i: int(v) for i, v in zip(items, rng.random(30) < 0.8)} for k in range(5)}
    humans["few"] = dict(list(model.items())[:4])                 # 4 shared trials: too few
    humans["perfect"] = {i: 1 for i in items}
    df = frame(humans, {"m": model, "perfect-model": {i: 1 for i in items}})
    pairs = error_consistency_pairs(df, min_trials=10)
    m = pairs[pairs["solver"] == "m"].set_index("participant_id")
    for pid, ans in humans.items():
        if pid == "few":
            assert m.loc[pid, "skipped"] == "fewer than 10 shared trials" and np.isnan(m.loc[pid, "κ"])
            continue
        ref = error_consistency(pd.Series(ans), pd.Series(model).loc[list(ans)])
        if pid == "perfect":     # never wrong: κ = 0 whatever the model does, so undefined (issue 22)
            assert ref.kappa == pytest.approx(0.0) and np.isnan(m.loc[pid, "κ"])
            assert m.loc[pid, "skipped"].startswith("the participant made no error")
            continue
        assert m.loc[pid, "κ"] == pytest.approx(ref.kappa, abs=1e-12) and m.loc[pid, "shared trials"] == 30
    p = pairs[pairs["solver"] == "perfect-model"].set_index("participant_id")
    assert p.loc["perfect", "skipped"].startswith("c_exp = 1") and np.isnan(p.loc["perfect", "κ"])
    summ = error_consistency_summary(pairs).set_index("solver")
    kept = m.loc[m["skipped"] == "", "κ"]
    assert summ.loc["m", "humans"] == 5 and summ.loc["m", "humans skipped"] == 2
    assert summ.loc["m", "error consistency κ (mean over humans)"] == pytest.approx(kept.mean())
    assert summ.loc["m", "κ SD"] == pytest.approx(kept.std(ddof=1))
    assert summ.loc["m", "κ Q1"] == pytest.approx(np.percentile(kept, 25))
    assert summ.loc["m", "shared trials"] == 150 and "1: fewer than 10" in summ.loc["m", "skipped because"]
    assert summ.loc["m", "κ undefined because"] == ""
    # a model without an error: no κ with anyone, never 0.000 (issue 22)
    assert np.isnan(summ.loc["perfect-model", "error consistency κ (mean over humans)"])
    assert "c_exp = 1" in summ.loc["perfect-model", "skipped because"]
    assert "the solver made no error" in summ.loc["perfect-model", "κ undefined because"]
    with pytest.raises(AnalysisInputError, match="repeat a trial"):
        error_consistency_pairs(pd.concat([df, df.iloc[:1]]))


def test_majority_panel_figures_keep_their_own_names():
    rows = []
    for i in range(40):
        ok = i % 3 != 0
        rows += [{"solver_kind": "human", "solver": "Human", "participant_id": "h", "instance_id": f"i{i}",
                  "passed": int(ok)},
                 {"solver_kind": "model", "solver": "twin", "participant_id": "", "instance_id": f"i{i}",
                  "passed": int(ok)},
                 {"solver_kind": "model", "solver": "flip", "participant_id": "", "instance_id": f"i{i}",
                  "passed": int(not ok)}]
    hm = panel_consistency(pd.DataFrame(rows)).set_index("solver")
    assert hm.loc["twin", "κ vs majority panel"] == pytest.approx(1.0)
    assert hm.loc["twin", "Cohen's κ vs majority panel"] == pytest.approx(1.0)
    p = 26 / 40
    c_exp = p * (1 - p) + (1 - p) * p
    assert hm.loc["flip", "κ vs majority panel"] == pytest.approx((0 - c_exp) / (1 - c_exp))


def test_human_model_agreement_on_the_panel(panel):
    store, _ = panel
    df = responses_frame(store)
    hm = human_model_agreement(df).set_index("solver")
    # A model that is always right shares no error with anyone: κ would be 0 by construction for every human, a
    # number that measures nothing; it is undefined, and the reason is given (issue 22).
    oracle = hm.loc["oracle (agent)"]
    assert oracle["humans"] == 0 and oracle["humans skipped"] == len(PANEL)
    assert np.isnan(oracle["error consistency κ (mean over humans)"])
    assert "the solver made no error on the shared trials: κ undefined" in oracle["κ undefined because"]
    assert np.isnan(oracle["κ vs majority panel"]) and np.isnan(oracle["Cohen's κ vs majority panel"])
    assert oracle["panel κ undefined because"].startswith("the solver made no error")
    assert hm.loc["oracle (agent)", "panel: model acc"] == 100.0
    pix = hm.loc["pixel (agent)"]
    n = df.loc[df["solver_kind"] == "human", "instance_id"].nunique()
    pairs = error_consistency_pairs(df)
    on_pixel = pairs[pairs["solver"] == "pixel (agent)"]
    assert on_pixel["shared trials"].sum() == len(PANEL) * n and (on_pixel["shared trials"] == n).all()
    if pix["humans"]:
        assert pix["shared trials"] == n * pix["humans"] and pix["κ undefined because"] == ""
    else:
        assert pix["κ undefined because"] and np.isnan(pix["error consistency κ (mean over humans)"])
    pixel = df[df["solver"] == "pixel (agent)"].set_index("instance_id")["passed"]
    for pid, g in df[df["solver_kind"] == "human"].groupby("participant_id"):
        ref = error_consistency(g.set_index("instance_id")["passed"], pixel.loc[g["instance_id"]])
        got = pairs[(pairs["solver"] == "pixel (agent)") & (pairs["participant_id"] == pid)].iloc[0]
        if ref.kappa is None:
            assert got["skipped"].startswith("c_exp = 1")
        elif min(ref.p1, ref.p2) == 0 or max(ref.p1, ref.p2) == 1:   # one side constant: κ = 0 by construction
            assert ref.kappa == pytest.approx(0.0, abs=1e-12) and "κ undefined" in got["skipped"]
        else:
            assert got["κ"] == pytest.approx(ref.kappa, abs=1e-12) and got["skipped"] == ""
