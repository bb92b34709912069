"""Faults at start on the real server, as a participant's browser and a visitor see them: a database file that is
corrupt or cannot be created (a read-only folder), a damaged dataset manifest. Each gets a calm page and a log
line; no traceback, no exception text, no server path on the page."""
from __future__ import annotations

import shutil

import pytest

from tools.serve import Server

from .conftest import PASSWORD
from .helpers import script_run


def _start(dataset_root, db: str, log) -> Server:
    return Server(log, {"ROSE_DATASET_DIR": str(dataset_root), "ROSE_DB": db,
                        "ROSE_EXPERIMENTER_PASSWORD": PASSWORD}).start()


def _calm(got: dict, *paths: str) -> None:
    assert got["exceptions"] == [], got
    assert got["alerts"] and any("problem on our side" in a for a in got["alerts"]), got
    shown = " ".join(got["alerts"] + got["headings"])
    for p in paths:
        assert p not in shown, (p, shown)
    assert "Traceback" not in shown and "/" not in shown.replace("https://", ""), shown


@pytest.mark.parametrize("fault", ["corrupt", "read-only"])
def test_a_database_that_cannot_be_opened_gets_a_calm_page(small_dataset, tmp_path, fault):
    if fault == "corrupt":
        db = tmp_path / "rose.db"
        db.write_bytes(b"this is not an SQLite database, it was damaged" * 100)
        location = str(db)
    else:
        location = "/proc/rose-studio-test/rose.db"   # a folder nobody may create anything in, root included
    srv = _start(small_dataset.root, location, tmp_path / "server.log")
    try:
        got = script_run(srv.port, query="study=STUDY1&PROLIFIC_PID=P1")
        _calm(got, str(tmp_path), location)
        log = (tmp_path / "server.log").read_text()
        assert "ROSE participant page" in log or "page fault" in log
    finally:
        srv.stop()


def test_a_corrupt_manifest_gets_a_calm_page_without_its_path(small_dataset, tmp_path):
    root = tmp_path / "ds"
    shutil.copytree(small_dataset.root, root)
    (root / "manifest.json").write_text('{"name": "rose", "instances": [')   # cut mid-write
    srv = _start(root, str(tmp_path / "rose.db"), tmp_path / "server.log")
    try:
        got = script_run(srv.port, query="study=STUDY1&PROLIFIC_PID=P1")
        _calm(got, str(root), str(tmp_path))
        assert "manifest" in (tmp_path / "server.log").read_text()
    finally:
        srv.stop()
