"""The dashboards' numbers: a constructed run with known rates comes out exactly; Avg and the gap follow the
spec; published rows are loaded as printed; exclusions, bridges, agreement, difficulty, drill-down."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rose_core.analysis import (
    ExclusionRules, Filters, apply_exclusions, bridge_table, difficulty_table, drill_down, failure_table, gap_table,
    human_agreement, human_model_agreement, instance_params, main_table, mcnemar_p, participant_table,
    published_gap, published_rows, replay, responses_frame, table_columns,
)
from rose_core.instances import protocol_string
from rose_core.records import MAIN_TEMPLATES
from rose_core.run_import import import_run
from rose_core.store import Store

RATES = {"T1": 80.0, "T2": 60.0, "T3": 40.0, "T4": 20.0, "T5": 0.0}


@pytest.fixture
def known_run(small_dataset, tmp_path):
    """A run whose per-template PASS is exactly RATES (first k of each template right, the rest wrong)."""
    store = Store(tmp_path / "rose.db")
    lines = []
    by_t = {t: [i for i in small_dataset.instances.values() if i.template == t] for t in MAIN_TEMPLATES}
    n = min(len(v) for v in by_t.values()) // 5 * 5  # a multiple of 5: every rate is exact
    for t, insts in by_t.items():
        for k, inst in enumerate(insts[:n]):
            right = k < RATES[t] / 100 * n
            lines.append({"instance_id": inst.instance_id, "dataset_hash": small_dataset.dataset_hash,
                          "response": inst.protocol_answer if right else "I am not sure."})
    f = tmp_path / "known.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_run(store, small_dataset, f, "known-model")
    return store


def test_known_rates_come_out_exactly_and_avg_and_gap_follow_the_spec(known_run):
    table = main_table(responses_frame(known_run), n_boot=200)
    row = table[table["solver"] == "known-model"].iloc[0]
    for t, label in zip(MAIN_TEMPLATES, ["G-Cnt", "L-Cnt", "L-Clk", "V-Clk", "Excl-CS"]):
        assert row[label] == pytest.approx(RATES[t])
    assert row["Avg"] == pytest.approx(np.mean(list(RATES.values())))            # 40.0: mean of template rates
    assert row["pooled"] == pytest.approx(np.mean(list(RATES.values())))         # balanced: pooled equals it
    assert row["VALID"] < 100                                                     # the wrong answers are invalid
    gap = gap_table(responses_frame(known_run))
    g = gap[gap["solver"] == "known-model"].iloc[0]
    assert g["Counting Avg"] == pytest.approx(70.0) and g["Action Avg"] == pytest.approx(20.0)
    assert g["gap"] == pytest.approx(50.0)
    assert row["L-Clk lo"] < 40.0 < row["L-Clk hi"] and row["Avg lo"] <= 40.0 <= row["Avg hi"]


def test_published_rows_are_loaded_as_printed():
    pub = published_rows().set_index("solver")
    assert pub.loc["Qwen3.6-Plus (published)", "Avg"] == 50.3
    assert pub.loc["Qwen3.6-Plus (published)", "Avg (mean of templates)"] == pytest.approx(50.34)
    assert pub.loc["Human (published)", "Avg"] == 98.8
    assert pub.loc["Human (published)", "Avg (mean of templates)"] == pytest.approx(98.44)
    gap = published_gap().set_index("solver")
    assert gap.loc["GLM-5V-Turbo (published)", "gap"] == pytest.approx(44.5167, abs=1e-3)


def test_main_table_includes_published_and_formats_intervals(known_run):
    t = main_table(responses_frame(known_run), n_boot=100)
    assert {"known-model", "GPT-5.5 (published)", "Human (published)"} <= set(t["solver"])
    shown = table_columns(t).set_index("solver")
    assert shown.loc["known-model", "L-Clk"].startswith("40.0 [")
    assert shown.loc["GPT-5.5 (published)", "Avg"] == "92.2"


def test_exclusions_switch_and_count(populated_db):
    on = participant_table(populated_db, ExclusionRules())
    reasons = dict(zip(on["external_id"], on["excluded"]))
    assert "attention" in reasons["H1"] and "streak" in reasons["H2"] and "too fast" in reasons["H3"]
    assert reasons["H0"] == ""
    df = responses_frame(populated_db)
    kept, n = apply_exclusions(df, on)
    assert n >= 3 and len(kept) < len(df)
    off = participant_table(populated_db, ExclusionRules(False, None, None))
    assert apply_exclusions(df, off)[1] == 0


def test_filters(populated_db):
    df = responses_frame(populated_db)
    assert set(Filters(split="dev").apply(df)["split"]) == {"dev"}
    assert set(Filters(templates=("T3",)).apply(df)["template"]) == {"T3"}
    assert set(Filters(solvers=("Human",)).apply(df)["solver"]) == {"Human"}
    assert Filters(studies=("nope",)).apply(df)["solver_kind"].eq("human").sum() == 0


def test_bridges_pair_by_scene_and_mcnemar(populated_db):
    br = bridge_table(responses_frame(populated_db)).set_index("solver")
    assert br.loc["oracle (agent)", "L-Clk†"] == 100.0 and br.loc["oracle (agent)", "Fail†"] == 0.0
    assert br.loc["oracle (agent)", "p(mL-Cnt vs L-Clk)"] == 1.0
    ri = br.loc["region-ignoring (agent)"]
    assert ri["G-Cnt"] == 100.0 and ri["G-Clk"] == 100.0
    pairs = pd.DataFrame({"passed_a": [1] * 20 + [0] * 2, "passed_b": [0] * 20 + [1] * 2})
    assert mcnemar_p(pairs) < 0.001


def test_failure_kinds(populated_db):
    fk = failure_table(responses_frame(populated_db))
    ri = fk[fk["solver"] == "region-ignoring (agent)"]
    assert "region_ignored" in set(ri["failure"]) and (ri["share"] <= 100).all()
    assert fk[fk["solver"] == "oracle (agent)"].empty


def test_human_agreement_and_human_model(populated_db, small_dataset):
    df, _ = apply_exclusions(responses_frame(populated_db), participant_table(populated_db, ExclusionRules()))
    ha = human_agreement(df, small_dataset)
    assert ha.panel_items > 0 and 0 <= ha.panel_accuracy <= 100
    # Participants answer right 90 % of the time and mostly agree: click agreement is high, not undefined.
    assert ha.alpha_cells is not None and 0.5 < ha.alpha_cells <= 1
    assert sum(ha.raters_per_item.values()) == df[df["solver_kind"] == "human"]["instance_id"].nunique()
    hm = human_model_agreement(df).set_index("solver")
    assert hm.loc["oracle (agent)", "model acc"] == 100.0
    pix = hm.loc["pixel (agent)"]
    assert pix["shared items"] > 0 and 0 <= pix["observed consistency"] <= 1
    p1, p2 = pix["human acc"] / 100, pix["model acc"] / 100
    assert pix["expected consistency"] == pytest.approx(p1 * p2 + (1 - p1) * (1 - p2))


def test_error_consistency_is_one_for_identical_errors():
    rows = []
    for i in range(40):
        ok = i % 3 != 0
        rows += [{"solver_kind": "human", "solver": "Human", "instance_id": f"i{i}", "passed": int(ok)},
                 {"solver_kind": "model", "solver": "twin", "instance_id": f"i{i}", "passed": int(ok)},
                 {"solver_kind": "model", "solver": "flip", "instance_id": f"i{i}", "passed": int(not ok)}]
    hm = human_model_agreement(pd.DataFrame(rows)).set_index("solver")
    assert hm.loc["twin", "error consistency κ"] == pytest.approx(1.0)
    assert hm.loc["twin", "Cohen's κ"] == pytest.approx(1.0)
    p = 26 / 40  # the humans' accuracy; the flipped model's is 1 - p and it never agrees
    c_exp = p * (1 - p) + (1 - p) * p
    assert hm.loc["flip", "error consistency κ"] == pytest.approx((0 - c_exp) / (1 - c_exp))


def test_difficulty_and_drill_down(populated_db, small_dataset):
    df = responses_frame(populated_db)
    params = instance_params(small_dataset)
    d = difficulty_table(df, params, "targets in grid")
    assert {"solver", "value", "PASS", "n"} <= set(d.columns) and d["n"].sum() == len(df)
    iid = df[(df["solver_kind"] == "human") & (df["template"] == "G-Clk")]["instance_id"].iloc[0]
    dd = drill_down(df, small_dataset, iid)
    humans = df[(df["instance_id"] == iid) & (df["solver_kind"] == "human")]
    clicked = sum(len({tuple(c) for c in json.loads(p)["clicks"]}) for p in humans["parsed"])
    assert dd["n_humans"] == len(humans) >= 1 and dd["heat"].sum() == clicked
    assert "oracle (agent)" in dd["model_clicks"]
    assert sorted(dd["model_clicks"]["oracle (agent)"]) == sorted(small_dataset.instances[iid].gold.cells)
    pid = df[(df["instance_id"] == iid) & (df["solver_kind"] == "human")]["participant_id"].iloc[0]
    ev = replay(populated_db, pid, iid)
    assert "selection after" in ev.columns


def test_report_cli_json(populated_db):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "rose_core", "report", "--db", str(populated_db.path), "--json",
                        "--boot", "50"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    solvers = {row["solver"] for row in out["rows"]}
    assert {"Human", "oracle (agent)", "GPT-5.5 (published)"} <= solvers
    assert out["participants_excluded"] >= 3 and "mean of the five template" in out["avg_definition"]


def test_frame_summary_agrees_with_the_metrics_definition(populated_db):
    from rose_core.analysis import summarize_frame
    from rose_core.metrics import ScoredRow, summarize

    df = responses_frame(populated_db)
    for _, g in df.groupby("solver"):
        a = summarize_frame(g)
        b = summarize(ScoredRow(t, s, bool(p), bool(v)) for t, s, p, v in zip(g["template"], g["subset"],
                                                                                  g["passed"], g["valid"]))
        assert a == b


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


def test_frame_cache_appends_new_responses_and_reloads_after_removal(populated_db, small_dataset, tmp_path):
    import shutil

    from rose_core.analysis import FrameCache
    from rose_core.run_import import delete_run

    db = tmp_path / "copy.db"
    shutil.copy(populated_db.path, db)
    store = Store(db)
    cache = FrameCache(store)
    first, v1 = cache.get()
    assert Path(f"{db}.frame.parquet").exists()
    restarted, v = FrameCache(store).get()            # a new process starts from the snapshot
    assert v == v1
    pd.testing.assert_frame_equal(restarted, first, check_dtype=False)
    assert cache.get()[1] == v1                       # unchanged: same frame
    f = tmp_path / "m.jsonl"
    f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": "DONE",
                                     "dataset_hash": small_dataset.dataset_hash}) + "\n"
                         for i in list(small_dataset.instances.values())[:7]))
    import_run(store, small_dataset, f, "late-model")
    grown, v2 = cache.get()
    assert len(grown) == len(first) + 7 and v2 != v1
    # appending gives a full reload's frame (a new run with no timings may hold None where a reload has NaN)
    pd.testing.assert_frame_equal(grown, responses_frame(store), check_dtype=False)
    delete_run(store, "agent:oracle")
    shrunk, _ = cache.get()
    pd.testing.assert_frame_equal(shrunk, responses_frame(store), check_dtype=False)
    assert "oracle (agent)" not in set(shrunk["solver"])
