"""Studies page: create through the form, see the link and coverage, export."""
import os

from streamlit.testing.v1 import AppTest

from rose_core.instrument.study import list_studies
from rose_core.storage import open_store

from .conftest import PASSWORD, ROOT


def signed_in() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.text_input(key="auth_given").input(PASSWORD)
    at.button[0].click()
    return at.run()


def test_create_study_from_the_form(app_env, monkeypatch):
    monkeypatch.setenv("ROSE_PUBLIC_URL", "https://rose.example.org/")
    at = signed_in()
    assert at.title[0].value == "Studies"
    at.text_input(key="studies_name").input("Pilot A")
    at.selectbox(key="studies_split").select("dev")
    at.multiselect(key="studies_subsets").set_value(["EmojiStyle", "PixelEdit"])
    at.number_input(key="studies_items").set_value(12)
    at.text_input(key="studies_code").input("ABC123")
    at.button[0].click()  # the form's submit button
    at.run()
    assert not at.exception
    assert at.success and "Created study" in at.success[0].value
    studies = list_studies(open_store(os.environ["ROSE_DB"]))
    assert len(studies) == 1
    cfg = studies[0].config
    assert (cfg.name, cfg.split, cfg.subsets, cfg.items_per_participant, cfg.completion_code) == \
        ("Pilot A", "dev", ["EmojiStyle", "PixelEdit"], 12, "ABC123")
    assert [c.value.split("&")[0] for c in at.code] == [f"https://rose.example.org/?study={studies[0].study_id}"]
    metrics = {m.label: m.value for m in at.metric}
    assert [m.label for m in at.metric][:2] == ["Pool instances", "Main answers"]
    pool = int(metrics["Pool instances"])
    need = -(-pool * 3 // 12)  # pool × participants per instance ÷ items per participant, rounded up
    assert metrics["Participants needed"] == str(need) and metrics["Participants completed"] == f"0 / {need}"
    assert not any("localhost" in str(e.value) for e in list(at.code) + list(at.caption))


def test_without_an_address_the_link_is_not_guessed(app_env, monkeypatch):
    monkeypatch.delenv("ROSE_PUBLIC_URL", raising=False)
    from rose_core.instrument.study import StudyConfig, create_study

    create_study(open_store(os.environ["ROSE_DB"]), app_env, StudyConfig(name="x"))
    at = signed_in()
    assert not at.exception
    assert at.warning and "ROSE_PUBLIC_URL" in at.warning[0].value and not at.code


def test_invalid_study_is_explained(app_env):
    at = signed_in()
    at.text_input(key="studies_name").input("")
    at.button[0].click()
    at.run()
    assert at.error and "name: must not be empty" in at.error[0].value
    assert list_studies(open_store(os.environ["ROSE_DB"])) == []


def _study_with_people(app_env):
    from rose_core.instrument.study import StudyConfig, create_study
    from tests.participants import new_session, run_to_end

    store = open_store(os.environ["ROSE_DB"])
    study = create_study(store, app_env, StudyConfig(name="Managed", split="dev", items_per_participant=3,
                                                     practice_items=4, attention_every=0, seed=2))
    run_to_end(new_session(store, app_env, study, "PX1"))
    return store, study


def test_preview_from_the_studies_page_is_never_counted(app_env, monkeypatch):
    monkeypatch.setenv("ROSE_PUBLIC_URL", "https://rose.example.org/")
    store, study = _study_with_people(app_env)
    at = signed_in()
    at.button(key=f"studies_preview_{study.study_id}_btn").click()
    at.run()
    assert not at.exception
    (p,) = [r for r in store.query("SELECT external_id, origin FROM participants") if r["origin"] == "preview"]
    assert p["external_id"].startswith("preview-")
    links = [b for b in at.get("link_button") if "preview" in str(b.proto.url)]
    assert links and links[0].proto.url == f"https://rose.example.org/?study={study.study_id}&pid={p['external_id']}"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Participants completed"].startswith("1 / ")   # the preview is not a participant


def test_exclude_lift_and_mark_test_on_the_studies_page(app_env):
    store, study = _study_with_people(app_env)
    at = signed_in()
    sid = study.study_id
    assert at.button(key=f"studies_ex_btn_{sid}").disabled          # no name, no reason: nothing to store
    at.text_input(key="studies_by").input("JD")
    at.text_input(key=f"studies_ex_reason_{sid}").input("pilot colleague")
    at.run()
    at.button(key=f"studies_ex_btn_{sid}").click()
    at.run()
    assert not at.exception
    row = store.query("SELECT reason, excluded_by, revoked_at FROM participant_exclusions")[0]
    assert (row["reason"], row["excluded_by"], row["revoked_at"]) == ("pilot colleague", "JD", None)
    at.button(key=f"studies_unex_btn_{sid}").click()
    at.run()
    assert store.query("SELECT revoked_by FROM participant_exclusions")[0]["revoked_by"] == "JD"
    at.button(key=f"studies_test_btn_{sid}").click()
    at.run()
    assert store.query("SELECT origin FROM participants")[0]["origin"] == "test"


def test_delete_a_study_on_the_studies_page_needs_its_name(app_env):
    store, study = _study_with_people(app_env)
    at = signed_in()
    sid = study.study_id
    assert at.button(key=f"studies_del_btn_{sid}").disabled
    at.text_input(key=f"studies_del_{sid}").input("managed")
    at.run()
    assert at.button(key=f"studies_del_btn_{sid}").disabled
    at.text_input(key=f"studies_del_{sid}").input("Managed")
    at.run()
    at.button(key=f"studies_del_btn_{sid}").click()
    at.run()
    assert not at.exception
    assert list_studies(store) == [] and store.query("SELECT count(*) AS n FROM responses")[0]["n"] == 0
