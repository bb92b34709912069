"""A small SGP dataset per test run, built by the real build path (2-3 geoms x c1 2-4 x 2 episodes)."""
from __future__ import annotations

import pytest

from rose_core.benchmarks.sgp import BuildParams, SgpDataset, build_sgp_dataset

SMALL = BuildParams(seed=3, geoms=(2, 3), c1=(2, 3, 4), per_cell=2)


@pytest.fixture(scope="session")
def sgp_dataset(tmp_path_factory) -> SgpDataset:
    """Built once per test run (`built_once`: every worker's would be the same bytes); tests only read it."""
    from tests.conftest import built_once

    root = built_once(tmp_path_factory, "sgp-dataset", lambda tmp: build_sgp_dataset(tmp / "small", SMALL, workers=1))
    return SgpDataset.load(root / "small", verify_images=True)
