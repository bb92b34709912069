"""Studies page: create through the form, see the link and coverage, export."""
import os

from streamlit.testing.v1 import AppTest

from rose_core.store import Store
from rose_core.study import list_studies

from .conftest import PASSWORD, ROOT


def signed_in() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.text_input(key="auth_given").input(PASSWORD)
    at.button[0].click()
    return at.run()


def test_create_study_from_the_form(app_env):
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
    studies = list_studies(Store(os.environ["ROSE_DB"]))
    assert len(studies) == 1
    cfg = studies[0].config
    assert (cfg.name, cfg.split, cfg.subsets, cfg.items_per_participant, cfg.completion_code) == \
        ("Pilot A", "dev", ["EmojiStyle", "PixelEdit"], 12, "ABC123")
    assert any(f"?study={studies[0].study_id}&PROLIFIC_PID=" in c.value for c in at.code)
    assert [m.label for m in at.metric][:2] == ["Pool instances", "Main answers"]


def test_invalid_study_is_explained(app_env):
    at = signed_in()
    at.text_input(key="studies_name").input("")
    at.button[0].click()
    at.run()
    assert at.error and "name: must not be empty" in at.error[0].value
    assert list_studies(Store(os.environ["ROSE_DB"])) == []
