"""Upload runs through the Model runs page in Chromium: a verified lmms-eval run is stored; a broken file (its
error naming the uploaded file, not the server's temporary copy), a run without identity (until "Trust the
ids" is ticked) and a zip bomb are refused with nothing stored."""
import json
import zipfile

from rose_core.storage.runs import list_runs
from rose_core.storage import open_store

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


def test_upload_lmms_eval_run_and_bad_ones(server, page, small_dataset, tmp_path):
    good = tmp_path / "vlm_samples_rose.jsonl"
    good.write_text("".join(json.dumps({"doc_id": k, "target": i.protocol_answer, "input": i.prompt,
                                        "filtered_resps": i.protocol_answer}) + "\n"
                            for k, i in enumerate(small_dataset.instances.values())))
    sign_in_to_runs(page, server)
    upload(page, good, "uploaded-vlm")
    page.get_by_text("Imported").wait_for()
    assert "lmms-eval" in page.get_by_text("Imported").inner_text()
    runs = list_runs(open_store(server.db))
    assert [(r["run_id"], r["format"], r["responses"]) for r in runs] == \
        [("model:uploaded-vlm", "lmms-eval", len(small_dataset.instances))]
    bad = tmp_path / "broken.jsonl"
    bad.write_text(json.dumps({"instance_id": next(iter(small_dataset.instances)), "response": "DONE"}) + "\n{oops\n")
    upload(page, bad, "broken")
    page.get_by_text("Import refused; nothing was stored.").wait_for()
    page.get_by_text("broken.jsonl:2: not valid JSON").wait_for()
    # The message names the file as uploaded, never the server's temporary copy.
    shown = page.locator("[data-testid=stCode]").first.inner_text()
    assert shown.startswith("broken.jsonl:2: not valid JSON"), shown
    assert "rose-upload-" not in page.content() and "/tmp" not in shown
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z, z.open("samples/a_epoch_1.json", "w") as w:
        for _ in range(64):
            w.write(b"\0" * 2**24)  # 1 GiB of zeros, about 1 MB on disk
    upload(page, bomb, "bomb")
    page.get_by_text("refused before expanding it").wait_for()
    assert len(list_runs(open_store(server.db))) == 1
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": "DONE"}) + "\n"
                            for i in small_dataset.instances.values()))
    upload(page, bare, "bare")
    page.get_by_text("carry no dataset hash").wait_for()
    assert len(list_runs(open_store(server.db))) == 1
    page.get_by_text("Trust the ids").click()
    page.get_by_role("button", name="Import", exact=True).click()  # the same file, still chosen
    page.get_by_text("responses imported on trust").wait_for()
    assert {r["run_id"] for r in list_runs(open_store(server.db))} == {"model:uploaded-vlm", "model:bare"}


def test_a_run_files_text_is_shown_as_text_not_markdown(server, page, small_dataset, tmp_path):
    """A run file's error text (in the import's notes) and the solver name reach the page as text: the image
    Markdown of the file's author is shown as written, and the browser asks its host for nothing."""
    import http.server
    import threading

    asked: list[str] = []

    class Host(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            asked.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    host = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Host)
    threading.Thread(target=host.serve_forever, daemon=True).start()
    image = f"![pixel](http://127.0.0.1:{host.server_address[1]}/pixel.png)"
    lines = []
    for k, i in enumerate(small_dataset.instances.values()):
        resp = f"[LMMS_EVAL_REQUEST_FAILED] {image} **loud**" if k == 0 else i.protocol_answer
        lines.append(json.dumps({"doc_id": k, "target": i.protocol_answer, "input": i.prompt,
                                 "filtered_resps": resp}) + "\n")
    f = tmp_path / "vlm_samples_rose.jsonl"
    f.write_text("".join(lines))
    try:
        sign_in_to_runs(page, server)
        upload(page, f, "m_*x*_")
        page.get_by_text("Imported").wait_for()
        assert "model:m_*x*_" in page.get_by_text("Imported").inner_text()
        note = page.get_by_text("errored samples (harness").inner_text()
        assert image in note and "**loud**" in note, note
        page.wait_for_timeout(1000)
        assert page.locator("[data-testid=stAlert] img").count() == 0
        assert asked == [], asked
    finally:
        host.shutdown()
