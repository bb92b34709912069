"""The statistics every benchmark and analysis shares: n (who and how much a number rests on), the Wilson
interval, each solver's seeded stream, and the cluster bootstrap that gives every interval of a row.

Why one module: a table that counts its n one way and another table another, or a row whose template cells
assume independent answers while its Avg resamples people, reads as two studies. Every table takes its n from
`sample_size` and its intervals from `resampled` / `interval`."""
from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from typing import Literal

import numpy as np

N_COLUMNS = ("participants", "scenes", "responses")   # every table's n, integers (Int64: none for a published row)
Unit = Literal["participants", "scenes"]


def sample_size(kind: str, participant_ids: np.ndarray, scene_ids: np.ndarray) -> dict[str, int | None]:
    """A solver's n, the one definition every table uses: distinct participants (humans only: None for a model
    or agent, which has no participants), distinct scenes and responses, as Python ints."""
    import pandas as pd

    participants = None if kind != "human" else int(len(pd.unique(participant_ids)))
    return {"participants": participants, "scenes": int(len(pd.unique(scene_ids))), "responses": int(len(scene_ids))}


def unit_of(kind: str) -> Unit:
    """What a solver's answers cluster by, and so what its bootstrap resamples: people for humans, scenes for
    models and agents (whose answers to one scene's templates share that scene)."""
    return "participants" if kind == "human" else "scenes"


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


def unit_codes(units: np.ndarray) -> tuple[np.ndarray, int]:
    """Units coded in sorted order (the resamples draw these codes: another order would move every interval)."""
    import pandas as pd

    codes, uniques = pd.factorize(units, sort=True)
    return codes.astype(np.int64), len(uniques)


def unit_sums(codes: np.ndarray, n_units: int, columns: np.ndarray, width: int, values: np.ndarray) -> np.ndarray:
    """Per unit (row) and column, the sum of `values` (n_units x width): the only thing a resample of whole units
    needs of the answers."""
    flat = codes * width + columns
    return np.bincount(flat, weights=values.astype(float), minlength=n_units * width).reshape(n_units, width)


def resample_weights(n_units: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """How often each unit is drawn in each of n_boot resamples of n_units units with replacement (n_boot x
    n_units, read-only, the smallest unsigned type that holds the counts): a resample's sums are then one matrix
    product, not a loop over resamples. Kept by the generator's state (`_kept`)."""
    def draw() -> np.ndarray:
        draws = rng.integers(0, n_units, size=(n_boot, n_units))
        draws += (np.arange(n_boot) * n_units)[:, None]          # in place: each resample's own range of counts
        counts = np.bincount(draws.ravel(), minlength=n_boot * n_units).reshape(n_boot, n_units)
        return counts.astype(np.min_scalar_type(int(counts.max(initial=0))))

    return _kept(("weights", n_units, n_boot), rng, draw)


def resampled_sums(weights: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Each resample's column sums (n_boot x width). Whole-number sums below 2**24 over all units are exact in
    single precision whatever order the product adds them (half the memory and time); otherwise double."""
    if bool((sums == np.rint(sums)).all()) and bool((sums >= 0).all()) and \
            float(sums.max(initial=0)) * weights.shape[1] < 2 ** 24:
        return (weights.astype(np.float32) @ sums.astype(np.float32)).astype(np.float64)
    return weights.astype(float) @ sums


def resampled(sums: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Each of n_boot resamples of the units (the rows of `sums`, from `unit_sums`): its column sums (n_boot x
    width, read-only), `resampled_sums` of `resample_weights`. Kept by the generator's state and the sums' bytes
    (`_kept`): a solver's main row, gap and human − model resample the same sums."""
    sums = np.ascontiguousarray(sums)
    digest = hashlib.blake2b(sums.tobytes(), digest_size=16).digest()
    return _kept(("sums", n_boot, sums.shape, sums.dtype.str, digest), rng,
                 lambda: resampled_sums(resample_weights(sums.shape[0], n_boot, rng), sums))


def _kept(what: tuple, rng: np.random.Generator, make) -> np.ndarray:
    """`make()`, which draws from `rng`, or the array it made last time from the same state of `rng`: the
    generator is then moved on as drawing would have moved it.

    Why: a solver's analyses (main row, gap, bridges, failure kinds, human − model) each start its stream afresh
    and draw the same weights; at 1,512 scenes and 1,000 resamples a draw is 17 ms, five per solver, a third of a
    new database's Results page. Kept arrays are read-only, the least recently used dropped beyond
    `KEPT_BYTES`; only PCG64 streams (`solver_rng`'s), whose whole state is a few integers."""
    state = rng.bit_generator.state
    if state["bit_generator"] != "PCG64":
        return make()
    key = (*what, state["state"]["state"], state["state"]["inc"], state["has_uint32"], state["uinteger"])
    with _KEPT_LOCK:
        got = _KEPT.get(key)
        if got is not None:
            _KEPT.move_to_end(key)
    if got is not None:
        rng.bit_generator.state = got[1]
        return got[0]
    value = make()
    value.setflags(write=False)
    with _KEPT_LOCK:
        _KEPT[key] = (value, rng.bit_generator.state)
        while sum(v.nbytes for v, _ in _KEPT.values()) > KEPT_BYTES:
            _KEPT.popitem(last=False)
    return value


KEPT_BYTES = 64 * 2 ** 20   # resample weights and sums kept (`_kept`): ~40 solvers of 1,512 scenes
_KEPT: OrderedDict[tuple, tuple[np.ndarray, dict]] = OrderedDict()
_KEPT_LOCK = threading.Lock()


def expanded_levels(n_units: int) -> tuple[float, float]:
    """The percentiles (%) of an expanded percentile interval at 95 % (Hesterberg 2015, "What teachers should know
    about the bootstrap", The American Statistician 69:371): the plain percentile interval is too narrow with few
    units, by about sqrt((n − 1) / n) and by using z for t; the expanded one reads the resamples at
    Φ(−sqrt(n / (n − 1)) · t(0.975, n − 1)) instead of 2.5 %. 30 units: 1.88 % and 98.12 %."""
    if n_units < 2:
        return (np.nan, np.nan)
    return _expanded_levels(n_units)


@functools.lru_cache(maxsize=4096)
def _expanded_levels(n_units: int) -> tuple[float, float]:
    from statistics import NormalDist

    from scipy.special import stdtrit   # Student's t quantile (scipy.stats would cost ~2 s to import cold)

    tail = NormalDist().cdf(-float(np.sqrt(n_units / (n_units - 1))) * float(stdtrit(n_units - 1, 0.975)))
    return 100 * tail, 100 * (1 - tail)


def percentile_bounds(samples: np.ndarray, n_units: int, min_share: float = 0.5) -> np.ndarray:
    """95 % expanded percentile bounds (`expanded_levels`) per column of resampled statistics (n_boot x k) ->
    (k, 2). A resample without a statistic (NaN: no answer to one of its templates was drawn) is left out; a
    column with fewer than `min_share` of the resamples defined gets no interval (NaN)."""
    samples = np.asarray(samples, dtype=float)
    if samples.ndim == 1:
        samples = samples[:, None]
    out = np.full((samples.shape[1], 2), np.nan)
    if n_units < 2:
        return out
    levels = expanded_levels(n_units)
    ok = ~np.isnan(samples)
    for j in range(samples.shape[1]):
        col = samples[ok[:, j], j]
        if len(col) and len(col) >= min_share * len(samples):
            out[j] = np.percentile(col, levels)
    return out


def interval(samples: np.ndarray, value: float | None, n_units: int,
             parts: list[float | None] | None = None) -> tuple[float, float]:
    """The 95 % interval of one rate or mean of rates (%) from its resamples: the expanded percentile bootstrap
    over units (`percentile_bounds`), except when every resample repeats the estimate and it is 0 or 100 (every answer passed, or every one
    failed). The bootstrap's interval is then the point itself, a certainty no finite sample gives; the interval is
    Wilson's with one observation per unit instead (no spread between units was seen, so the units are what the
    rate rests on). A mean of rates (`parts`: its rates) each at 0 or 100 gets the mean of their such intervals. No
    interval (NaN) without a value or with fewer than two units."""
    if value is None or np.isnan(value) or n_units < 2:
        return (np.nan, np.nan)
    s = np.asarray(samples, dtype=float)
    s = s[~np.isnan(s)]
    if len(s) and np.ptp(s) == 0 and value in (0.0, 100.0):
        return wilson(n_units if value == 100.0 else 0, n_units)
    if len(s) and np.ptp(s) == 0 and parts and all(p in (0.0, 100.0) for p in parts):
        bounds = np.array([wilson(n_units if p == 100.0 else 0, n_units) for p in parts])
        return float(bounds[:, 0].mean()), float(bounds[:, 1].mean())
    lo, hi = percentile_bounds(samples, n_units)[0]
    return float(lo), float(hi)


def difference_interval(samples: np.ndarray, a: float | None, b: float | None, units_a: int,
                        units_b: int) -> tuple[float, float]:
    """The 95 % interval of a − b (percentage points) from resamples of the difference: expanded percentile bootstrap (the smaller side's units); when
    both sides sit at 0 or 100 with no spread, Newcombe's (1998) hybrid score interval from each side's
    `interval` (the bootstrap's would be a point)."""
    if a is None or b is None or np.isnan(a) or np.isnan(b) or units_a < 2 or units_b < 2:
        return (np.nan, np.nan)
    s = np.asarray(samples, dtype=float)
    s = s[~np.isnan(s)]
    if len(s) and np.ptp(s) == 0 and a in (0.0, 100.0) and b in (0.0, 100.0):
        (la, ua), (lb, ub) = interval(np.array([a]), a, units_a), interval(np.array([b]), b, units_b)
        d = a - b
        return (d - float(np.hypot(a - la, ub - b)), d + float(np.hypot(ua - a, b - lb)))
    lo, hi = percentile_bounds(samples, min(units_a, units_b))[0]
    return float(lo), float(hi)
