"""The one home for how numbers are shown: dashboard tables, `report`'s files, the command line.

Why one place: a rate printed 98.44 on one page and 98.4 on another, an interval whose upper bound a narrow
column cuts off, or a cell reading "None"/"nan" reads as a different number or as data. Every displayed
figure goes through these functions, and a missing value is always shown as `MISSING`, never as empty text.

Conventions: rates are percentages with one decimal; intervals in brackets, both bounds always
("[97.1, 99.2]"); p-values "< 0.001" below one in a thousand, otherwise three decimals; counts with thousands
separators; agreement statistics (κ, α, r) three decimals.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Literal, Mapping

import numpy as np
import pandas as pd

MISSING = "–"          # no value: nothing to compute it from (no responses, no pairs, a skipped κ)
P_FLOOR = 0.001         # p-values below this are shown as "< 0.001"

Kind = Literal["rate", "p", "count", "stat", "seconds", "number", "text", "flag"]
KINDS: tuple[Kind, ...] = ("rate", "p", "count", "stat", "seconds", "number", "text", "flag")
DECIMALS: dict[str, int] = {"rate": 1, "stat": 3, "seconds": 1, "number": 1}


def is_missing(v: Any) -> bool:
    """None, NaN, pd.NA / NaT, and empty text count as missing (all shown as MISSING)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, str):
        return v.strip() == "" or v in ("None", "nan", "NaN", "<NA>")
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):  # lists, arrays: a value, not a missing one
        return False


def _fixed(v: float, decimals: int) -> str:
    """Fixed decimals, never "-0.0" (a rounded zero has no sign)."""
    s = f"{float(v):.{decimals}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s


def _finite(v: Any, what: str) -> float:
    f = float(v)
    if math.isinf(f):
        raise ValueError(f"{what} is {f}: not a finite number")
    return f


def fmt_number(v: Any, decimals: int = DECIMALS["number"]) -> str:
    """Any other quantity (a median of counts, a size): one decimal."""
    if is_missing(v):
        return MISSING
    return _fixed(_finite(v, "number"), decimals)


def fmt_rate(v: Any, decimals: int = DECIMALS["rate"]) -> str:
    """A percentage (already 0–100, or a difference of two) with one decimal: 98.4."""
    if is_missing(v):
        return MISSING
    return _fixed(_finite(v, "rate"), decimals)


def fmt_interval(lo: Any, hi: Any, decimals: int = DECIMALS["rate"]) -> str:
    """"[97.1, 99.2]": both bounds or none (MISSING); a half-known interval is refused, not half-shown."""
    if is_missing(lo) and is_missing(hi):
        return MISSING
    if is_missing(lo) or is_missing(hi):
        raise ValueError(f"interval with one bound missing: lo={lo!r}, hi={hi!r}")
    lo_f, hi_f = _finite(lo, "interval bound"), _finite(hi, "interval bound")
    if lo_f > hi_f:
        raise ValueError(f"interval bounds out of order: lo={lo_f} > hi={hi_f}")
    return f"[{_fixed(lo_f, decimals)}, {_fixed(hi_f, decimals)}]"


def fmt_rate_ci(v: Any, lo: Any, hi: Any, decimals: int = DECIMALS["rate"]) -> str:
    """"98.4 [97.1, 99.2]"; the value alone when there is no interval (published rows, a single unit)."""
    if is_missing(v):
        return MISSING
    if is_missing(lo) and is_missing(hi):
        return fmt_rate(v, decimals)
    return f"{fmt_rate(v, decimals)} {fmt_interval(lo, hi, decimals)}"


def fmt_p(p: Any) -> str:
    """"< 0.001" below one in a thousand, otherwise three decimals; outside [0, 1] is a bug and refused."""
    if is_missing(p):
        return MISSING
    f = _finite(p, "p-value")
    if not 0.0 <= f <= 1.0:
        raise ValueError(f"p-value {f} is outside [0, 1]")
    return f"< {P_FLOOR:.3f}" if f < P_FLOOR else f"{f:.3f}"


def fmt_count(n: Any) -> str:
    """Whole numbers with thousands separators: 12,345. A fractional count is refused."""
    if is_missing(n):
        return MISSING
    f = _finite(n, "count")
    if f != int(f):
        raise ValueError(f"count {f} is not a whole number")
    return f"{int(f):,}"


def fmt_stat(v: Any, decimals: int = DECIMALS["stat"]) -> str:
    """Agreement statistics (κ, α, r, consistency): three decimals, 0.812."""
    if is_missing(v):
        return MISSING
    return _fixed(_finite(v, "statistic"), decimals)


def fmt_seconds(v: Any, decimals: int = DECIMALS["seconds"]) -> str:
    if is_missing(v):
        return MISSING
    return _fixed(_finite(v, "seconds"), decimals)


def fmt_text(v: Any) -> str:
    """A label; a whole float (a parameter value pandas stored as 4.0) reads as 4."""
    if is_missing(v):
        return MISSING
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def fmt_flag(v: Any) -> str:
    if is_missing(v):
        return MISSING
    return "yes" if bool(v) else "no"


def human_label(study_names: Iterable[str]) -> str:
    """The pooled human row, named by the studies its participants come from: "Human (pilot)",
    "Human (pilot; main)"; plain "Human" when no study contributes."""
    names = list(dict.fromkeys(n for n in study_names if n))
    return f"Human ({'; '.join(names)})" if names else "Human"


FORMATTERS = {"rate": fmt_rate, "p": fmt_p, "count": fmt_count, "stat": fmt_stat, "seconds": fmt_seconds,
              "number": fmt_number, "text": fmt_text, "flag": fmt_flag}


def fmt(v: Any, kind: Kind) -> str:
    """One value in the given kind's format."""
    try:
        return FORMATTERS[kind](v)
    except KeyError:
        raise ValueError(f"unknown format kind {kind!r}: expected one of {', '.join(KINDS)}") from None


def _formatter(kind: Kind) -> Callable[[Any], str]:
    """`kind`'s formatter, or `fmt`'s refusal of a kind it does not know."""
    try:
        return FORMATTERS[kind]
    except KeyError:
        raise ValueError(f"unknown format kind {kind!r}: expected one of {', '.join(KINDS)}") from None


def guess_kind(name: str, s: pd.Series) -> Kind:
    """A column's kind from its name and dtype, for tables without an explicit spec: p-values by their
    "p(" / "p-value" names, integer columns as counts, other numbers as statistics, the rest as text. Pages name
    rates and counts that pandas stores as floats explicitly."""
    low = name.lower()
    if low.startswith("p(") or low in ("p", "p-value", "p value"):
        return "p"
    if pd.api.types.is_bool_dtype(s):
        return "flag"
    if pd.api.types.is_integer_dtype(s):
        return "count"
    if pd.api.types.is_float_dtype(s):
        return "stat"
    return "text"


def combine_interval(df: pd.DataFrame, metric: str, decimals: int = DECIMALS["rate"]) -> pd.Series:
    """The column `metric` with its `metric lo` / `metric hi` as "value [lo, hi]" strings."""
    lo = df[f"{metric} lo"] if f"{metric} lo" in df else pd.Series(None, index=df.index, dtype=object)
    hi = df[f"{metric} hi"] if f"{metric} hi" in df else pd.Series(None, index=df.index, dtype=object)
    return pd.Series([fmt_rate_ci(v, a, b, decimals) for v, a, b in zip(df[metric], lo, hi)], index=df.index,
                     dtype=object)


def format_frame(df: pd.DataFrame, kinds: Mapping[str, Kind] | None = None,
                 intervals: Iterable[str] = (), drop: Iterable[str] = ()) -> pd.DataFrame:
    """The table as shown: every cell a string in its column's format, no "None"/"nan" anywhere.

    `kinds` names each column's kind (others are guessed by `guess_kind`); each metric in `intervals` is joined
    with its "lo"/"hi" columns into "value [lo, hi]" (rates) and the bound columns dropped; `drop` removes
    columns that are not shown."""
    kinds = dict(kinds or {})
    intervals = list(intervals)
    bounds = {f"{m} {b}" for m in intervals for b in ("lo", "hi")}
    skip = set(drop) | bounds
    out = {}
    for col in df.columns:
        if col in skip:
            continue
        if col in intervals:
            out[col] = combine_interval(df, col)
            continue
        kind = kinds.get(col) or guess_kind(str(col), df[col])
        out[col] = pd.Series(column_texts(df[col], kind), index=df.index, dtype=object)
    return pd.DataFrame(out, index=df.index)


_MISSING_TEXTS = ("None", "nan", "NaN", "<NA>")


def column_texts(values: pd.Series, kind: Kind) -> list[str]:
    """A column's cells in `kind`'s format: `fmt` of each, with the common cells taken without its per-cell checks
    (they cost ~1 µs a cell: a tenth of a second of a rerun of Participants at 2,000 participants): plain text as
    it is, and the numbers of a numeric column by one check of the whole column for infinities."""
    f = _formatter(kind)
    # a list of the column's values first: iterating an Arrow-backed column (pandas 3's text) builds each
    # value through pyarrow, 20 times the cost of the formatting at 5,000 participants
    cells = values.tolist()
    if kind == "text":
        return [v if type(v) is str and v.strip() and v not in _MISSING_TEXTS else f(v) for v in cells]
    if kind in (*DECIMALS, "count") and values.dtype.kind in "fiu" and len(cells):
        numbers = values.to_numpy(dtype=float, na_value=math.nan)
        # else `fmt` names the infinite value, or the fractional count
        if not np.isinf(numbers).any() and (kind != "count" or bool((numbers[~np.isnan(numbers)] % 1 == 0).all())):
            if kind == "count":
                return [MISSING if math.isnan(x) else f"{int(x):,}" for x in numbers.tolist()]
            decimals = DECIMALS[kind]
            return [MISSING if math.isnan(x) else _fixed(x, decimals) for x in numbers.tolist()]
    return [f(v) for v in cells]


def json_rows(table: pd.DataFrame) -> list[dict]:
    """A table's rows for JSON: NaN and a missing integer (pd.NA: a published row's n) as null, never a number;
    integers as ints."""
    def plain(v: Any) -> Any:
        if v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            return None
        return int(v) if hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iu" else v

    return [{k: plain(v) for k, v in r.items()} for r in table.to_dict(orient="records")]
