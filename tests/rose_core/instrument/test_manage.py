"""Previews and test participants never reach a number, an export, the approvals or the checklist; exclusions by
hand (audited, reversible); completed only; a study deleted only after its name is typed."""
import pandas as pd
import pytest

from rose_core.analysis.approvals import review
from rose_core.analysis.bundle import paper_report
from rose_core.analysis.bundle.checklist import checklist_items, checklist_markdown
from rose_core.analysis.frame import FrameCache, responses_frame
from rose_core.analysis.report import report_data
from rose_core.analysis.selection import ExclusionRules, participant_table
from rose_core.instrument import manage
from rose_core.instrument.exports import table_frame
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.monitor import coverage, participants_frame, uncounted_frame
from rose_core.instrument.session import ParticipantSession
from rose_core.instrument.config import StudyConfig, StudyError
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.study import list_studies
from rose_core.storage import participants
from tests.backends import clone
from tests.participants import new_session, run_to_end


def _numbers(store, ds) -> dict:
    """Everything a participant could weigh in: the report, the frame, exports, the checklist, the approvals."""
    study = next(s for s in list_studies(store) if s.name == "pilot")
    report, table = report_data(store, n_boot=20)
    paper = paper_report(store, ds, n_boot=20)
    items, facts = checklist_items(store, ds, paper)
    return {"report": table, "frame": len(responses_frame(store)), "responses": table_frame(store, "responses"),
            "events": len(table_frame(store, "events")), "checklist": checklist_markdown(items),
            "analysed": facts.analysed, "approvals": review(store, study).rows,
            "coverage": coverage(store, ds, study), "participants": len(participants_frame(store, study))}


def test_a_preview_never_reaches_a_number_an_export_or_the_checklist(populated_db, small_dataset, fresh_location):
    store = clone(populated_db, fresh_location())
    before = _numbers(store, small_dataset)
    study = next(s for s in list_studies(store) if s.name == "pilot")
    clock = FakeClock(1_800_000_000.0)
    p = manage.open_preview(store, study, ids=SequentialIds("prev"), clock=clock, token="abc")
    assert p.origin == "preview" and p.external_id == "preview-abc"
    s = ParticipantSession(store, small_dataset, study, p.participant_id, clock=clock)
    s.consent()
    s.finish_instructions()
    kinds, end = run_to_end(s, right=lambda screen: False)   # every answer wrong: it would move every number
    assert end.reason == "completed" and "main" in kinds
    with store.connect() as c:   # stored, and readable by its own session
        n = c.execute("SELECT count(*) FROM responses WHERE participant_id = ?", (p.participant_id,)).fetchone()[0]
    assert n == len(kinds)
    after = _numbers(store, small_dataset)
    for key in before:
        same = after[key].equals(before[key]) if isinstance(before[key], pd.DataFrame) else after[key] == before[key]
        assert same, key
    assert list(uncounted_frame(store, study)["external_id"]) == ["preview-abc"]
    assert manage.is_preview(store, study.study_id, "preview-abc")
    assert not manage.is_preview(store, study.study_id, "H0")
    store.close()


def test_marking_a_test_takes_a_participant_out_and_back(populated_db, small_dataset, fresh_location):
    store = clone(populated_db, fresh_location())
    with store.connect() as c:
        h5 = participants.find_participant(c, next(s for s in list_studies(store) if s.name == "pilot").study_id,
                                           "H5")
    full = responses_frame(store)
    assert (full["participant_id"] == h5.participant_id).any()
    with pytest.raises(StudyError, match="say who"):
        manage.mark_test(store, h5.participant_id, True, " ")
    manage.mark_test(store, h5.participant_id, True, "JD")
    out = responses_frame(store)
    assert not (out["participant_id"] == h5.participant_id).any()
    assert len(out) < len(full)
    assert h5.participant_id not in set(participant_table(store, ExclusionRules())["participant_id"])
    assert h5.participant_id not in set(table_frame(store, "responses")["participant_id"])
    with store.connect() as c:
        flags = [f for f in participants.flags(c, h5.study_id) if f["kind"] == "marked_test"]
    assert flags and flags[0]["detail"] == "by JD"
    manage.mark_test(store, h5.participant_id, False, "JD")
    assert len(responses_frame(store)) == len(full)
    store.close()


def test_the_frame_cache_drops_a_participant_marked_as_a_test(populated_db, fresh_location):
    store = clone(populated_db, fresh_location())
    cache = FrameCache(store)
    frame, _ = cache.get()
    pid = frame.loc[frame["solver_kind"] == "human", "participant_id"].iloc[0]
    manage.mark_test(store, pid, True, "JD")   # no response added: only the verdicts generation says it changed
    again, _ = cache.get()
    assert not (again["participant_id"] == pid).any() and len(again) < len(frame)
    store.close()


def test_exclusion_by_hand_is_audited_reversible_and_in_every_export(populated_db, fresh_location):
    store = clone(populated_db, fresh_location())
    study = next(s for s in list_studies(store) if s.name == "pilot")
    with store.connect() as c:
        h4 = participants.find_participant(c, study.study_id, "H4")
    assert participant_table(store, ExclusionRules()).set_index("participant_id").loc[h4.participant_id,
                                                                                       "excluded"] == ""
    with pytest.raises(StudyError, match="reason: say why"):
        manage.exclude(store, h4.participant_id, "  ", "JD")
    clock = FakeClock(1_800_000_000.0)
    manage.exclude(store, h4.participant_id, "talked on the phone throughout", "JD", clock=clock)
    with pytest.raises(StudyError, match="already excluded.*talked on the phone"):
        manage.exclude(store, h4.participant_id, "again", "JD")
    table = participant_table(store, ExclusionRules()).set_index("participant_id")
    assert table.loc[h4.participant_id, "excluded"] == "by hand"
    assert table.loc[h4.participant_id, "excluded_by_hand"] == "talked on the phone throughout"
    assert participant_table(store, ExclusionRules(by_hand=False)).set_index("participant_id").loc[
        h4.participant_id, "excluded"] == ""
    for name in ("responses", "events"):
        df = table_frame(store, name, study.study_id)
        mine = df[df["participant_id"] == h4.participant_id]
        assert len(mine) and set(mine["excluded_reason"]) == {"talked on the phone throughout"}
        assert set(mine["excluded_by"]) == {"JD"} and set(mine["end_reason"]) == {"completed"}
        assert str(mine["excluded_at_utc"].iloc[0]) == str(pd.Timestamp(1_800_000_000.0, unit="s", tz="UTC"))
        assert df.loc[df["participant_id"] != h4.participant_id, "excluded_reason"].isna().all()
    clock.advance(60)
    manage.lift_exclusion(store, h4.participant_id, "AB", clock=clock)
    with pytest.raises(StudyError, match="is not excluded"):
        manage.lift_exclusion(store, h4.participant_id, "AB")
    assert participant_table(store, ExclusionRules()).set_index("participant_id").loc[h4.participant_id,
                                                                                       "excluded"] == ""
    (h,) = manage.exclusion_history(store, study.study_id)
    assert (h.reason, h.excluded_by, h.excluded_at, h.revoked_by, h.revoked_at) == (
        "talked on the phone throughout", "JD", 1_800_000_000.0, "AB", 1_800_000_060.0)
    store.close()


def test_completed_only_leaves_unfinished_participants_out(store, small_dataset):
    study = create_study(store, small_dataset, StudyConfig(name="c", split="dev", items_per_participant=4,
                                                           target_per_instance=3, practice_items=0,
                                                           attention_every=0, seed=3),
                         ids=SequentialIds("co"), clock=FakeClock())
    clock = FakeClock()
    done = new_session(store, small_dataset, study, "DONE", clock=clock)
    run_to_end(done)
    half = new_session(store, small_dataset, study, "HALF", clock=clock)
    from tests.participants import answer
    answer(half, half.screen())
    table = participant_table(store, ExclusionRules(too_fast_ms=None, streak=None)).set_index("external_id")
    assert table.loc["DONE", "excluded"] == "" and table.loc["HALF", "excluded"] == "unfinished"
    table = participant_table(store, ExclusionRules(too_fast_ms=None, streak=None, completed_only=False))
    assert (table["excluded"] == "").all()
    assert "did not complete the study" in ExclusionRules().describe()
    assert ExclusionRules.off().is_off and not ExclusionRules().is_off


def test_delete_a_study_only_after_its_name_is_typed(store, small_dataset):
    study = create_study(store, small_dataset, StudyConfig(name="Doomed pilot", split="dev", items_per_participant=3,
                                                           practice_items=4, attention_every=0, seed=4),
                         ids=SequentialIds("del"), clock=FakeClock())
    keep = create_study(store, small_dataset, StudyConfig(name="Kept", split="dev", items_per_participant=3,
                                                          practice_items=4, attention_every=0, seed=4),
                        ids=SequentialIds("keep"), clock=FakeClock())
    s = new_session(store, small_dataset, study, "P1")
    run_to_end(s)
    manage.exclude(store, s.participant_id, "test", "JD")
    k = new_session(store, small_dataset, keep, "P1", ids=SequentialIds("k"))
    run_to_end(k)
    for typed in ("", "doomed pilot", "Doomed pilot "):
        with pytest.raises(StudyError, match="type the study's name exactly"):
            manage.delete_study(store, study.study_id, typed)
    assert {x.study_id for x in list_studies(store)} == {study.study_id, keep.study_id}
    gone = manage.delete_study(store, study.study_id, "Doomed pilot")
    assert gone.rows["participants"] == 1 and gone.rows["responses"] > 0 and gone.rows["studies"] == 1
    assert [x.study_id for x in list_studies(store)] == [keep.study_id]
    for table in ("participants", "assignments", "responses", "events", "participant_exclusions", "runs"):
        rows = store.query(f"SELECT count(*) AS n FROM {table}")[0]["n"]  # noqa: S608
        assert rows > 0 or table == "participant_exclusions", table   # the kept study's rows stay
    assert store.query("SELECT count(*) AS n FROM participant_exclusions")[0]["n"] == 0
    assert store.query("SELECT count(*) AS n FROM runs WHERE run_id = ?", (study.run_id,))[0]["n"] == 0
    with pytest.raises(StudyError, match="unknown study"):
        manage.delete_study(store, study.study_id, "Doomed pilot")
