"""The main table: a constructed run with known rates comes out exactly; Avg and the gap follow the spec;
published rows as printed; one selection path for `report` and the dashboards; per-solver seeded intervals."""
import json

import numpy as np
import pandas as pd
import pytest

from rose_core.analysis import (
    ExclusionRules, Filters, gap_table, main_table, published_gap, published_rows, report_data, responses_frame,
    select_from_store, solver_row, summarize_frame, table_columns,
)
from rose_core.benchmarks.rose.metrics import ScoredRow, summarize
from rose_core.benchmarks.rose.records import MAIN_TEMPLATES
from rose_core.runs.importer import import_run
from tests.backends import clone
from tests.command_line import run_cli

from .conftest import RATES


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


def test_frame_summary_agrees_with_the_metrics_definition(populated_db):
    df = responses_frame(populated_db)
    for _, g in df.groupby("solver"):
        a = summarize_frame(g)
        b = summarize(ScoredRow(t, s, bool(p), bool(v)) for t, s, p, v in zip(g["template"], g["subset"],
                                                                                  g["passed"], g["valid"]))
        assert a == b


def _rows(table):
    return {r["solver"]: r for r in json.loads(table.to_json(orient="records"))}


def test_a_solver_row_depends_only_on_its_own_responses(populated_db):
    df = select_from_store(populated_db, Filters(), ExclusionRules()).df
    whole = _rows(main_table(df, n_boot=300, published=False))
    for solver, g in df.groupby("solver"):
        alone = _rows(pd.DataFrame([solver_row(solver, g, n_boot=300)]))[solver]
        assert alone == whole[solver], solver
    assert whole["Human"]["Avg lo"] < whole["Human"]["Avg"] < whole["Human"]["Avg hi"]


def test_a_solvers_core_from_its_main_rows_serves_its_main_gap_and_human_model_rows(populated_db):
    """The dashboards keep one `SolverCore` per solver's rows and hand it to the main, gap and human − model rows,
    whichever asks first: built from the main-template rows alone (as human − model asks), it must give every row
    exactly what each computes without it."""
    from rose_core.analysis.difference import human_model_difference, human_side
    from rose_core.analysis.gap import gap_table
    from rose_core.analysis.tables import SolverCore, main_rows, solver_core

    df = select_from_store(populated_db, Filters(), ExclusionRules()).df
    assert (~df["template"].isin(MAIN_TEMPLATES)).any()     # rows the core leaves out
    kept: dict[str, SolverCore] = {}
    asked: list[str] = []

    def cores(solver: str, rows: pd.DataFrame) -> SolverCore:
        asked.append(solver)
        if solver not in kept:
            kept[solver] = solver_core(solver, rows[rows["template"].isin(MAIN_TEMPLATES)], n_boot=300)
        return kept[solver]

    pd.testing.assert_frame_equal(human_model_difference(df, 300, side=human_side(df, 300, cores=cores), cores=cores),
                                  human_model_difference(df, 300), check_exact=True)
    pd.testing.assert_frame_equal(main_rows(df, 300, cores=cores), main_rows(df, 300), check_exact=True)
    pd.testing.assert_frame_equal(gap_table(df, n_boot=300, cores=cores), gap_table(df, n_boot=300), check_exact=True)
    pd.testing.assert_frame_equal(gap_table(df, True, n_boot=300, cores=cores), gap_table(df, True, n_boot=300),
                                  check_exact=True)   # conditioned rows are other rows: no core of the whole
    solvers = set(df["solver"])
    assert set(kept) == solvers and len(asked) == 3 * len(solvers)   # human − model (the humans: their side), main, gap


@pytest.mark.parametrize("other", [{"n_boot": 100}, {"seed": 3}, {"solver": "m1"}])
def test_a_core_of_other_resamples_or_another_solver_is_refused_never_used(other):
    """A `cores` getter hands back a core built elsewhere (the dashboards': their default resamples). One of other
    resamples (n_boot, seed) or of another solver's stream would put its intervals under the caller's n_boot and
    seed without a word: every analysis that takes a core refuses it, as the humans' side of other resamples is."""
    from rose_core.analysis.difference import human_model_difference, human_side
    from rose_core.analysis.tables import main_rows, solver_core

    from .test_vectorised import synthetic

    df = synthetic(4, people=6, scenes=8)
    made = {"n_boot": 200, "seed": 0, **{k: v for k, v in other.items() if k != "solver"}}

    def cores(solver, rows):
        return solver_core(other.get("solver", solver), rows, made["n_boot"], made["seed"])

    for compute in (lambda: main_rows(df, 200, cores=cores), lambda: gap_table(df, n_boot=200, cores=cores),
                    lambda: human_side(df, 200, cores=cores),
                    lambda: human_model_difference(df, 200, side=human_side(df, 200), cores=cores)):
        with pytest.raises(ValueError, match="core"):
            compute()
    good = lambda solver, rows: solver_core(solver, rows, 200, 0)     # noqa: E731  the caller's own: taken
    pd.testing.assert_frame_equal(main_rows(df, 200, cores=good), main_rows(df, 200), check_exact=True)
    core = good("Human", df[df["solver"] == "Human"])               # shared by sessions and threads: read-only
    assert not any(a.flags.writeable for a in (*vars(core.counts).values(), *core.resamples.stats.values()))


def test_importing_another_run_leaves_every_other_solvers_intervals_unchanged(populated_db, small_dataset, tmp_path,
                                                                              fresh_location):
    store = clone(populated_db, fresh_location())
    before = _rows(report_data(store, n_boot=300)[1])
    f = tmp_path / "late.jsonl"
    f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": i.protocol_answer,
                                     "dataset_hash": small_dataset.dataset_hash}) + "\n"
                         for i in list(small_dataset.instances.values())[:200]))
    import_run(store, small_dataset, f, "late-model")
    after = _rows(report_data(store, n_boot=300)[1])
    assert "late-model" in after and set(after) - {"late-model"} == set(before)
    for solver, row in before.items():
        assert after[solver] == row, solver           # every value, intervals included, to the last digit
    assert before["oracle (agent)"]["Avg lo"] is not None


def test_report_json_is_the_shared_selection_and_table(populated_db):
    r = run_cli("report", "--db", populated_db.location, "--json", "--boot", "50")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    solvers = {row["solver"] for row in out["rows"]}
    assert {"Human", "oracle (agent)", "GPT-5.5 (published)"} <= solvers
    assert out["participants_excluded"] >= 3 and "mean of the five template" in out["avg_definition"]
    sel = select_from_store(populated_db, Filters(), ExclusionRules())
    expected = json.loads(json.dumps(report_data(populated_db, n_boot=50)[0]))
    assert out == expected and out["participants_excluded"] == sel.n_excluded
    assert out["rows"] == json.loads(json.dumps(
        [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in row.items()}
         for row in main_table(sel.df, n_boot=50).to_dict(orient="records")]))
