"""The participant page in Chromium when someone games or breaks the study: a second tab of the same participant,
a disk that refuses writes while an answer is sent, a known Prolific id arriving with another session."""
from __future__ import annotations

import resource
import sqlite3

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store
from rose_core.storage.connection import Store

from .grid_harness import DESKTOP
from .helpers import participant_id, pressed_cells, shown_item, start, wait_until
from tests.participants import LAB_INFO


def _study(live, ds, name: str, **kw):
    cfg = dict(name=name, split="test", practice_items=0, attention_every=0, items_per_participant=2, seed=9,
               templates=["T3"])
    cfg.update(kw)
    return create_study(open_store(live.db), ds, StudyConfig(info=LAB_INFO, **cfg))


def _link(live, study, pid: str, session: str = "SS") -> str:
    return f"{live.url}/?study={study.study_id}&PROLIFIC_PID={pid}&STUDY_ID=PS&SESSION_ID={session}"


def _page(ctx):
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    return page


def _events(store: Store, pid: str, view: str) -> list[dict]:
    return store.query("SELECT seq, type, row, col FROM events WHERE participant_id = ? AND view_id = ? ORDER BY seq",
                       (pid, view))


def _cell(page, view: str, r: int, c: int):
    return page.locator(f'.rg-root[data-view="{view}"] .rg-cell[data-r="{r}"][data-c="{c}"]')


def test_a_second_tab_asks_and_takes_over_and_events_never_collide(live, browser, small_dataset):
    study = _study(live, small_dataset, "tabs")
    store = open_store(live.db)
    url = _link(live, study, "TABS")
    ctx = browser.new_context(**DESKTOP)
    try:
        one = _page(ctx)
        start(one, url)
        pid = participant_id(store, study.study_id, "TABS")
        item = shown_item(store, small_dataset, study.study_id, "TABS")
        _cell(one, item.view_id, 1, 1).click()
        wait_until(lambda: _events(store, pid, item.view_id), lambda ev: len(ev) >= 1, what="tab one's click")

        two = _page(ctx)
        two.goto(url)                                            # the same link in a second tab
        two.get_by_text("This study is open in another tab").wait_for()
        assert two.locator(".rg-root").count() == 0
        two.get_by_role("button", name="Continue here").click()
        two.locator(f'.rg-root[data-view="{item.view_id}"]').wait_for()
        assert pressed_cells(two) == {(1, 1)}                    # restored from tab one's stored events

        _cell(one, item.view_id, 2, 2).click()                   # tab one no longer records…
        one.get_by_text("This study is open in another tab").wait_for()   # …and says why
        _cell(two, item.view_id, 3, 3).click()
        wait_until(lambda: _events(store, pid, item.view_id), lambda ev: any(e["row"] == 3 for e in ev),
                   what="tab two's click")
        ev = _events(store, pid, item.view_id)
        assert [e["seq"] for e in ev] == list(range(len(ev)))    # one numbering, no gap, nothing dropped
        assert [(e["row"], e["col"]) for e in ev if e["type"] == "click"] == [(1, 1), (3, 3)]
        two.locator(f'.rg-root[data-view="{item.view_id}"] .rg-submit').click()
        rows = wait_until(lambda: store.query("SELECT parsed FROM responses WHERE participant_id = ?", (pid,)),
                          lambda r: len(r) == 1, what="the answer from tab two")
        assert '"clicks": [[1, 1], [3, 3]]' in rows[0]["parsed"]
    finally:
        ctx.close()


def test_a_known_prolific_id_with_another_session_is_refused_and_recorded(live, browser, small_dataset):
    study = _study(live, small_dataset, "identity")
    store = open_store(live.db)
    ctx = browser.new_context(**DESKTOP)
    try:
        page = _page(ctx)
        start(page, _link(live, study, "SAMEPID"))
        page.locator(".rg-root").wait_for()
        other = _page(browser.new_context(**DESKTOP))
        other.goto(_link(live, study, "SAMEPID", session="ANOTHER"))
        other.get_by_text("Cannot start: this participant id is already taking part").wait_for()
        assert other.locator(".rg-root").count() == 0 and other.get_by_text("Traceback").count() == 0
        flags = store.query("SELECT kind, detail FROM participant_flags WHERE study_id = ?", (study.study_id,))
        assert [f["kind"] for f in flags] == ["identity_mismatch"] and '"ANOTHER"' in flags[0]["detail"]
        other.context.close()
    finally:
        ctx.close()


def test_a_full_disk_on_submit_keeps_the_selection_and_sends_the_answer_once_it_works(live, browser, small_dataset):
    """The server may not grow any file (RLIMIT_FSIZE 0, as a full disk: SQLite cannot append to its WAL, emptied
    first); the answer is refused by storage, the participant sees a calm note, then the limit is lifted."""
    study = _study(live, small_dataset, "disk")
    store = open_store(live.db)
    ctx = browser.new_context(**DESKTOP)
    errors: list[str] = []
    soft, hard = resource.prlimit(live.pid, resource.RLIMIT_FSIZE)
    try:
        page = _page(ctx)
        page.on("pageerror", lambda e: errors.append(str(e)))
        start(page, _link(live, study, "DISK"))
        pid = participant_id(store, study.study_id, "DISK")
        item = shown_item(store, small_dataset, study.study_id, "DISK")
        _cell(page, item.view_id, 1, 2).click()
        _cell(page, item.view_id, 2, 1).click()
        wait_until(lambda: _events(store, pid, item.view_id), lambda ev: len(ev) >= 2, what="the clicks stored")

        resource.prlimit(live.pid, resource.RLIMIT_FSIZE, (0, hard))
        with sqlite3.connect(live.db) as c:                      # an empty WAL: the next write must grow it
            wait_until(lambda: c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0], lambda busy: busy == 0,
                       what="the WAL emptied")
        page.locator(f'.rg-root[data-view="{item.view_id}"] .rg-submit').click()
        page.get_by_text("Your answer could not be saved just yet").wait_for(timeout=40_000)
        assert page.get_by_text("Traceback").count() == 0 and page.locator(".stException").count() == 0
        assert pressed_cells(page) == {(1, 2), (2, 1)}           # the selection is kept on screen
        assert store.query("SELECT count(*) AS n FROM responses WHERE participant_id = ?", (pid,))[0]["n"] == 0

        resource.prlimit(live.pid, resource.RLIMIT_FSIZE, (soft, hard))   # storage works again
        rows = wait_until(lambda: store.query("SELECT view_id, parsed FROM responses WHERE participant_id = ?",
                                              (pid,)), lambda r: len(r) == 1, timeout=60, what="the answer re-sent")
        assert rows[0]["view_id"] == item.view_id and '"clicks": [[1, 2], [2, 1]]' in rows[0]["parsed"]
        page.wait_for_function("v => document.querySelector('.rg-root')?.dataset.view !== v", arg=item.view_id,
                               timeout=40_000)
        page.get_by_text("Your answer could not be saved just yet").wait_for(state="detached", timeout=40_000)
        assert errors == []
        ev = _events(store, pid, item.view_id)
        assert [e["seq"] for e in ev] == list(range(len(ev)))
    finally:
        resource.prlimit(live.pid, resource.RLIMIT_FSIZE, (soft, hard))
        ctx.close()


def test_while_every_item_is_held_the_page_waits_and_continues_by_itself(live, browser, small_dataset):
    from rose_core.instrument.ids import system_clock
    from rose_core.instrument.policy import main_pool
    from tests.participants import new_session

    study = _study(live, small_dataset, "wait", items_per_participant=1, target_per_instance=1)
    store = open_store(live.db)
    holders = [new_session(store, small_dataset, study, f"HOLD{k}", clock=system_clock)  # seen just now
               for k in range(len(main_pool(small_dataset, study.config)))]
    for h in holders:
        h.screen()                                               # every instance held, none answered
    ctx = browser.new_context(**DESKTOP)
    try:
        page = _page(ctx)
        start(page, _link(live, study, "WAITER"))
        page.get_by_text("Please wait a moment").wait_for()
        page.get_by_text("it continues by itself as soon as an item is free").wait_for()
        assert store.query("SELECT finished_at FROM participants WHERE external_id = 'WAITER'")[0]["finished_at"] \
            is None                                              # never ended as "no item left"
        with store.write() as c:                                 # one holder's item comes free (as after a release)
            c.execute("UPDATE assignments SET released_at = 1 WHERE participant_id = ?", (holders[0].participant_id,))
        page.locator(".rg-root").wait_for()                      # the page moved on by itself
    finally:
        ctx.close()


def _held_replies(page):
    """Route the page's websocket so that, while `hold[0]`, the server's messages wait (a very slow network's reply);
    `release()` delivers them in order."""
    hold, queued, socket = [False], [], {}

    def route(ws):
        server = ws.connect_to_server()
        socket["ws"] = ws
        ws.on_message(server.send)
        server.on_message(lambda m: queued.append(m) if hold[0] else ws.send(m))
    page.route_web_socket("**/_stcore/stream", route)

    def release():
        hold[0] = False
        while queued:
            socket["ws"].send(queued.pop(0))
    return hold, release


def test_an_answer_in_flight_cannot_be_changed_and_a_refused_one_can(live, browser, small_dataset):
    """On a slow network the answer stays on screen, locked, until the server replies: the participant cannot change
    it (a change would look taken while the first answer is the one stored). After a long wait DONE sends the same
    answer again; only a refusal by the server unlocks the item."""
    study = _study(live, small_dataset, "inflight", items_per_participant=2)
    store = open_store(live.db)
    ctx = browser.new_context(**DESKTOP)
    try:
        page = _page(ctx)
        page.clock.install()                                     # the page's timers, moved on by the test
        hold, release = _held_replies(page)
        start(page, _link(live, study, "FLIGHT"))
        pid = participant_id(store, study.study_id, "FLIGHT")
        item = shown_item(store, small_dataset, study.study_id, "FLIGHT")
        _cell(page, item.view_id, 1, 1).click()
        wait_until(lambda: _events(store, pid, item.view_id), lambda ev: len(ev) >= 1, what="the click stored",
                   page=page)
        hold[0] = True                                           # from now on the replies are slow
        submit = page.locator(f'.rg-root[data-view="{item.view_id}"] .rg-submit')
        submit.click()
        wait_until(lambda: store.query("SELECT parsed FROM responses WHERE participant_id = ?", (pid,)),
                   lambda r: len(r) == 1, what="the answer stored (its reply held)", page=page)
        page.clock.run_for(4_000)                                # longer than a quick server takes
        _cell(page, item.view_id, 2, 2).click(force=True)        # the participant tries to change the answer
        assert pressed_cells(page) == {(1, 1)} and submit.is_disabled()
        page.clock.run_for(20_000)                               # no reply for long: DONE may send it again…
        page.get_by_text("has not been confirmed yet").wait_for()
        assert submit.is_enabled()
        _cell(page, item.view_id, 3, 3).click(force=True)        # …the same answer: the selection stays locked
        assert pressed_cells(page) == {(1, 1)}
        submit.click()
        release()
        page.wait_for_function("v => document.querySelector('.rg-root')?.dataset.view !== v", arg=item.view_id)
        rows = store.query("SELECT parsed FROM responses WHERE participant_id = ?", (pid,))
        assert len(rows) == 1 and '"clicks": [[1, 1]]' in rows[0]["parsed"]
        assert [(e["row"], e["col"]) for e in _events(store, pid, item.view_id) if e["type"] == "click"] == [(1, 1)]
    finally:
        ctx.close()


def test_a_submit_the_server_refuses_unlocks_the_item(live, browser, small_dataset):
    study = _study(live, small_dataset, "refused", items_per_participant=1)
    store = open_store(live.db)
    ctx = browser.new_context(**DESKTOP)
    try:
        page = _page(ctx)
        spoil = [False]

        def route(ws):                                           # the first submit arrives unreadable
            server = ws.connect_to_server()

            def send(m):
                if spoil[0] and isinstance(m, bytes) and b'"focus_lost":false' in m:
                    spoil[0] = False
                    m = m.replace(b'"focus_lost":false', b'"focus_lost":"no!"')  # same length: valid protobuf
                server.send(m)
            ws.on_message(send)
            server.on_message(ws.send)
        page.route_web_socket("**/_stcore/stream", route)
        start(page, _link(live, study, "REFUSE"))
        pid = participant_id(store, study.study_id, "REFUSE")
        item = shown_item(store, small_dataset, study.study_id, "REFUSE")
        _cell(page, item.view_id, 1, 1).click()
        spoil[0] = True
        page.locator(".rg-submit").click()
        page.get_by_text("Your answer could not be read").wait_for()
        _cell(page, item.view_id, 2, 2).click()                  # unlocked: the participant can change it
        assert pressed_cells(page) == {(1, 1), (2, 2)}
        page.locator(".rg-submit").click()
        page.get_by_text("Thank you!").wait_for()
        rows = store.query("SELECT parsed FROM responses WHERE participant_id = ?", (pid,))
        assert len(rows) == 1 and '"clicks": [[1, 1], [2, 2]]' in rows[0]["parsed"]
    finally:
        ctx.close()


CLICK_DONE_ON_MOUNT = """v => {
  // the second press of a hasty double-click: it lands on whatever DONE is there the moment the next item appears
  const obs = new MutationObserver(() => {
    const b = document.querySelector('.rg-root:not([data-view="' + v + '"]) .rg-submit');
    if (b) { obs.disconnect(); b.click(); window.pressedView = b.closest('.rg-root').dataset.view; }
  });
  obs.observe(document.body, {subtree: true, childList: true, attributes: true});
}"""


def test_a_press_as_the_next_item_appears_does_not_answer_it(live, browser, small_dataset):
    study = _study(live, small_dataset, "clickthrough", items_per_participant=2)
    store = open_store(live.db)
    ctx = browser.new_context(**DESKTOP)
    try:
        page = _page(ctx)
        start(page, _link(live, study, "THROUGH"))
        pid = participant_id(store, study.study_id, "THROUGH")
        first = shown_item(store, small_dataset, study.study_id, "THROUGH")
        page.locator(f'.rg-root[data-view="{first.view_id}"]').wait_for()
        _cell(page, first.view_id, 1, 1).click()
        page.evaluate(CLICK_DONE_ON_MOUNT, first.view_id)
        page.locator(f'.rg-root[data-view="{first.view_id}"] .rg-submit').click()
        second = page.wait_for_function("() => window.pressedView").json_value()  # the next item, pressed as it appeared
        page.wait_for_timeout(1_500)                              # time for a wrongly taken press to be stored
        assert page.locator(f'.rg-root[data-view="{second}"].rg-submitted').count() == 0  # not taken as an answer
        assert len(store.query("SELECT 1 FROM responses WHERE participant_id = ?", (pid,))) == 1
        _cell(page, second, 2, 2).click()                         # the participant looks at it, then answers
        page.locator(f'.rg-root[data-view="{second}"] .rg-submit').click()
        page.get_by_text("Thank you!").wait_for()
        rows = store.query("SELECT view_id, parsed FROM responses WHERE participant_id = ? ORDER BY response_id",
                           (pid,))
        assert [r["view_id"] for r in rows] == [first.view_id, second]
        assert '"clicks": [[2, 2]]' in rows[1]["parsed"]          # the answer they gave, not an empty one
    finally:
        ctx.close()
