"""A small SGP dataset per test session, built by the real build path (2-3 geoms x c1 2-4 x 2 episodes)."""
from __future__ import annotations

import pytest

from rose_core.benchmarks.sgp import BuildParams, SgpDataset, build_sgp_dataset

SMALL = BuildParams(seed=3, geoms=(2, 3), c1=(2, 3, 4), per_cell=2)


@pytest.fixture(scope="session")
def sgp_dataset(tmp_path_factory) -> SgpDataset:
    root = tmp_path_factory.mktemp("sgp") / "small"
    build_sgp_dataset(root, SMALL, workers=1)
    return SgpDataset.load(root, verify_images=True)
