"""End-to-end fixtures: the real Streamlit server (subprocess) and Debian's Chromium via Playwright."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
PASSWORD = "e2e-pw"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run app.py` on a free loopback port, with its own database and dataset."""

    def __init__(self, dataset: Path, db: Path, log: Path):
        self.dataset, self.db, self.log = dataset, db, log
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        env = {**os.environ, "ROSE_DATASET_DIR": str(self.dataset), "ROSE_DB": str(self.db),
               "ROSE_EXPERIMENTER_PASSWORD": PASSWORD}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port),
             "--server.address", "127.0.0.1"], cwd=ROOT, env=env, stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"server did not start; log: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, like a crash."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def server(small_dataset, tmp_path):
    srv = Server(small_dataset.root, tmp_path / "rose.db", tmp_path / "server.log").start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def browser():
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

