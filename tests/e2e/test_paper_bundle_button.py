"""The Results page's "Download the paper bundle" button in Chromium: the zip it serves holds the whole bundle of
the page's selection, its main table equal to `report --json`, its figures drawn on the server (Matplotlib)."""
import io
import json
import shutil
import zipfile

import pytest

from rose_core.analysis import report_data
from rose_core.storage import open_store
from tools.serve import Server

from .conftest import PASSWORD
from .helpers import sign_in


@pytest.fixture
def results_server(small_dataset, populated_db, tmp_path):
    db = tmp_path / "rose.db"
    shutil.copy(populated_db.path, db)
    srv = Server(tmp_path / "server.log", {"ROSE_DATASET_DIR": str(small_dataset.root), "ROSE_DB": str(db),
                                           "ROSE_EXPERIMENTER_PASSWORD": PASSWORD}).start()
    srv.db = db
    yield srv
    srv.stop()


def test_bundle_button_downloads_the_bundle(results_server, page, small_dataset, tmp_path):
    sign_in(page, results_server.url, PASSWORD)
    page.get_by_role("link", name="Results", exact=True).click()
    button = page.get_by_role("button", name="Download the paper bundle")
    button.wait_for(timeout=60_000)
    with page.expect_download(timeout=300_000) as dl:
        button.click()
    assert dl.value.suggested_filename == "rose_paper_bundle.zip"
    path = tmp_path / "bundle.zip"
    dl.value.save_as(path)
    with zipfile.ZipFile(io.BytesIO(path.read_bytes())) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("rose_paper_bundle/manifest.json"))
        report = json.loads(z.read("rose_paper_bundle/report.json"))
        png = z.read("rose_paper_bundle/figures/gap.png")
    for table in ("main", "gap", "bridge_global", "bridge_matched", "agreement_model", "difficulty"):
        for ext in ("md", "tex", "csv"):
            assert f"rose_paper_bundle/tables/{table}.{ext}" in names
    assert {f"rose_paper_bundle/{f}" for f in manifest["files"]} | {"rose_paper_bundle/manifest.json"} == names
    assert manifest["dataset_hash"] == small_dataset.dataset_hash
    assert [f["name"] for f in manifest["figures"]][:2] == ["main_pass", "gap"] and png.startswith(b"\x89PNG")
    assert len(manifest["figures"]) == 6 and manifest["figures"][0]["inches"][0] == 3.25
    # the sidebar's defaults are the dashboards' and `report`'s: the same main table
    assert report["rows"] == json.loads(json.dumps(report_data(open_store(results_server.db))[0]))["rows"]
    assert page.locator("[data-testid=stException]").count() == 0
