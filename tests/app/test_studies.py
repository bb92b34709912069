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
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study

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


def test_a_draft_is_filled_in_the_texts_form_then_opens(app_env):
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study
    from rose_core.instrument.study import get_study
    from rose_core.instrument.texts import INFO_FIELDS, texts_version
    from tests.participants import LAB_INFO

    db = open_store(os.environ["ROSE_DB"])
    study = create_study(db, app_env, StudyConfig(name="draft", split="dev"))
    sid = study.study_id
    at = signed_in()
    assert not at.exception
    warning = next(w.value for w in at.warning if "cannot open" in w.value)
    assert "info.researcher: still the template marker [[RESEARCHER]]" in warning
    at.toggle(key=f"studies_active_{sid}").set_value(True).run()
    assert any("cannot open yet" in e.value and "[[PAYMENT]]" in e.value for e in at.error)
    assert not get_study(db, sid).active
    for k in INFO_FIELDS:
        at.text_input(key=f"studies_info_{sid}_{k}").input(LAB_INFO[k])
    at.text_area(key=f"studies_text_{sid}_debrief").input("")
    at.multiselect(key=f"studies_questions_{sid}").set_value(["age_band", "strategy"])
    next(b for b in at.button if b.label == "Save texts").click().run()
    assert not at.exception
    assert texts_version(db, sid) == 2
    cfg = get_study(db, sid).config
    assert cfg.info == LAB_INFO and cfg.texts["debrief"] == "" and cfg.questionnaire == ["age_band", "strategy"]
    assert not any("cannot open" in w.value for w in at.warning)
    assert at.markdown and any("Participant texts (version 2)" in m.value for m in at.markdown)
    at.toggle(key=f"studies_active_{sid}").set_value(True).run()
    assert get_study(db, sid).active


def test_the_participants_page_summarises_the_questionnaire(app_env):
    from rose_core.instrument.screens import Questionnaire
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study
    from tests.participants import LAB_INFO, new_session, run_to_end

    db = open_store(os.environ["ROSE_DB"])
    study = create_study(db, app_env, StudyConfig(name="q", split="dev", info=LAB_INFO, practice_items=0,
                                                  attention_every=0, items_per_participant=1,
                                                  questionnaire=["vision", "strategy"]))
    for ext, vision, strategy in (("A", "normal", "corners first"), ("B", "corrected", ""), ("C", None, None)):
        s = new_session(db, app_env, study, ext)
        assert isinstance(run_to_end(s)[1], Questionnaire)
        s.answer_questionnaire({} if vision is None else {"vision": vision, "strategy": strategy})
    at = signed_in()
    at.switch_page("app_pages/participants_overview.py").run()
    assert not at.exception, at.exception
    frames = [df.value for df in at.dataframe]
    q = next(f for f in frames if "question" in f.columns)
    rows = {(r["question"], r["answer"]): (r["participants"], r["share"]) for _, r in q.iterrows()}
    assert rows[("Your eyesight while doing the study", "Normal")] == ("1", "33.3")
    assert rows[("Your eyesight while doing the study", "(no answer)")] == ("1", "33.3")
    strategies = next(f for f in frames if "strategy" in f.columns)
    assert strategies["strategy"].tolist() == ["corners first"]


def test_form_creates_a_sampled_study_then_edits_it_in_versions_and_clones_it(app_env):
    db = open_store(os.environ["ROSE_DB"])
    at = signed_in()
    at.text_input(key="studies_name").input("Sampled")
    at.radio(key="studies_mode").set_value("a sample per cell")
    at.number_input(key="studies_per_cell").set_value(2)
    at.number_input(key="studies_sample_seed").set_value(11)
    at.number_input(key="studies_items").set_value(10)
    at.number_input(key="studies_planned").set_value(15)
    at.button[0].click()
    at.run()
    assert not at.exception and at.success and "Created study" in at.success[0].value
    (study,) = list_studies(db)
    cfg = study.config
    assert cfg.sample.per_cell == 2 and cfg.sample.seed == 11 and cfg.participants == 15 and len(cfg.sample_ids) == 50
    assert {m.label: m.value for m in at.metric}["Pool instances"] == "50"
    assert any("Version 1 · closed" in c.value for c in at.caption)   # a draft until its texts are filled in
    # the export is the study file of these settings
    from rose_core.instrument.study_file import dump_study, load_study_text, settings

    exported = at.get("download_button")[0].proto.label
    assert "export-config" in exported
    # edit: the form is the study's, prefilled; saving makes version 2
    key = f"studies_edit_{study.study_id}"
    assert at.number_input(key=f"{key}_per_cell").value == 2
    at.number_input(key=f"{key}_items").set_value(5)
    at.number_input(key=f"{key}_per_cell").set_value(1)
    next(b for b in at.button if b.label == "Save as a new version").click()
    at.run()
    assert not at.exception
    (study,) = list_studies(db)
    assert study.version == 2 and study.config.items_per_participant == 5 and len(study.config.sample_ids) == 25
    assert any("Version 2" in c.value for c in at.caption)
    at.toggle(key="plan_own").set_value(True).run()        # the planner plans the study's own 25-item sample
    assert {m.label: m.value for m in at.metric}["Plan: participants"] == "15"   # 25 × 3 ÷ 5
    # a real participant freezes everything but the texts
    from rose_core.instrument.joining import join

    join(db, study, "P1", "link")
    at.run()
    assert any("1 participant has joined" in i.value for i in at.info)
    at.number_input(key=f"{key}_items").set_value(6)
    next(b for b in at.button if b.label == "Save as a new version").click()
    at.run()
    assert any("items_per_participant: the study has 1 participant" in e.value for e in at.error)
    assert list_studies(db)[0].version == 2
    # clone
    at.text_input(key=f"studies_clone_name_{study.study_id}").input("Sampled again")
    at.button(key=f"studies_clone_{study.study_id}").click()
    at.run()
    assert not at.exception
    twin = next(s for s in list_studies(db) if s.name == "Sampled again")
    assert twin.config.sample_ids == study.config.sample_ids and twin.version == 1
    assert settings(load_study_text(dump_study(twin.config), "x", None)) == settings(twin.config)


def _study_with_people(app_env):
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study
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
    at.text_input(key="studies_decided_by").input("JD")
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


def test_a_study_file_beyond_the_forms_usual_range_opens_and_keeps_its_values(app_env):
    """A study file may set more raters, items or minutes than the form's fields usually offer (the study's checks
    accept them): the Studies page opens it and its form shows the study's own values (it raised on the first
    value above a field's top, a traceback instead of the page)."""
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study

    cfg = StudyConfig(name="big", target_per_instance=1000, items_per_participant=600, practice_items=0,
                      practice_max_attempts=7, attention_every=150, time_limit_minutes=900,
                      release_after_minutes=2000)
    study = create_study(open_store(os.environ["ROSE_DB"]), app_env, cfg)
    at = signed_in()
    assert not at.exception
    key = f"studies_edit_{study.study_id}"
    shown = {k: at.number_input(key=f"{key}_{k}").value for k in ("target", "items", "practice", "attempts", "att",
                                                                   "limit", "release")}
    assert shown == {"target": 1000, "items": 600, "practice": 0, "attempts": 7, "att": 150, "limit": 900,
                     "release": 2000}
