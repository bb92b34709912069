"""Process-wide, read-only resources shared by every page (no per-participant state here)."""
from __future__ import annotations

import logging

import streamlit as st

from rose_core import Dataset, dataset_dir
from rose_core.instrument.page_data import ensure_dataset
from rose_core.storage import open_store
from rose_core.storage.connection import Store, db_location


@st.cache_resource(show_spinner=False)
def load_dataset(root: str) -> Dataset:
    """The dataset at `root`, loaded once per process (`dataset()` is the pages' way in; the sign-in form
    starts this in the background: ui/preload.py)."""
    return Dataset.load(root)


@st.cache_resource(show_spinner=False)
def store_at(location: str) -> Store:
    """One store per database and process: connections pooled and reused (see rose_core.storage)."""
    return open_store(location)


def dataset() -> Dataset:
    """The app's dataset. scripts/run.sh builds it before the server starts; started some other way without one,
    the app builds it on first use with a visible progress bar; a build that fails says so on the page, and why (the
    folder, the error, the traceback) in the server's terminal."""
    root = dataset_dir()
    if not (root / "manifest.json").exists():
        bar = st.progress(0.0, text="Building the ROSE v0.1 dataset (first start only)…")
        try:
            ensure_dataset(root, progress=lambda done, total: bar.progress(done / total, text=f"Building the dataset: scene {done}/{total}"))
        except Exception as e:
            logging.getLogger("rose_studio").exception(
                "building the dataset at %s failed (%s); `python -m rose_core build --out %s` builds it by hand",
                root, e, root)
            bar.empty()
            # anyone can open the sign-in page that builds it: the folder and the reason only in the terminal
            st.error("The dataset could not be built. The reason, the folder and the command that builds it by hand "
                     "are in the server's terminal (scripts/run.sh builds it before the server starts).")
            st.stop()
        bar.empty()
    return load_dataset(str(root))


def store() -> Store:
    return store_at(db_location())
