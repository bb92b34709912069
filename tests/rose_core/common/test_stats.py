"""The resample weights and sums a solver's analyses share (`stats.resample_weights`, `stats.resampled`)."""
from __future__ import annotations

import numpy as np
import pytest

from rose_core.common import stats
from rose_core.common.stats import resample_weights, resampled, resampled_sums, solver_rng


def _drawn(n_units: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """The weights as drawing gives them, nothing kept."""
    draws = rng.integers(0, n_units, size=(n_boot, n_units))
    return np.array([np.bincount(row, minlength=n_units) for row in draws])


@pytest.fixture(autouse=True)
def nothing_kept():
    stats._KEPT.clear()
    yield
    stats._KEPT.clear()


def test_a_repeated_draw_gives_the_same_weights_and_moves_the_stream_on_as_drawing_would():
    first = resample_weights(37, 50, solver_rng(0, "model a"))
    again = solver_rng(0, "model a")
    assert np.array_equal(resample_weights(37, 50, again), first)
    assert len(stats._KEPT) == 1                    # the repeat was the kept draw, not a second one
    fresh = solver_rng(0, "model a")
    assert np.array_equal(_drawn(37, 50, fresh), first)
    # the generator stands where drawing would have left it: its next numbers are the fresh stream's
    assert np.array_equal(again.integers(0, 1000, 20), fresh.integers(0, 1000, 20))


def test_weights_are_drawn_anew_for_another_stream_size_or_count():
    a = resample_weights(37, 50, solver_rng(0, "model a"))
    for n_units, n_boot, name in [(37, 50, "model b"), (38, 50, "model a"), (37, 51, "model a")]:
        got = resample_weights(n_units, n_boot, solver_rng(0, name))
        assert np.array_equal(got, _drawn(n_units, n_boot, solver_rng(0, name)))
        assert got.shape != a.shape or not np.array_equal(got, a)
    # a generator already moved on draws from where it stands
    rng = solver_rng(0, "model a")
    rng.integers(0, 10)
    assert not np.array_equal(resample_weights(37, 50, rng), a)


def test_kept_weights_are_read_only_and_counted_exactly_in_a_small_type():
    w = resample_weights(300, 40, solver_rng(1, "s"))
    assert not w.flags.writeable
    with pytest.raises(ValueError):
        w[0, 0] = 7
    assert w.dtype == np.uint8 and (w.sum(axis=1) == 300).all()
    one = resample_weights(1, 5, solver_rng(1, "s"))        # every draw is the one unit
    assert one.tolist() == [[1]] * 5 and one.dtype == np.uint8


def test_the_kept_draws_stay_under_their_byte_limit(monkeypatch):
    monkeypatch.setattr(stats, "KEPT_BYTES", 2 * 100 * 50)
    for k in range(5):
        resample_weights(100, 50, solver_rng(0, f"model {k}"))
    assert sum(w.nbytes for w, _ in stats._KEPT.values()) <= 2 * 100 * 50
    assert len(stats._KEPT) == 2                       # the two most recent
    again = solver_rng(0, "model 0")                    # dropped: drawn anew, the same weights
    assert np.array_equal(resample_weights(100, 50, again), _drawn(100, 50, solver_rng(0, "model 0")))


def test_another_kind_of_generator_is_drawn_not_kept():
    rng = np.random.Generator(np.random.MT19937(5))
    got = resample_weights(20, 10, rng)
    assert np.array_equal(got, _drawn(20, 10, np.random.Generator(np.random.MT19937(5))))
    assert not stats._KEPT


def test_resampled_sums_are_the_weights_product_and_kept_for_the_same_sums_and_stream():
    rng = np.random.default_rng(3)
    sums = rng.integers(0, 4, size=(60, 7)).astype(float)
    got = resampled(sums, 30, solver_rng(0, "s"))
    assert np.array_equal(got, resampled_sums(_drawn(60, 30, solver_rng(0, "s")), sums))
    assert not got.flags.writeable
    again = solver_rng(0, "s")
    assert resampled(sums.copy(), 30, again) is got            # the same bytes: kept
    fresh = solver_rng(0, "s")
    _drawn(60, 30, fresh)
    assert np.array_equal(again.integers(0, 1000, 20), fresh.integers(0, 1000, 20))
    other = sums.copy()
    other[5, 2] += 1                                            # one unit's sum changed: computed anew
    assert np.array_equal(resampled(other, 30, solver_rng(0, "s")),
                          resampled_sums(_drawn(60, 30, solver_rng(0, "s")), other))
    # the sums' type is part of what is kept: fractions are summed in double precision, not taken from whole ones
    halves = sums / 2
    assert np.array_equal(resampled(halves, 30, solver_rng(0, "s")), _drawn(60, 30, solver_rng(0, "s")) @ halves)


def test_a_generator_holding_half_a_draw_is_kept_apart_and_left_holding_it():
    """A PCG64 stream that drew one 32-bit number keeps the other half of its 64 bits for the next one (its state's
    `has_uint32`/`uinteger`): a draw from it is another draw, and a kept one leaves it exactly as drawing would."""
    plain = resample_weights(30, 20, solver_rng(0, "a"))
    for _ in range(2):                                     # drawn, then kept
        rng, ref = solver_rng(0, "a"), solver_rng(0, "a")
        rng.integers(0, 5, dtype=np.int32)
        ref.integers(0, 5, dtype=np.int32)
        got = resample_weights(30, 20, rng)
        assert np.array_equal(got, _drawn(30, 20, ref)) and not np.array_equal(got, plain)
        assert rng.bit_generator.state == ref.bit_generator.state
        nxt = rng.integers(0, 2 ** 31, 5, dtype=np.int32)
        assert nxt.tolist() == ref.integers(0, 2 ** 31, 5, dtype=np.int32).tolist()


def test_sums_of_the_same_bytes_in_another_type_shape_or_layout_are_their_own():
    """The kept sums are keyed by their type and shape besides their bytes; a non-contiguous or Fortran-ordered
    array is the array it reads as."""
    base = np.random.default_rng(1).integers(0, 3, size=(40, 6)).astype(float)
    variants = {"f8": base, "i8": base.astype(np.int64), "f4": base.astype(np.float32),
                "fortran": np.asfortranarray(base), "strided": np.repeat(base, 2, axis=1)[:, ::2],
                "same bytes as int": base.view(np.int64), "one column": base[:, 0].copy(),
                "negative zeros": np.where(base == 0, -0.0, base)}
    for name, sums in variants.items():
        for _ in range(2):                                 # computed, then kept
            rng, ref = solver_rng(3, "s"), solver_rng(3, "s")
            got = resampled(sums, 25, rng)
            expected = resampled_sums(_drawn(40, 25, ref), sums)
            assert got.dtype == expected.dtype and np.array_equal(got, expected), name
            assert rng.bit_generator.state == ref.bit_generator.state, name


def test_callers_in_threads_with_streams_in_the_same_state_each_get_their_own_draw():
    """Streamlit runs sessions in threads beside the warm-up: streams in the same state, from many threads at once,
    each get the draw and the stream position drawing gives."""
    import threading

    results, errors = [], []

    def work() -> None:
        try:
            for k in range(30):
                rng, ref = solver_rng(7, f"t{k % 5}"), solver_rng(7, f"t{k % 5}")
                sums = np.full((50, 3), float(k % 5))
                got = resampled(sums, 40, rng)
                results.append(np.array_equal(got, resampled_sums(_drawn(50, 40, ref), sums))
                               and rng.bit_generator.state == ref.bit_generator.state)
        except BaseException as e:  # noqa: BLE001  raised in the test's thread below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(results) == 240 and all(results)
