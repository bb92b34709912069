"""Prolific end to end in Chromium against the real server: the screen-out page with its code and redirect, the
time limit's countdown, and what the participant sees (and the database stores) when it runs out."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from rose_core.instrument.ids import FakeClock
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store
from tests.participants import LAB_INFO

from .helpers import participant_id, shown_item, start, wait_until
from .helpers import answer as answer_item

SIZES = {"desktop": {"width": 1280, "height": 720}, "phone": {"width": 390, "height": 844}}


def _shot(page, name: str) -> None:
    """Screenshots for the record when ROSE_E2E_SHOTS names a folder."""
    folder = os.environ.get("ROSE_E2E_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


@pytest.mark.parametrize("size", list(SIZES))
def test_screen_out_page_shows_the_code_then_sends_the_participant_on(live, browser, small_dataset, landing, size):
    store = open_store(live.db)
    study = create_study(store, small_dataset, StudyConfig(info=LAB_INFO, allow_phones=True,
        name=f"screen-out {size}", split="test", items_per_participant=4, practice_items=4, practice_max_attempts=1,
        attention_every=0, seed=3, completion_code="C0MPLETE", screen_out_code="SCR-77",
        screen_out_url=f"{landing}/screened?cc=SCR-77"))
    ctx = browser.new_context(viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    try:
        pid = f"SO-{size}"
        page.goto(f"{live.url}/?study={study.study_id}&PROLIFIC_PID={pid}&STUDY_ID=PS&SESSION_ID=SS")
        page.get_by_text("I have read the above").wait_for()
        _shot(page, f"consent-{size}")
        start(page, f"{live.url}/?study={study.study_id}&PROLIFIC_PID={pid}&STUDY_ID=PS&SESSION_ID=SS")
        for _ in range(8):   # four practice items answered wrong, each with its feedback
            page.locator(".rg-root").or_(page.get_by_role("button", name="Continue")).first.wait_for()
            if page.get_by_role("button", name="Continue").count():
                button = page.get_by_role("button", name="Continue")
                button.click()
                button.wait_for(state="detached")
                continue
            answer_item(page, shown_item(store, small_dataset, study.study_id, pid), right=False)
        code = page.get_by_text("SCR-77", exact=True)
        code.wait_for()
        assert page.get_by_text("did not reach what this study needs").count() == 1
        assert page.get_by_text("C0MPLETE").count() == 0            # never the completion code
        box = code.bounding_box()
        assert box is not None and box["y"] + box["height"] <= SIZES[size]["height"]  # seen without scrolling
        _shot(page, f"screen-out-{size}")
        page.wait_for_url(f"{landing}/screened*", timeout=20_000)   # then on to Prolific's screen-out URL
        assert page.locator("body").inner_text() == "landed /screened?cc=SCR-77"
        p = store.query("SELECT end_reason, practice_passed FROM participants WHERE external_id = ?", (pid,))[0]
        assert (p["end_reason"], p["practice_passed"]) == ("screened_out", 0)
    finally:
        ctx.close()


def test_countdown_runs_and_the_end_says_the_time_ran_out(live, browser, small_dataset):
    store = open_store(live.db)
    study = create_study(store, small_dataset, StudyConfig(info=LAB_INFO, allow_phones=True,
        name="time limit", split="test", items_per_participant=4, practice_items=0, attention_every=0, seed=4,
        time_limit_minutes=1))
    ctx = browser.new_context(viewport=SIZES["desktop"])
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    try:
        url = f"{live.url}/?study={study.study_id}&PROLIFIC_PID=TL1&STUDY_ID=PS&SESSION_ID=SS"
        start(page, url)
        badge = page.get_by_test_id("rose-countdown")
        badge.wait_for()
        first = badge.inner_text()
        assert re.fullmatch(r"Time left (0:[0-5]\d|1:00)", first), first
        left = int(badge.get_attribute("data-left"))
        wait_until(lambda: int(badge.get_attribute("data-left")), lambda now: now < left, timeout=5,
                   what="the countdown moving", page=page)   # it counts down (in a shadow root: read by locator)
        box = badge.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 720
        _shot(page, "countdown-desktop")
        # Move the server's clock for this participant: consent 55 s ago (server time is the truth).
        pid = participant_id(store, study.study_id, "TL1")
        with store.write() as c:
            c.execute("UPDATE participants SET consent_at = ? WHERE participant_id = ?", (time.time() - 55, pid))
        page.reload()
        page.get_by_test_id("rose-countdown").wait_for()
        assert int(page.get_by_test_id("rose-countdown").get_attribute("data-left")) <= 6
        # no click: the page's own timer reruns it once the time is up, and the server ends the participant
        page.get_by_text("The time limit for this study has passed").wait_for(timeout=20_000)
        assert page.get_by_text("return your submission").count() == 1   # no code: the advice instead
        assert page.get_by_test_id("rose-countdown").count() == 0
        wait_until(lambda: store.query("SELECT end_reason FROM participants WHERE participant_id = ?", (pid,)),
                   lambda rows: rows[0]["end_reason"] == "timed_out", what="timed_out stored")
    finally:
        ctx.close()


def test_preview_from_the_studies_page_then_the_approvals_csv(live, browser, small_dataset):
    """The experimenter previews the study from its page (a real participant flow in a new tab), two Prolific
    participants take part (one screened out at practice), and the approvals CSV the page sends holds the two
    of them, never the preview."""
    import csv
    import io

    from tests.participants import fail_to_the_end, new_session, run_to_end

    from .conftest import PASSWORD
    from .helpers import sign_in
    from .test_experimenter_pages import _choose_study

    store = open_store(live.db)
    study = create_study(store, small_dataset, StudyConfig(info=LAB_INFO, allow_phones=True,
        name="preview and approvals", split="test", items_per_participant=2, practice_items=4,
        practice_max_attempts=1, attention_every=0, seed=6, completion_code="OK-1", screen_out_code="OUT-1"))
    ctx = browser.new_context(viewport=SIZES["desktop"], accept_downloads=True)
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    try:
        sign_in(page, live.url, PASSWORD)
        _choose_study(page, study)
        page.get_by_role("button", name="Open the study as a participant").click()
        link = page.get_by_role("link", name="Start the preview (new tab)")
        link.wait_for()
        url = link.get_attribute("href")
        assert url.startswith(f"{live.url}/?study={study.study_id}&pid=preview-"), url
        pid = url.rsplit("pid=", 1)[1]
        visitor = ctx.new_page()
        start(visitor, url)
        for _ in range(12):   # the practice (with feedback) and the main items, answered right
            visitor.locator(".rg-root").or_(visitor.get_by_role("button", name="Continue")).or_(
                visitor.get_by_text("Thank you!")).first.wait_for()
            if visitor.get_by_text("Thank you!").count():
                break
            if visitor.get_by_role("button", name="Continue").count():
                button = visitor.get_by_role("button", name="Continue")
                button.click()
                button.wait_for(state="detached")
                continue
            answer_item(visitor, shown_item(store, small_dataset, study.study_id, pid))
        visitor.get_by_text("OK-1").wait_for()
        assert store.query("SELECT origin, end_reason FROM participants WHERE external_id = ?", (pid,)) == [
            {"origin": "preview", "end_reason": "completed"}]
        clock = FakeClock()
        run_to_end(new_session(store, small_dataset, study, "PROLIFIC-A", clock=clock),
                   on_item=lambda screen: clock.advance(5.0))   # server time per item: not "too fast"
        assert fail_to_the_end(new_session(store, small_dataset, study, "PROLIFIC-B")).reason == "screened_out"
        sign_in(page, live.url, PASSWORD)   # a new page load is a new session: signed in again
        _choose_study(page, study)
        with page.expect_download() as dl:
            page.get_by_role("button", name="Approvals CSV").click()
        rows = list(csv.DictReader(io.StringIO(open(dl.value.path(), encoding="utf-8").read())))
        assert [(r["participant_id"], r["status"]) for r in rows] == [("PROLIFIC-A", "approve"),
                                                                       ("PROLIFIC-B", "screened_out")]
        _shot(page, "studies-page-desktop")
    finally:
        ctx.close()
