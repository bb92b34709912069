"""The build's output bytes are pinned: every file of the session's small dataset (seed 7, scale 0.05) has the
sha256 recorded in data/small_build.sha256, which was written by the build before its speed-ups (issue 20).
A change that alters one PNG, one record or the manifest fails here, naming the files. Regenerate the list
only for a change meant to alter the dataset (and say so in the changelog):

    python -m rose_core build --seed 7 --scale 0.05 --out /tmp/small && \
        (cd /tmp/small && find . -type f | sort | sed 's|^\\./||' | xargs sha256sum) \
        > tests/rose_core/benchmarks/rose/data/small_build.sha256

The digests depend on Pillow's PNG encoder (pillow==13.0.0 in requirements.txt, its bundled zlib-ng).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from PIL import Image, ImageDraw

from rose_core.benchmarks.rose import render as R
from rose_core.benchmarks.rose.assets import load_assets
from rose_core.benchmarks.rose.records import SUBSETS
from rose_core.benchmarks.rose.render import item_tile, layout_for, render_scene
from rose_core.benchmarks.rose.scenes import generate_scene

GOLDEN = Path(__file__).parent / "data" / "small_build.sha256"


def folder_digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_small_build_is_byte_identical_to_the_pinned_digests(small_dataset):
    assert (small_dataset.manifest["seed"], small_dataset.manifest["scale"]) == (7, 0.05), \
        "the golden digests are of the seed 7, scale 0.05 build: the session fixture changed"
    want = {rel: sha for sha, rel in (line.split("  ", 1) for line in GOLDEN.read_text().splitlines())}
    got = folder_digests(small_dataset.root)
    assert sorted(got) == sorted(want), f"files differ: only built {sorted(set(got) - set(want))[:5]}, " \
                                        f"only pinned {sorted(set(want) - set(got))[:5]}"
    changed = [rel for rel in want if got[rel] != want[rel]]
    assert not changed, f"{len(changed)} of {len(want)} files changed bytes, e.g. {changed[:5]}"


def _painted_rendering(pack, scene, highlight: bool) -> Image.Image:
    """The renderer as it was before the speed-up: grid drawn with ImageDraw in one pass (highlight fill, lines,
    labels, edge), every tile pasted with its own mask. `render_scene` must give the same pixels."""
    lay = layout_for(scene.rows, scene.cols)
    im = Image.new("RGB", (lay.width, lay.height), R.BACKGROUND)
    d = ImageDraw.Draw(im)
    region = scene.regions["T4"] if highlight else None
    if region is not None:
        box = (*lay.box(region.r0, region.c0)[:2], *(v - 1 for v in lay.box(region.r1, region.c1)[2:]))
        d.rectangle(box, fill=R.HIGHLIGHT_FILL)
    for r in range(scene.rows + 1):
        y = lay.top + r * lay.cell
        d.line((lay.left, y, lay.left + scene.cols * lay.cell, y), fill=R.GRID_LINE)
    for c in range(scene.cols + 1):
        x = lay.left + c * lay.cell
        d.line((x, lay.top, x, lay.top + scene.rows * lay.cell), fill=R.GRID_LINE)
    font = pack.font(17)
    for r in range(1, scene.rows + 1):
        _, y0, _, y1 = lay.box(r, 1)
        d.text((lay.left - 6, (y0 + y1) // 2), f"R{r}", font=font, fill=R.LABEL, anchor="rm")
    for c in range(1, scene.cols + 1):
        x0, _, x1, _ = lay.box(1, c)
        d.text(((x0 + x1) // 2, lay.top - 6), f"C{c}", font=font, fill=R.LABEL, anchor="md")
    if region is not None:
        d.rectangle(box, outline=R.HIGHLIGHT_EDGE, width=R.HIGHLIGHT_EDGE_PX)
    for r in range(1, scene.rows + 1):
        for c in range(1, scene.cols + 1):
            tile = item_tile(pack, scene.params["exception" if (r, c) in scene.targets else "majority"])
            x0, y0, _, _ = lay.box(r, c)
            im.paste(tile, (x0 + R.ITEM_INSET, y0 + R.ITEM_INSET), tile)
    return im


def test_render_scene_equals_the_painted_rendering():
    """Item boxes set from the cached views and the region painted into a cached grid give the pixels the
    ImageDraw + masked-paste renderer gave: every subset, both renderings, regions at every edge of the grid."""
    pack = load_assets()
    edges = set()
    for subset in SUBSETS:
        for i in range(12):
            s = generate_scene(pack, 11, subset, i, "test")
            t4 = s.regions["T4"]
            edges |= {side for side, hit in (("top", t4.r0 == 1), ("left", t4.c0 == 1), ("bottom", t4.r1 == s.rows),
                                             ("right", t4.c1 == s.cols)) if hit}
            for hl in (False, True):
                assert render_scene(pack, s, highlight=hl).tobytes() == _painted_rendering(pack, s, hl).tobytes(), \
                    (s.scene_id, hl)
    assert edges == {"top", "left", "bottom", "right"}
