"""The one CSV encoder of the project, and the bytes of a table as CSV, Parquet or a harness's TSV.

Every CSV the project writes goes through `frame_bytes(df, "csv")`. Cells hold text that participants and
models control (a Prolific id, event values, a model's response), and a spreadsheet opening a CSV treats a
cell that begins with `=`, `+`, `-` or `@` (or a tab or carriage return) as a formula: `=HYPERLINK(…)` would
become a live link. Such text cells are written with a leading apostrophe (`'=HYPERLINK(…)`), which
spreadsheets show as text. Only text is touched: numeric columns, and text that is exactly a number
(`-3`, a count typed by a participant), stay as they are. Times are ISO 8601 UTC (`…Z`) in columns whose
name ends in `_utc`; durations are numbers in columns whose name states the unit (`_ms`).

Parquet keeps the raw text (it is read by programs, not opened as formulas) with times as UTC timestamps.
"""
from __future__ import annotations

import io
import re
import unicodedata
from typing import Literal

import pandas as pd

Format = Literal["csv", "parquet"]

_FORMULA_FIRST = frozenset("=+-@\u2212")  # after NFKC: full-width ＝＋－＠ and small forms are these
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def formula_like(text: str) -> bool:
    """Whether a spreadsheet could read this text as a formula: it begins with = + - @ (also full-width or
    after leading spaces), or with a tab or carriage return. Text that is exactly a number written in ASCII
    digits (`-3`, `+4`, `-3.5e2`) is not."""
    if not text:
        return False
    if text[0] in "\t\r":
        return True
    s = unicodedata.normalize("NFKC", text).lstrip()
    return s[:1] in _FORMULA_FIRST and not _NUMBER.fullmatch(text.strip())  # a number as written in ASCII


def neutralise(text: str) -> str:
    """Text a spreadsheet shows as text: a formula-like cell gets a leading apostrophe."""
    return "'" + text if formula_like(text) else text


def _neutral_column(col: pd.Series) -> pd.Series:
    return col.astype(object).map(lambda v: neutralise(v) if isinstance(v, str) else v)


def _iso_utc(col: pd.Series) -> pd.Series:
    if getattr(col.dt, "tz", None) is not None:
        return col.dt.tz_convert("UTC").dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return col.dt.strftime("%Y-%m-%dT%H:%M:%S.%f")  # a time without a zone stays without one


def safe_csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The frame as the CSV shows it: text cells and column names neutralised, times as ISO 8601."""
    out = df.copy()
    for name in out.columns:
        col = out[name]
        if pd.api.types.is_datetime64_any_dtype(col):
            out[name] = _iso_utc(col)
        elif not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
            out[name] = _neutral_column(col)
    out.columns = [neutralise(c) if isinstance(c, str) else c for c in out.columns]
    return out


def frame_bytes(df: pd.DataFrame, fmt: Format) -> bytes:
    """The table as CSV (safe to open in a spreadsheet, see the module docstring) or Parquet."""
    buf = io.BytesIO()
    if fmt == "csv":
        # RFC 4180 line ends: the csv module then quotes every cell holding a CR or LF (with "\n" a lone CR
        # inside a cell went out unquoted and split the row for every reader).
        safe_csv_frame(df).to_csv(buf, index=False, lineterminator="\r\n")
    elif fmt == "parquet":
        df.to_parquet(buf, index=False)
    else:
        raise ValueError(f"unknown format {fmt!r}: expected csv or parquet")
    return buf.getvalue()


def harness_tsv_bytes(df: pd.DataFrame) -> bytes:
    """A harness's input table (VLMEvalKit's TSV), written verbatim: an apostrophe would change the prompt the
    model reads. Its text is ours (prompts, gold answers, base64 PNGs), never a participant's, and this refuses
    to write a cell a spreadsheet could read as a formula rather than let one through."""
    for name in df.columns:
        col = df[name]
        if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            continue
        bad = col.map(lambda v: isinstance(v, str) and formula_like(v))
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            raise ValueError(f"harness table column {name!r}, row {row + 1}: {str(col.iloc[row])[:40]!r} would open "
                             "as a spreadsheet formula")
    buf = io.BytesIO()
    df.to_csv(buf, sep="\t", index=False)
    return buf.getvalue()
