"""The study's own texts on the real participant page in Chromium: consent → instructions show the study's Markdown
with its facts (links work, raw HTML is never run), one worked example per kind of answer, the end questionnaire
stored, and a study still holding template markers never reaches a participant."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.texts import TEXT_KEYS
from rose_core.storage import open_store
from rose_core.storage import studies as study_rows

from .helpers import answer, shown_item, start, wait_until
from tests.participants import LAB_INFO

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "texts"
HOSTILE = ('\n\n<img src="x" onerror="window.__pwned = 1"><b id="raw-html">raw</b> '
           '[Read about the lab](https://example.org/lab).\n')
SIZES = {"desktop": (1280, 720), "phone": (390, 844)}


def _texts(**extra: str) -> dict[str, str]:
    texts = {k: (EXAMPLES / f"{k}.md").read_text(encoding="utf-8") for k in TEXT_KEYS}
    return {**texts, **extra}


@pytest.mark.parametrize("size", list(SIZES))
def test_consent_then_instructions_show_the_studys_texts(live, browser, small_dataset, tmp_path, size):
    texts = _texts()
    texts["consent"] += HOSTILE
    study = create_study(open_store(live.db), small_dataset, StudyConfig(
        info=LAB_INFO, texts=texts, name=f"texts-{size}", split="test", practice_items=0, attention_every=0,
        items_per_participant=2, templates=["T3", "T5"], seed=2, allow_phones=True))   # shown on a phone too
    assert study.active
    w, h = SIZES[size]
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    try:
        page.goto(f"{live.url}/?study={study.study_id}&PROLIFIC_PID=T-{size}&STUDY_ID=S&SESSION_ID=X")
        page.get_by_text("Finding the odd one out").wait_for()
        body = page.locator("body").inner_text()
        assert "Dr Ada Example" in body and "approval UEREC-2026-0421" in body and "£2.50" in body
        assert "[[" not in body and "{researcher}" not in body
        assert page.locator('a[href="https://example.org/lab"]').count() == 1       # links work
        assert page.locator("#raw-html").count() == 0                              # raw HTML is not rendered
        assert page.evaluate("window.__pwned") is None                             # nor run
        page.screenshot(path=str(tmp_path / f"consent-{size}.png"), full_page=True)
        page.get_by_text("I have read the above").click()
        page.get_by_role("button", name="Continue").click()
        page.get_by_text("Please work on your own and without tools.").wait_for()
        page.get_by_role("tab", name="Nothing to click").wait_for()
        tabs = page.get_by_role("tab")
        assert [t.inner_text().strip() for t in tabs.all()] == [
            "A named rectangle", "An excluded region, with a count", "Nothing to click"]
        assert page.get_by_text("press DONE", exact=False).first.is_visible()
        page.get_by_role("tab", name="Nothing to click").click()
        page.get_by_text("press DONE without selecting anything").wait_for()
        page.get_by_role("tab", name="An excluded region, with a count").click()
        page.get_by_text("type how many you clicked").wait_for()
        page.screenshot(path=str(tmp_path / f"instructions-{size}.png"), full_page=True)
        page.get_by_role("button", name="Continue").click()
        page.locator(".rg-root").wait_for()
    finally:
        ctx.close()


def test_the_questionnaire_is_answered_in_the_page_and_stored(live, page, small_dataset):
    store = open_store(live.db)
    study = create_study(store, small_dataset, StudyConfig(
        info=LAB_INFO, texts=_texts(), name="questions", split="test", practice_items=0, attention_every=0,
        items_per_participant=1, templates=["T3"], seed=4, questionnaire=["device", "strategy"]))
    start(page, f"{live.url}/?study={study.study_id}&PROLIFIC_PID=Q1&STUDY_ID=S&SESSION_ID=X")
    answer(page, shown_item(store, small_dataset, study.study_id, "Q1"))
    page.get_by_text("A few last questions").wait_for()
    page.get_by_text("Laptop", exact=True).click()
    page.get_by_label("How did you find the odd cells?").fill("Looked for the odd shape row by row.")
    page.get_by_role("button", name="Submit answers").click()
    page.get_by_text("Thank you!").wait_for()
    page.get_by_text("Thank you for helping us.").wait_for()
    rows = wait_until(lambda: store.query("SELECT question, answer FROM questionnaire_answers ORDER BY question"),
                      lambda r: len(r) == 2, what="the answers")
    assert [(r["question"], r["answer"]) for r in rows] == [
        ("device", "laptop"), ("strategy", "Looked for the odd shape row by row.")]


def test_a_study_with_markers_never_reaches_a_participant(live, page, small_dataset):
    store = open_store(live.db)
    study = create_study(store, small_dataset, StudyConfig(name="draft", split="test", practice_items=0))
    assert not study.active
    with store.write() as c:  # opened behind the instrument's back (e.g. stored before texts existed)
        study_rows.set_active(c, study.study_id, True)
    page.goto(f"{live.url}/?study={study.study_id}&PROLIFIC_PID=D1&STUDY_ID=S&SESSION_ID=X")
    page.get_by_text("This study is not ready yet").wait_for()
    assert "[[" not in page.locator("body").inner_text()
    assert store.query("SELECT count(*) AS n FROM participants WHERE study_id = ?", (study.study_id,))[0]["n"] == 0
