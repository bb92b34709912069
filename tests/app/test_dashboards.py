"""Every dashboard page through AppTest, on a database filled through the real paths."""
import json
import shutil
import threading
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.command_line import run_cli

from .conftest import PASSWORD, ROOT, pages_on

PAGES = ["app_pages/results.py", "app_pages/agreement.py", "app_pages/participants_overview.py", "app_pages/drilldown.py"]


@pytest.fixture
def dash_env(small_dataset, populated_db, monkeypatch):
    with pages_on(monkeypatch, small_dataset, populated_db.location):
        yield populated_db


def open_page(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.text_input(key="auth_given").input(PASSWORD)
    at.button[0].click()
    at.run()
    at.switch_page(page)
    return at.run()


def main_table_shown(at: AppTest, k: int = 0) -> pd.DataFrame:
    """A static table of the Results page (main table 0, groups 1, human − model 2: their cells wrap after the
    value) as plain text."""
    return at.table[k].value.reset_index().map(lambda s: s.replace("\u00a0", " ") if isinstance(s, str) else s)


def test_results_page(dash_env):
    at = open_page("app_pages/results.py")
    assert not at.exception, at.exception
    main = main_table_shown(at)
    assert {"Human (pilot)", "oracle (agent)", "GPT-5.5 (published)"} <= set(main["solver"])  # names its study
    assert main.set_index("solver").loc["oracle (agent)", "Avg"].startswith("100.0")
    assert "exclusions on" in at.caption[0].value and "participants excluded" in at.caption[0].value
    charts = at.get("plotly_chart")
    assert len(charts) >= 3
    assert all("participants excluded" in c.proto.spec for c in charts)  # every chart says it, also exported
    # n in view beside the solver, Avg right after it (issue 22)
    assert list(main.columns[:3]) == ["solver", "n", "Avg"]
    assert main.set_index("solver").loc["Human (pilot)", "n"].endswith(" ppl · " + main.set_index("solver").loc[
        "Human (pilot)", "n"].split(" · ")[1])
    assert main.set_index("solver").loc["oracle (agent)", "n"].split(" sc · ")[0].isdigit()
    groups = main_table_shown(at, 1)
    assert {"Glyph", "Emoji", "Pixel", "pooled", "VALID"} <= set(groups.columns)
    diff = main_table_shown(at, 2)
    assert {"human − model", "p (McNemar exact)"} <= set(diff.columns) and "oracle (agent)" in set(diff["solver"])
    gap = at.dataframe[0].value
    assert "GLM-5V-Turbo (published)" in set(gap["solver"]) and gap["gap"].iloc[0].count("[") == 1
    at.toggle(key="results_conditioned").set_value(True).run()
    assert not at.exception
    assert "GLM-5V-Turbo (published)" not in set(at.dataframe[0].value["solver"])


def test_results_main_table_equals_report_json(dash_env, small_dataset):
    """One selection path and per-solver seeded bootstraps: the page and `report --json` agree exactly."""
    from rose_core.analysis import ExclusionRules, Filters, table_columns
    from rose_core.analysis.display import json_rows
    from rose_core.analysis.tables import SHOWN_FIRST
    from ui.dash import View

    at = open_page("app_pages/results.py")
    assert not at.exception, at.exception
    shown = main_table_shown(at)
    r = run_cli("report", "--db", dash_env.location, "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    rows = pd.DataFrame(report["rows"]).replace({"solver": {"Human": "Human (pilot)"}})
    pd.testing.assert_frame_equal(shown, table_columns(rows, metrics=SHOWN_FIRST).drop(columns=["kind"]),
                                  check_dtype=False)
    # the unformatted numbers, from the function the page calls (assembled from per-solver cached parts)
    raw = View(Filters(), ExclusionRules(), db=dash_env, ds=small_dataset).compute("main")
    assert json.loads(json.dumps(json_rows(raw))) == report["rows"]
    assert f"{report['participants_excluded']} participants excluded" in at.caption[0].value


def test_exclusions_and_filters_change_the_numbers(dash_env):
    at = open_page("app_pages/results.py")
    with_ex = at.caption[0].value
    at.sidebar.checkbox(key="dash_ex_att").uncheck()
    at.sidebar.checkbox(key="dash_ex_fast").uncheck()
    at.sidebar.checkbox(key="dash_ex_streak").uncheck().run()
    assert "exclusions on (did not complete the study; excluded by the experimenter)" in at.caption[0].value
    at.sidebar.checkbox(key="dash_ex_completed").uncheck()
    at.sidebar.checkbox(key="dash_ex_by_hand").uncheck().run()
    assert "exclusions off: every participant kept" in at.caption[0].value and with_ex != at.caption[0].value
    at.sidebar.selectbox(key="dash_split").select("dev")
    at.sidebar.multiselect(key="dash_templates").set_value(["T1", "T3"]).run()
    assert not at.exception
    assert "split dev" in at.caption[0].value and "templates T1, T3" in at.caption[0].value


def test_agreement_page(dash_env):
    at = open_page("app_pages/agreement.py")
    assert not at.exception, at.exception
    labels = [m.label for m in at.metric]
    assert "Krippendorff α, cell clicks (nominal)" in labels and "Panel (majority vote) accuracy" in labels
    hm = at.dataframe[0].value.set_index("solver")
    # an agent that never errs has no κ with anyone (0 by construction): undefined, said why (issue 22)
    assert hm.loc["oracle (agent)", "error consistency κ (mean over humans)"] == "–"
    assert "made no error" in hm.loc["oracle (agent)", "κ undefined because"]
    assert list(hm.reset_index().columns[:2]) == ["solver", "error consistency κ (mean over humans)"]
    assert {"error consistency κ (mean over humans)", "κ SD", "κ Q1", "κ Q3",
            "κ vs majority panel"} <= set(hm.columns)
    for param in ("subset", "PixelEdit changed pixels", "context size (cells)"):
        at.selectbox(key="agree_param").select(param).run()
        assert not at.exception


def test_participants_page(dash_env):
    at = open_page("app_pages/participants_overview.py")
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Participants"] == "8" and int(metrics["Excluded"]) >= 3
    table = at.dataframe[0].value
    assert set(table["external_id"]) == {f"H{k}" for k in range(8)}
    # The device mix, its own section: these participants were driven without a browser, so none reported a
    # device, and the page says so instead of counting them as some size
    assert "Devices" in [h.value for h in at.subheader]
    mix = next(d.value for d in at.dataframe if "aspect" in d.value.columns)
    assert set(mix["value"]) == {"not reported"} and list(mix["participants"].astype(int)) == [8, 8, 8]
    assert any("0 of 8 participants reported" in c.value for c in at.caption)


def test_participants_page_charts_draw_the_selection_they_name(dash_env):
    """The time-per-item histogram draws the answers of the sidebar's selection (here: the T1 answers of the dev
    split), excluded participants' too (apart), as its subtitle says; it drew every template and split."""
    at = open_page("app_pages/participants_overview.py")
    at.sidebar.selectbox(key="dash_split").select("dev")
    at.sidebar.multiselect(key="dash_templates").set_value(["T1"]).run()
    assert not at.exception, at.exception
    want = dash_env.query("SELECT count(*) AS n FROM responses r JOIN runs USING (run_id) WHERE r.kind = 'main' "
                          "AND runs.solver_kind = 'human' AND r.template = 'T1' AND r.split = 'dev'")[0]["n"]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert "Time per item" in json.dumps(spec["layout"]["title"])
    drawn = sum(sum(tr["y"]) for tr in spec["data"])   # counts per bin, stacked kept + excluded
    assert 0 < want == drawn


def test_drilldown_page_with_replay(dash_env):
    row = dash_env.query("SELECT r.instance_id, r.participant_id FROM responses r JOIN events e ON "
                         "e.participant_id = r.participant_id AND e.instance_id = r.instance_id "
                         "WHERE r.kind = 'main' AND r.template = 'G-Clk' AND e.type = 'click' LIMIT 1")[0]
    at = open_page("app_pages/drilldown.py")
    assert not at.exception, at.exception
    at.sidebar.checkbox(key="dash_ex_att").uncheck()
    at.sidebar.checkbox(key="dash_ex_fast").uncheck()
    at.sidebar.checkbox(key="dash_ex_streak").uncheck().run()
    at.selectbox(key="drill_instance").select(row["instance_id"]).run()
    at.selectbox(key="drill_participant").select(row["participant_id"]).run()
    assert not at.exception, at.exception
    responses = at.dataframe[0].value
    assert {"solver", "protocol", "passed"} <= set(responses.columns) and "Human (pilot)" in set(responses["solver"])
    replay = at.dataframe[1].value
    assert list(replay["type"])[0] == "click" and replay["selection after"].iloc[0].startswith("R")
    assert not replay["selection after"].str.contains(r"\.").any() and set(replay["view"]) == {"1"}
    at.slider(key="drill_step").set_value(1).run()
    assert not at.exception and len(at.dataframe[1].value) == 1
    assert len(at.get("plotly_chart")) == 2  # the instance and the replay


NONE_LIKE = r"^(None|nan|NaN|<NA>|NaT|)$"


def test_every_table_is_in_the_one_format(dash_env):
    """Rates one decimal, intervals in brackets with both bounds, p-values '< 0.001' or three decimals, and no
    None/nan/empty cell anywhere on the analysis pages."""
    import re

    at = open_page("app_pages/results.py")
    assert not at.exception, at.exception
    main = main_table_shown(at).set_index("solver")
    human = main.loc["Human (pilot)"]
    for col in ("G-Cnt", "L-Clk", "Avg"):
        assert re.fullmatch(r"\d+\.\d \[\d+\.\d, \d+\.\d\]", human[col]), (col, human[col])
    groups = main_table_shown(at, 1).set_index("solver")
    for col in ("pooled", "VALID"):
        assert re.fullmatch(r"\d+\.\d \[\d+\.\d, \d+\.\d\]", groups.loc["Human (pilot)", col])
    assert re.fullmatch(r"\d+\.\d", main.loc["GPT-5.5 (published)", "Avg"])
    bridges = at.dataframe[1].value
    for col in [c for c in bridges.columns if c.startswith("p(")]:
        assert bridges[col].str.fullmatch(r"< 0\.001|[01]\.\d{3}|–").all(), bridges[col].tolist()
    assert bridges["G-Cnt"].str.fullmatch(r"\d+\.\d( \[\d+\.\d, \d+\.\d\])?|–").all()
    # the dataframe's columns are wide enough for their longest text (no interval cut off)
    cfg = json.loads(at.dataframe[0].proto.columns)
    assert int(cfg["gap"]["width"]) >= 7 * max(len(v) for v in at.dataframe[0].value["gap"])
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        for df in [*at.dataframe, *at.table]:
            frame = df.value
            assert not frame.astype(str).apply(lambda c: c.str.fullmatch(NONE_LIKE)).any().any(), (page, frame)


def test_exclusions_chosen_once_apply_on_every_page(dash_env):
    at = open_page("app_pages/results.py")
    at.sidebar.checkbox(key="dash_ex_att").uncheck().run()
    assert "failed an attention check" not in at.caption[0].value
    chosen = at.caption[0].value.split(" · ")[-1]
    for page in ("app_pages/agreement.py", "app_pages/participants_overview.py", "app_pages/drilldown.py", "app_pages/results.py"):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        assert at.sidebar.checkbox(key="dash_ex_att").value is False, page
        assert at.caption[0].value.split(" · ")[-1] == chosen, page


def test_all_humans_excluded_is_said_at_the_top(dash_env):
    at = open_page("app_pages/results.py")
    assert not at.error
    at.sidebar.number_input(key="dash_ex_fast_s").set_value(60.0)
    at.sidebar.number_input(key="dash_ex_streak_n").set_value(2).run()
    assert not at.exception, at.exception
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert at.error and "removed every participant" in at.error[0].value, page
        assert "8 in this selection" in at.error[0].value
    at.switch_page("app_pages/results.py").run()
    assert not any(s.startswith("Human") and "published" not in s for s in main_table_shown(at)["solver"])
    at.sidebar.checkbox(key="dash_ex_fast").uncheck()
    at.sidebar.checkbox(key="dash_ex_streak").uncheck().run()
    assert not at.error


def test_drilldown_picker_limited_to_instances_humans_answered(dash_env):
    humans = {r["instance_id"] for r in dash_env.query(
        "SELECT DISTINCT instance_id FROM responses WHERE kind = 'main' AND participant_id != ''")}
    every = {r["instance_id"] for r in dash_env.query("SELECT DISTINCT instance_id FROM responses WHERE kind = 'main'")}
    assert humans < every  # the agents answered instances no participant saw
    at = open_page("app_pages/drilldown.py")
    at.sidebar.checkbox(key="dash_ex_att").uncheck()
    at.sidebar.checkbox(key="dash_ex_fast").uncheck()
    at.sidebar.checkbox(key="dash_ex_streak").uncheck().run()
    # opens on instances humans answered (issue 22)
    assert set(at.selectbox(key="drill_instance").options) == humans
    at.toggle(key="drill_humans_only").set_value(False).run()
    assert set(at.selectbox(key="drill_instance").options) == every
    at.toggle(key="drill_humans_only").set_value(True).run()
    assert not at.exception, at.exception
    assert set(at.selectbox(key="drill_instance").options) == humans
    assert "answered by humans" in at.selectbox(key="drill_instance").label
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    colours = {t["name"]: t["marker"]["color"] for t in fig["data"] if t.get("name")}
    assert len(set(colours.values())) == len(colours)  # heatmap, gold and every model: distinct colours


def test_a_restart_reads_the_analyses_kept_on_disk_and_never_a_stale_one(small_dataset, populated_stores, tmp_path,
                                                                         monkeypatch):
    """A restarted server (every in-memory cache empty) serves the analyses the last process kept beside the
    database without computing them; a run replaced by one of the same size (SQLite reuses the freed response
    ids, so its row count and last id are unchanged) is computed afresh, and only that run. (A SQLite file, whatever
    the pages' backend: the files beside it are the subject.)"""
    import shutil

    import ui.dash
    from rose_core.runs.importer import import_run
    from rose_core.storage import open_store

    db = tmp_path / "rose.db"
    shutil.copy(populated_stores("sqlite").path, db)
    monkeypatch.setenv("ROSE_DATASET_DIR", str(small_dataset.root))
    monkeypatch.setenv("ROSE_EXPERIMENTER_PASSWORD", PASSWORD)
    monkeypatch.setenv("ROSE_DB", str(db))
    monkeypatch.chdir(ROOT)
    mains = [i for i in small_dataset.instances.values() if i.template in ("T1", "T2", "T3", "T4", "T5")][:20]

    def run(name: str, answer) -> Path:
        f = tmp_path / name
        f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": answer(i),
                                         "dataset_hash": small_dataset.dataset_hash}) + "\n" for i in mains))
        return f

    store = open_store(db)
    import_run(store, small_dataset, run("right.jsonl", lambda i: i.protocol_answer), "late-model")

    def late_valid(at: AppTest) -> str:
        return main_table_shown(at, 1).set_index("solver").loc["late-model", "VALID"]

    def restart() -> None:
        st.cache_resource.clear()
        st.cache_data.clear()

    restart()
    first = open_page("app_pages/results.py")
    assert not first.exception, first.exception
    assert late_valid(first).startswith("100.0")
    assert ui.dash.warm_up().wait(120)           # the sign-in warm-up keeps its analyses on disk too
    assert list((tmp_path / "rose.db.analyses").glob("*.pkl"))

    computed = []
    real = ui.dash._analysis

    def counting(kind, arg, g, humans, ds, cores):
        computed.append((kind, str(g["solver"].iloc[0])))
        return real(kind, arg, g, humans, ds, cores)

    monkeypatch.setattr(ui.dash, "_analysis", counting)
    restart()
    again = open_page("app_pages/results.py")
    assert not again.exception, again.exception
    assert ui.dash.warm_up().wait(120)
    assert computed == []                        # everything read from disk (the page's and the warm-up's)
    pd.testing.assert_frame_equal(again.table[0].value, first.table[0].value)

    before = store.query("SELECT count(*) AS n, max(response_id) AS last FROM responses")[0]
    import_run(store, small_dataset, run("wrong.jsonl", lambda i: "nonsense"), "late-model", replace=True)
    assert store.query("SELECT count(*) AS n, max(response_id) AS last FROM responses")[0] == before
    computed.clear()
    restart()
    fresh = open_page("app_pages/results.py")
    assert not fresh.exception, fresh.exception
    assert late_valid(fresh).startswith("0.0")
    assert ui.dash.warm_up().wait(120)           # the page and the warm-up started at sign-in: both counted
    assert {s for _, s in computed} == {"late-model"}   # the other solvers still come from disk


def warmed_here(db: Path, dataset):
    """The warm-up's whole body (`ui.dash._warm`) run in the test's own thread on the database file `db` with
    `dataset` handed over, Streamlit's caches empty before and after: its `_WarmUp`."""
    import ui.dash
    from rose_core.storage import open_store

    st.cache_resource.clear()
    st.cache_data.clear()
    store = open_store(db)
    w = ui.dash._WarmUp()
    w.give_dataset(dataset)
    try:
        ui.dash._warm(w, store)
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()
        store.close()
    return w


def test_the_warm_up_works_on_the_store_and_dataset_it_was_given(small_dataset, populated_stores, tmp_path,
                                                                 monkeypatch):
    """The warm-up thread outlives the rerun that started it, so it never looks up the process's store or dataset:
    the environment they come from may have changed by then (after a test restored it, a warm-up's difficulty
    analysis built the full dataset in the work tree, holding a cache lock the next test's page waited on)."""
    import shutil

    import ui.dash

    db = tmp_path / "rose.db"
    shutil.copy(populated_stores("sqlite").path, db)   # a SQLite file whatever the pages' backend: its files counted

    def looked_up():
        raise AssertionError("the warm-up looked up the process's store or dataset instead of the ones it was given")

    monkeypatch.setattr(ui.dash, "dataset", looked_up)
    monkeypatch.setattr(ui.dash, "store", looked_up)
    monkeypatch.delenv("ROSE_DATASET_DIR", raising=False)
    monkeypatch.delenv("ROSE_DB", raising=False)
    w = warmed_here(db, small_dataset)
    assert w.is_set()
    assert len(list((tmp_path / "rose.db.analyses").glob("*.pkl"))) >= len(ui.dash.WARM_ANALYSES)


def test_an_analysis_the_warm_up_finds_refused_leaves_the_others_warmed(small_dataset, populated_stores, tmp_path,
                                                                          monkeypatch, caplog):
    """An analysis that refuses its rows (a trial answered twice: human − model, the bridges, agreement) is the page's
    to explain when it computes it; the warm-up leaves that one out and still warms every other one, whatever its
    place in the order."""
    import ui.dash
    from rose_core.analysis import AnalysisInputError

    db = tmp_path / "rose.db"
    shutil.copy(populated_stores("sqlite").path, db)
    computed = []
    real = ui.dash._analysis

    def refusing(kind, arg, g, humans, ds, cores):
        if kind == "difference":
            raise AnalysisInputError("human − model: participant 'p' answers instance 'i' 2 times")
        computed.append(kind)
        return real(kind, arg, g, humans, ds, cores)

    monkeypatch.setattr(ui.dash, "_analysis", refusing)
    with caplog.at_level("INFO", logger="rose_studio"):
        w = warmed_here(db, small_dataset)
    assert w.is_set()
    assert [k for k, _ in ui.dash.WARM_ANALYSES].index("difference") < len(ui.dash.WARM_ANALYSES) - 1
    assert set(computed) == {k for k, _ in ui.dash.WARM_ANALYSES} - {"difference", "human_agreement"}
    assert any("left out difference: human − model: participant 'p'" in r.getMessage() for r in caplog.records)


def test_a_dataset_loaded_after_the_warm_up_met_none_starts_its_analyses(small_dataset, populated_stores, tmp_path,
                                                                        monkeypatch):
    """The first sign-in form can meet a dataset that cannot be loaded yet (still being built, or broken and then
    fixed): the warm-up of that data version stops after the rows. The experimenter's page that loads the dataset
    later must start its analyses then; the warm-up is cached per data version, so nothing else would."""
    import shutil

    import ui.dash
    from rose_core.storage import open_store

    db = tmp_path / "rose.db"
    shutil.copy(populated_stores("sqlite").path, db)
    st.cache_resource.clear()
    st.cache_data.clear()
    store = open_store(db)

    def not_yet():
        raise FileNotFoundError("the dataset is still being built")

    try:
        with pytest.raises(FileNotFoundError):
            ui.dash.warm_up_on(store, not_yet)      # as the sign-in form's early warm-up meets it
        first = ui.dash._warm_up_started(store.location, ui.dash._frames(store.location).current().key, store)
        assert first.wait(120)                       # stopped after the rows: no analysis without a dataset
        rows = set((tmp_path / "rose.db.analyses").glob("*.pkl"))     # the participants' statistics alone
        assert len(rows) <= 1
        again = ui.dash.warm_up_on(store, lambda: small_dataset)   # the page after sign-in loaded it
        assert again is first and again.generation == 1
        assert again.wait(120)
        assert len(set((tmp_path / "rose.db.analyses").glob("*.pkl")) - rows) >= len(ui.dash.WARM_ANALYSES)
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()
        store.close()


def test_a_warm_up_thread_superseded_while_it_read_the_rows_computes_no_analysis(small_dataset, populated_stores,
                                                                                 tmp_path):
    """The first thread reads the rows before it asks for the dataset; the sign-in form handed it None meanwhile and
    the experimenter's page a dataset, which started a second thread. The first must not take that dataset and
    compute every analysis beside the second (two warm-ups on two cores, under the page being opened)."""
    import ui.dash
    from rose_core.storage import open_store

    db = tmp_path / "rose.db"
    shutil.copy(populated_stores("sqlite").path, db)
    st.cache_resource.clear()
    st.cache_data.clear()
    store = open_store(db)
    w = ui.dash._WarmUp()
    assert w.give_dataset(None) is False and w.give_dataset(small_dataset) is True
    try:
        ui.dash._warm(w, store, 0)                 # the first thread asks for the dataset only now
        assert len(list((tmp_path / "rose.db.analyses").glob("*.pkl"))) <= 1   # the participants' statistics
        assert not w.is_set()
        ui.dash._warm(w, store, 1)                 # the second thread: the analyses, then done
        assert len(list((tmp_path / "rose.db.analyses").glob("*.pkl"))) >= len(ui.dash.WARM_ANALYSES)
        assert w.is_set()
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()
        store.close()


def test_only_the_latest_warm_up_thread_ends_the_warm_up(small_dataset):
    """A thread that met no dataset and ends after a later one started (given the dataset) must not say the
    analyses are done while the later one computes them; a second dataset or a None after one changes nothing."""
    import ui.dash

    w = ui.dash._WarmUp()
    assert w.give_dataset(None) is False             # the first hand-over: the thread started with the warm-up
    assert w.give_dataset(small_dataset) is True     # a dataset after a None: the caller starts a second thread
    w.finished(0)                                    # the first thread ends late
    assert not w.is_set() and w.dataset() is small_dataset
    w.finished(1)
    assert w.is_set()
    assert w.give_dataset(None) is False and w.give_dataset(small_dataset) is False
    assert w.dataset() is small_dataset and w.is_set()


def test_every_analysis_page_warns_of_a_run_that_left_errored_samples_out(dash_env, small_dataset, tmp_path,
                                                                        monkeypatch, fresh_location):
    """A run imported with --errored skip has rates over fewer samples than the dataset: each analysis page says
    which run and how many, beside the numbers."""
    from rose_core.runs.importer import import_run
    from tests.backends import clone

    store = clone(dash_env, fresh_location())
    from rose_core.runs.formats.lmms_eval import LMMS_FAILED

    insts = list(small_dataset.instances.values())   # an lmms-eval samples file whose last two requests failed
    f = tmp_path / "samples_rose.jsonl"
    f.write_text("".join(json.dumps({"doc_id": k, "target": i.protocol_answer, "input": i.prompt, "filtered_resps":
                                     i.protocol_answer if k < len(insts) - 2 else f"{LMMS_FAILED}: HTTP 529]"}) + "\n"
                         for k, i in enumerate(insts)))
    res = import_run(store, small_dataset, f, "flaky")
    assert res.counts.get("errored") == 2, res.counts
    monkeypatch.setenv("ROSE_DB", store.location)
    st.cache_resource.clear()
    st.cache_data.clear()
    for page in PAGES:
        at = open_page(page)
        assert not at.exception, at.exception
        assert any("model:flaky: 2 errored" in w.value for w in at.warning), (page, [w.value for w in at.warning])


def test_a_dry_run_counts_only_when_the_sidebar_includes_it(small_dataset, fresh_location, monkeypatch):
    """Simulated participants (`study simulate`) never reach a page's number, until the sidebar's switch counts
    them on every page, said beside it."""
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.simulate import parse_truth, simulate
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study
    from rose_core.storage import open_store

    db = fresh_location()
    store = open_store(db)
    study = create_study(store, small_dataset, StudyConfig(name="dry", split="all", items_per_participant=10,
                                                           attention_every=5, seed=2),
                         ids=SequentialIds("dash"), clock=FakeClock())
    simulate(store, small_dataset, study, parse_truth({"too_fast": 0.25}), 8, 1)
    store.close()
    with pages_on(monkeypatch, small_dataset, db):
        at = open_page("app_pages/results.py")
        assert not at.exception, at.exception
        assert not any(s.startswith("Human") and "published" not in s for s in at.dataframe[0].value["solver"])
        at.switch_page("app_pages/participants_overview.py").run()
        assert not at.exception and at.info and "No participant" in at.info[0].value
        at.sidebar.checkbox(key="dash_simulated").check().run()
        assert at.sidebar.warning and "dry run" in at.sidebar.warning[0].value
        assert not at.exception, at.exception
        assert at.metric[0].value == "8" and at.metric[1].value == "2"     # the two too-fast excluded
        at.switch_page("app_pages/results.py").run()
        assert "Human (dry)" in set(at.dataframe[0].value["solver"])


def test_an_exclusion_by_hand_reaches_an_open_dashboard(small_dataset, populated_db, fresh_location, monkeypatch):
    """No response changes when a participant is excluded by hand: the selection must see it all the same."""
    import re

    from rose_core.instrument import manage
    from tests.backends import clone

    store = clone(populated_db, fresh_location())
    with pages_on(monkeypatch, small_dataset, store.location):
        at = open_page("app_pages/results.py")
        excluded = lambda: int(re.search(r"(\d+) participants excluded", at.caption[0].value).group(1))  # noqa: E731
        before = excluded()
        (h0,) = store.query("SELECT participant_id FROM participants WHERE external_id = 'H0'")
        manage.exclude(store, h0["participant_id"], "a colleague's pilot", "JD")
        at.run()
        assert not at.exception and excluded() == before + 1
    store.close()


def test_participants_page_lists_participant_flags_in_their_own_section(dash_env):
    """participant_flags (a takeover attempt here) were shown nowhere; they have their own section now."""
    from rose_core.storage.participants import record_flag

    study_id = dash_env.query("SELECT study_id FROM participants WHERE external_id = 'H0'")[0]["study_id"]
    with dash_env.write() as c:
        record_flag(c, study_id, None, "H0", "identity_mismatch", '{"session_id": "forged"}', 1_800_000_000.0)
    try:
        at = open_page("app_pages/participants_overview.py")
        assert not at.exception, at.exception
        assert any("Refused requests" in m.value for m in at.markdown)
        flags = next(d.value for d in at.dataframe if "kind" in d.value.columns and "detail" in d.value.columns)
        # the populated study's participants answer by script, so the behaviour check flags some of them too
        assert set(flags["kind"]) <= {"identity_mismatch", "behaviour"}
        mine = flags[flags["kind"] == "identity_mismatch"]
        assert list(mine["external_id"]) == ["H0"]
    finally:
        with dash_env.write() as c:
            c.execute("DELETE FROM participant_flags WHERE detail = ?", ('{"session_id": "forged"}',))


def test_the_results_page_computes_each_solvers_core_once(dash_env, monkeypatch):
    """A solver's main row, gap row and human − model row (and the humans' side) share one `SolverCore` per
    solver's rows: a new database's Results page computes each once, and its tables are those computed whole."""
    import ui.dash
    import ui.preload
    from rose_core.analysis import ExclusionRules, Filters, main_rows
    from rose_core.analysis.difference import human_model_difference
    from rose_core.analysis.gap import gap_table

    made, real = [], ui.dash.solver_core

    def counting(solver, rows):
        made.append(solver)
        return real(solver, rows)

    monkeypatch.setattr(ui.dash, "solver_core", counting)
    monkeypatch.setattr(ui.dash, "warm_up", lambda: None)   # the page's computations only: no warm-up thread,
    monkeypatch.setattr(ui.preload, "_EARLY", threading.Thread())   # neither signing in's nor the form's
    st.cache_resource.clear()
    st.cache_data.clear()
    shutil.rmtree(f"{dash_env.location}.analyses", ignore_errors=True)
    at = open_page("app_pages/results.py")
    assert not at.exception, at.exception
    v = ui.dash.View(Filters(), ExclusionRules(), db=dash_env, ds=None)
    solvers = sorted(set(v.df["solver"]))
    assert len(solvers) >= 3 and sorted(made) == solvers          # each once, for four analyses
    pd.testing.assert_frame_equal(v.compute("main").iloc[:len(solvers)], main_rows(v.df), check_exact=True)
    pd.testing.assert_frame_equal(v.compute("gap", False), gap_table(v.df), check_exact=True)
    pd.testing.assert_frame_equal(v.compute("difference"), human_model_difference(v.df), check_exact=True)
    assert sorted(made) == solvers                                 # all three read from the page's caches


def test_two_databases_of_the_same_ids_and_version_never_share_a_solvers_core(small_dataset, populated_db,
                                                                             fresh_location, monkeypatch):
    """A copy of a database has its ids, runs and import times; after one rescore each, two copies have the same
    data version too, and each solver's rows the same signature, with other verdicts. The humans' side and a
    solver's `SolverCore` are kept by that signature: one database's must never serve the other's rows."""
    import ui.dash
    from rose_core.analysis import ExclusionRules, Filters, main_rows
    from rose_core.analysis.difference import human_model_difference
    from rose_core.analysis.gap import gap_table
    from rose_core.storage.schema import bump_verdicts_generation
    from tests.backends import clone

    a, b = clone(populated_db, fresh_location()), clone(populated_db, fresh_location())
    with a.write() as c:                    # a rescore that changed nothing
        bump_verdicts_generation(c)
    with b.write() as c:                    # a rescore that turned every verdict
        c.execute("UPDATE responses SET passed = 1 - passed")
        bump_verdicts_generation(c)
    monkeypatch.setattr(ui.dash, "warm_up", lambda: None)
    st.cache_resource.clear()
    st.cache_data.clear()
    try:
        va = ui.dash.View(Filters(), ExclusionRules.off(), db=a, ds=small_dataset)   # the same rows kept
        for kind, arg in (("main", None), ("gap", False), ("difference", None)):
            va.compute(kind, arg)
        vb = ui.dash.View(Filters(), ExclusionRules.off(), db=b, ds=small_dataset)
        assert [sig for _, _, sig in vb._parts.groups] == [sig for _, _, sig in va._parts.groups]
        solvers = vb.df["solver"].nunique()
        assert not main_rows(vb.df).equals(main_rows(va.df))
        pd.testing.assert_frame_equal(vb.compute("main").iloc[:solvers], main_rows(vb.df), check_exact=True)
        pd.testing.assert_frame_equal(vb.compute("gap", False), gap_table(vb.df), check_exact=True)
        pd.testing.assert_frame_equal(vb.compute("difference"), human_model_difference(vb.df), check_exact=True)
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()
        a.close()
        b.close()


def test_the_human_model_difference_is_cached_per_model_and_equals_the_whole_table(small_dataset, populated_db,
                                                                                   fresh_location, tmp_path,
                                                                                   monkeypatch):
    """Results' human − model table assembled from per-model cached rows is the table computed whole; 20 new
    responses of one run recompute that run's row only (the humans' side not rebuilt); a change of the humans'
    rows (an exclusion by hand) rebuilds their side once for every model's row."""
    import ui.dash
    from rose_core.analysis import ExclusionRules, Filters
    from rose_core.analysis.difference import human_model_difference
    from rose_core.instrument import manage
    from rose_core.runs.importer import import_run
    from tests.backends import clone

    store = clone(populated_db, fresh_location())
    computed, sides = [], []
    real_analysis, real_side = ui.dash._analysis, ui.dash.human_side

    def counting(kind, arg, g, humans, ds, cores):
        if kind == "difference":
            computed.append(str(g["solver"].iloc[0]))
        return real_analysis(kind, arg, g, humans, ds, cores)

    def counting_side(humans, cores):
        sides.append(len(humans))
        return real_side(humans, cores=cores)

    monkeypatch.setattr(ui.dash, "_analysis", counting)
    monkeypatch.setattr(ui.dash, "human_side", counting_side)

    def table() -> tuple[pd.DataFrame, pd.DataFrame]:
        v = ui.dash.View(Filters(), ExclusionRules(), db=store, ds=small_dataset)
        return v.compute("difference"), human_model_difference(v.df)

    with pages_on(monkeypatch, small_dataset, store.location):
        got, whole = table()
        models = sorted(set(whole["solver"]))
        assert len(models) == 3 and len(whole) == 6 * 3
        pd.testing.assert_frame_equal(got, whole, check_exact=True)
        assert sorted(computed) == models and len(sides) == 1

        computed.clear(), sides.clear()
        got, whole = table()                      # a rerun on unchanged data: nothing computed
        assert computed == [] and sides == []
        pd.testing.assert_frame_equal(got, whole, check_exact=True)

        mains = [i for i in small_dataset.instances.values() if i.template in ("T1", "T2", "T3", "T4", "T5")][:20]
        f = tmp_path / "late.jsonl"
        f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": i.protocol_answer,
                                               "dataset_hash": small_dataset.dataset_hash}) + "\n" for i in mains))
        import_run(store, small_dataset, f, "late-model")
        got, whole = table()
        assert computed == ["late-model"] and sides == []   # only the new run's row; the humans' side reused
        assert "late-model" in set(got["solver"])
        pd.testing.assert_frame_equal(got, whole, check_exact=True)

        computed.clear()
        (h0,) = store.query("SELECT participant_id FROM participants WHERE external_id = 'H0'")
        manage.exclude(store, h0["participant_id"], "a colleague's pilot", "JD")
        got, whole = table()
        assert sorted(computed) == sorted([*models, "late-model"]) and len(sides) == 1   # the side built once
        pd.testing.assert_frame_equal(got, whole, check_exact=True)
    store.close()


def test_a_failed_read_shows_a_calm_message_never_a_traceback_or_a_path(small_dataset, populated_stores, tmp_path,
                                                                        monkeypatch, caplog):
    """The SQLite reader process dies at every start: the read is tried on a restarted one, then each dashboard page
    says the responses could not be read, with a reference; the reader's traceback and the database's path are
    only in the server's log, and the sign-in's warm-up ends without an unhandled error. (SQLite's reader process,
    whatever the pages' backend: PostgreSQL's read is in the app's process.)"""
    import logging
    import shutil
    import subprocess
    import sys
    import tempfile

    from rose_core.storage import open_store, sqlite_reader

    db = tmp_path / "rose.db"
    shutil.copy(populated_stores("sqlite").path, db)
    path = str(open_store(db).path)
    reader = sqlite_reader.SqliteReader()
    monkeypatch.setattr(sqlite_reader, "_READER", reader)
    dying = f"import sys; sys.stdin.buffer.read(4); sys.exit('Traceback (most recent call last): {path} boom')"

    def start():
        reader._err = tempfile.TemporaryFile()
        reader._proc = subprocess.Popen([sys.executable, "-c", dying], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=reader._err)
        reader.starts += 1

    monkeypatch.setattr(reader, "_start", start)
    with caplog.at_level(logging.ERROR), pages_on(monkeypatch, small_dataset, str(db)):
        for page in PAGES:
            at = open_page(page)
            assert not at.exception, at.exception
            shown = " ".join(e.value for e in at.error)
            assert "The responses could not be read from the database (reference" in shown, page
            everything = " ".join(str(e.value) for kind in ("error", "markdown", "caption", "warning", "info")
                                  for e in getattr(at, kind))
            assert path not in everything and str(tmp_path) not in everything and "Traceback" not in everything
            assert not at.table and not at.dataframe
    assert "boom" in caplog.text and "dashboard read failure" in caplog.text
    warm = [r for r in caplog.records if "warm-up could not read" in r.getMessage()]
    assert warm and all(r.exc_info is None for r in warm)   # no traceback formatted beside a page's compile
    reader.close()


def test_a_solver_signature_tells_apart_two_selections_of_as_many_rows_with_the_same_last_one():
    """Excluding participant A instead of B, who answered as many items (neither holding the last response), leaves
    the humans' rows as many with the same last id: the cached analyses must still be told apart (they were keyed
    by count and last id only, and showed the numbers of the other exclusion, also after a restart)."""
    import pandas as pd

    from rose_core.storage.version import DataVersion
    from ui.dash import _signature

    version = DataVersion(rows=6, last=6, people=6, generation=0, runs=(("human:s", "human", 1.0),))
    rows = pd.DataFrame({"response_id": [1, 2, 3, 4, 5, 6], "run_id": "human:s",
                         "participant_id": ["A", "A", "B", "B", "C", "C"]})
    without_a = rows[rows["participant_id"] != "A"]
    without_b = rows[rows["participant_id"] != "B"]
    assert (len(without_a), without_a["response_id"].max()) == (len(without_b), without_b["response_id"].max())
    assert _signature(without_a, version) != _signature(without_b, version)
    assert _signature(without_a, version) == _signature(without_a.copy(), version)


def test_the_paper_bundle_button_builds_the_bundle_of_the_page_when_clicked(dash_env, small_dataset, monkeypatch):
    """The Results page hands Streamlit a function that imports and builds the paper bundle only when the button is
    clicked (Streamlit calls it in a thread of its own, outside the page's run): called so, it builds the zip of the
    page's own store, dataset and selection; a build that fails raises to Streamlit (which logs it and tells the
    browser only that the file could not be made)."""
    import io
    import threading
    import zipfile

    import rose_core.analysis.bundle as bundle

    given = {}
    real_button = st.download_button

    def button(label, data, *args, **kwargs):
        if kwargs.get("key") == "results_bundle":
            given["data"] = data
        return real_button(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", button)
    at = open_page("app_pages/results.py")
    assert not at.exception and callable(given["data"])
    calls, real_zip = [], bundle.bundle_zip

    def quick(db, ds, **kwargs):
        calls.append((db.location, ds.dataset_hash, sorted(kwargs)))
        return real_zip(db, ds, n_boot=20, figures=False, **kwargs)

    monkeypatch.setattr(bundle, "bundle_zip", quick)
    out = {}
    clicked = threading.Thread(target=lambda: out.update(data=given["data"]()))
    clicked.start()
    clicked.join(300)
    assert calls == [(dash_env.location, small_dataset.dataset_hash, ["filters", "rules"])]
    with zipfile.ZipFile(io.BytesIO(out["data"])) as z:
        assert "rose_paper_bundle/manifest.json" in z.namelist()

    def broken(db, ds, **kwargs):
        raise bundle.BundleError("no figures today")

    monkeypatch.setattr(bundle, "bundle_zip", broken)
    with pytest.raises(bundle.BundleError, match="no figures today"):
        given["data"]()
