"""Issue 23 in Chromium: a picture attention check's cell is in the image the browser gets and in no text of the
page; a person who reads the picture and clicks passes; and a real browser's answers leave the action trace the
behaviour check looks for (its answers are never judged traceless)."""
import time

from rose_core.instrument.items import PICTURE_INSTRUCTION, item_png
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store

from .helpers import answer, shown_item, start
from tests.participants import LAB_INFO


def test_a_person_passes_the_picture_check_a_text_reader_cannot(server, page, small_dataset):
    study = create_study(open_store(server.db), small_dataset, StudyConfig(
        info=LAB_INFO, name="picture", split="test", templates=["T3"], items_per_participant=2, practice_items=0,
        attention_every=1, target_per_instance=2, seed=4, completion_code="PIC-1", behaviour_check="exclude"))
    store = open_store(server.db)
    start(page, f"{server.url}/?study={study.study_id}&PROLIFIC_PID=PIC1&STUDY_ID=PS&SESSION_ID=SS")
    answer(page, shown_item(store, small_dataset, study.study_id, "PIC1"))
    check = shown_item(store, small_dataset, study.study_id, "PIC1")
    assert check.kind == "attention"
    root = page.locator(f'.rg-root[data-view="{check.view_id}"]')
    root.wait_for()
    (r, c), = check.item.key.gold_cells
    text = page.locator("body").inner_text()
    assert PICTURE_INSTRUCTION in text and f"row R{r}, column C{c}" not in text
    img = root.locator(".rg-stage img")
    deadline = time.time() + 10
    while not img.evaluate("i => i.complete && i.naturalWidth > 0") and time.time() < deadline:
        time.sleep(0.1)
    served = page.request.get(server.url + img.get_attribute("src")).body()
    assert served == item_png(small_dataset, check.item, check.drawing)    # the keyed drawing, as the server made it
    assert img.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [check.item.layout.width,
                                                                      check.item.layout.height]
    answer(page, check)           # clicks the cell the picture names, in the real grid
    answer(page, shown_item(store, small_dataset, study.study_id, "PIC1"))   # the last main item
    page.get_by_text("Thank you!").wait_for(timeout=20_000)
    rows = store.query("SELECT kind, passed FROM responses ORDER BY response_id")
    assert [(x["kind"], x["passed"]) for x in rows] == [("main", 1), ("attention", 1), ("main", 1)]
    flags = store.query("SELECT kind, detail FROM participant_flags WHERE kind = 'behaviour'")
    assert not any("no click or typing" in f["detail"] for f in flags)   # a browser's clicks are on record
    assert store.query("SELECT * FROM participant_exclusions") == []     # three items: too few to judge timing
