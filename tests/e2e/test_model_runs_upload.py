"""Upload a run through the Model runs page in Chromium; a bad file is refused with its line number."""
import json

from rose_core.run_import import list_runs
from rose_core.store import Store

from .conftest import PASSWORD


def sign_in_to_runs(page, server):
    page.goto(server.url)
    page.get_by_label("Experimenter password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Model runs").click()
    page.get_by_text("Import a run").wait_for()


def upload(page, path, solver):
    with page.expect_response(lambda r: "/_stcore/upload_file" in r.url and r.ok):
        page.locator("input[type=file]").set_input_files(str(path))  # submit only once the server has the file
    page.get_by_label("Solver name").fill(solver)
    page.get_by_role("button", name="Import", exact=True).click()


def test_upload_lmms_eval_run_and_a_bad_one(server, page, small_dataset, tmp_path):
    good = tmp_path / "vlm_samples_rose.jsonl"
    good.write_text("".join(json.dumps({"doc_id": small_dataset.index[i.instance_id], "filtered_resps": [
        i.protocol_answer], "resps": [[i.protocol_answer]]}) + "\n" for i in small_dataset.instances.values()))
    sign_in_to_runs(page, server)
    upload(page, good, "uploaded-vlm")
    page.get_by_text("Imported").wait_for()
    assert "lmms-eval" in page.get_by_text("Imported").inner_text()
    runs = list_runs(Store(server.db))
    assert [(r["run_id"], r["format"], r["responses"]) for r in runs] == \
        [("model:uploaded-vlm", "lmms-eval", len(small_dataset.instances))]
    bad = tmp_path / "broken.jsonl"
    bad.write_text(json.dumps({"instance_id": next(iter(small_dataset.instances)), "response": "DONE"}) + "\n{oops\n")
    upload(page, bad, "broken")
    page.get_by_text("Import refused; nothing was stored.").wait_for()
    page.get_by_text("broken.jsonl:2: not valid JSON").wait_for()
    assert len(list_runs(Store(server.db))) == 1
