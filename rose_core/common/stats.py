"""The statistics every benchmark and analysis shares: the Wilson interval and each solver's seeded stream."""
from __future__ import annotations

import hashlib

import numpy as np


def wilson(k: int, n: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return (np.nan, np.nan)
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return 100 * lo, 100 * hi


def solver_rng(seed: int, solver: str) -> np.random.Generator:
    """A solver's own bootstrap stream, from (base seed, solver identity) only: importing or removing another
    run never moves this solver's intervals, and the dashboards and `report` draw the same resamples."""
    key = int.from_bytes(hashlib.sha256(solver.encode()).digest()[:8], "big")
    return np.random.default_rng([seed, key])
