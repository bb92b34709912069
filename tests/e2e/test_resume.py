"""Resume: a reload, a closed tab and a killed server all continue at the next unanswered item."""
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store

from .helpers import answer, shown_item, start
from tests.participants import LAB_INFO


def test_reload_and_closed_tab_resume_same_item(server, browser, small_dataset):
    study = create_study(open_store(server.db), small_dataset, StudyConfig(info=LAB_INFO,
        name="resume", split="test", practice_items=0, attention_every=0, items_per_participant=5))
    store = open_store(server.db)
    url = f"{server.url}/?study={study.study_id}&PROLIFIC_PID=RES1"
    ctx = browser.new_context()
    page = ctx.new_page()
    start(page, url)
    page.wait_for_selector(".rg-root")
    first = shown_item(store, small_dataset, study.study_id, "RES1")
    answer(page, first)
    page.wait_for_selector(".rg-root")
    second = shown_item(store, small_dataset, study.study_id, "RES1")
    assert second.item.item_id != first.item.item_id
    page.reload()
    page.wait_for_selector(".rg-root")  # no consent again, straight back to the item
    assert shown_item(store, small_dataset, study.study_id, "RES1").item.item_id == second.item.item_id
    ctx.close()                          # closed tab: a new browser context, same link
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_selector(".rg-root")
    assert shown_item(store, small_dataset, study.study_id, "RES1").item.item_id == second.item.item_id
    answer(page, second)
    page.wait_for_selector(".rg-root")
    ids = [r["instance_id"] for r in store.query("SELECT instance_id FROM responses ORDER BY response_id")]
    assert ids == [first.item.item_id, second.item.item_id]
    ctx.close()


def test_anonymous_id_survives_reload(server, page, small_dataset):
    study = create_study(open_store(server.db), small_dataset, StudyConfig(info=LAB_INFO, name="anon", practice_items=0))
    page.goto(f"{server.url}/?study={study.study_id}")
    page.get_by_text("I have read the above").click()
    page.get_by_role("button", name="Continue").click()
    page.get_by_text("How it works").wait_for()
    assert "pid=anon-" in page.url
    page.reload()
    page.get_by_text("How it works").wait_for()  # consent remembered: same participant
    rows = open_store(server.db).query("SELECT external_id, source FROM participants")
    assert len(rows) == 1 and rows[0]["source"] == "anonymous" and rows[0]["external_id"] in page.url


def test_anonymous_participant_survives_the_back_button(server, page, small_dataset):
    """The generated id replaces the link's history entry instead of adding one: Back (or leaving the app and coming
    forward again) never lands on the id-less link, whose reload would make a new participant and lose the progress."""
    study = create_study(open_store(server.db), small_dataset, StudyConfig(info=LAB_INFO, name="anon-back", practice_items=0,
                                                                      attention_every=0, items_per_participant=3))
    page.goto(f"{server.url}/_stcore/health")  # where the participant came from (any page)
    start(page, f"{server.url}/?study={study.study_id}")
    assert "pid=anon-" in page.url
    mine = page.url
    page.go_back()                            # the page they came from, not the same study without their id
    page.wait_for_url(f"{server.url}/_stcore/health")
    page.go_forward()
    page.locator(".rg-root").wait_for()       # resumed: no consent again
    assert page.url == mine
    page.reload()
    page.locator(".rg-root").wait_for()
    rows = open_store(server.db).query("SELECT external_id FROM participants WHERE study_id = ?", (study.study_id,))
    assert len(rows) == 1 and rows[0]["external_id"] in mine


def test_killed_server_loses_no_acknowledged_response(server, browser, small_dataset):
    store = open_store(server.db)
    study = create_study(store, small_dataset, StudyConfig(info=LAB_INFO,
        name="kill", split="test", practice_items=0, attention_every=0, items_per_participant=6))
    url = f"{server.url}/?study={study.study_id}&PROLIFIC_PID=KILL"
    page = browser.new_page()
    start(page, url)
    answered = []
    for _ in range(3):
        page.wait_for_selector(".rg-root")
        item = shown_item(store, small_dataset, study.study_id, "KILL")
        answer(page, item)
        answered.append(item.item.item_id)
    page.wait_for_selector(".rg-root")
    pending = shown_item(store, small_dataset, study.study_id, "KILL")
    server.kill()                                  # SIGKILL mid-study
    assert [r["instance_id"] for r in open_store(server.db).query(
        "SELECT instance_id FROM responses ORDER BY response_id")] == answered
    server.start()                                 # same port, same database
    page.close()
    page = browser.new_page()
    page.goto(url)
    page.wait_for_selector(".rg-root")
    assert shown_item(store, small_dataset, study.study_id, "KILL").item.item_id == pending.item.item_id
    answer(page, pending)
    page.wait_for_selector(".rg-root")
    rows = store.query("SELECT instance_id FROM responses ORDER BY response_id")
    assert [r["instance_id"] for r in rows] == answered + [pending.item.item_id]
    page.close()
