"""Fixtures and helpers for the click-grid tests: the harness page (tests/e2e/grid_app.py) on a real server."""
from __future__ import annotations

import json
import time
import urllib.parse
from pathlib import Path

import pytest

from tools.serve import Server

DESKTOP = {"viewport": {"width": 1280, "height": 720}}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True}


class Harness:
    def __init__(self, server: Server, log: Path):
        self.server, self.log = server, log

    def url(self, **params) -> str:
        return f"{self.server.url}/?{urllib.parse.urlencode(params)}"

    def records(self, view: str, kind: str | None = None) -> list[dict]:
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text().splitlines():
            rec = json.loads(line)
            if rec["value"].get("view_id") == view and (kind is None or rec["kind"] == kind):
                out.append(rec)
        return out

    def wait_records(self, view: str, pred, kind: str | None = None, timeout: float = 15) -> list[dict]:
        """Poll the log until pred(records) holds (the server writes it; no fixed pause)."""
        deadline = time.time() + timeout
        recs = self.records(view, kind)
        while not pred(recs) and time.time() < deadline:
            time.sleep(0.05)
            recs = self.records(view, kind)
        assert pred(recs), f"harness log for {view}: {recs}"
        return recs


@pytest.fixture(scope="module")
def harness(small_dataset, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grid")
    log = tmp / "grid.jsonl"
    srv = Server(tmp / "server.log", {"ROSE_DATASET_DIR": str(small_dataset.root), "ROSE_GRID_LOG": str(log)},
                 script="tests/e2e/grid_app.py").start()
    yield Harness(srv, log)
    srv.stop()


def open_grid(page, h: Harness, **params) -> None:
    page.goto(h.url(**params))
    page.locator(".rg-root").wait_for()
    page.wait_for_function("() => document.querySelector('.rg-stage').getBoundingClientRect().width > 0")


def wait_ack(page, n: int) -> None:
    page.wait_for_function("n => Number(document.querySelector('.rg-root').dataset.ack) >= n", arg=n)
