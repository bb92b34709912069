"""Model runs page: agents run and import from the page; the table shows them; removal works; a registered run
format is offered and imported."""
import csv
import io
import json
import os

from streamlit.testing.v1 import AppTest

from rose_core.benchmarks.rose.agents import run_agent
from rose_core.runs.importer import delete_run, import_run
from rose_core.storage.runs import list_runs
from rose_core.storage import open_store
from ui.plain import md_text

from .conftest import PASSWORD, ROOT


def runs_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.text_input(key="auth_given").input(PASSWORD)
    at.button[0].click()
    at.run()
    at.switch_page("app_pages/model_runs.py")
    return at.run()


def test_agents_from_the_page_and_the_runs_table(app_env):
    at = runs_page()
    assert at.title[0].value == "Model runs"
    at.multiselect(key="runs_agents").set_value(["oracle", "region-ignoring"])
    at.selectbox(key="runs_agent_split").select("dev")
    at.button(key="runs_agents_btn").click()
    at.run()
    assert not at.exception
    table = at.dataframe[0].value
    assert set(table["solver"]) == {"oracle", "region-ignoring"}
    oracle = table[table["solver"] == "oracle"].iloc[0]
    assert oracle["Avg"] == "100.0" and oracle["VALID"] == "100.0"  # the one number format: one decimal
    at.selectbox(key="runs_delete_pick").select("agent:oracle")
    at.run()
    assert at.button(key="runs_delete_btn").disabled  # a click alone never deletes: the id is typed first
    at.text_input(key="runs_delete_confirm").input("agent:orac")
    at.run()
    assert at.button(key="runs_delete_btn").disabled
    at.text_input(key="runs_delete_confirm").input("agent:oracle")
    at.run()
    at.button(key="runs_delete_btn").click()
    at.run()
    assert not at.exception
    assert [r["run_id"] for r in list_runs(open_store(os.environ["ROSE_DB"]))] == ["agent:region-ignoring"]


def test_removing_a_run_another_tab_removed_is_a_message_not_a_traceback(app_env, tmp_path, monkeypatch):
    """Two tabs show the same run; the other tab removes it after this rerun listed the runs and before its
    removal reaches the database: the removal says so and changes nothing (it raised a TypeError)."""
    from rose_core.storage import runs as stored_runs

    store = open_store(os.environ["ROSE_DB"])
    f = tmp_path / "oracle.jsonl"
    run_agent("oracle", app_env, f, split="dev")
    import_run(store, app_env, f, "oracle", kind="agent")
    at = runs_page()
    at.selectbox(key="runs_delete_pick").select("agent:oracle")
    at.text_input(key="runs_delete_confirm").input("agent:oracle")
    at.run()
    listed = stored_runs.list_runs

    def listed_then_removed_elsewhere(db):
        runs = listed(db)
        monkeypatch.setattr(stored_runs, "list_runs", listed)
        delete_run(store, "agent:oracle")                  # the other tab, right after this rerun's listing
        return runs

    monkeypatch.setattr(stored_runs, "list_runs", listed_then_removed_elsewhere)
    at.button(key="runs_delete_btn").click()
    at.run()
    assert not at.exception
    assert [e.value for e in at.error] == [r"Nothing removed: no run \'agent\:oracle\' is stored \(never imported\, "
                                           r"or removed meanwhile\)"]
    assert list_runs(store) == []


def test_imported_model_run_is_listed(app_env, tmp_path):
    f = tmp_path / "m.jsonl"
    f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": "COUNT(2)",
                                     "dataset_hash": app_env.dataset_hash}) + "\n"
                         for i in app_env.instances.values()))
    import_run(open_store(os.environ["ROSE_DB"]), app_env, f, "gpt-test")
    at = runs_page()
    table = at.dataframe[0].value
    row = table[table["solver"] == "gpt-test"].iloc[0]
    assert row["kind"] == "model" and row["L-Clk"] == "0.0" and row["responses"] == f"{len(app_env.instances):,}"


def test_a_registered_format_is_offered_and_imported_from_the_page(app_env, monkeypatch):
    """A format registered (the throwaway CSV module, its one line in the registry) and nothing else changed: the
    page's uploader accepts its files and names what detection looks for, its format choice offers it, and an
    upload of it is imported."""
    from rose_core.runs.formats import FORMATS
    from tests.rose_core.runs import csv_run_format

    monkeypatch.setitem(FORMATS, csv_run_format.NAME, csv_run_format)
    at = runs_page()
    up = at.file_uploader(key="runs_file")
    assert ".csv" in up.allowed_type \
        and set(up.allowed_type) == {"." + e for f in FORMATS.values() for e in f.EXTENSIONS}
    assert all(md_text(f.CLUE) in up.label for f in FORMATS.values())
    assert at.selectbox(key="runs_format").options == ["auto", *FORMATS]
    instances = list(app_env.instances.values())
    rows = [("instance_id", "response"), *((i.instance_id, i.protocol_answer) for i in instances)]
    sheet = io.StringIO()
    csv.writer(sheet).writerows(rows)
    up.set_value(("answers.csv", sheet.getvalue().encode(), "text/csv"))
    at.text_input(key="runs_solver").input("sheet")
    at.checkbox(key="runs_trust_ids").check()
    at.button[0].click()   # the form's Import
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.success[0].value == (f"Imported {len(instances)} responses as {md_text('model:sheet')} (format "
                                   f"csvtest: {md_text('a .csv with an instance_id,response header (CSV answer sheet)')}).")
    [run] = list_runs(open_store(os.environ["ROSE_DB"]))
    assert (run["run_id"], run["format"], run["responses"]) == ("model:sheet", "csvtest", len(instances))
