"""The Studies page in Chromium on the real server: a study file uploaded creates the study it describes, a bad
one is refused naming the key (nothing created), and the study's download is a study file that loads to the same
settings."""
from __future__ import annotations

from pathlib import Path

from rose_core.instrument.study import list_studies
from rose_core.instrument.study_file import load_study_file, load_study_text, settings
from rose_core.storage import open_store

from .conftest import PASSWORD
from .grid_harness import DESKTOP
from .helpers import sign_in

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "study.toml"


def test_upload_a_study_file_then_download_it_back(live, browser, tmp_path):
    store = open_store(live.db)
    before = {s.study_id for s in list_studies(store)}
    ctx = browser.new_context(**DESKTOP, accept_downloads=True)
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    try:
        sign_in(page, live.url, PASSWORD)
        page.locator(".st-key-studies_upload").wait_for(state="attached")
        if not page.locator(".st-key-studies_upload").is_visible():   # collapsed when the server has studies
            page.get_by_text("Create a study").first.click()
        bad = tmp_path / "bad.toml"
        bad.write_text('name = "bad"\nraters_per_items = 3\n', encoding="utf-8")
        page.locator(".st-key-studies_upload input[type=file]").set_input_files(str(bad))
        page.locator(".st-key-studies_upload_create button").click()
        page.get_by_text("raters_per_items: unknown key (did you mean raters_per_item?)").wait_for()
        assert {s.study_id for s in list_studies(store)} == before

        # an upload brings no files along: the example without its [texts] table (its .md files), the default
        # texts with the example's facts
        lines, skip = [], False
        for ln in EXAMPLE.read_text(encoding="utf-8").splitlines():
            if ln.startswith("["):
                skip = ln.strip() == "[texts]"
            if not skip:
                lines.append(ln)
        upload = tmp_path / "study.toml"
        upload.write_text("\n".join(lines) + "\n", encoding="utf-8")
        page.locator(".st-key-studies_upload input[type=file]").set_input_files(str(upload))
        # the button is already there (the bad file's): clicked before the new file reached the server, it created
        # from the bad one again. The new file's rerun is over once the bad file's refusal is gone.
        page.get_by_text("raters_per_items: unknown key (did you mean raters_per_item?)").wait_for(state="detached")
        page.locator(".st-key-studies_upload_create button").click()
        page.get_by_text("Created study").wait_for()
        (study,) = [s for s in list_studies(store) if s.study_id not in before]
        assert settings(study.config) == settings(load_study_file(upload))
        assert len(study.config.sample_ids) == 100

        page.get_by_text("Version 1 · open").wait_for()            # the new study is shown (newest first)
        with page.expect_download() as dl:
            page.locator(f".st-key-studies_export_{study.study_id} button").click()
        text = Path(dl.value.path()).read_text(encoding="utf-8")
        assert f"study {study.study_id}, version 1" in text
        assert settings(load_study_text(text, "downloaded.toml", None)) == settings(study.config)
        assert page.locator("[data-testid=stException]").count() == 0
    finally:
        ctx.close()
