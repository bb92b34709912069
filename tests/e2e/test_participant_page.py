"""The real participant page (app_pages/participant.py on a real Streamlit server, a study made by create_study) in
Chromium: a reload or a reopened tab restores the selection and the number field and the answer is stored once with
its events numbered without a gap; the item fits the screen at desktop and phone sizes; the end page redirects.

One server per module: every test makes its own study and participants in the shared database."""
from __future__ import annotations

import json

import pytest

from rose_core.benchmarks.items import OneShotAnswer
from rose_core.instrument.ids import SequentialIds, system_clock
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.screens import ItemScreen
from rose_core.storage import open_store
from rose_core.storage.connection import Store

from ..participants import answer as answer_in_session
from ..participants import new_session
from .grid_harness import DESKTOP, PHONE
from .helpers import (
    answer,
    participant_id,
    pressed_cells,
    shown_item,
    start,
    wait_until,
)
from .test_click_grid_fit import check_fits
from tests.participants import LAB_INFO


def _study(live, ds, name: str, **kw):
    cfg = dict(name=name, split="test", practice_items=0, attention_every=0, items_per_participant=2, seed=5)
    cfg.update(kw)
    return create_study(open_store(live.db), ds, StudyConfig(info=LAB_INFO, **cfg))


def _link(live, study, pid: str) -> str:
    """The participant's Prolific link; the same study and session ids tests.participants.new_session joins with
    (another session id would be refused as an identity mismatch)."""
    return f"{live.url}/?study={study.study_id}&PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X"


def _two_cells(screen: ItemScreen) -> list[tuple[int, int]]:
    """Two cells to click: right ones first, then wrong ones (the test checks what is stored, not the score)."""
    k = screen.item.key
    every = [(r, c) for r in range(1, k.rows + 1) for c in range(1, k.cols + 1)]
    return (sorted(k.gold_cells) + [rc for rc in every if rc not in k.gold_cells])[:2]


def _view_events(store: Store, pid: str, view: str) -> list[dict]:
    return store.query("SELECT seq, type, row, col, value FROM events WHERE participant_id = ? AND view_id = ? "
                       "ORDER BY seq", (pid, view))


def _select_and_type(page, store: Store, pid: str, screen: ItemScreen) -> tuple[list[tuple[int, int]], int]:
    """Click two cells and type the number; return once the server has stored all three actions."""
    cells, count = _two_cells(screen), screen.item.key.gold_count
    for r, c in cells:
        page.locator(f'.rg-cell[data-r="{r}"][data-c="{c}"]').click()
    page.locator(".rg-count-input").fill(str(count))
    page.locator(".rg-count-input").press("Tab")  # a change: the value is sent now, not after the debounce

    def stored(ev):
        acts = [(e["type"], e["row"], e["col"], e["value"]) for e in ev if e["type"] in ("click", "count_input")]
        return acts == [("click", r, c, None) for r, c in cells] + [("count_input", None, None, str(count))]
    wait_until(lambda: _view_events(store, pid, screen.view_id), stored, what="clicks and number stored")
    return cells, count


def _check_restored_then_submit(page, store: Store, pid: str, screen: ItemScreen, cells, count) -> None:
    page.locator(f'.rg-root[data-view="{screen.view_id}"]').wait_for()
    assert pressed_cells(page) == set(cells)
    assert page.locator(".rg-count-input").input_value() == str(count)
    page.locator(".rg-submit").click()
    rows = wait_until(lambda: store.query("SELECT * FROM responses WHERE participant_id = ? AND view_id = ?",
                                          (pid, screen.view_id)), lambda r: len(r) == 1, what="the response")
    row = rows[0]
    parsed = json.loads(row["parsed"])
    assert [tuple(c) for c in parsed["clicks"]] == cells and parsed["count"] == count
    assert row["protocol"] == screen.item.protocol(OneShotAnswer(tuple(cells), count))
    ev = _view_events(store, pid, screen.view_id)
    assert [e["seq"] for e in ev] == list(range(len(ev)))  # one numbering across the reload, no gap, no repeat
    acts = [(e["type"], e["row"], e["col"]) for e in ev if e["type"] in ("click", "unclick", "count_input")]
    assert acts == [("click", r, c) for r, c in cells] + [("count_input", None, None)]  # nothing sent twice


def test_reload_and_reopened_tab_restore_the_selection(live, browser, small_dataset):
    study = _study(live, small_dataset, "restore", templates=["T5"])  # clicks and a number field
    store = open_store(live.db)
    url = _link(live, study, "REST")
    ctx = browser.new_context(**DESKTOP)
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    try:
        start(page, url)
        page.locator(".rg-root").wait_for()
        pid = participant_id(store, study.study_id, "REST")
        first = shown_item(store, small_dataset, study.study_id, "REST")
        cells, count = _select_and_type(page, store, pid, first)
        page.reload()
        _check_restored_then_submit(page, store, pid, first, cells, count)

        page.wait_for_function("v => document.querySelector('.rg-root')?.dataset.view !== v", arg=first.view_id)
        second = shown_item(store, small_dataset, study.study_id, "REST")
        assert second.view_id != first.view_id
        page.locator(f'.rg-root[data-view="{second.view_id}"]').wait_for()
        cells, count = _select_and_type(page, store, pid, second)
        ctx.close()                                   # the tab is closed; the link opened in a new browser context
        ctx = browser.new_context(**DESKTOP)
        page = ctx.new_page()
        page.set_default_timeout(20_000)
        page.goto(url)
        _check_restored_then_submit(page, store, pid, second, cells, count)
        page.get_by_text("Thank you!").wait_for()
        assert [r["view_id"] for r in store.query("SELECT view_id FROM responses WHERE participant_id = ? "
                                                  "ORDER BY response_id", (pid,))] == [first.view_id, second.view_id]
    finally:
        ctx.close()


STABLE = """() => new Promise(done => {
  // the component fits itself over a few animation frames: wait until the bar stops moving
  let last = null, same = 0;
  const tick = () => {
    const img = document.querySelector('.rg-stage img');
    const bar = document.querySelector('.rg-bar');
    const now = img && img.complete && img.naturalWidth > 0 && bar ? JSON.stringify(bar.getBoundingClientRect()) : null;
    same = now !== null && now === last ? same + 1 : 0;
    last = now;
    if (same >= 3) done(true); else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_item_fits_without_scrolling_on_the_real_page(live, browser, small_dataset, device):
    """The smallest and the largest grid of the dataset on T5 (grid + number field + SUBMIT), on the real page."""
    store = open_store(live.db)
    study = _study(live, small_dataset, f"fit-{device}", templates=["T5"], split="all", items_per_participant=400,
                   target_per_instance=1)
    sizes = {(small_dataset.scenes[i.scene_id].rows, small_dataset.scenes[i.scene_id].cols)
             for i in small_dataset.instances.values() if i.template == "T5"}
    targets = [min(sizes, key=lambda s: (s[0] * s[1], s)), max(sizes, key=lambda s: (s[0] * s[1], s))]
    ext = f"FIT{device}"
    # Move the participant through the study on the server (the real session) to an item of each size; the page
    # then opens the participant's link and shows that item.
    session = new_session(store, small_dataset, study, ext, ids=SequentialIds(ext), clock=system_clock)
    ctx = browser.new_context(**(DESKTOP if device == "desktop" else PHONE))
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    try:
        for size in targets:
            for _ in range(400):
                screen = session.screen()
                assert isinstance(screen, ItemScreen), f"no {size} grid reached: {screen}"
                if (screen.item.key.rows, screen.item.key.cols) == size:
                    break
                answer_in_session(session, screen)
            page.goto(_link(live, study, ext))
            page.locator(f'.rg-root[data-view="{screen.view_id}"]').wait_for()
            page.evaluate(STABLE)
            m = check_fits(page, "click_submit", screen.item.layout.cell_boxes())
            assert len(m["cells"]) == size[0] * size[1]
            assert m["submit"] and m["count"] and m["undo"]
            x0, y0, x1, y1 = m["undo"]
            assert 0 <= y0 and y1 <= m["h"] + 0.5
            assert page.locator(".rg-submit").inner_text() == "SUBMIT"  # the word the T5 instruction uses
            answer_in_session(session, screen)  # on to the next size
        assert targets[0] == (4, 4) and targets[1] == (8, 8)  # the small dataset's extremes, both shown
    finally:
        ctx.close()


def test_end_page_redirects_to_the_completion_url(live, browser, small_dataset, landing):  # noqa: F811
    target = f"{landing}/done?cc=C0DE-77"
    study = _study(live, small_dataset, "redirect", items_per_participant=1, completion_code="C0DE-77",
                   completion_url=target)
    store = open_store(live.db)
    ctx = browser.new_context(**DESKTOP)
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        start(page, _link(live, study, "REDIR"))
        page.locator(".rg-root").wait_for()
        answer(page, shown_item(store, small_dataset, study.study_id, "REDIR"))
        page.get_by_text("You will be redirected in a few seconds.").wait_for()
        assert page.get_by_text("C0DE-77").count() == 1
        page.wait_for_url(f"{landing}/done*", timeout=20_000)
        assert page.locator("body").inner_text() == "landed /done?cc=C0DE-77"
        assert errors == []
        p = store.query("SELECT end_reason FROM participants WHERE external_id = 'REDIR'")[0]
        assert p["end_reason"] == "completed"
    finally:
        ctx.close()


def test_stored_events_are_acknowledged_so_each_message_carries_only_new_ones(live, browser, small_dataset):
    """The page tells the browser what it stored (ack_seq) while the item is on screen, not only after a reload: each
    grid message then carries the new events alone (not the item's whole log again, which grows with every click and
    is refused past 2,000 events)."""
    study = _study(live, small_dataset, "ack", templates=["T3"])
    store = open_store(live.db)
    ctx = browser.new_context(**DESKTOP)
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    sent: list[bytes] = []

    def route(ws):
        server = ws.connect_to_server()
        ws.on_message(lambda m: (sent.append(m if isinstance(m, bytes) else m.encode()), server.send(m)))
        server.on_message(ws.send)
    page.route_web_socket("**/_stcore/stream", route)
    try:
        start(page, _link(live, study, "ACK"))
        pid = participant_id(store, study.study_id, "ACK")
        screen = shown_item(store, small_dataset, study.study_id, "ACK")
        root = page.locator(f'.rg-root[data-view="{screen.view_id}"]')
        root.wait_for()
        for k in range(1, 9):  # click, unclick, ... on one cell: one new event each
            page.locator('.rg-cell[data-r="1"][data-c="1"]').click()
            n = len(wait_until(lambda: _view_events(store, pid, screen.view_id),
                               lambda ev: len([e for e in ev if e["type"] in ("click", "unclick")]) == k,
                               what=f"click {k} stored", page=page))
            page.wait_for_function("([v, n]) => Number(document.querySelector(`.rg-root[data-view=\"${v}\"]`)"
                                   "?.dataset.ack) >= n", arg=[screen.view_id, n])
        grid_messages = [m for m in sent if b'"view_id"' in m and screen.view_id.encode() in m]
        assert grid_messages
        assert max(m.count(b'"seq"') for m in grid_messages[-4:]) <= 2, [m.count(b'"seq"') for m in grid_messages]
    finally:
        ctx.close()
