"""End-to-end fixtures: the real Streamlit server (subprocess) and Debian's Chromium via Playwright."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tools.serve import CHROMIUM, CHROMIUM_ARGS, Server

PASSWORD = "e2e-pw"


def start_server(dataset, folder: Path, **env: str) -> Server:
    """The real app on the given dataset, with its own database in `folder` (`.db` holds its path)."""
    srv = Server(folder / "server.log", {"ROSE_DATASET_DIR": str(dataset.root), "ROSE_DB": str(folder / "rose.db"),
                                         "ROSE_EXPERIMENTER_PASSWORD": PASSWORD, **env}).start()
    srv.db = folder / "rose.db"
    return srv


@pytest.fixture(scope="session")
def backend() -> str:
    """The end-to-end tests run on SQLite, the app's default (the storage, study, session and analysis tests run on
    both backends; tests/conftest.py)."""
    return "sqlite"


@pytest.fixture
def server(small_dataset, tmp_path):
    srv = start_server(small_dataset, tmp_path)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def live(small_dataset, tmp_path_factory):
    """One server for a whole test module (each test makes its own study in it)."""
    srv = start_server(small_dataset, tmp_path_factory.mktemp("live"))
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def browser(chromium):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    ctx.close()


class _Landing(BaseHTTPRequestHandler):
    """A page to be sent to (a completion or screen-out URL): says which path it was asked for."""

    def do_GET(self):  # noqa: N802
        body = f"landed {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def landing():
    """A loopback HTTP server standing in for Prolific's redirect targets; its base URL."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Landing)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
