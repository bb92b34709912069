"""Shared fixtures: one small dataset per test session, built by the real build path."""
from __future__ import annotations

import pytest

from rose_core import Dataset, build_dataset

SMALL_SCALE = 0.05


@pytest.fixture(scope="session")
def small_dataset(tmp_path_factory) -> Dataset:
    root = tmp_path_factory.mktemp("datasets") / "small"
    build_dataset(root, seed=7, scale=SMALL_SCALE)
    return Dataset.load(root)
