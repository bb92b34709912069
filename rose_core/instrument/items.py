"""The instrument's items: attention checks (an instructed-response item drawn on a real ROSE scene) and the item
of an assignment by its kind, with the picture a participant sees for it."""
from __future__ import annotations

import functools
import io
from dataclasses import replace

from PIL import Image, ImageDraw

from ..benchmarks.rose.assets import load_assets
from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.item import RoseItem, rose_item
from ..benchmarks.rose.scenes import rng_for
from ..benchmarks.rose.scoring import ScoreKey


def attention_item_id(scene_id: str, seed: str) -> str:
    return f"ATT:{scene_id}:{seed}"


def attention_text(r: int, c: int) -> str:
    return f"Click the cell in row R{r}, column C{c} (and nothing else), then press DONE."


# A picture check's page text: the instruction itself is drawn into the image (`item_png`), so a script that reads
# the page's text cannot answer it (docs/threat-model.md, "Bots").
PICTURE_INSTRUCTION = "Follow the instruction written in the picture, then press DONE."
BAND_PX = 60           # the band under the grid that holds a picture check's instruction
BAND_BACKGROUND, BAND_TEXT = (246, 246, 246), (20, 20, 20)


def attention_item(ds: Dataset, item_id: str, kind: str = "worded") -> RoseItem:
    """An instructed-response item on a real image: click one named cell, the right answer whatever it shows.

    Worded in the voice of the study's own click instructions (a named place, "(and nothing else), then press
    DONE"), with none of the words that announce a check ("only", "whatever it shows", "attention"): a participant
    who reads each instruction passes, one who clicks the odd cells by habit does not. `kind` "picture": the page
    text says only PICTURE_INSTRUCTION and the instruction is drawn in a band under the grid (the layout grows by
    BAND_PX at the bottom; every cell keeps its pixels); the gold is the same for either kind."""
    _, scene_id, seed = item_id.split(":", 2)
    scene = ds.scenes[scene_id]
    rng = rng_for(0, "attention", seed)
    r, c = rng.randint(1, scene.rows), rng.randint(1, scene.cols)
    key = ScoreKey(instance_id=item_id, template="ATT", output="click", rows=scene.rows, cols=scene.cols,
                   gold_count=1, gold_cells=frozenset({(r, c)}), global_count=1, outside_targets=frozenset(),
                   terminal="DONE")
    picture = kind == "picture"
    text = PICTURE_INSTRUCTION if picture else attention_text(r, c)
    layout = replace(scene.layout, height=scene.layout.height + BAND_PX) if picture else scene.layout
    return RoseItem(item_id, scene_id, "ATT", scene.subset, scene.split, scene.images["base"], layout,
                    "click", text, None, "inside", key)


def item_for(ds: Dataset, kind: str, item_id: str, attention: str = "worded") -> RoseItem:
    """The item of an assignment; `attention`: the study's `attention_kind`, for an attention check."""
    return attention_item(ds, item_id, attention) if kind == "attention" else rose_item(ds, item_id)


def is_picture_check(item: RoseItem) -> bool:
    return item.template == "ATT" and item.instruction == PICTURE_INSTRUCTION


def item_png(ds: Dataset, item: RoseItem) -> bytes:
    """The PNG a participant sees for an item: the dataset's image (checked against its build hash: DatasetError
    when missing or changed), and for a picture check that image with its instruction drawn under the grid.
    Deterministic: the same item gives the same bytes."""
    data = ds.read_image(item.image)
    if not is_picture_check(item):
        return data
    (r, c), = item.key.gold_cells
    return _drawn(data, attention_text(r, c), item.layout.width, item.layout.height)


@functools.lru_cache(maxsize=64)
def _drawn(base: bytes, text: str, width: int, height: int) -> bytes:
    im = Image.open(io.BytesIO(base)).convert("RGB")
    out = Image.new("RGB", (max(width, im.width), height), BAND_BACKGROUND)
    out.paste(im, (0, 0))
    d = ImageDraw.Draw(out)
    first, _, second = text.partition(" (")
    lines = [first, "(" + second] if second else [first]
    pack = load_assets()
    size = 18
    while size > 9 and max(d.textlength(line, font=pack.font(size)) for line in lines) > out.width - 16:
        size -= 1
    font, top = pack.font(size), height - BAND_PX
    for n, line in enumerate(lines):
        d.text((out.width // 2, top + 8 + n * (size + 6)), line, font=font, fill=BAND_TEXT, anchor="mt")
    buf = io.BytesIO()
    out.save(buf, format="PNG")
    return buf.getvalue()
