"""Model runs page: agents run and import from the page; the table shows them; removal works."""
import json
import os

from streamlit.testing.v1 import AppTest

from rose_core.runs.importer import import_run
from rose_core.storage.runs import list_runs
from rose_core.storage import open_store

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
