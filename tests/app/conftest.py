"""App tests run the real page scripts through Streamlit's AppTest on a small real dataset."""
import os
import sys
import threading
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "test-experimenter-pw"
# The app's background threads that work on one test's database or dataset: the dashboards' warm-up (started at
# sign-in, and once per process from the sign-in form) and the dataset loaded at the sign-in form. None may outlive
# the test that started it.
BACKGROUND = ("rose-dashboard-warm-up", "rose-load-dataset", "rose-warm-up-early")
BACKGROUND_LIMIT_S = 300   # they take seconds on the small dataset; this is a hang


def finish_background_work() -> None:
    """Wait for the app's background threads (BACKGROUND) before the test's environment and caches are undone.

    Left running, a warm-up went on into the next test: it counted in that test's monkeypatched `_analysis`
    (test_a_restart_… failed under two workers), and it looked the dataset up from an environment already restored,
    building the full one in the work tree (under a lock file both pytest workers share) while holding Streamlit's
    compute lock that the next test's page then waited on. A thread still running after BACKGROUND_LIMIT_S fails the
    test with its stack.

    The test's pages are done by now, so the warm-up is not kept waiting the grace it gives a page to lay out its
    tables (`ui.dash.PRIORITY`, 0.5 s after the page's last computation): that wait was half a second of idle
    worker at the end of every app test that signed in.

    Until none is left: one may start another while it is waited for (the sign-in form's early warm-up starts the
    warm-up thread itself, after reading the data version), and a list taken once missed that one."""
    threads = [t for t in threading.enumerate() if t.name in BACKGROUND]
    if not threads:
        return
    from ui.dash import PRIORITY

    grace = PRIORITY.GRACE_S
    PRIORITY.GRACE_S = 0.0
    try:
        while threads:
            with PRIORITY._cv:
                PRIORITY._cv.notify_all()   # a warm-up waiting out the grace looks again
            _join(threads)
            threads = [t for t in threading.enumerate() if t.name in BACKGROUND]
    finally:
        PRIORITY.GRACE_S = grace


def _join(threads: list[threading.Thread]) -> None:
    for t in threads:
        t.join(BACKGROUND_LIMIT_S)
        if t.is_alive():
            frame = sys._current_frames().get(t.ident)
            stack = "".join(traceback.format_stack(frame)) if frame else "(no frame)"
            pytest.fail(f"the app's background thread {t.name!r} still runs {BACKGROUND_LIMIT_S} s after its test "
                        f"ended; it waits here:\n{stack}", pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def app_runs_are_waited_for_not_polled() -> Iterator[None]:
    """AppTest waits for a script run by polling its runner every millisecond (`require_widgets_deltas`: wake, scan
    every event of the run for SHUTDOWN, sleep), taking the GIL from the very script it waits for; ~5-10 % of the
    app tests' CPU. Here it joins the script thread with the same timeout instead: the run is over when that
    thread ends (SHUTDOWN is its last event; `run` joins it right after either way), and a run still going at the
    timeout is stopped and fails with Streamlit's own error, as before."""
    from streamlit.testing.v1 import local_script_runner

    polled = local_script_runner.require_widgets_deltas

    def waited(runner, timeout: float = 3) -> None:
        thread = runner._script_thread
        if thread is not None:
            thread.join(timeout)
        if not runner.script_stopped():   # what Streamlit's own wait does at its timeout
            runner.request_stop()
            runner.join()
            raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")

    local_script_runner.require_widgets_deltas = waited
    yield
    local_script_runner.require_widgets_deltas = polled


@pytest.fixture(autouse=True)
def no_background_work_outlives_its_test(monkeypatch):
    """Every app test (whatever fixtures it uses) ends with the app's background threads finished, before its
    monkeypatches are undone (this fixture uses `monkeypatch`, so it is torn down first)."""
    yield
    finish_background_work()


@pytest.fixture(scope="session")
def backend(request) -> str:
    """The page tests run on SQLite, the app's default (the storage, study, session and analysis tests run on
    both backends; tests/conftest.py); ROSE_TEST_APP_BACKEND=postgresql runs them on PostgreSQL instead."""
    name = os.environ.get("ROSE_TEST_APP_BACKEND", "sqlite")
    if name == "postgresql":
        request.getfixturevalue("pg_server")
    return name


@contextmanager
def pages_on(monkeypatch, dataset, location: str) -> Iterator[None]:
    """The app's pages on this dataset and database, signed in with PASSWORD, with Streamlit's caches (which
    survive between AppTest instances) cleared before and after."""
    monkeypatch.setenv("ROSE_DATASET_DIR", str(dataset.root))
    monkeypatch.setenv("ROSE_EXPERIMENTER_PASSWORD", PASSWORD)
    monkeypatch.setenv("ROSE_DB", location)
    monkeypatch.chdir(ROOT)
    st.cache_resource.clear()
    st.cache_data.clear()
    try:
        yield
    finally:
        finish_background_work()
        st.cache_resource.clear()
        st.cache_data.clear()


@pytest.fixture
def app_env(small_dataset, monkeypatch, fresh_location):
    monkeypatch.setenv("ROSE_DATASET_DIR", str(small_dataset.root))
    monkeypatch.setenv("ROSE_EXPERIMENTER_PASSWORD", PASSWORD)
    monkeypatch.setenv("ROSE_DB", fresh_location())
    monkeypatch.chdir(ROOT)
    st.cache_resource.clear()  # survives between AppTest instances otherwise
    st.cache_data.clear()
    yield small_dataset
    finish_background_work()
    st.cache_resource.clear()
