"""A dataset folder is never built over, a broken manifest is named, and images are checked against the hashes
stored at build time: a missing one is reported by name, never shown, and a held item on it is released."""
import shutil

import pytest

from rose_core.benchmarks.rose.dataset import Dataset, DatasetError
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.page_data import ensure_dataset
from rose_core.instrument.screens import ItemScreen
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.policy import main_pool
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store
from tests.participants import new_session


@pytest.fixture
def copy(small_dataset, tmp_path):
    root = tmp_path / "rose-copy"
    shutil.copytree(small_dataset.root, root)
    return root


def test_a_missing_manifest_never_makes_a_build_over_the_folder(copy):
    (copy / "manifest.json").unlink()
    before = sorted(p.relative_to(copy) for p in copy.rglob("*"))
    with pytest.raises(DatasetError, match=f"{copy} exists and is not empty \\(no manifest.json") as e:
        ensure_dataset(copy)
    assert "nothing was built over it" in str(e.value)
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == before          # every image still there


@pytest.mark.parametrize("text, needle", [
    ('{"dataset_hash": "x", "files": {', "not a readable dataset manifest"),
    ("\udcff", "not a readable dataset manifest"),
    ("[1, 2]", r"not a dataset manifest \(missing dataset_hash, files\)"),
    ('{"dataset_hash": "x", "files": {}}', "missing files.scenes.jsonl"),
])
def test_a_corrupt_manifest_is_named(copy, text, needle):
    (copy / "manifest.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(DatasetError, match=needle) as e:
        Dataset.load(copy)
    assert str(copy / "manifest.json") in str(e.value)


def test_images_are_checked_against_their_hashes_at_load(copy, small_dataset):
    assert Dataset.load(copy).damaged_images == {}
    inst = next(iter(small_dataset.instances.values()))
    (copy / inst.image).unlink()
    other = next(i for i in small_dataset.instances.values() if i.image != inst.image)
    (copy / other.image).write_bytes(b"\x89PNG not the built image")
    ds = Dataset.load(copy)
    assert ds.damaged_images[inst.image].startswith("cannot be read")
    assert ds.damaged_images[other.image] == "content does not match the hash stored at build time"
    with pytest.raises(DatasetError, match=str(copy / inst.image)):
        ds.read_image(inst.image)


def _study(store, ds):
    return create_study(store, ds, StudyConfig(
        name="img", split="dev", items_per_participant=3, target_per_instance=1, practice_items=0, attention_every=0,
        templates=["T1"], subsets=["PixelContent"], seed=4), ids=SequentialIds("img"), clock=FakeClock())


def test_a_held_item_whose_image_disappears_is_released_not_failing_every_reload(copy, tmp_path):
    ds = Dataset.load(copy)
    store = open_store(tmp_path / "rose.db")
    study = _study(store, ds)
    s = new_session(store, ds, study, "IMG")
    held = s.screen()
    (copy / held.item.image).unlink()                 # deleted while the participant looks at it
    with pytest.raises(DatasetError, match=str(copy / held.item.image)):
        ds.read_image(held.item.image)                # what the page reads to show it
    s.drop_item(held, ds.damaged_images[held.item.image])
    nxt = s.screen()
    assert isinstance(nxt, ItemScreen) and nxt.item.image != held.item.image
    assert held.item.item_id not in {i.instance_id for i in main_pool(ds, study.config)}
    flags = store.query("SELECT kind, detail FROM participant_flags")
    assert flags[0]["kind"] == "damaged_image" and held.item.item_id in flags[0]["detail"]

    # the server restarts on the damaged folder: the image is found missing at load, never assigned again
    ds2 = Dataset.load(copy)
    assert held.item.image in ds2.damaged_images
    assert held.item.item_id not in {i.instance_id for i in main_pool(ds2, study.config)}


def test_a_held_item_found_damaged_at_load_is_released_on_the_next_screen(copy, tmp_path):
    ds = Dataset.load(copy)
    store = open_store(tmp_path / "rose.db")
    study = _study(store, ds)
    s = new_session(store, ds, study, "IMG2")
    held = s.screen()
    (copy / held.item.image).write_bytes(b"changed")
    ds2 = Dataset.load(copy)                            # a server restart
    from rose_core.instrument.session import ParticipantSession

    again = ParticipantSession(store, ds2, study, s.participant_id, clock=s.clock).screen()
    assert isinstance(again, ItemScreen) and again.item.item_id != held.item.item_id
    assert store.query("SELECT released_at FROM assignments WHERE instance_id = ?",
                       (held.item.item_id,))[0]["released_at"] is not None
