"""The participant flow in real Chromium against the real server: click, see, submit, find it in SQLite."""
import json
import time

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store

from . import helpers
from .helpers import answer, participant_id, shown_item, wait_stage
from tests.participants import LAB_INFO


def make_study(server, ds, **kw):
    cfg = dict(name="e2e", split="test", items_per_participant=4, target_per_instance=2, practice_items=4,
               attention_every=2, completion_code="C0DE-42", seed=3)
    cfg.update(kw)
    return create_study(open_store(server.db), ds, StudyConfig(info=LAB_INFO, **cfg))


def start(page, server, study, pid="PP1"):
    helpers.start(page, f"{server.url}/?study={study.study_id}&PROLIFIC_PID={pid}&STUDY_ID=PS&SESSION_ID=SS")


def test_whole_study_in_chromium(server, page, small_dataset):
    study = make_study(server, small_dataset)
    store = open_store(server.db)
    start(page, server, study)
    kinds = []
    for _ in range(40):
        st = wait_stage(page)
        if st == "done":
            break
        if st == "feedback":
            button = page.get_by_role("button", name="Continue")
            button.click()
            button.wait_for(state="detached")  # not a fixed pause: a slow rerun must not see the old button
            continue
        item = shown_item(store, small_dataset, study.study_id, "PP1")
        answer(page, item)
        kinds.append(item.kind)
    assert kinds == ["practice"] * 4 + ["main", "main", "attention", "main", "main"]
    assert page.locator("text=C0DE-42").count() == 1
    rows = store.query("SELECT * FROM responses ORDER BY response_id")
    assert [r["kind"] for r in rows] == kinds
    assert all(r["passed"] == 1 and r["valid"] == 1 for r in rows)
    for r in rows:  # the same protocol string a model would write, scored by the same scorer
        if r["kind"] != "attention":
            assert r["protocol"] == small_dataset.instances[r["instance_id"]].protocol_answer
        assert r["viewport_w"] == 1200 and r["device_pixel_ratio"] >= 1 and r["total_ms"] > 0
    p = store.query("SELECT * FROM participants")[0]
    assert (p["external_id"], p["prolific_study_id"], p["prolific_session_id"]) == ("PP1", "PS", "SS")
    assert p["end_reason"] == "completed"
    ev = store.query("SELECT * FROM events WHERE type = 'click'")
    assert ev and all(e["client_ts"] and e["server_ts"] for e in ev)


def test_click_toggles_at_once_and_unclick_undo_clear(server, page, small_dataset):
    study = make_study(server, small_dataset, practice_items=0, templates=["G-Clk"])
    store = open_store(server.db)
    start(page, server, study, "TOG")
    page.wait_for_selector(".rg-root")
    cell = page.locator('.rg-cell[data-r="1"][data-c="1"]')
    cell.click()
    assert cell.get_attribute("aria-pressed") == "true"
    cell.click()
    assert cell.get_attribute("aria-pressed") == "false"
    page.locator('.rg-cell[data-r="2"][data-c="2"]').click()
    page.locator(".rg-undo").click()
    assert page.locator('.rg-cell[aria-pressed="true"]').count() == 0
    page.locator('.rg-cell[data-r="1"][data-c="2"]').click()
    page.locator('.rg-cell[data-r="2"][data-c="1"]').click()
    page.locator(".rg-clear").click()
    assert page.locator('.rg-cell[aria-pressed="true"]').count() == 0
    # Keyboard: focus the first cell, move right and down, select with Space and Enter.
    page.locator('.rg-cell[data-r="1"][data-c="1"]').focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    assert page.locator('.rg-cell[data-r="1"][data-c="2"]').get_attribute("aria-pressed") == "true"
    assert page.locator('.rg-cell[data-r="2"][data-c="2"]').get_attribute("aria-pressed") == "true"
    pid = participant_id(store, study.study_id, "TOG")
    expected = ["click", "unclick", "click", "undo", "click", "click", "clear", "click", "click"]
    deadline = time.time() + 10
    types: list[str] = []
    while time.time() < deadline and len(types) < len(expected):
        types = [e["type"] for e in store.query(
            "SELECT type FROM events WHERE participant_id = ? AND type NOT IN ('blur', 'focus') ORDER BY seq", (pid,))]
        time.sleep(0.2)
    assert types == expected


def test_rapid_clicking_loses_nothing(server, page, small_dataset):
    study = make_study(server, small_dataset, practice_items=0, templates=["G-Clk"], subsets=["ChineseGlyph"])
    store = open_store(server.db)
    start(page, server, study, "RAPID")
    page.wait_for_selector(".rg-root")
    item = shown_item(store, small_dataset, study.study_id, "RAPID")
    cells = [(r, c) for r in range(1, item.item.key.rows + 1) for c in range(1, item.item.key.cols + 1)]
    clicks = [cells[i % len(cells)] for i in range(30)]
    # 30 real clicks on the grid's buttons, dispatched by the page itself in one burst: far under half a second
    # on any machine, so the test checks what the server keeps, not how fast the test runner can click.
    elapsed_ms = page.evaluate("""cells => {
        const t0 = performance.now();
        for (const [r, c] of cells) document.querySelector(`.rg-cell[data-r="${r}"][data-c="${c}"]`).click();
        return performance.now() - t0; }""", [list(rc) for rc in clicks])
    assert elapsed_ms < 500
    expected = set()
    for rc in clicks:
        expected ^= {rc}
    shown = {(int(b.get_attribute("data-r")), int(b.get_attribute("data-c")))
             for b in page.locator('.rg-cell[aria-pressed="true"]').all()}
    assert shown == expected
    pid = participant_id(store, study.study_id, "RAPID")
    deadline = time.time() + 15
    n = 0
    while time.time() < deadline:  # focus/blur events may be logged too: count the clicks
        n = store.query("SELECT count(*) AS n FROM events WHERE participant_id = ? AND type IN ('click', 'unclick')",
                        (pid,))[0]["n"]
        if n >= 30:
            break
        time.sleep(0.2)
    assert n == 30
    page.locator(".rg-submit").click()
    rows: list = []
    deadline = time.time() + 15
    while not rows and time.time() < deadline:
        rows = store.query("SELECT protocol, parsed FROM responses WHERE participant_id = ?", (pid,))
        time.sleep(0.2)
    assert {tuple(c) for c in json.loads(rows[0]["parsed"])["clicks"]} == expected


def test_browser_never_receives_gold(server, page, small_dataset):
    study = make_study(server, small_dataset, practice_items=0, attention_every=0, items_per_participant=6,
                       same_scene_multiple_templates=True)
    store = open_store(server.db)
    frames: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
        payload if isinstance(payload, bytes) else payload.encode())))
    http: list[bytes] = []
    page.on("response", lambda r: http.append(r.body()) if r.ok and r.request.resource_type in ("xhr", "fetch") else None)
    start(page, server, study, "LEAK")
    seen = []
    for _ in range(6):
        page.wait_for_selector(".rg-root")
        item = shown_item(store, small_dataset, study.study_id, "LEAK")
        seen.append(item)
        answer(page, item, right=False)
    blob = b"".join(frames + http)
    assert b'"image": "/media/' in blob  # we did capture what the component received (the image comes by URL)
    for item in seen:
        inst = small_dataset.instances[item.item.item_id]
        scene = small_dataset.scenes[inst.scene_id]
        if inst.protocol_answer != "DONE":  # an empty answer is just the button's label
            assert inst.protocol_answer.encode() not in blob
        assert json.dumps(inst.gold.to_json()).encode() not in blob
        assert json.dumps([list(t) for t in scene.targets]).encode() not in blob
    for needle in (b'"gold"', b'"targets"', b"protocol_answer", b'"exception"'):
        assert needle not in blob


def test_practice_covers_every_kind_and_a_failed_round_retries_on_fresh_items(server, page, small_dataset):
    from rose_core.instrument.practice import PRACTICE_KIND

    study = make_study(server, small_dataset, practice_items=4, practice_max_attempts=2, attention_every=0,
                       items_per_participant=1)
    store = open_store(server.db)
    start(page, server, study, "FRESH")
    shown: list[list[str]] = [[], []]
    feedback = 0
    for _ in range(30):
        st = wait_stage(page)
        if st == "done":
            break
        if st == "feedback":
            feedback += 1
            assert page.get_by_text("The instruction was:").count() == 1  # the instruction, repeated
            assert page.locator("img").count() >= 1                      # region, right cells, own clicks drawn
            if feedback == 4:
                assert page.get_by_text("once more, with new pictures").count() == 1
            page.reload()                                                # feedback is stored: still there
            page.get_by_text("The instruction was:").wait_for()
            button = page.get_by_role("button", name="Continue")
            button.click()
            button.wait_for(state="detached")
            continue
        item = shown_item(store, small_dataset, study.study_id, "FRESH")
        if item.kind == "practice":
            round_ = 0 if feedback < 4 else 1
            shown[round_].append(item.item.item_id)
            answer(page, item, right=round_ == 1)  # the first round fails, the retry passes
        else:
            answer(page, item)
    assert feedback == 8
    assert shown == study.config.practice_rounds
    for r in shown:
        assert {PRACTICE_KIND[small_dataset.instances[i].template] for i in r} == {
            "count", "click_region", "click_highlight", "click_outside_count"}
    scenes = [{small_dataset.instances[i].scene_id for i in r} for r in shown]
    assert not scenes[0] & scenes[1]                                    # fresh scenes, never revealed ones
    assert store.query("SELECT end_reason FROM participants")[0]["end_reason"] == "completed"
