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
