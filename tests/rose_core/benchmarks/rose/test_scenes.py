"""Generation invariants on a real (small) build, and v0.1 composition arithmetic."""
from collections import Counter

import numpy as np
import pytest
from PIL import Image

from rose_core import MAIN_TEMPLATES, Region, generate_scene, load_assets, plan
from rose_core.benchmarks.rose import composition as comp
from rose_core.benchmarks.rose.dataset import _split_of
from rose_core.benchmarks.rose.render import item_tile, render_scene


def test_full_v01_plan_and_split_counts():
    plans = plan(1.0)
    assert [(p.subset, p.scenes) for p in plans] == list(comp.V01_SCENES.items())
    assert sum(p.scenes for p in plans) == 1512
    dev_inst = {p.subset: 5 * Counter(_split_of(comp.DEFAULT_SEED, p))["dev"] for p in plans}
    assert dev_inst == {"ChineseGlyph": 555, "EmojiStyle": 395, "EmojiContent": 395, "PixelEdit": 395,
                        "PixelContent": 260}
    assert sum(dev_inst.values()) == 2000 and 5 * 1512 - 2000 == 5560


def test_scale_is_proportional_and_keeps_both_splits():
    for p in plan(0.05):
        assert 1 <= p.dev_scenes < p.scenes
    with pytest.raises(ValueError):
        plan(0)


def test_region_arithmetic():
    r = Region("rect", 2, 3, 4, 5)
    assert r.area == 9 == len(r.cells())
    assert (2, 3) in r and (4, 5) in r and (1, 3) not in r and (2, 6) not in r
    assert Region.whole(3, 4).area == 12


def test_majority_and_gold_match_every_scene(small_dataset):
    ds = small_dataset
    for s in ds.scenes.values():
        n = s.rows * s.cols
        assert 2 <= len(s.targets) <= max(2, int(n * comp.TARGET_SHARE_MAX)) < n / 2
        assert len(set(s.targets)) == len(s.targets)
        assert all(1 <= r <= s.rows and 1 <= c <= s.cols for r, c in s.targets)
        assert s.params["majority"] != s.params["exception"]
    for inst in ds.instances.values():
        scene = ds.scenes[inst.scene_id]
        truth = sorted(t for t in scene.targets if (t in inst.context) == (inst.context_mode == "inside"))
        if inst.gold.cells is not None:
            assert inst.gold.cells == truth
        if inst.gold.count is not None:
            assert inst.gold.count == len(truth)
        assert inst.split == scene.split
        assert inst.image in scene.images.values()


def test_prompts_never_name_the_target(small_dataset):
    for inst in small_dataset.instances.values():
        scene = small_dataset.scenes[inst.scene_id]
        for item in (scene.params["majority"], scene.params["exception"]):
            for field in ("char", "emoji", "sprite"):
                if field in item:
                    assert item[field] not in inst.prompt and item[field] not in inst.instruction


def test_every_scene_has_two_renderings_and_split_is_by_scene(small_dataset):
    ds = small_dataset
    assert len(ds.instances) == 7 * len(ds.scenes)
    by_scene = {}
    for inst in ds.instances.values():
        by_scene.setdefault(inst.scene_id, set()).add(inst.split)
    assert all(len(v) == 1 for v in by_scene.values())
    assert Counter(i.template for i in ds.instances.values())["T4"] == len(ds.scenes)
    for s in ds.scenes.values():
        assert set(s.images) == {"base", "highlight"}
        for kind in ("base", "highlight"):
            assert (ds.root / s.images[kind]).exists()


def test_abstention_cases_exist(small_dataset):
    empty = Counter(i.template for i in small_dataset.instances.values() if i.gold.count == 0 or i.gold.cells == [])
    for t in ("T2", "T3", "T4"):
        assert empty[t] > 0


def test_rendered_cells_show_the_targets(small_dataset):
    """Read the PNG back: target cells are the odd ones, pixel for pixel."""
    ds = small_dataset
    for s in list(ds.scenes.values())[::7]:
        im = np.asarray(Image.open(ds.root / s.images["base"]).convert("RGB"))
        crops = {}
        for r, c, x0, y0, x1, y1 in s.layout.cell_boxes():
            crops[(r, c)] = im[y0 + 2:y1 - 2, x0 + 2:x1 - 2].tobytes()
        majority = Counter(crops.values()).most_common(1)[0][0]
        odd = sorted(cell for cell, b in crops.items() if b != majority)
        assert odd == sorted(s.targets), s.scene_id


def test_highlight_image_differs_only_in_and_around_the_region(small_dataset):
    ds = small_dataset
    s = next(iter(ds.scenes.values()))
    base = np.asarray(Image.open(ds.root / s.images["base"]).convert("RGB")).astype(int)
    hl = np.asarray(Image.open(ds.root / s.images["highlight"]).convert("RGB")).astype(int)
    ys, xs = np.nonzero((base != hl).any(-1))
    r = s.regions["T4"]
    x0, y0, _, _ = s.layout.box(r.r0, r.c0)
    _, _, x1, y1 = s.layout.box(r.r1, r.c1)
    assert len(ys) > 0
    assert xs.min() >= x0 and xs.max() < x1 and ys.min() >= y0 and ys.max() < y1


def test_pixel_edit_records_k_and_window():
    pack = load_assets()
    for i in range(20):
        s = generate_scene(pack, 3, "PixelEdit", i, "dev")
        edit = s.params["exception"]["edit"]
        x0, y0, w, h = edit["window"]
        lo, hi = comp.EDIT_K[pack.sprites[s.params["exception"]["sprite"]].kind]
        assert edit["k"] == len(edit["pixels"]) == s.params["edit_k"]
        assert lo <= edit["k"] <= hi and comp.EDIT_WINDOW[0] <= w == h <= comp.EDIT_WINDOW[1]
        assert all(x0 <= x < x0 + w and y0 <= y < y0 + h for x, y, *_ in edit["pixels"])
        assert s.params["visibility"]["visible_px"] >= comp.VISIBILITY_FLOORS["PixelEdit"]


def test_each_subset_draws_distinct_items():
    pack = load_assets()
    for subset in ("ChineseGlyph", "EmojiStyle", "EmojiContent", "PixelEdit", "PixelContent"):
        for i in range(5):
            s = generate_scene(pack, 11, subset, i, "test")
            a, b = item_tile(pack, s.params["majority"]), item_tile(pack, s.params["exception"])
            assert a.tobytes() != b.tobytes()
            if subset == "EmojiStyle":
                assert s.params["majority"]["emoji"] == s.params["exception"]["emoji"]
                assert s.params["providers"][0] != s.params["providers"][1]


def test_same_seed_same_scene_different_seed_different(small_dataset):
    pack = load_assets()
    a = generate_scene(pack, 5, "EmojiContent", 3, "dev")
    b = generate_scene(pack, 5, "EmojiContent", 3, "dev")
    c = generate_scene(pack, 6, "EmojiContent", 3, "dev")
    assert a.to_json() == b.to_json() != c.to_json()
    assert render_scene(pack, a).tobytes() == render_scene(pack, b).tobytes()


def test_rebuild_is_byte_identical(small_dataset, tmp_path):
    from rose_core import build_dataset

    again = tmp_path / "again"
    build_dataset(again, seed=7, scale=0.05, workers=1)  # serial path, where the fixture used processes
    for rel in ("manifest.json", "scenes.jsonl", "instances.jsonl"):
        assert (again / rel).read_bytes() == (small_dataset.root / rel).read_bytes()
    pngs = sorted(p.name for p in (again / "images").iterdir())
    assert pngs == sorted(p.name for p in (small_dataset.root / "images").iterdir())
    for name in pngs:
        assert (again / "images" / name).read_bytes() == (small_dataset.root / "images" / name).read_bytes()


def test_main_templates_are_five(small_dataset):
    assert MAIN_TEMPLATES == ("T1", "T2", "T3", "T4", "T5")
    m = small_dataset.manifest["composition"]
    assert m["instances"] == 5 * m["scenes"] and m["images"] == 2 * m["scenes"]
