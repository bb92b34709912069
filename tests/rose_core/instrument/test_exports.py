"""The tables experimenters export, through the one CSV encoder: participant- and model-controlled text neutralised,
times in UTC, a study's download holding only its rows, the row counts the Studies page shows."""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pandas as pd
import pytest

from rose_core.instrument.exports import export_table, table_frame, table_rows
from rose_core.common.csv_safety import frame_bytes
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.runs.importer import import_run
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from tests.command_line import run_cli
from tests.participants import new_session, right_answer, submit_payload
from tests.rose_core.common.test_csv_safety import cells, opens_as_formula


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
    from rose_core.instrument.episode_session import EpisodeSession, create_sgp_study
    from rose_core.instrument.joining import join
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
            r = run_cli("export-table", "--db", store.location, "--table", table, "--format", fmt, "--study",
                        study.study_id, "--out", str(out))
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


def test_participant_flags_are_exported_per_study_with_utc_times(store, small_dataset):
    """participant_flags was shown nowhere: a takeover attempt and a late answer are now rows of their own export
    (formula-like details neutralised like every other cell)."""
    from rose_core.instrument.joining import IdentityMismatch
    from rose_core.instrument.joining import join

    clock = FakeClock()
    studies = [create_study(store, small_dataset, StudyConfig(
        name=f"flags{k}", split="all", templates=["T1"], practice_items=0, attention_every=0,
        items_per_participant=1, seed=3, time_limit_minutes=1), ids=SequentialIds(f"fl{k}"), clock=clock)
        for k in range(2)]
    s = new_session(store, small_dataset, studies[0], "PPID", clock=clock)
    screen = s.screen()
    with pytest.raises(IdentityMismatch):
        join(store, studies[0], "PPID", "prolific", "OTHER", "=cmd|' /C calc'!A0")
    clock.advance(61)
    s.submit(screen, submit_payload(screen, *right_answer(screen)))            # late: refused and flagged
    df = table_frame(store, "participant_flags", studies[0].study_id)
    assert sorted(df["kind"]) == ["identity_mismatch", "late_answer"]
    assert set(df.columns) == {"study_id", "participant_id", "external_id", "kind", "detail", "flagged_at_utc"}
    assert str(df["flagged_at_utc"].dtype).startswith("datetime64") and "PPID" in set(df["external_id"].dropna())
    assert table_rows(store, "participant_flags", studies[0].study_id) == 2
    assert table_rows(store, "participant_flags", studies[1].study_id) == 0
    assert not any(opens_as_formula(c) for row in cells(frame_bytes(df, "csv")) for c in row)
