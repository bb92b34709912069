"""The item's image comes by URL (sent once per item, not with every rerun): the browser gets exactly the
instance's PNG bytes, and the messages of an item's reruns no longer carry the image."""
import time

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store

from .helpers import answer, shown_item, start
from tests.participants import LAB_INFO


def test_item_image_is_the_instance_png_by_url(server, page, small_dataset):
    study = create_study(open_store(server.db), small_dataset, StudyConfig(info=LAB_INFO,
        name="img", split="test", items_per_participant=3, target_per_instance=2, practice_items=0,
        attention_every=0, same_scene_multiple_templates=False, seed=5))
    store = open_store(server.db)
    frames: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
        payload if isinstance(payload, bytes) else payload.encode())))
    start(page, f"{server.url}/?study={study.study_id}&PROLIFIC_PID=IMG")
    seen = set()
    for _ in range(3):
        page.wait_for_selector(".rg-root")
        item = shown_item(store, small_dataset, study.study_id, "IMG")
        img = page.locator(".rg-stage img")
        deadline = time.time() + 10
        while not img.evaluate("i => i.complete && i.naturalWidth > 0") and time.time() < deadline:
            time.sleep(0.1)
        src = img.get_attribute("src")
        assert src.startswith("/media/") and src.endswith(".png")
        body = page.request.get(server.url + src).body()
        assert body == (small_dataset.root / item.item.image).read_bytes()  # exactly the instance's bytes
        assert img.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [item.item.layout.width,
                                                                          item.item.layout.height]
        seen.add(src)
        answer(page, item)
    assert len(seen) == 3
    assert b"data:image/png;base64," not in b"".join(frames)
