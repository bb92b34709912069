"""Experimenter pages in Chromium on the real server: the Drill-down replays a participant's clicks, undo and
reload in order and ends at the stored answer; the Studies page's participant link carries the app's real address
(the one it was opened with, or $ROSE_PUBLIC_URL), and its export buttons send the study's rows."""
from __future__ import annotations

import io
import json

import pandas as pd

from rose_core.analysis.drilldown import fmt_cells
from rose_core.instrument.page_data import PUBLIC_URL_ENV
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store
from rose_core.storage.connection import Store

from .conftest import PASSWORD, start_server
from .grid_harness import DESKTOP
from tests.participants import LAB_INFO
from .helpers import (
    participant_id,
    pressed_cells,
    shown_item,
    sign_in,
    start,
    wait_until,
)


def _new_page(browser):
    ctx = browser.new_context(**DESKTOP, accept_downloads=True)
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    return ctx, page


def _acts(store: Store, pid: str, view: str) -> list[tuple]:
    return [(e["type"], e["row"], e["col"]) for e in store.query(
        "SELECT type, row, col FROM events WHERE participant_id = ? AND view_id = ? AND type IN "
        "('click', 'unclick', 'undo', 'clear') ORDER BY seq", (pid, view))]


def test_drilldown_replays_clicks_undo_and_reload_in_order(live, browser, small_dataset):
    store = open_store(live.db)
    study = create_study(store, small_dataset, StudyConfig(info=LAB_INFO,
        name="replay", split="test", templates=["T3"], practice_items=0, attention_every=0, items_per_participant=1,
        seed=9))
    ctx, page = _new_page(browser)
    try:
        start(page, f"{live.url}/?study={study.study_id}&PROLIFIC_PID=REPLAY")
        page.locator(".rg-root").wait_for()
        screen = shown_item(store, small_dataset, study.study_id, "REPLAY")
        pid = participant_id(store, study.study_id, "REPLAY")
        a, b, c = (1, 1), (1, 2), (2, 1)
        cell = lambda rc: page.locator(f'.rg-cell[data-r="{rc[0]}"][data-c="{rc[1]}"]')  # noqa: E731
        cell(a).click()
        cell(b).click()
        page.locator(".rg-undo").click()                     # takes b back
        wait_until(lambda: _acts(store, pid, screen.view_id),
                   lambda acts: acts == [("click", 1, 1), ("click", 1, 2), ("undo", 1, 2)], what="events stored")
        page.reload()
        page.locator(f'.rg-root[data-view="{screen.view_id}"]').wait_for()
        assert pressed_cells(page) == {a}
        cell(c).click()
        page.locator(".rg-submit").click()
        page.get_by_text("Thank you!").wait_for()
        stored = json.loads(store.query("SELECT parsed FROM responses WHERE participant_id = ?", (pid,))[0]["parsed"])
        assert [tuple(x) for x in stored["clicks"]] == [a, c]
        n_events = store.query("SELECT count(*) AS n FROM events WHERE participant_id = ?", (pid,))[0]["n"]
    finally:
        ctx.close()

    ctx, page = _new_page(browser)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        sign_in(page, live.url, PASSWORD)
        page.get_by_role("link", name="Drill-down").click()
        # One quick item can fall under the "too fast" exclusion depending on the machine's speed: switch it
        # off so the participant is shown whatever the timing (the replay is what is tested here).
        page.locator(".st-key-dash_ex_fast").get_by_text("Too fast").click()
        page.get_by_role("heading", name="Replay").wait_for()
        caption = f"{n_events} events over 1 page view"  # the reload kept the view and its numbering
        page.get_by_text(caption).wait_for()
        page.wait_for_function(  # the replay chart is drawn (Plotly renders after the page script), at the last step
            "t => [...document.querySelectorAll('.js-plotly-plot .gtitle')].some(e => e.textContent === t)",
            arg=f"Selection after step {n_events}")
        with page.expect_download() as dl:
            page.locator(".st-key-drill_replay_csv button").click()
        ev = pd.read_csv(io.StringIO(open(dl.value.path()).read()))
        assert list(ev["seq"]) == list(range(n_events))
        steps = ev[ev["type"].isin(["click", "unclick", "undo", "clear"])]
        assert [(t, int(r), int(c_)) for t, r, c_ in zip(steps["type"], steps["row"], steps["col"])] == [
            ("click", 1, 1), ("click", 1, 2), ("undo", 1, 2), ("click", 2, 1)]
        assert list(steps["selection after"].fillna("")) == [fmt_cells([a]), fmt_cells([a, b]), fmt_cells([a]),
                                                             fmt_cells([a, c])]
        assert ev["selection after"].iloc[-1] == fmt_cells([a, c])   # ends at the stored answer
        assert page.get_by_text("The replay ends at").count() == 0    # the page finds no disagreement either
        assert page.locator("[data-testid=stException]").count() == 0
        assert errors == []
    finally:
        ctx.close()


def _participant_link(page) -> str:
    page.get_by_text("Participant link").wait_for()
    code = page.locator("[data-testid=stCode]").first
    code.wait_for()
    return code.inner_text().strip()


def _choose_study(page, study) -> None:
    """Show `study` on the Studies page (several studies in a module's database)."""
    page.get_by_label("Study", exact=True).wait_for()
    if study.study_id not in _participant_link(page):
        page.get_by_label("Study", exact=True).click()
        page.get_by_role("option", name=f"{study.name} ({study.study_id})").click()
        page.wait_for_function("s => document.querySelector('[data-testid=stCode]')?.innerText.includes(s)",
                               arg=study.study_id)


def test_studies_page_builds_a_study_s_export_when_its_button_is_clicked(live, browser, small_dataset):
    """The page shows each table's row count and builds the file only when a button is clicked (at 100,000
    responses, reading and encoding them at every rerun cost the sign-in seconds): the file is the study's rows,
    as many as the count said, through the one CSV encoder."""
    from rose_core.common.csv_safety import frame_bytes
    from rose_core.instrument.exports import table_frame
    from tests.participants import answer, new_session

    store = open_store(live.db)
    study = create_study(store, small_dataset, StudyConfig(info=LAB_INFO,
        name="export", split="test", templates=["T1"], practice_items=0, attention_every=0, items_per_participant=2,
        seed=4))
    s = new_session(store, small_dataset, study, "E1")
    for _ in range(2):
        answer(s, s.screen())
    ctx, page = _new_page(browser)
    try:
        sign_in(page, live.url, PASSWORD)
        _choose_study(page, study)
        page.get_by_text("responses: 2 rows").first.wait_for()
        for table in ("responses", "events"):
            with page.expect_download() as dl:
                page.locator(f".st-key-studies_csv_{table} button").click()
            got = open(dl.value.path(), "rb").read()
            want = table_frame(store, table, study.study_id)
            assert got == frame_bytes(want, "csv") and len(want) >= 2, table
            assert page.get_by_text(f"{table}: {len(want)} rows").count() >= 1
        with page.expect_download() as dl:
            page.locator(".st-key-studies_pq_responses button").click()
        back = pd.read_parquet(dl.value.path())
        assert list(back["external_id"]) == ["E1", "E1"] and set(back["study_id"]) == {study.study_id}
        assert page.locator("[data-testid=stException]").count() == 0
    finally:
        ctx.close()


def test_studies_page_link_uses_the_address_the_app_was_opened_with(live, browser, small_dataset):
    study = create_study(open_store(live.db), small_dataset, StudyConfig(info=LAB_INFO, name="link", seed=1))
    ctx, page = _new_page(browser)
    try:
        sign_in(page, live.url, PASSWORD)
        page.get_by_role("heading", name="Studies").wait_for()
        _choose_study(page, study)
        link = _participant_link(page)
        assert link.startswith(f"{live.url}/?study={study.study_id}&PROLIFIC_PID="), link
        assert "localhost:8501" not in page.content()
        page.get_by_role("link", name="Model runs").click()  # and again after moving between pages
        page.get_by_role("heading", name="Model runs").wait_for()
        page.get_by_role("link", name="Studies").click()
        page.get_by_role("heading", name="Studies").wait_for()
        assert _participant_link(page).startswith(f"{live.url}/?study="), page.url
    finally:
        ctx.close()


def test_studies_page_link_uses_rose_public_url(small_dataset, browser, tmp_path):
    public = "https://rose.example.org"
    srv = start_server(small_dataset, tmp_path, **{PUBLIC_URL_ENV: public + "/"})
    ctx, page = _new_page(browser)
    try:
        study = create_study(open_store(tmp_path / "rose.db"), small_dataset, StudyConfig(info=LAB_INFO, name="public", seed=1))
        sign_in(page, srv.url, PASSWORD)
        link = _participant_link(page)
        assert link.startswith(f"{public}/?study={study.study_id}&PROLIFIC_PID="), link
        assert page.get_by_text(f"Address taken from ${PUBLIC_URL_ENV}").count() == 1
        assert srv.url not in link
    finally:
        ctx.close()
        srv.stop()
