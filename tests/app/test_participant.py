"""Participant page through AppTest: ids, stages, resume, and no way into experimenter pages."""
import os

import pytest
from streamlit.testing.v1 import AppTest

from rose_core.store import Store
from rose_core.study import StudyConfig, create_study, set_active

from .conftest import ROOT


def study(ds, **kw):
    cfg = dict(name="apptest", practice_items=2, items_per_participant=3, completion_code="CODE-9",
               completion_url="https://app.prolific.com/submissions/complete?cc=CODE-9")
    cfg.update(kw)
    return create_study(Store(os.environ["ROSE_DB"]), ds, StudyConfig(**cfg))


def visit(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def test_prolific_ids_are_stored_on_first_request(app_env):
    s = study(app_env)
    at = visit(study=s.study_id, PROLIFIC_PID="5f00aa", STUDY_ID="PSTUDY", SESSION_ID="PSESS")
    assert not at.exception
    assert at.title[0].value == "Welcome"
    rows = Store(os.environ["ROSE_DB"]).query("SELECT * FROM participants")
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
    assert len(at.get("image")) == 2  # the worked example, plain and solved
    at.button(key="part_instr_btn").click().run()
    assert not at.exception
    assert "Practice item 1 of 2" in at.caption[0].value
    # A new session with the same link (reload, new tab, restarted server) resumes at the practice item.
    again = visit(study=s.study_id, PROLIFIC_PID="R1")
    assert not again.exception
    assert "Practice item 1 of 2" in again.caption[0].value
    assert len(Store(os.environ["ROSE_DB"]).query("SELECT * FROM participants")) == 1


def test_anonymous_participant_gets_an_id_in_the_url(app_env):
    s = study(app_env)
    at = visit(study=s.study_id)
    assert at.query_params["pid"].startswith("anon-")
    rows = Store(os.environ["ROSE_DB"]).query("SELECT external_id, source FROM participants")
    assert rows == [{"external_id": at.query_params["pid"], "source": "anonymous"}]


@pytest.mark.parametrize("query", [{"study": "nope", "PROLIFIC_PID": "x"}, {"study": "", "PROLIFIC_PID": "x"}])
def test_bad_study_link(app_env, query):
    at = visit(**query)
    assert at.error and "not valid" in at.error[0].value
    assert Store(os.environ["ROSE_DB"]).query("SELECT * FROM participants") == []


def test_closed_study_refuses_new_participants(app_env):
    s = study(app_env)
    set_active(Store(os.environ["ROSE_DB"]), s.study_id, False)
    at = visit(study=s.study_id, PROLIFIC_PID="late")
    assert at.error and "closed" in at.error[0].value


def test_participant_link_never_reaches_experimenter_pages(app_env):
    s = study(app_env)
    at = visit(study=s.study_id, PROLIFIC_PID="snoop")
    for page in ("pages/scene_explorer.py", "pages/studies.py"):
        with pytest.raises(ValueError, match="Known pages"):
            at.switch_page(page)
    assert "Sign in" not in [t.value for t in at.title]


def test_end_page_shows_code_and_redirect(app_env):
    s = study(app_env, practice_items=0)
    db = Store(os.environ["ROSE_DB"])
    at = visit(study=s.study_id, PROLIFIC_PID="END")
    with db.write() as c:  # the participant has finished (the grid itself is covered in Chromium)
        c.execute("UPDATE participants SET consent_at = 1, instructions_at = 1, finished_at = 2, "
                  "end_reason = 'completed'")
    at.run()
    assert at.title[0].value == "Thank you!"
    assert any("CODE-9" in m.value for m in at.markdown)


def test_screened_out_page(app_env):
    s = study(app_env)
    db = Store(os.environ["ROSE_DB"])
    at = visit(study=s.study_id, PROLIFIC_PID="OUT")
    with db.write() as c:
        c.execute("UPDATE participants SET consent_at = 1, instructions_at = 1, finished_at = 2, "
                  "end_reason = 'screened_out'")
    at.run()
    assert any("criterion" in i.value for i in at.info)
    assert not any("CODE-9" in m.value for m in at.markdown)


def test_practice_feedback_and_retry_message(app_env):
    from rose_core.study import Submission, current_item, get_participant, record_response

    s = study(app_env, practice_items=2, practice_max_attempts=2)
    db = Store(os.environ["ROSE_DB"])
    at = visit(study=s.study_id, PROLIFIC_PID="PRAC")
    at.checkbox(key="part_agree").check().run()
    at.button(key="part_consent_btn").click().run()
    at.button(key="part_instr_btn").click().run()
    pid = at.session_state["part_pid"]
    for _ in range(2):  # both practice items wrong (the grid is JS; its submission is what the page stores)
        p = get_participant(db, pid)
        item = current_item(db, app_env, s, p)
        rec = record_response(db, s, p, item, Submission("v", [(1, 1)], 99 if item.output != "click" else None,
                                                         [], 1.0, 2.0, (800, 600), 1.0, False))
        at.session_state["part_feedback"] = {"instance_id": item.instance_id, "passed": rec.score.passed,
                                             "attempt": item.attempt}
        at.run()
        assert at.title[0].value == "Practice" and at.warning and "Not quite" in at.warning[0].value
        assert len(at.get("image")) == 1  # the practice image with the odd cells outlined
        at.button(key="part_fb_btn").click().run()
    at.session_state["part_feedback"] = {"instance_id": item.instance_id, "passed": False, "attempt": 0}
    at.run()
    assert any("practice once more" in i.value for i in at.info)
