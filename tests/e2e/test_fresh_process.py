"""A server process that has just started (a restart, or a cluster's replacement process) shows its first visitors
nothing of the experimenter side: no page names, and no page reached by its URL without signing in.

Streamlit treats a folder named `pages/` beside the main script as its automatic page list: until the first run
of `app.py` called `st.navigation`, every new session listed those pages and ran the one its URL named (that is why
the page scripts live in `app_pages/`)."""
from pathlib import Path

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store

from .conftest import start_server
from .helpers import script_run
from tests.participants import LAB_INFO

EXPERIMENTER_URLS = ["studies", "model_runs", "scene_explorer", "results", "agreement", "participants_overview",
                     "drilldown", "sgp_results", "sgp_replay"]
EXPERIMENTER_NAMES = {"studies", "model runs", "scene explorer", "results", "agreement", "participants overview",
                      "drilldown", "sgp results", "sgp replay", "Studies", "Model runs", "Scene explorer", "Results",
                      "Agreement and difficulty", "Participants", "Drill-down", "SGP results", "SGP episode replay"}


def test_no_folder_streamlit_would_list_as_pages():
    assert not (Path(__file__).resolve().parents[2] / "pages").exists()


def test_first_visitors_of_a_fresh_process_get_the_sign_in_page_whatever_url_they_ask(small_dataset, tmp_path):
    srv = start_server(small_dataset, tmp_path)
    try:
        for name in EXPERIMENTER_URLS[:3]:  # three new sessions in a row, each asking for a page by its URL
            got = script_run(srv.port, page_name=name)
            assert got["headings"] == ["ROSE Studio"], (name, got)
            assert got["navigation"] == [["Sign in"]] and got["session_pages"] == 1, (name, got)
    finally:
        srv.stop()


def test_a_participant_first_on_a_fresh_process_sees_no_experimenter_page_name(small_dataset, tmp_path, browser):
    srv = start_server(small_dataset, tmp_path)
    try:
        study = create_study(open_store(srv.db), small_dataset, StudyConfig(
            info=LAB_INFO, name="fresh", practice_items=0, allow_phones=True))  # a protocol-level visit runs no JS
        got = script_run(srv.port, query=f"study={study.study_id}&PROLIFIC_PID=FRESH1", page_name="results")
        assert got["navigation"] == [["ROSE study"]] and got["session_pages"] == 1, got
        assert got["headings"] == ["Welcome"], got
        srv.stop()
        srv.start()  # fresh again: now a real browser, first visitor, on a study link
        page = browser.new_page()
        page.goto(f"{srv.url}/?study={study.study_id}&PROLIFIC_PID=FRESH2")
        page.get_by_text("I have read the above").wait_for()
        text = page.locator("body").inner_text()
        assert not any(n in text.split() or n in text for n in EXPERIMENTER_NAMES - {"Participants"}), text
        assert page.locator('[data-testid="stSidebarNav"]').count() == 0
        page.goto(f"{srv.url}/results?study={study.study_id}&PROLIFIC_PID=FRESH2")
        page.get_by_text("I have read the above").wait_for()
        assert page.get_by_role("heading", name="Results").count() == 0
        page.close()
    finally:
        srv.stop()
