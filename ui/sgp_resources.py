"""The SGP episode set the app serves (process-wide, read-only), and board images by state (cached: a board is
drawn once however many participants reach it)."""
from __future__ import annotations

import fcntl
import functools
import json
import os
from pathlib import Path

import streamlit as st

from rose_core.benchmarks.sgp.item import SgpDataset
from rose_core.benchmarks.sgp.render import render_png

SGP_DATASET_ENV = "ROSE_SGP_DATASET_DIR"
DEFAULT_SGP_DIR = Path(__file__).resolve().parent.parent / "data" / "datasets" / "sgp"


def sgp_dataset_dir() -> Path:
    """The app's SGP episodes: $ROSE_SGP_DATASET_DIR, else data/datasets/sgp (the paper's 300 episodes)."""
    return Path(os.environ.get(SGP_DATASET_ENV) or DEFAULT_SGP_DIR)


def ensure_sgp_dataset(root: Path) -> Path:
    """Build the default episode set at `root` once, even when several sessions ask at the same time."""
    if (root / "manifest.json").exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "manifest.json").exists():
            from rose_core.benchmarks.sgp.dataset import build_dataset

            build_dataset(root)
    return root


@st.cache_resource(show_spinner=False)
def _sgp(root: str) -> SgpDataset:
    from rose_core.benchmarks.sgp.dataset import load_dataset

    return load_dataset(root)


def sgp_dataset() -> SgpDataset:
    """The app's SGP episodes, built on first use."""
    root = sgp_dataset_dir()
    if not (root / "manifest.json").exists():
        with st.spinner("Building the SGP episodes (first use only)…"):
            ensure_sgp_dataset(root)
    return _sgp(str(root))


@functools.lru_cache(maxsize=4096)
def _png(state_json: str, modality: str, kind: str) -> bytes:
    return render_png(json.loads(state_json), modality, kind)  # type: ignore[arg-type]


def board_png(state: dict, modality: str, kind: str = "active") -> bytes:
    return _png(json.dumps(state, sort_keys=True), modality, kind)
