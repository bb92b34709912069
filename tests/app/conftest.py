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
# sign-in) and the dataset loaded at the sign-in form. None may outlive the test that started it.
BACKGROUND = ("rose-dashboard-warm-up", "rose-load-dataset")
BACKGROUND_LIMIT_S = 300   # they take seconds on the small dataset; this is a hang


def finish_background_work() -> None:
    """Wait for the app's background threads (BACKGROUND) before the test's environment and caches are undone.

    Left running, a warm-up went on into the next test: it counted in that test's monkeypatched `_analysis`
    (test_a_restart_… failed under two workers), and it looked the dataset up from an environment already restored,
    building the full one in the work tree (under a lock file both pytest workers share) while holding Streamlit's
    compute lock that the next test's page then waited on. A thread still running after BACKGROUND_LIMIT_S fails the
    test with its stack."""
    for t in [t for t in threading.enumerate() if t.name in BACKGROUND]:
        t.join(BACKGROUND_LIMIT_S)
        if t.is_alive():
            frame = sys._current_frames().get(t.ident)
            stack = "".join(traceback.format_stack(frame)) if frame else "(no frame)"
            pytest.fail(f"the app's background thread {t.name!r} still runs {BACKGROUND_LIMIT_S} s after its test "
                        f"ended; it waits here:\n{stack}", pytrace=False)


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
