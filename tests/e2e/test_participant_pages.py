"""The pages around the item in real Chromium on the real server: the device check before consent, the forward
button visible without scrolling on the instructions and practice feedback pages at 1280×720 and on a 390×844
phone, and leaving by Back asking first.

One server per module: every test makes its own study in the shared database."""
from __future__ import annotations

import pytest

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store

from tests.participants import LAB_INFO

from .helpers import answer, shown_item, wait_until

DESKTOP = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}


def _study(live, ds, name: str, **kw):
    cfg = dict(name=name, split="test", practice_items=4, attention_every=0, items_per_participant=1, seed=5,
               info=LAB_INFO)
    cfg.update(kw)
    return create_study(open_store(live.db), ds, StudyConfig(**cfg))


def _page(browser, viewport: dict, phone: bool = False):
    ctx = browser.new_context(viewport=viewport, has_touch=phone, is_mobile=phone,
                              device_scale_factor=3 if phone else 1)
    pg = ctx.new_page()
    pg.set_default_timeout(20_000)
    return ctx, pg


def _link(live, study, pid: str) -> str:
    return f"{live.url}/?study={study.study_id}&PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X"


def _visible_without_scrolling(page, name: str = "Continue") -> dict:
    """The button's box lies inside the window as first shown (no scrolling), and the button is what is drawn at
    its centre (nothing covers it)."""
    button = page.get_by_role("button", name=name, exact=True)
    box, on_top = None, None
    # the previous page's button of the same name may still be leaving, and the new page's elements still coming in
    # over it: the check is of the page once it has settled (a button that stays covered fails below)
    for _ in range(50):
        button.wait_for()
        page.wait_for_timeout(300)  # images and fonts settle the layout
        box = button.bounding_box()
        if box is None:
            continue
        on_top = page.evaluate("""([x, y]) => { const e = document.elementFromPoint(x, y);
                                   return !!e && !!e.closest('button') && e.closest('button').innerText.trim(); }""",
                               [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
        if on_top == name:
            break
    assert box is not None, "no Continue button on the page"
    vh = page.viewport_size["height"]
    scrolled = page.evaluate("() => { const m = document.querySelector('[data-testid=stMain]');"
                             " return (m ? m.scrollTop : 0) + window.scrollY; }")
    assert scrolled == 0, scrolled
    assert box["y"] >= 0 and box["y"] + box["height"] <= vh, (box, vh)
    assert on_top == name, on_top
    return {"top": box["y"], "bottom": box["y"] + box["height"], "window": vh,
            "page_height": page.evaluate("() => { const m = document.querySelector('[data-testid=stMain]');"
                                         " return m ? m.scrollHeight : document.body.scrollHeight; }")}


@pytest.mark.parametrize("size, phone", [(DESKTOP, False), (PHONE, True)], ids=["1280x720", "390x844"])
def test_continue_is_visible_without_scrolling_on_instructions_and_feedback(live, browser, small_dataset, size,
                                                                            phone):
    study = _study(live, small_dataset, f"fit-{size['width']}", allow_phones=True)
    store = open_store(live.db)
    ctx, page = _page(browser, size, phone)
    try:
        page.goto(_link(live, study, "FIT"))
        page.get_by_text("I have read the above").click()
        consent = _visible_without_scrolling(page)
        page.get_by_role("button", name="Continue").click()
        page.get_by_text("How it works").wait_for()
        instr = _visible_without_scrolling(page)
        page.get_by_role("button", name="Continue").click()
        page.locator(".rg-root").wait_for(timeout=60_000)  # the module's first item: a cold server, a loaded machine
        item = shown_item(store, small_dataset, study.study_id, "FIT")
        answer(page, item, right=False)  # wrong: the longest feedback (every cell listed)
        page.get_by_text("The instruction was:").wait_for()
        fb = _visible_without_scrolling(page)
        print(f"\n{size}: consent {consent}, instructions {instr}, feedback {fb}")
        assert instr["page_height"] > instr["window"] or fb["page_height"] > fb["window"] or size is DESKTOP
    finally:
        ctx.close()


def test_a_small_window_is_refused_before_consent_with_what_is_needed(live, browser, small_dataset):
    study = _study(live, small_dataset, "small-window")
    store = open_store(live.db)
    ctx, page = _page(browser, PHONE, phone=True)
    try:
        page.goto(_link(live, study, "PHONE1"))
        page.get_by_text("Please use a larger screen").wait_for()
        text = page.locator("[data-testid=stMain]").inner_text()
        assert "1024 × 640 pixels" in text and "390 × 844" in text and "computer" in text
        assert page.get_by_text("I have read the above").count() == 0    # no consent, no item
        row = wait_until(lambda: store.query(
            "SELECT d.* FROM devices d JOIN participants p USING (participant_id) WHERE p.external_id = 'PHONE1'"),
            lambda r: len(r) == 1, what="the stored claim")[0]
        assert (row["viewport_w"], row["viewport_h"], row["dpr"], row["touch_points"], row["coarse_pointer"],
                row["allowed"]) == (390, 844, 3.0, 1, 1, 0)
        assert store.query("SELECT consent_at FROM participants WHERE external_id = 'PHONE1'")[0]["consent_at"] is None
        page.set_viewport_size(DESKTOP)                                 # the window made larger: on by itself
        page.get_by_text("I have read the above").wait_for()
        assert page.get_by_text("Please use a larger screen").count() == 0
        row = wait_until(lambda: store.query("SELECT d.* FROM devices d JOIN participants p USING (participant_id) "
                                             "WHERE p.external_id = 'PHONE1'"),
                         lambda r: r[0]["allowed"] == 1, what="the new claim")[0]
        assert (row["viewport_w"], row["viewport_h"], row["reports"]) == (1280, 720, 2)
    finally:
        ctx.close()


def test_leaving_by_back_asks_first_and_staying_keeps_the_page(live, browser, small_dataset):
    study = _study(live, small_dataset, "back")
    ctx, page = _page(browser, DESKTOP)
    asked: list[str] = []
    try:
        page.goto(f"{live.url}/_stcore/health")                        # where the participant came from
        page.goto(_link(live, study, "BACK"))
        page.get_by_text("I have read the above").click()
        page.get_by_role("button", name="Continue").click()
        page.get_by_text("How it works").wait_for()
        page.wait_for_timeout(500)                                     # the guard element is mounted

        def stay(dialog):
            asked.append(dialog.type)
            dialog.dismiss()                                           # "Stay on this page"

        page.on("dialog", stay)
        with pytest.raises(Exception):  # the navigation never happens: Back was cancelled
            page.go_back(timeout=3_000)
        assert asked == ["beforeunload"]
        assert "study=" in page.url
        page.get_by_text("How it works").wait_for()
        page.remove_listener("dialog", stay)
        page.on("dialog", lambda d: (asked.append(d.type), d.accept()))  # "Leave": gone, progress kept
        page.go_back()
        assert asked == ["beforeunload", "beforeunload"] and "health" in page.url
    finally:
        ctx.close()


def test_the_end_page_never_asks(live, browser, small_dataset):
    study = _study(live, small_dataset, "end-free", practice_items=0, completion_code="END-1")
    store = open_store(live.db)
    ctx, page = _page(browser, DESKTOP)
    asked: list[str] = []
    try:
        page.goto(f"{live.url}/_stcore/health")
        page.goto(_link(live, study, "ENDP"))
        page.get_by_text("I have read the above").click()
        page.get_by_role("button", name="Continue").click()
        page.get_by_text("How it works").wait_for()
        page.get_by_role("button", name="Continue").click()
        page.locator(".rg-root").wait_for()
        answer(page, shown_item(store, small_dataset, study.study_id, "ENDP"))
        page.get_by_text("END-1").wait_for()
        page.wait_for_timeout(500)
        page.on("dialog", lambda d: (asked.append(d.type), d.dismiss()))
        page.go_back()
        assert asked == [] and "health" in page.url
    finally:
        ctx.close()
