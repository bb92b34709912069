"""The click grid in real Chromium through the harness page: looks, names, events, restore, timing."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

from rose_core.benchmarks.rose.render import HIGHLIGHT_EDGE, HIGHLIGHT_FILL

from .grid_harness import DESKTOP, harness, open_grid, wait_ack  # noqa: F401  (fixture)

SELECT_RGB = (0x1C, 0x63, 0xE1)
FOCUS_RGB = (0xB4, 0x00, 0xB4)


@pytest.fixture
def desk(browser):
    ctx = browser.new_context(**DESKTOP)
    pg = ctx.new_page()
    pg.set_default_timeout(20_000)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    ctx.close()
    assert errors == []  # no JavaScript error in any test


def cell(page, r, c):
    return page.get_by_role("button", name=f"row {r} column {c}", exact=True)


def shot(page, box, pad=0) -> np.ndarray:
    clip = {"x": box["x"] - pad, "y": box["y"] - pad, "width": box["width"] + 2 * pad, "height": box["height"] + 2 * pad}
    return np.asarray(Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")).astype(int)


def near(px: np.ndarray, rgb, tol=40) -> np.ndarray:
    return (np.abs(px - np.array(rgb)).sum(axis=-1) <= tol)


def test_selection_is_a_border_that_does_not_tint(desk, harness):  # noqa: F811
    open_grid(desk, harness, rows=6, cols=6, mode="click", view="tint")
    b = cell(desk, 3, 4)
    box = b.bounding_box()
    desk.mouse.move(2, 2)
    before = shot(desk, box)
    b.click()
    desk.mouse.move(2, 2)
    desk.wait_for_function("() => document.activeElement && document.activeElement.blur() === undefined")
    assert b.get_attribute("aria-pressed") == "true"
    after = shot(desk, box)
    edge = 5  # the selection ring is 4 CSS px wide, inside the cell
    assert np.array_equal(before[edge:-edge, edge:-edge], after[edge:-edge, edge:-edge])  # interior untouched
    ring = np.concatenate([after[:3].reshape(-1, 3), after[-3:].reshape(-1, 3)])
    assert near(ring, SELECT_RGB).mean() > 0.8  # and the edge shows the selection colour
    assert not np.array_equal(before, after)


def test_focus_ring_differs_from_selection_and_t4_highlight(desk, harness):  # noqa: F811
    open_grid(desk, harness, rows=6, cols=6, mode="click", view="focus", hl="1")
    colours = desk.evaluate("""() => { const s = getComputedStyle(document.querySelector('.rg-root'));
        return [s.getPropertyValue('--rg-focus'), s.getPropertyValue('--rg-select')]; }""")
    hexrgb = [tuple(int(c.strip()[i:i + 2], 16) for i in (1, 3, 5)) for c in colours]
    assert hexrgb == [FOCUS_RGB, SELECT_RGB]
    for a, b in [(FOCUS_RGB, SELECT_RGB), (FOCUS_RGB, HIGHLIGHT_EDGE), (FOCUS_RGB, HIGHLIGHT_FILL),
                 (SELECT_RGB, HIGHLIGHT_EDGE), (SELECT_RGB, HIGHLIGHT_FILL)]:
        assert sum(abs(x - y) for x, y in zip(a, b)) > 200, (a, b)
    # Keyboard: Tab into the grid, arrow to a cell, select it; the ring is drawn and is magenta.
    cell(desk, 1, 1).focus()
    desk.keyboard.press("ArrowDown")
    desk.keyboard.press("ArrowRight")
    assert desk.evaluate("document.activeElement.getAttribute('aria-label')") == "row 2 column 2"
    box = cell(desk, 2, 2).bounding_box()
    focused = shot(desk, box, pad=6)
    ring = np.concatenate([focused[:5].reshape(-1, 3), focused[-5:].reshape(-1, 3)])
    assert near(ring, FOCUS_RGB).mean() > 0.3
    desk.keyboard.press("Space")
    assert cell(desk, 2, 2).get_attribute("aria-pressed") == "true"
    both = shot(desk, box, pad=6)
    assert near(both, FOCUS_RGB).sum() > 100 and near(both, SELECT_RGB).sum() > 100  # both visible at once
    desk.keyboard.press("ArrowRight")
    desk.keyboard.press("Enter")
    assert cell(desk, 2, 3).get_attribute("aria-pressed") == "true"


@pytest.mark.parametrize("mode,submit,label", [
    ("click", "DONE", None), ("click_submit", "SUBMIT", "Number of odd cells outside the excluded area:"),
    ("count", "SUBMIT", "Number of odd cells:")])
def test_accessible_names(desk, harness, mode, submit, label):  # noqa: F811
    open_grid(desk, harness, rows=5, cols=5, mode=mode, view=f"names-{mode}")
    assert desk.get_by_role("button", name=submit, exact=True).count() == 1
    if mode == "count":
        assert desk.locator(".rg-cell").count() == 0
    else:
        assert desk.get_by_role("button", name="Undo", exact=True).count() == 1
        assert desk.get_by_role("button", name="Clear", exact=True).count() == 1
        for r in range(1, 6):
            for c in range(1, 6):
                assert cell(desk, r, c).get_attribute("aria-pressed") == "false"
        cell(desk, 5, 1).click()
        assert cell(desk, 5, 1).get_attribute("aria-pressed") == "true"
    if label:
        field = desk.get_by_label(label, exact=True)
        assert field.count() == 1 and field.get_attribute("inputmode") == "numeric"
    else:
        assert desk.locator("input").count() == 0


def sent_seqs(recs):
    return [e["seq"] for rec in recs for e in rec["value"]["events"]]


def test_each_event_sent_until_acknowledged_and_never_after(desk, harness):  # noqa: F811
    view = "deltas"
    open_grid(desk, harness, rows=6, cols=6, mode="click", view=view)
    actions = [lambda: cell(desk, 1, 1).click(), lambda: cell(desk, 2, 2).click(), lambda: cell(desk, 2, 2).click(),
               lambda: desk.get_by_role("button", name="Undo").click(), lambda: cell(desk, 4, 5).click(),
               lambda: desk.get_by_role("button", name="Clear").click(), lambda: cell(desk, 6, 6).click()]
    for i, act in enumerate(actions):
        act()
        wait_ack(desk, i + 1)  # the server stored it and told the browser so
    recs = harness.records(view, "grid")
    assert sent_seqs(recs) == list(range(len(actions)))  # each event sent once: none re-sent after its ack
    assert all(e["seq"] >= rec["ack_before"] for rec in recs for e in rec["value"]["events"])
    events = [e for rec in recs for e in rec["value"]["events"]]
    assert [e["type"] for e in events] == ["click", "click", "unclick", "undo", "click", "clear", "click"]
    assert (events[3]["r"], events[3]["c"], events[3]["value"]) == (2, 2, "unclick")  # undo says what it undid
    assert events[5]["value"] == "3"
    assert all(e["t"] >= 0 and e["active_ms"] >= 0 for e in events)
    assert [e["t"] for e in events] == sorted(e["t"] for e in events)
    assert recs[-1]["value"]["selection"] == [[6, 6]]
    # Acks re-render the component with new data: the live selection survived every one of them.
    assert cell(desk, 6, 6).get_attribute("aria-pressed") == "true"
    assert desk.locator('.rg-cell[aria-pressed="true"]').count() == 1


def test_burst_of_clicks_loses_nothing(desk, harness):  # noqa: F811
    view = "burst"
    open_grid(desk, harness, rows=5, cols=5, mode="click", view=view)
    clicks = [((i * 7) % 5 + 1, (i * 3) % 5 + 1) for i in range(25)]
    desk.evaluate("""cells => { for (const [r, c] of cells)
        document.querySelector(`.rg-cell[data-r="${r}"][data-c="${c}"]`).click(); }""", [list(x) for x in clicks])
    wait_ack(desk, 25)
    recs = harness.records(view, "grid")
    seqs = sent_seqs(recs)
    assert set(seqs) == set(range(25))
    expected: set = set()
    for rc in clicks:
        expected ^= {rc}
    assert {tuple(x) for x in recs[-1]["value"]["selection"]} == expected
    shown = {(int(b.get_attribute("data-r")), int(b.get_attribute("data-c")))
             for b in desk.locator('.rg-cell[aria-pressed="true"]').all()}
    assert shown == expected
    n = len(recs)
    cell(desk, 1, 1).click()  # after the acks, only the new event travels
    recs = harness.wait_records(view, lambda rs: len(rs) > n, "grid")
    assert sent_seqs(recs[n:]) == [25]


def test_restore_shows_selection_count_and_continues_numbering(desk, harness):  # noqa: F811
    view = "restore"
    restore = {"selection": [[1, 2], [3, 3]], "count": "4", "next_seq": 5, "active_ms": 1500.0,
               "first_action_ms": 800.0}
    params = dict(rows=5, cols=5, mode="click_submit", view=view, restore=json.dumps(restore))
    open_grid(desk, harness, **params)
    assert pressed(desk) == {(1, 2), (3, 3)}
    assert desk.get_by_label("Number of odd cells outside the excluded area:").input_value() == "4"
    assert desk.locator(".rg-status").inner_text() == "2 cells selected"
    assert desk.locator(".rg-root").get_attribute("data-ack") == "5"
    cell(desk, 2, 2).click()
    cell(desk, 1, 2).click()
    wait_ack(desk, 7)
    rec = harness.records(view, "grid")[0]["value"]
    assert [e["seq"] for e in rec["events"]] == [5]  # numbering continues from the restore
    assert {tuple(x) for x in rec["selection"]} == {(1, 2), (3, 3), (2, 2)}
    assert rec["first_action_ms"] == 800.0 and rec["active_ms"] >= 1500.0 and rec["count"] == "4"
    desk.reload()  # the harness now restores what it stored: (1, 2) was unclicked, (2, 2) added
    desk.locator(".rg-root").wait_for()
    assert pressed(desk) == {(3, 3), (2, 2)}
    assert desk.locator(".rg-root").get_attribute("data-ack") == "7"
    cell(desk, 5, 5).click()
    recs = harness.wait_records(view, lambda rs: len(rs) == 3, "grid")
    assert [e["seq"] for e in recs[-1]["value"]["events"]] == [7]
    assert recs[-1]["value"]["first_action_ms"] == 800.0


def test_new_view_in_the_same_place_starts_from_its_own_restore(desk, harness):  # noqa: F811
    open_grid(desk, harness, rows=5, cols=5, mode="click", view="first", next="second")
    cell(desk, 2, 4).click()
    wait_ack(desk, 1)
    desk.get_by_role("button", name="Next view").click()
    desk.wait_for_function("() => document.querySelector('.rg-root').dataset.view === 'second'")
    assert pressed(desk) == set() and desk.locator(".rg-root").get_attribute("data-ack") == "0"
    cell(desk, 1, 1).click()
    rec = harness.wait_records("second", lambda rs: len(rs) == 1, "grid")[0]["value"]
    assert [(e["seq"], e["type"]) for e in rec["events"]] == [(0, "click")] and rec["selection"] == [[1, 1]]
    assert rec["first_action_ms"] is not None
    assert [e["seq"] for r in harness.records("first", "grid") for e in r["value"]["events"]] == [0]


def pressed(page) -> set[tuple[int, int]]:
    return {(int(b.get_attribute("data-r")), int(b.get_attribute("data-c")))
            for b in page.locator('.rg-cell[aria-pressed="true"]').all()}


def test_typing_is_an_action_and_the_error_goes_once_valid(desk, harness):  # noqa: F811
    view = "typing"
    open_grid(desk, harness, rows=4, cols=4, mode="count", view=view)
    field = desk.get_by_label("Number of odd cells:")
    desk.get_by_role("button", name="SUBMIT").click()  # empty: refused in the page
    err = desk.get_by_role("alert")
    assert "whole number" in err.inner_text()
    assert field.get_attribute("aria-invalid") == "true"
    field.press_sequentially("1x")
    assert "whole number" in err.inner_text()  # still not a whole number
    field.fill("99999999999999999999999")       # beyond what the server accepts: refused with the range
    desk.get_by_role("button", name="SUBMIT").click()
    assert "0 to 999999" in err.inner_text()
    field.fill("1x")
    field.press("Backspace")
    assert err.inner_text() == ""  # gone as soon as the input is valid
    field.press_sequentially("2")
    recs = harness.wait_records(view, lambda rs: any(e["type"] == "count_input" and e["value"] == "12"
                                                     for r in rs for e in r["value"]["events"]), "grid")
    last = recs[-1]["value"]
    events = [e for r in recs for e in r["value"]["events"]]
    first_input = min(e["t"] for e in events if e["type"] == "count_input")
    assert last["first_action_ms"] is not None and 0 < last["first_action_ms"] <= first_input
    assert last["count"] == "12"
    field.press("Enter")  # Enter submits
    sub = harness.wait_records(view, lambda rs: len(rs) == 1, "submit")[0]["value"]
    assert sub["count"] == "12" and sub["selection"] == [] and sub["view_id"] == view
    assert sub["viewport"] == [1280, 720] and sub["dpr"] == 1 and sub["focus_lost"] is False
    assert sub["client_total_ms"] >= sub["active_ms"] > 0 and sub["first_action_ms"] == last["first_action_ms"]
    assert all(e["seq"] >= 0 for e in sub["events"])
    assert desk.get_by_role("button", name="SUBMIT").is_disabled()  # once per press


def test_hidden_page_is_not_active_time(browser, harness):  # noqa: F811
    view = "hidden"
    ctx = browser.new_context(**DESKTOP)
    page = ctx.new_page()
    try:
        open_grid(page, harness, rows=4, cols=4, mode="click", view=view)
        page.evaluate("""() => { Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});
                                 document.dispatchEvent(new Event('visibilitychange')); }""")
        page.wait_for_timeout(600)  # time that must not count as active
        page.evaluate("""() => { Object.defineProperty(document, 'visibilityState', {value: 'visible', configurable: true});
                                 document.dispatchEvent(new Event('visibilitychange')); }""")
        recs = harness.wait_records(view, lambda rs: [e["type"] for r in rs for e in r["value"]["events"]]
                                    [-2:] == ["hidden", "visible"], "grid")
        events = [e for r in recs for e in r["value"]["events"]]
        hidden, visible = events[-2], events[-1]
        assert visible["t"] - hidden["t"] >= 550
        assert visible["active_ms"] - hidden["active_ms"] < 100
        assert recs[-1]["value"]["first_action_ms"] is None  # attention changes are not actions
    finally:
        ctx.close()
