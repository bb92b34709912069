"""Participant page through AppTest: ids, screens, stored feedback, resume, and no way into experimenter pages."""
import os

import pytest
from streamlit.testing.v1 import AppTest

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.screens import ItemScreen
from rose_core.instrument.session import ParticipantSession
from rose_core.instrument.study import get_study, set_active
from rose_core.storage import open_store
from tests.participants import answer

from .conftest import ROOT
from tests.participants import LAB_INFO


def study(ds, **kw):
    cfg = dict(name="apptest", practice_items=4, items_per_participant=3, completion_code="CODE-9",
               completion_url="https://app.prolific.com/submissions/complete?cc=CODE-9",
               allow_phones=True)  # AppTest runs no JS: no browser reports its window (the device gate: below)
    cfg.update(kw)
    return create_study(open_store(os.environ["ROSE_DB"]), ds, StudyConfig(info=LAB_INFO, **cfg))


def visit(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def through_intro(at: AppTest) -> AppTest:
    at.checkbox(key="part_agree").check().run()
    at.button(key="part_consent_btn").click().run()
    at.button(key="part_instr_btn").click().run()
    return at


def session_of(at: AppTest, ds) -> ParticipantSession:
    db = open_store(os.environ["ROSE_DB"])
    return ParticipantSession(db, ds, get_study(db, at.session_state["part_study"]), at.session_state["part_pid"])


def test_prolific_ids_are_stored_on_first_request(app_env):
    s = study(app_env)
    at = visit(study=s.study_id, PROLIFIC_PID="5f00aa", STUDY_ID="PSTUDY", SESSION_ID="PSESS")
    assert not at.exception
    assert at.title[0].value == "Welcome"
    rows = open_store(os.environ["ROSE_DB"]).query("SELECT * FROM participants")
    assert len(rows) == 1
    r = rows[0]
    assert (r["external_id"], r["source"], r["prolific_study_id"], r["prolific_session_id"]) == \
        ("5f00aa", "prolific", "PSTUDY", "PSESS")
    assert r["consent_at"] is None


def test_consent_then_instructions_then_practice_and_resume(app_env):
    s = study(app_env)
    at = visit(study=s.study_id, PROLIFIC_PID="R1")
    assert at.button(key="part_consent_btn").disabled
    at.checkbox(key="part_agree").check().run()
    at.button(key="part_consent_btn").click().run()
    assert at.title[0].value == "How it works"
    # one worked example per output kind of T1-T5: count, named rectangle, highlighted, excluded + count, nothing
    assert len(at.get("image")) == 5 and [t.label for t in at.tabs] == [
        "Counting", "A named rectangle", "A highlighted region", "An excluded region, with a count", "Nothing to click"]
    at.button(key="part_instr_btn").click().run()
    assert not at.exception
    screen = session_of(at, app_env).screen()
    assert isinstance(screen, ItemScreen) and screen.kind == "practice" and screen.progress == "Practice 1 of 4"
    assert not at.caption and not at.markdown  # "Item k of n" and the instruction live in the component only
    # A new session with the same link (reload, new tab, restarted server) resumes at the same view.
    again = visit(study=s.study_id, PROLIFIC_PID="R1")
    assert not again.exception and again.title == [] and not again.button
    assert session_of(again, app_env).screen().view_id == screen.view_id
    assert len(open_store(os.environ["ROSE_DB"]).query("SELECT * FROM participants")) == 1


def test_practice_feedback_is_stored_shown_again_after_reload_and_acknowledged(app_env):
    s = study(app_env, practice_max_attempts=2)
    at = through_intro(visit(study=s.study_id, PROLIFIC_PID="PRAC"))
    sess = session_of(at, app_env)
    for k in range(4):  # every practice item wrong (the grid is JS; what it sends is what the page stores)
        screen = sess.screen()
        answer(sess, screen, right=False)
        at.run()
        for page in (at, visit(study=s.study_id, PROLIFIC_PID="PRAC")):  # the same page after a reload
            assert not page.exception
            assert page.title[0].value == "Practice" and "Not quite" in page.warning[0].value
            assert screen.item.instruction in page.markdown[0].value  # the instruction, repeated
            assert len(page.get("image")) == 1                        # region, right cells, own clicks drawn
        if k == 3:
            assert any("once more, with new pictures" in i.value for i in at.info)
        at.button(key="part_fb_btn").click().run()
    nxt = sess.screen()
    assert isinstance(nxt, ItemScreen) and nxt.kind == "practice" and nxt.item.item_id == s.config.practice_rounds[1][0]


def test_anonymous_participant_gets_an_id_in_the_url(app_env):
    """The first visit only puts a new id into the address (the browser reloads in place: tests/e2e/test_resume.py);
    the visit with it joins."""
    from ui.click_grid import element_data

    s = study(app_env, require_prolific_id=False)   # anonymous visitors allowed
    at = visit(study=s.study_id)
    (reload,) = at.get("bidi_component")
    data = element_data(reload.proto)
    assert data["name"] == "pid" and data["value"].startswith("anon-")
    assert open_store(os.environ["ROSE_DB"]).query("SELECT * FROM participants") == []
    at = visit(study=s.study_id, pid=data["value"])
    assert at.checkbox(key="part_agree")  # consent: the participant's flow
    rows = open_store(os.environ["ROSE_DB"]).query("SELECT external_id, source FROM participants")
    assert rows == [{"external_id": data["value"], "source": "anonymous"}]


@pytest.mark.parametrize("query", [{"study": "nope", "PROLIFIC_PID": "x"}, {"study": "", "PROLIFIC_PID": "x"}])
def test_bad_study_link(app_env, query):
    at = visit(**query)
    assert at.error and "not valid" in at.error[0].value
    assert open_store(os.environ["ROSE_DB"]).query("SELECT * FROM participants") == []


def test_closed_study_refuses_new_participants(app_env):
    s = study(app_env)
    set_active(open_store(os.environ["ROSE_DB"]), s.study_id, False)
    at = visit(study=s.study_id, PROLIFIC_PID="late")
    assert at.error and "closed" in at.error[0].value


def test_participant_link_never_reaches_experimenter_pages(app_env):
    s = study(app_env)
    at = visit(study=s.study_id, PROLIFIC_PID="snoop")
    for page in ("app_pages/scene_explorer.py", "app_pages/studies.py"):
        with pytest.raises(ValueError, match="Known pages"):
            at.switch_page(page)
    assert "Sign in" not in [t.value for t in at.title]


def _end(app_env, reason, **kw):
    s = study(app_env, practice_items=0, **kw)
    db = open_store(os.environ["ROSE_DB"])
    at = visit(study=s.study_id, PROLIFIC_PID=f"END-{reason}")
    with db.write() as c:
        c.execute("UPDATE participants SET consent_at = 1, instructions_at = 1, finished_at = 2, end_reason = ?",
                  (reason,))
    return at.run()


def test_end_page_shows_code_and_redirect(app_env):
    at = _end(app_env, "completed")
    assert at.title[0].value == "Thank you!"
    assert any("CODE-9" in m.value for m in at.markdown)


def test_screened_out_page(app_env):
    at = _end(app_env, "screened_out")  # the study's screen-out text (the default, facts filled in)
    assert any("**return your submission**" in m.value and "Dr Ada Example" in m.value for m in at.markdown)
    assert not any("CODE-9" in m.value for m in at.markdown)
    assert any("return your submission" in m.value for m in at.markdown)   # no screen-out code: the advice


def test_screened_out_page_gives_the_screen_out_code(app_env):
    at = _end(app_env, "screened_out", screen_out_code="OUT-7")
    assert any("OUT-7" in m.value and "screen-out code" in m.value for m in at.markdown)
    assert not any("CODE-9" in m.value for m in at.markdown)      # never the completion code


def test_time_limit_end_page_says_time_limit(app_env):
    s = study(app_env, practice_items=0, time_limit_minutes=1)
    db = open_store(os.environ["ROSE_DB"])
    at = through_intro(visit(study=s.study_id, PROLIFIC_PID="LATE"))
    with db.write() as c:  # consent was two minutes ago
        c.execute("UPDATE participants SET consent_at = consent_at - 120")
    at.run()
    assert at.title[0].value == "Thank you!"
    assert [i.value for i in at.info] == ["The time limit for this study has passed, so the study ends here; the "
                                          "answers you gave before it are kept. Thank you for your time."]
    assert any("return your submission" in m.value for m in at.markdown)   # no code to give: the advice


def test_a_participant_never_starts_the_statistics_imports_or_the_dashboards_warm_up(app_env, monkeypatch):
    """Those are for experimenters (the sign-in form starts the imports and the column reader, the Studies page
    the warm-up): a participant's reruns, from the link through practice, must start none (the sign-in form, shown
    to anyone without a study link, is the control that the check can see them)."""
    import threading

    import ui.preload
    from rose_core.storage import columns, sqlite_reader

    reader = sqlite_reader.SqliteReader()
    monkeypatch.setattr(sqlite_reader, "_READER", reader)
    prepared, prepare = [], columns.prepare_reads
    monkeypatch.setattr(columns, "prepare_reads", lambda store: (prepared.append(store.dialect), prepare(store)))

    def started() -> set[str]:
        return {t.name for t in threading.enumerate()} & {"rose-import-statistics", "rose-dashboard-warm-up",
                                                          "rose-warm-up-early"}

    monkeypatch.setattr(ui.preload, "_THREAD", None)
    before = {t.ident for t in threading.enumerate()}
    s = study(app_env)
    at = through_intro(visit(study=s.study_id, PROLIFIC_PID="NOSTATS"))
    screen = session_of(at, app_env).screen()
    assert not at.exception and isinstance(screen, ItemScreen)
    new = [t for t in threading.enumerate() if t.ident not in before]
    assert ui.preload._THREAD is None and not started() & {t.name for t in new}
    assert not prepared and reader._proc is None
    signin = visit()
    assert not signin.exception and signin.title[0].value == "ROSE Studio"
    assert ui.preload._THREAD is not None        # the control: the sign-in form did start them
    assert len(prepared) == 1
    if prepared[0] == "sqlite":                  # SQLite's reader is a process (PostgreSQL's read is in this one)
        assert reader._proc is not None and reader.starts == 1
        reader.close()


def test_the_device_gate_comes_before_consent_and_judges_the_stored_claim(app_env):
    """What the browser's probe stores (its callback calls report_device) decides whether consent is shown."""
    from rose_core.instrument.device import report_device

    s = study(app_env, allow_phones=False)
    at = visit(study=s.study_id, PROLIFIC_PID="DEV1")
    assert not at.exception and at.title == [] and not at.checkbox
    assert any("Checking the size of your browser window" in c.value for c in at.caption)
    db = open_store(os.environ["ROSE_DB"])
    report_device(db, s.config, at.session_state["part_pid"], {"viewport": [800, 600], "dpr": 2})
    at.run()
    assert at.title[0].value == "Please use a larger screen" and not at.checkbox
    assert "1024 × 640 pixels" in at.markdown[0].value and "800 × 600" in at.markdown[0].value
    report_device(db, s.config, at.session_state["part_pid"], {"viewport": [1440, 900], "dpr": 2})
    at.run()
    assert at.title[0].value == "Welcome" and at.checkbox(key="part_agree")


def test_a_prolific_study_turns_anonymous_visitors_away_before_consent(app_env):
    """Issue 23: `?pid=` bots filled the pool. A study with a completion URL needs a Prolific id by default: an
    anonymous visitor gets a calm page, never consent, and nothing is stored."""
    s = study(app_env)
    for query in ({}, {"pid": "anon-bot"}, {"PROLIFIC_PID": "not an id"}):
        at = visit(study=s.study_id, **query)
        assert not at.exception and not at.error and at.title[0].value == "Please open this study from Prolific"
        assert not at.checkbox and "part_pid" not in at.session_state
    assert open_store(os.environ["ROSE_DB"]).query("SELECT * FROM participants") == []


def test_a_tab_left_open_after_its_study_closed_says_so_calmly(app_env):
    """Issue 23: a tab left open after its study closed still stored answers. The page's next run shows a calm page,
    and an answer sent from it is refused on the server (tests/rose_core/instrument/test_bots.py)."""
    from rose_core.instrument.study import set_active

    s = study(app_env, practice_items=0)
    at = through_intro(visit(study=s.study_id, PROLIFIC_PID="OPEN1"))
    assert at.session_state["part_item"].kind == "main"
    set_active(open_store(os.environ["ROSE_DB"]), s.study_id, False)
    at.run()
    assert not at.exception and not at.error and at.title[0].value == "This study has ended"
    assert "nothing more can be recorded" in at.info[0].value


def test_a_closed_study_opens_for_its_preview_only(app_env):
    from rose_core.instrument import manage
    from rose_core.instrument.study import set_active

    s = study(app_env)
    db = open_store(os.environ["ROSE_DB"])
    preview = manage.open_preview(db, s)
    set_active(db, s.study_id, False)
    at = visit(study=s.study_id, pid=preview.external_id)
    assert not at.exception and not at.error and at.title[0].value == "Welcome"
    assert at.session_state["part_pid"] == preview.participant_id
    at = visit(study=s.study_id, PROLIFIC_PID="REAL1")
    assert at.error and "closed" in at.error[0].value
    at = visit(study=s.study_id, pid="preview-guessed")
    assert at.error and "closed" in at.error[0].value


def test_the_countdown_shows_after_consent_only(app_env):
    s = study(app_env, practice_items=0, time_limit_minutes=5)
    at = visit(study=s.study_id, PROLIFIC_PID="CD1")
    assert not any("rose_countdown" in str(getattr(e, "proto", "")) for e in at.get("bidi_component"))
    at = through_intro(at)
    shown = [e for e in at.get("bidi_component") if "rose_countdown" in str(getattr(e, "proto", ""))]
    assert shown, "no countdown after consent"


@pytest.mark.parametrize("fault", ["missing", "changed"])
def test_a_practice_picture_missing_or_changed_before_its_feedback_gets_feedback_without_it(
        app_env, monkeypatch, tmp_path, capfd, fault):
    import shutil

    from rose_core import Dataset

    root = tmp_path / "ds"
    shutil.copytree(app_env.root, root)
    monkeypatch.setenv("ROSE_DATASET_DIR", str(root))
    ds = Dataset.load(root)
    s = study(ds, practice_max_attempts=2)
    at = through_intro(visit(study=s.study_id, PROLIFIC_PID="PICT"))
    sess = session_of(at, ds)
    screen = sess.screen()
    answer(sess, screen, right=False)
    picture = root / screen.item.image
    if fault == "missing":
        picture.unlink()
    else:
        picture.write_bytes(picture.read_bytes()[:-100] + b"\0" * 100)
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Practice" and "Not quite" in at.warning[0].value
    assert len(at.get("image")) == 0 and "cannot be shown right now" in at.caption[0].value
    assert len(at.markdown) >= 2      # the instruction, then the right cells (or number) in words
    shown = " ".join(e.value for e in [*at.caption, *at.markdown, *at.warning, *at.info])
    assert str(tmp_path) not in shown
    assert "practice feedback picture" in capfd.readouterr().err
