"""Prolific end to end in the session: the completion and screen-out codes by end reason, the screen-out on a
failed attention check, the time limit's deadline and what happens when it runs out."""
import pytest

from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.screens import Deadline, ItemScreen, PracticeFeedback
from rose_core.instrument.config import StudyConfig, StudyError
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.study import get_participant
from tests.participants import answer, fail_to_the_end, new_session, run_to_end

CODES = dict(completion_code="C0MPLETE", completion_url="https://app.prolific.com/submissions/complete?cc=C0MPLETE",
             screen_out_code="SCR33N", screen_out_url="https://app.prolific.com/submissions/complete?cc=SCR33N")
_IDS = SequentialIds("pe")


def make(store, ds, **kw):
    base = dict(name="prolific", split="dev", items_per_participant=6, target_per_instance=2, practice_items=4,
                practice_max_attempts=1, attention_every=2, seed=5, **CODES)
    base.update(kw)
    return create_study(store, ds, StudyConfig(**base), ids=_IDS, clock=FakeClock())


def test_screen_out_settings_are_checked():
    text = "; ".join(StudyConfig(name="x", screen_out_url="javascript:alert(1)", completion_code="A",
                                 screen_out_code="A", attention_screen_out="yes").problems())
    for needle in ("screen_out_url: expected an http(s) URL", "screen_out_code: must differ from completion_code",
                   "attention_screen_out: expected true or false"):
        assert needle in text


def test_a_completed_participant_gets_the_completion_code(store, small_dataset):
    study = make(store, small_dataset)
    _, end = run_to_end(new_session(store, small_dataset, study, "OK"))
    assert end.reason == "completed" and (end.code, end.url) == (CODES["completion_code"], CODES["completion_url"])


def test_failed_practice_gets_the_screen_out_code_never_the_completion_code(store, small_dataset):
    study = make(store, small_dataset)
    screen = fail_to_the_end(new_session(store, small_dataset, study, "FAIL"))
    assert screen.reason == "screened_out" and not screen.attention
    assert (screen.code, screen.url) == (CODES["screen_out_code"], CODES["screen_out_url"])
    assert CODES["completion_code"] not in (screen.code, screen.url)


@pytest.mark.parametrize("screens_out", [True, False])
def test_a_failed_attention_check_screens_out_only_when_the_study_says_so(store, small_dataset, screens_out):
    study = make(store, small_dataset, attention_screen_out=screens_out)
    s = new_session(store, small_dataset, study, f"ATT{screens_out}")
    kinds, end = run_to_end(s, right=lambda screen: screen.kind != "attention")
    if screens_out:
        assert kinds.count("attention") == 1 and kinds[-1] == "attention"   # ended at once, no main item after
        assert end.reason == "screened_out" and end.attention and end.code == CODES["screen_out_code"]
        assert get_participant(store, s.participant_id).end_reason == "screened_out"
        assert not store.query("SELECT * FROM assignments WHERE participant_id = ? AND answered_at IS NULL "
                               "AND released_at IS NULL", (s.participant_id,))   # nothing held
    else:
        assert kinds.count("main") == 6 and end.reason == "completed" and end.code == CODES["completion_code"]


def test_the_deadline_counts_from_consent_on_the_server_clock(store, small_dataset):
    study = make(store, small_dataset, time_limit_minutes=2)
    clock = FakeClock(1_700_000_000.0)
    s = new_session(store, small_dataset, study, "TL", clock=clock, intro=False)
    assert s.deadline() is None                                   # no clock before consent
    s.consent()
    s.finish_instructions()
    clock.advance(30)
    assert s.deadline() == Deadline(1_700_000_120.0, 1_700_000_030.0) and s.deadline().seconds_left == 90.0
    assert isinstance(s.screen(), PracticeFeedback | ItemScreen)
    clock.advance(91)
    end = s.screen()
    assert end.reason == "timed_out" and (end.code, end.url) == ("", "")   # no code: they are asked to return it
    assert get_participant(store, s.participant_id).end_reason == "timed_out"
    assert s.deadline() is None and Deadline(10.0, 20.0).seconds_left == 0.0
    no_limit = make(store, small_dataset, time_limit_minutes=0)
    assert new_session(store, small_dataset, no_limit, "NL").deadline() is None


def test_an_answer_sent_after_the_deadline_is_not_counted(store, small_dataset):
    study = make(store, small_dataset, time_limit_minutes=1, practice_items=0, attention_every=0)
    clock = FakeClock()
    s = new_session(store, small_dataset, study, "LATE", clock=clock)
    screen = s.screen()
    assert isinstance(screen, ItemScreen)
    clock.advance(61)
    rec = answer(s, screen)
    assert rec.refused == "late" and rec.duplicate
    assert store.query("SELECT count(*) AS n FROM responses WHERE participant_id = ?", (s.participant_id,))[0]["n"] == 0
    assert s.screen().reason == "timed_out"


def test_a_preview_cannot_be_forged_from_a_link(store, small_dataset):
    """A participant who types a preview-looking id is an ordinary participant: only the Studies page makes one."""
    from rose_core.instrument import manage

    study = make(store, small_dataset)
    s = new_session(store, small_dataset, study, "preview-0123")
    assert get_participant(store, s.participant_id).origin == "participant"
    assert not manage.is_preview(store, study.study_id, "preview-0123")
    with pytest.raises(StudyError):
        manage.mark_test(store, manage.open_preview(store, study).participant_id, True, "JD")
