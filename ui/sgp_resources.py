"""The SGP episode set the app serves (process-wide, read-only), and board images by state (cached: a board is
drawn once however many participants reach it)."""
from __future__ import annotations

import fcntl
import functools
import json
from pathlib import Path

import streamlit as st

from rose_core.benchmarks.sgp.dataset import SgpDataset, build_sgp_dataset, sgp_dataset_dir
from rose_core.benchmarks.sgp.render import render_png


def ensure_sgp_dataset(root: Path) -> Path:
    """Build the default episode set at `root` once, even when several sessions ask at the same time."""
    if (root / "manifest.json").exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "manifest.json").exists():
            build_sgp_dataset(root, replace=True)
    return root


@st.cache_resource(show_spinner=False)
def _sgp(root: str) -> SgpDataset:
    return SgpDataset.load(root)


def sgp_dataset() -> SgpDataset:
    """The app's SGP episodes ($ROSE_SGP_DATASET_DIR, else data/datasets/sgp: the paper's 300), built on first use."""
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
