"""The approvals of a Prolific study: one row per Prolific id, the status from the end state and the analyses'
exclusion rules, in the columns Prolific's review takes; the CLI writes it."""
import csv

from rose_core.analysis.approvals import COLUMNS, review
from rose_core.analysis.selection import ExclusionRules
from rose_core.instrument import manage
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.joining import join
from rose_core.instrument.session import ParticipantSession
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store
from tests.command_line import run_cli
from tests.participants import fail_to_the_end, new_session, run_to_end


def _study(store, ds):
    return create_study(store, ds, StudyConfig(
        name="prolific", split="dev", items_per_participant=4, target_per_instance=3, practice_items=4,
        practice_max_attempts=1, attention_every=2, time_limit_minutes=30, seed=8, completion_code="DONE1",
        screen_out_code="OUT1", require_prolific_id=False),  # an anonymous visitor too: left out of the file
        ids=SequentialIds("ap"), clock=FakeClock())


def _people(store, ds, study):
    clock = FakeClock(1_700_000_000.0)
    ids = SequentialIds("who")
    slow = lambda screen: clock.advance(4.0)  # noqa: E731  server time per item: not "too fast"

    def person(ext, source="prolific"):
        p = join(store, study, ext, source, "STUDY", f"SESSION-{ext}" if source == "prolific" else None, ids=ids,
                 clock=clock)
        s = ParticipantSession(store, ds, study, p.participant_id, clock=clock)
        s.consent()
        s.finish_instructions()
        return s

    run_to_end(person("GOOD"), on_item=slow)
    run_to_end(person("INATTENTIVE"), right=lambda screen: screen.kind != "attention", on_item=slow)
    fail_to_the_end(person("FAILS_PRACTICE"), before=slow)
    s = person("SLOW")
    s.screen()
    clock.advance(31 * 60)
    assert s.screen().reason == "timed_out"
    person("WORKING").screen()
    s = person("HAND")
    run_to_end(s, on_item=slow)
    manage.exclude(store, s.participant_id, "answered while on a phone call (their message)", "JD", clock=clock)
    run_to_end(person("anon-1", source="anonymous"), on_item=slow)
    preview = ParticipantSession(store, ds, study, manage.open_preview(store, study, clock=clock).participant_id,
                                 clock=clock)
    preview.consent()
    preview.finish_instructions()
    run_to_end(preview, on_item=slow)


def test_every_status_with_its_reason(store, small_dataset):
    study = _study(store, small_dataset)
    _people(store, small_dataset, study)
    r = review(store, study)
    assert tuple(r.rows.columns) == COLUMNS and r.left_out == 1        # the anonymous one; the preview is not counted
    rows = r.rows.set_index("participant_id")
    assert list(rows.index) == ["GOOD", "INATTENTIVE", "FAILS_PRACTICE", "SLOW", "WORKING", "HAND"]
    assert dict(rows["status"]) == {"GOOD": "approve", "INATTENTIVE": "reject", "FAILS_PRACTICE": "screened_out",
                                    "SLOW": "return", "WORKING": "still_working", "HAND": "reject"}
    assert rows.loc["INATTENTIVE", "reason"] == "failed 1 of 1 attention checks"
    assert rows.loc["INATTENTIVE", "rejection_category"] == "FAILED_CHECK"
    assert rows.loc["HAND", "reason"] == "excluded by the experimenter: answered while on a phone call (their message)"
    assert rows.loc["HAND", "rejection_category"] == "OTHER"
    assert rows.loc["FAILS_PRACTICE", "reason"] == "did not pass the practice"
    assert rows.loc["SLOW", "reason"] == "the study's time limit of 30 minutes ran out"
    assert rows.loc["GOOD", "reason"] == "" and rows.loc["GOOD", "submission_id"] == "SESSION-GOOD"
    # time taken: server times, from arrival to the end; none (never 0) while still working
    assert rows.loc["SLOW", "time_taken_s"] == 31 * 60.0
    assert rows.loc["GOOD", "time_taken_s"] > 0 and rows["time_taken_s"].isna().tolist().count(True) == 1
    assert rows.loc["WORKING", "finished_at_utc"] is None or str(rows.loc["WORKING", "finished_at_utc"]) in ("NaT", "None")
    assert r.counts() == {"approve": 1, "reject": 2, "return": 1, "screened_out": 1, "still_working": 1}
    # the rules switched off: the attention failure is approved; the exclusion by hand follows its own rule
    off = review(store, study, ExclusionRules(False, None, None, True, False)).rows.set_index("participant_id")
    assert off.loc["INATTENTIVE", "status"] == "approve" and off.loc["HAND", "status"] == "approve"


def test_the_cli_writes_the_csv(store, small_dataset, tmp_path):
    if store.path is None:
        return  # the command opens the store itself: once, on SQLite, is enough
    study = _study(store, small_dataset)
    _people(store, small_dataset, study)
    store.checkpoint()
    out = tmp_path / "approvals.csv"
    run = run_cli("study", "approvals", study.study_id, "--out", str(out), "--db", str(store.path))
    assert run.returncode == 0, run.stderr
    assert "wrote 6 rows" in run.stdout and "approve: 1, reject: 2" in run.stdout
    assert "1 participants did not come from Prolific" in run.stdout
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(COLUMNS)
    assert [r["participant_id"] for r in rows if r["status"] == "approve"] == ["GOOD"]
    bad = run_cli("study", "approvals", "nope", "--out", str(out), "--db", str(store.path))
    assert bad.returncode == 2 and "unknown study 'nope'" in bad.stderr


def test_the_cli_manages_participants_and_deletes_only_with_the_name(store, small_dataset, tmp_path):
    if store.path is None:
        return
    study = _study(store, small_dataset)
    run_to_end(new_session(store, small_dataset, study, "P9"))
    store.checkpoint()

    def cli(*args):
        return run_cli("study", *args, "--db", str(store.path))

    assert cli("exclude", study.study_id, "P9", "--reason", "pilot run by a colleague", "--by", "JD").returncode == 0
    again = cli("exclude", study.study_id, "P9", "--reason", "x", "--by", "JD")
    assert again.returncode == 2 and "already excluded" in again.stderr
    assert cli("include", study.study_id, "P9", "--by", "JD").returncode == 0
    assert cli("mark-test", study.study_id, "P9", "--by", "JD").returncode == 0
    assert open_store(store.path).query("SELECT origin FROM participants")[0]["origin"] == "test"
    assert cli("exclude", study.study_id, "NOBODY", "--reason", "x").returncode == 2
    wrong = cli("delete", study.study_id, "--confirm", "Prolific")
    assert wrong.returncode == 2 and "type the study's name exactly" in wrong.stderr
    assert cli("delete", study.study_id, "--confirm", "prolific").returncode == 0
    assert open_store(store.path).query("SELECT count(*) AS n FROM studies")[0]["n"] == 0
