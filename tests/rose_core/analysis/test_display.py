"""The one number format: rates, intervals, p-values, counts, statistics, and no "None"/"nan" in any cell."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from rose_core.analysis.display import (
    MISSING, column_texts, combine_interval, fmt, fmt_count, fmt_interval, fmt_p, fmt_rate, fmt_rate_ci, fmt_seconds, fmt_stat,
    fmt_text, format_frame, guess_kind, is_missing,
)


@pytest.mark.parametrize("v", [None, float("nan"), np.nan, pd.NA, pd.NaT, "", "None", "nan", np.float64("nan")])
def test_missing_values_are_one_explicit_mark(v):
    assert is_missing(v)
    for kind in ("rate", "p", "count", "stat", "seconds", "text", "flag"):
        assert fmt(v, kind) == MISSING


def test_rates_have_one_decimal_and_no_negative_zero():
    assert fmt_rate(98.44) == "98.4"
    assert fmt_rate(98.46) == "98.5"
    assert fmt_rate(100) == "100.0"
    assert fmt_rate(0) == "0.0"
    assert fmt_rate(-0.04) == "0.0"       # a rounded zero has no sign
    assert fmt_rate(-3.25) == "-3.2"      # a gap may be negative (binary 3.25 is exact: half to even)
    assert fmt_rate(np.float32(12.34)) == "12.3"


def test_intervals_keep_both_bounds_in_brackets():
    assert fmt_interval(97.14, 99.25) == "[97.1, 99.2]"
    assert fmt_interval(0.0, 100.0) == "[0.0, 100.0]"
    assert fmt_interval(None, np.nan) == MISSING
    assert fmt_rate_ci(98.44, 97.06, 99.31) == "98.4 [97.1, 99.3]"
    assert fmt_rate_ci(98.8, None, None) == "98.8"          # published: no interval, value alone
    assert fmt_rate_ci(None, 1.0, 2.0) == MISSING
    with pytest.raises(ValueError, match="one bound missing"):
        fmt_interval(1.0, None)
    with pytest.raises(ValueError, match="out of order"):
        fmt_interval(5.0, 4.0)


def test_p_values():
    assert fmt_p(0.0) == "< 0.001"
    assert fmt_p(0.000999) == "< 0.001"
    assert fmt_p(0.001) == "0.001"
    assert fmt_p(0.0314) == "0.031"
    assert fmt_p(1.0) == "1.000"
    assert fmt_p(None) == MISSING
    for bad in (-0.01, 1.2, math.inf):
        with pytest.raises(ValueError):
            fmt_p(bad)


def test_counts_stats_seconds_text():
    assert fmt_count(1234567) == "1,234,567"
    assert fmt_count(12.0) == "12"
    with pytest.raises(ValueError, match="not a whole number"):
        fmt_count(2.5)
    assert fmt_stat(0.81234) == "0.812"
    assert fmt_stat(-0.0001) == "0.000"
    assert fmt_seconds(3.456) == "3.5"
    assert fmt_text("Human") == "Human"
    with pytest.raises(ValueError, match="unknown format kind"):
        fmt(1, "percent")  # type: ignore[arg-type]


def test_guess_kind_by_name_and_dtype():
    assert guess_kind("p(G-Cnt vs G-Clk)", pd.Series([0.5])) == "p"
    assert guess_kind("pairs", pd.Series([3, 4])) == "count"
    assert guess_kind("κ", pd.Series([0.1])) == "stat"
    assert guess_kind("solver", pd.Series(["a"])) == "text"
    assert guess_kind("ok", pd.Series([True])) == "flag"


def test_format_frame_joins_intervals_and_leaves_no_none():
    df = pd.DataFrame({"solver": ["Human", "GPT (published)", None], "Avg": [98.44, 98.8, np.nan],
                       "Avg lo": [97.06, np.nan, np.nan], "Avg hi": [99.31, np.nan, np.nan],
                       "scenes": [12.0, np.nan, 3.0], "p(a vs b)": [0.0002, None, 0.5],
                       "κ": [0.41234, np.nan, -0.2], "hidden": [1, 2, 3]})
    out = format_frame(df, {"scenes": "count"}, intervals=["Avg"], drop=["hidden"])
    assert list(out.columns) == ["solver", "Avg", "scenes", "p(a vs b)", "κ"]
    assert out.to_dict(orient="list") == {
        "solver": ["Human", "GPT (published)", MISSING],
        "Avg": ["98.4 [97.1, 99.3]", "98.8", MISSING],
        "scenes": ["12", MISSING, "3"],
        "p(a vs b)": ["< 0.001", MISSING, "0.500"],
        "κ": ["0.412", MISSING, "-0.200"],
    }
    text = out.to_csv(index=False)
    assert "None" not in text and "nan" not in text.lower()


def test_combine_interval_without_bound_columns_is_the_value():
    df = pd.DataFrame({"G-Cnt": [50.0, None]})
    assert combine_interval(df, "G-Cnt").tolist() == ["50.0", MISSING]


_COLUMNS = {
    "floats": pd.Series([98.44, -0.04, -0.06, 0.0, np.nan, 1e9, 2.5e-7, -12.349]),
    "floats as Float64": pd.Series([1.25, None, -0.01, 7.0], dtype="Float64"),
    "ints": pd.Series([0, 7, 1234567, -3, 2 ** 53 + 1]),
    "ints as Int64": pd.Series([5, None, 12000], dtype="Int64"),
    "whole floats": pd.Series([4.0, np.nan, 1e6]),
    "text": pd.Series(["a", "", "  ", "nan", "None", "<NA>", "NaN", None, np.nan, 4.0, 3, "x y"], dtype=object),
    "text as Arrow": pd.Series(["a", None, "b"], dtype="str"),
    "flags": pd.Series([True, False, True]),
    "empty": pd.Series([], dtype=float),
}


@pytest.mark.parametrize("name", list(_COLUMNS))
@pytest.mark.parametrize("kind", ["rate", "count", "stat", "seconds", "number", "text", "flag", "p"])
def test_a_column_reads_as_each_of_its_cells_does(name, kind):
    """`column_texts` takes the common cells without `fmt`'s per-cell checks: the same strings as `fmt` of each
    cell, and the same refusal (an infinite number, a fractional count, a p outside [0, 1])."""
    values = _COLUMNS[name]
    try:
        expected = [fmt(v, kind) for v in values.tolist()]
    except ValueError as e:
        with pytest.raises(ValueError, match=re.escape(str(e))):
            column_texts(values, kind)
        return
    assert column_texts(values, kind) == expected


@pytest.mark.parametrize("kind", ["rate", "count", "stat"])
def test_an_infinite_number_in_a_numeric_column_is_refused_by_name(kind):
    with pytest.raises(ValueError, match="is inf: not a finite number"):
        column_texts(pd.Series([1.0, np.inf]), kind)
    with pytest.raises(ValueError, match="count 2.5 is not a whole number"):
        column_texts(pd.Series([1.0, 2.5]), "count")


def test_an_unknown_kind_is_refused_as_fmt_refuses_it():
    """A column of a kind no formatter has is refused with `fmt`'s message (naming the kinds), not a bare KeyError;
    an empty column too."""
    with pytest.raises(ValueError, match=re.escape("unknown format kind 'bogus': expected one of rate, p, count")):
        fmt(1, "bogus")
    for values in (pd.Series([1.0]), pd.Series([], dtype=object)):
        with pytest.raises(ValueError, match=re.escape("unknown format kind 'bogus': expected one of rate, p, count")):
            column_texts(values, "bogus")
    with pytest.raises(ValueError, match="unknown format kind 'bogus'"):
        format_frame(pd.DataFrame({"a": [1]}), kinds={"a": "bogus"})


def _adversarial_columns() -> dict[str, pd.Series]:
    import decimal

    import pyarrow as pa

    return {
        "Int64 beyond 2**53": pd.Series([1, None, -3, 0, 2 ** 53 + 1], dtype="Int64"),
        "Float64 with -0.0": pd.Series([1.25, None, -0.04, -0.0, 0.05, 2.0], dtype="Float64"),
        "boolean": pd.Series([True, None, False], dtype="boolean"),
        "int64[pyarrow]": pd.Series([1, None, 2 ** 62, -5], dtype="int64[pyarrow]"),
        "int64[pyarrow] beyond 2**53": pd.Series([2 ** 53 + 1, 2 ** 63 - 1], dtype="int64[pyarrow]"),
        "double[pyarrow] null and NaN": pd.Series([1.5, None, float("nan"), -0.0, -0.04], dtype="double[pyarrow]"),
        "double[pyarrow] inf": pd.Series([1.5, float("inf")], dtype="double[pyarrow]"),
        "uint64[pyarrow]": pd.Series([2 ** 64 - 1, None], dtype="uint64[pyarrow]"),
        "string[pyarrow]": pd.Series(["a", None, " ", "nan", "None", "<NA>", "", "x "], dtype="string[pyarrow]"),
        "string": pd.Series(["a", None, " ", "NaN", "\t"], dtype="string"),
        "decimal[pyarrow]": pd.Series([decimal.Decimal("1.25"), None], dtype=pd.ArrowDtype(pa.decimal128(5, 2))),
        "uint64 beyond 2**63": pd.Series(np.array([2 ** 64 - 1, 2 ** 63, 0, 7], dtype=np.uint64)),
        "rounding to -0": pd.Series([0.04, -0.04, -0.0, -0.0004, 1e300, 2.675, np.nan, 1e16 + 1]),
        "float32": pd.Series(np.array([0.1, -0.05, 2.5, np.nan], dtype=np.float32)),
        "int64 limits": pd.Series([2 ** 63 - 1, -2 ** 63]),
        "mixed objects": pd.Series([None, np.nan, pd.NA, pd.NaT, "x", " ", "", 4.0, 4.5, np.float64(2.0),
                                    np.int64(3), decimal.Decimal("1.25"), np.str_("s"), True], dtype=object),
        "numpy scalars": pd.Series([np.float64(0.04), np.int64(5), 1, 2.0, None], dtype=object),
        "categorical text": pd.Series(["a", "b", None, "a"], dtype="category"),
        "categorical numbers": pd.Series([1.0, 2.5, None], dtype="category"),
        "datetimes": pd.Series(pd.to_datetime(["2024-01-01", None])),
        "timedeltas": pd.Series(pd.to_timedelta([1, None], unit="s")),
        "sparse": pd.Series(pd.arrays.SparseArray([0.0, 1.5, np.nan, 0.0])),
        "all missing Int64": pd.Series([None, None], dtype="Int64"),
    }


def _outcome(make) -> tuple:
    try:
        return ("texts", make())
    except Exception as e:  # noqa: BLE001  the refusal itself is compared
        return ("refused", type(e), str(e))


@pytest.mark.parametrize("kind", ["rate", "count", "stat", "seconds", "number", "text", "flag", "p"])
def test_adversarial_columns_read_as_each_of_their_cells_does(kind):
    """Nullable, Arrow-backed, unsigned beyond 2**63, categorical, datetime and object columns (NaN, None, pd.NA,
    NaT, Decimal, numpy scalars): `column_texts` gives `fmt` of each cell, or refuses the column as `fmt` refuses
    its first such cell (the same exception, the same message)."""
    for name, values in _adversarial_columns().items():
        expected = _outcome(lambda: [fmt(v, kind) for v in values.tolist()])
        assert _outcome(lambda: column_texts(values, kind)) == expected, name
