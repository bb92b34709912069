"""n and the clustering-aware intervals (issue 22), each checked against a plain computation written here: a loop
over resamples that rebuilds each resample's answers as a frame of whole units and recomputes the statistic with
pandas, read at the expanded percentile levels computed by hand; Wilson and Newcombe by their formulas; McNemar as
a binomial test of the discordant pairs (SciPy)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, norm, t as student

from rose_core.analysis import bridge_table, gap_table, main_rows
from rose_core.analysis.bundle.paper import Column, PaperTable
from rose_core.analysis.bundle.render import best_rows
from rose_core.analysis.difference import human_model_difference
from rose_core.analysis.display import json_rows
from rose_core.benchmarks.rose.records import MAIN_TEMPLATES, TEMPLATE_LABEL
from rose_core.common.stats import expanded_levels, interval, sample_size, solver_rng

from .test_vectorised import synthetic

BOOT = 200


def _levels(n: int) -> tuple[float, float]:
    """The expanded percentile levels by hand: Φ(−sqrt(n/(n−1)) · t(0.975, n−1))."""
    tail = norm.cdf(-math.sqrt(n / (n - 1)) * student.ppf(0.975, n - 1))
    return 100 * tail, 100 * (1 - tail)


def _wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's score interval by its formula (z = 1.95996…)."""
    z = norm.ppf(0.975)
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return 100 * (mid - half), 100 * (mid + half)


def _resampled_frames(g: pd.DataFrame, unit: str, seed: int, solver: str, n_boot: int):
    """Each resample as a frame: whole units drawn with replacement (the codes in sorted unit order, as the stream
    draws them), every answer of a unit repeated as often as the unit was drawn."""
    units = np.array(sorted(g[unit].unique()), dtype=object)
    draws = solver_rng(seed, solver).integers(0, len(units), size=(n_boot, len(units)))
    column = g[unit].to_numpy()
    at = [np.flatnonzero(column == u) for u in units]   # each unit's rows, in the frame's order
    for row in draws:   # one take of the rows (a concat of per-unit frames cost most of the time): the same frame
        yield g.iloc[np.concatenate([at[k] for k in row])].reset_index(drop=True)


def _rate(frame: pd.DataFrame, template: str) -> float:
    """A template's PASS rate in a frame, read from its columns as arrays (a frame filter per call was most of
    these tests' ~17 s: it is called per template and resample)."""
    on = frame["template"].to_numpy() == template
    return 100 * frame["passed"].to_numpy()[on].mean() if on.any() else np.nan


def _reference_row(g: pd.DataFrame, unit: str, solver: str, seed: int = 0) -> dict[str, tuple[float, float]]:
    """Template rates, Avg, Counting / Action and the gap: every statistic recomputed in every resample."""
    main = g[g["template"].isin(MAIN_TEMPLATES)]
    stats: dict[str, list[float]] = {k: [] for k in [*MAIN_TEMPLATES, "Avg", "Counting", "Action", "gap"]}
    for frame in _resampled_frames(main, unit, seed, solver, BOOT):
        rates = {tm: _rate(frame, tm) for tm in MAIN_TEMPLATES}
        for tm in MAIN_TEMPLATES:
            stats[tm].append(rates[tm])
        stats["Avg"].append(np.mean(list(rates.values())))
        c, a = np.mean([rates["T1"], rates["T2"]]), np.mean([rates["T3"], rates["T4"], rates["T5"]])
        stats["Counting"].append(c)
        stats["Action"].append(a)
        stats["gap"].append(c - a)
    lv = _levels(main[unit].nunique())
    out = {}
    for k, v in stats.items():
        v = np.array(v, dtype=float)
        v = v[~np.isnan(v)]
        out[k] = tuple(np.percentile(v, lv))
    return out


@pytest.fixture(scope="module")
def study() -> pd.DataFrame:
    return synthetic(11, people=9, scenes=14, share=0.75)


def test_n_is_participants_scenes_and_responses_as_integers(study):
    rows = main_rows(study, n_boot=50).set_index("solver")
    human = study[(study["solver_kind"] == "human") & study["template"].isin(MAIN_TEMPLATES)]
    assert rows.loc["Human", "participants"] == human["participant_id"].nunique() == 9
    assert rows.loc["Human", "scenes"] == human["scene_id"].nunique()
    assert rows.loc["Human", "responses"] == len(human)
    model = study[(study["solver"] == "m0") & study["template"].isin(MAIN_TEMPLATES)]
    assert pd.isna(rows.loc["m0", "participants"])          # a model has no participants: absent, not 0
    assert rows.loc["m0", "scenes"] == model["scene_id"].nunique() and rows.loc["m0", "responses"] == len(model)
    for col in ("participants", "scenes", "responses"):
        assert str(rows[col].dtype) == "Int64"
    rec = json_rows(rows.reset_index())
    assert rec[0]["responses"] == len(human) and isinstance(rec[0]["responses"], int)
    assert rec[1]["participants"] is None
    csv = rows.reset_index()[["participants", "responses"]].to_csv(index=False)
    assert ".0" not in csv                                   # 88, never 88.0
    for table in (gap_table(study, n_boot=50), bridge_table(study, n_boot=50)):
        h = table.set_index("solver").loc["Human"]
        assert h["participants"] == 9 and str(table["responses"].dtype) == "Int64"
    assert sample_size("model", np.array(["", ""]), np.array(["s1", "s2"])) == {
        "participants": None, "scenes": 2, "responses": 2}


@pytest.mark.parametrize("solver,unit", [("Human", "participant_id"), ("m0", "scene_id")])
def test_every_cell_of_a_row_is_the_cluster_bootstrap_computed_plainly(study, solver, unit):
    """Templates (no longer Wilson over pooled answers), Avg, and the gap's three columns: the same resamples of
    whole units, read at the expanded percentile levels."""
    g = study[study["solver"] == solver]
    ref = _reference_row(g, unit, solver)
    row = main_rows(g, n_boot=BOOT).iloc[0]
    for tm in MAIN_TEMPLATES:
        lab = TEMPLATE_LABEL[tm]
        assert (row[f"{lab} lo"], row[f"{lab} hi"]) == pytest.approx(ref[tm], abs=1e-9), lab
    assert (row["Avg lo"], row["Avg hi"]) == pytest.approx(ref["Avg"], abs=1e-9)
    gap = gap_table(g, n_boot=BOOT).iloc[0]
    assert (gap["Counting Avg lo"], gap["Counting Avg hi"]) == pytest.approx(ref["Counting"], abs=1e-9)
    assert (gap["Action Avg lo"], gap["Action Avg hi"]) == pytest.approx(ref["Action"], abs=1e-9)
    assert (gap["gap lo"], gap["gap hi"]) == pytest.approx(ref["gap"], abs=1e-9)


def test_bridge_rates_resample_whole_units(study):
    g = study[study["solver"] == "Human"]
    row = bridge_table(g, n_boot=BOOT).iloc[0]
    gclk, ml, lclk, given = [], [], [], []
    for frame in _resampled_frames(g, "participant_id", 0, "Human", BOOT):
        gclk.append(_rate(frame, "G-Clk"))
        # pairs: the same (participant, scene) answering mL-Cnt and L-Clk, once per draw of the participant
        a = frame[frame["template"] == "mL-Cnt"].reset_index()
        b = frame[frame["template"] == "T3"].reset_index()
        a["k"] = a.groupby(["participant_id", "scene_id"]).cumcount()
        b["k"] = b.groupby(["participant_id", "scene_id"]).cumcount()
        pairs = a.merge(b, on=["participant_id", "scene_id", "k"], suffixes=("_a", "_b"))
        ml.append(100 * pairs["passed_a"].mean())
        lclk.append(100 * pairs["passed_b"].mean())
        right = pairs[pairs["passed_a"] == 1]
        given.append(100 * right["passed_b"].mean() if len(right) else np.nan)
    lv = _levels(g["participant_id"].nunique())
    for name, vals in (("G-Clk", gclk), ("mL-Cnt", ml), ("L-Clk", lclk), ("L-Clk†", given)):
        v = np.array(vals, dtype=float)
        assert (row[f"{name} lo"], row[f"{name} hi"]) == pytest.approx(np.percentile(v[~np.isnan(v)], lv), abs=1e-9)
    assert (row["Fail† lo"], row["Fail† hi"]) == pytest.approx((100 - row["L-Clk† hi"], 100 - row["L-Clk† lo"]))


def test_a_rate_at_100_gets_wilson_over_units_not_a_point():
    """Every resample of an all-right solver is 100: the percentile interval would be [100, 100]."""
    df = synthetic(12, people=6, scenes=8, share=1.0, models=1)
    rows = main_rows(df, n_boot=100).set_index("solver")
    assert (rows.loc["Human", "G-Cnt lo"], rows.loc["Human", "G-Cnt hi"]) == pytest.approx(_wilson(6, 6))
    assert (rows.loc["m0", "Avg lo"], rows.loc["m0", "Avg hi"]) == pytest.approx(_wilson(8, 8))
    # a mean of rates each at 0 or 100 (one template right, four wrong): the mean of their Wilson intervals
    lo, hi = interval(np.full(50, 20.0), 20.0, 10, [100.0, 0.0, 0.0, 0.0, 0.0])
    w1, w0 = _wilson(10, 10), _wilson(0, 10)
    assert (lo, hi) == pytest.approx(((w1[0] + 4 * w0[0]) / 5, (w1[1] + 4 * w0[1]) / 5))
    # one unit: nothing to resample, no interval (never a point)
    assert all(np.isnan(interval(np.full(5, 50.0), 50.0, 1)))


def test_expanded_levels_by_hand():
    for n in (2, 5, 30, 400):
        assert expanded_levels(n) == pytest.approx(_levels(n))
    assert expanded_levels(30)[0] == pytest.approx(1.8754, abs=1e-3)


def test_human_minus_model_difference_and_paired_exact_test(study):
    d = human_model_difference(study, n_boot=BOOT).set_index(["solver", "template"])
    humans = study[(study["solver_kind"] == "human") & study["template"].isin(MAIN_TEMPLATES)]
    model = study[(study["solver"] == "m1") & study["template"].isin(MAIN_TEMPLATES)]
    h_frames = list(_resampled_frames(humans, "participant_id", 0, "Human", BOOT))
    m_frames = list(_resampled_frames(model, "scene_id", 0, "m1", BOOT))
    for tm in MAIN_TEMPLATES:
        lab = TEMPLATE_LABEL[tm]
        row = d.loc[("m1", lab)]
        assert row["human − model"] == pytest.approx(_rate(humans, tm) - _rate(model, tm))
        diffs = np.array([_rate(h, tm) - _rate(m, tm) for h, m in zip(h_frames, m_frames)])
        lv = _levels(min(humans["participant_id"].nunique(), model["scene_id"].nunique()))
        assert (row["human − model lo"], row["human − model hi"]) == pytest.approx(
            np.percentile(diffs[~np.isnan(diffs)], lv), abs=1e-9)
        # McNemar exact: humans' majority per instance (ties out) against the model, binomial on discordant pairs
        share = humans[humans["template"] == tm].groupby("instance_id")["passed"].mean()
        maj = (share[share != 0.5] > 0.5).astype(int)
        m = model[model["template"] == tm].set_index("instance_id")["passed"]
        both = maj.index.intersection(m.index)
        b = int(((maj.loc[both] == 1) & (m.loc[both] == 0)).sum())
        c = int(((maj.loc[both] == 0) & (m.loc[both] == 1)).sum())
        p = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
        assert row["shared items"] == len(both) and row["p (McNemar exact)"] == pytest.approx(p)
    avg = d.loc[("m1", "Avg")]
    assert pd.isna(avg["p (McNemar exact)"]) and avg["p undefined because"]


def test_bold_is_the_best_model_on_the_value_shown_never_an_agent_or_human():
    frame = pd.DataFrame({"solver": ["Human", "random (agent)", "m-a", "m-b", "X (published)"],
                          "kind": ["human", "agent", "model", "model", "published"],
                          "v": [99.0, 98.04, 60.04, 60.01, 55.0]})
    t = PaperTable("t", "t", "c", frame, (Column("solver", "Solver", "text"), Column("v", "v", "rate", best=True)))
    assert best_rows(t, t.columns[1]) == {2, 3}    # 60.0 and 60.0 as printed: a tie; the agent's 98.0 never bold
