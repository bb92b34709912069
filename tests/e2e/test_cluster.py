"""The real cluster: HAProxy in front of two app processes sharing one database. One participant goes through
the study in Chromium; the app process their browser is pinned to is killed (SIGKILL) mid-item; the browser
reconnects through the proxy to the other process by itself and the participant finishes there, at the next
unanswered item with their selection restored. Nothing acknowledged is lost, nothing is stored twice, and no
experimenter page name ever shows. On PostgreSQL (the deployment) and on a shared SQLite file."""
import pytest

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store
from tools.cluster import COOKIE, Cluster

from .conftest import PASSWORD
from .helpers import answer, pressed_cells, shown_item, start, wait_stage, wait_until
from tests.participants import LAB_INFO

EXPERIMENTER_WORDS = ["Studies", "Model runs", "Scene explorer", "Results", "Agreement", "Drill-down", "SGP results",
                      "replay", "Sign in"]


@pytest.fixture(params=["postgresql", "sqlite"])
def cluster(small_dataset, tmp_path, request, haproxy):
    """The processes share a PostgreSQL database (the deployment; a fresh database on the test server), or one
    SQLite file (processes on one host)."""
    pg = request.getfixturevalue("pg_server") if request.param == "postgresql" else None
    db = pg.fresh() if pg else str(tmp_path / "rose.db")
    c = Cluster(tmp_path, {"ROSE_DATASET_DIR": str(small_dataset.root), "ROSE_DB": db,
                           "ROSE_EXPERIMENTER_PASSWORD": PASSWORD}, apps=2)
    c.db = db
    try:
        yield c.start()
    finally:
        c.stop()
        if pg:
            pg.drop(db)


def _tab(store) -> str:
    return store.query("SELECT client_id FROM participants WHERE external_id = 'CLUSTER1'")[0]["client_id"]


def _pinned(page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == COOKIE)


def test_a_participant_finishes_on_the_other_process_when_theirs_is_killed(cluster, browser, small_dataset):
    store = open_store(cluster.db)
    study = create_study(store, small_dataset, StudyConfig(info=LAB_INFO,
        name="cluster", split="test", practice_items=0, attention_every=0, items_per_participant=5, seed=4,
        templates=["T3", "T4"]))
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    start(page, f"{cluster.url}/?study={study.study_id}&PROLIFIC_PID=CLUSTER1")
    answered = []
    for _ in range(2):
        item = shown_item(store, small_dataset, study.study_id, "CLUSTER1")
        answer(page, item)
        answered.append(item.item.item_id)
    page.wait_for_selector(".rg-root")
    current = shown_item(store, small_dataset, study.study_id, "CLUSTER1")
    picked = sorted(current.item.key.gold_cells)[:1] or [(1, 1)]  # no right cell to click: a wrong one, undone later
    for r, c in picked:  # a selection made but not submitted: stored as events, to be restored after the move
        page.locator(f'.rg-cell[data-r="{r}"][data-c="{c}"]').click()
    wait_until(lambda: store.query("SELECT count(*) AS n FROM events WHERE view_id = ?", (current.view_id,)),
               lambda rows: rows[0]["n"] >= len(picked), what="the clicks stored")

    first = _pinned(page)
    tab_before = _tab(store)
    victim = cluster.server_of(first)
    victim.kill()                                  # SIGKILL: no goodbye to the browser or the proxy
    cluster.wait_state(first, "DOWN")
    assert [r["instance_id"] for r in store.query("SELECT instance_id FROM responses ORDER BY response_id")] == \
        answered                                    # everything acknowledged before the kill is stored

    # The browser reconnects by itself (no reload) through the proxy to the other process, which runs the page for
    # its new session: the participant's tab is now that process's, showing the same item, the selection as it was.
    wait_until(lambda: _tab(store), lambda tab: tab != tab_before, timeout=60, what="the page served elsewhere")
    assert _tab(store).split("/")[0] != tab_before.split("/")[0]
    # The other process's run has reached the page (the grid keeps its live state for the same item and takes the
    # new process's acknowledgements): connected, idle, the same item, the selection as it was.
    page.locator('[data-test-connection-state="CONNECTED"]').wait_for(timeout=60_000)
    page.locator('[data-test-script-state="notRunning"]').wait_for(timeout=60_000)
    page.locator(f'.rg-root[data-view="{current.view_id}"]').wait_for(timeout=60_000)
    wait_until(lambda: pressed_cells(page), lambda got: got == set(picked), timeout=30, what="selection restored")
    wait_until(lambda: _pinned(page), lambda pinned: pinned != first, timeout=30, what="the cookie moved")
    assert cluster.states()[_pinned(page)] == "UP"
    text = page.locator("body").inner_text()
    assert not any(w in text for w in EXPERIMENTER_WORDS), text
    assert page.locator('[data-testid="stSidebarNav"]').count() == 0

    root = page.locator(f'.rg-root[data-view="{current.view_id}"]')
    gold = set(current.item.key.gold_cells)
    for r, c in sorted(gold ^ set(picked)):  # the rest of the answer (or the wrong cell undone), then DONE
        cell = root.locator(f'.rg-cell[data-r="{r}"][data-c="{c}"]')
        cell.click()
        assert cell.get_attribute("aria-pressed") == ("true" if (r, c) in gold else "false")
    assert pressed_cells(page) == gold
    if current.item.mode != "click":
        root.locator(".rg-count input").fill(str(current.item.key.gold_count))
    root.locator(".rg-submit").click()
    page.wait_for_function("v => !document.querySelector(`.rg-root[data-view=\"${v}\"]`)", arg=current.view_id)
    answered.append(current.item.item_id)
    while wait_stage(page) == "grid":
        item = shown_item(store, small_dataset, study.study_id, "CLUSTER1")
        answer(page, item)
        answered.append(item.item.item_id)
    assert page.get_by_text("Thank you!").count() == 1
    rows = store.query("SELECT instance_id, passed, protocol FROM responses ORDER BY response_id")
    assert [r["instance_id"] for r in rows] == answered and len(set(answered)) == 5 and len(rows) == 5
    assert all(r["passed"] == 1 for r in rows), (rows, current.item.item_id, store.query(  # the item split across
        "SELECT seq, type, row, col FROM events WHERE view_id = ? ORDER BY seq", (current.view_id,)))  # the processes
    p = store.query("SELECT end_reason, client_id FROM participants WHERE external_id = 'CLUSTER1'")[0]
    assert p["end_reason"] == "completed"
    # The selection made on the killed process is part of the stored answer's events, each stored once.
    ev = store.query("SELECT seq FROM events WHERE view_id = ? ORDER BY seq", (current.view_id,))
    assert [e["seq"] for e in ev] == list(range(len(ev)))
    ctx.close()
