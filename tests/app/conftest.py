"""App tests run the real page scripts through Streamlit's AppTest on a small real dataset."""
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "test-experimenter-pw"


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
    st.cache_resource.clear()
