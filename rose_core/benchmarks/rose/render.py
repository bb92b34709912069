"""Pillow rendering of a scene: the base image and the highlight image, plus the cell layout.

Both renderings share one layout, so a click on pixel (x, y) names the same cell
in either image, in the participant UI as in a model's answer.
"""
from __future__ import annotations

import functools
import hashlib
import io
import json

import numpy as np
from PIL import Image, ImageDraw

from .assets import AssetPack
from .composition import CELL_PX
from .records import Layout, Region, Scene

ITEM_PX = CELL_PX - 12
ITEM_INSET = (CELL_PX - ITEM_PX) // 2  # the item box inside a cell box; grid lines and highlight edge stay outside
MARGIN_LEFT, MARGIN_TOP, MARGIN_END = 44, 32, 10
BACKGROUND = (255, 255, 255)
GRID_LINE = (205, 205, 205)
LABEL = (70, 70, 70)
HIGHLIGHT_FILL = (255, 236, 140)
HIGHLIGHT_EDGE = (224, 90, 0)
HIGHLIGHT_EDGE_PX = 4


def layout_for(rows: int, cols: int) -> Layout:
    return Layout(width=MARGIN_LEFT + cols * CELL_PX + MARGIN_END, height=MARGIN_TOP + rows * CELL_PX + MARGIN_END,
                  cell=CELL_PX, left=MARGIN_LEFT, top=MARGIN_TOP, rows=rows, cols=cols)


def apply_edit(arr: np.ndarray, edit: dict) -> np.ndarray:
    """A sprite array with a PixelEdit edit's pixels set (a copy)."""
    out = arr.copy()
    for x, y, r, g, b, a in edit["pixels"]:
        out[y, x] = (r, g, b, a)
    return out


def item_tile(pack: AssetPack, item: dict) -> Image.Image:
    """An ITEM_PX x ITEM_PX RGBA tile of one item (glyph, emoji, or sprite with optional edit).

    Cached per process: a scene draws the same two tiles in every cell, in both renderings and
    in its visibility measurement. Callers paste it and never modify it.
    """
    return _item_tile(pack, json.dumps(item, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _item_tile(pack: AssetPack, key: str) -> Image.Image:
    item = json.loads(key)
    kind = item["kind"]
    if kind == "glyph":
        tile = Image.new("RGBA", (ITEM_PX, ITEM_PX), (0, 0, 0, 0))
        ImageDraw.Draw(tile).text((ITEM_PX // 2, ITEM_PX // 2), item["char"], font=pack.font(44),
                                  fill=(20, 20, 20, 255), anchor="mm")
        return tile
    if kind == "emoji":
        return pack.emoji_tile(item["provider"], item["emoji"]).resize((ITEM_PX, ITEM_PX), Image.LANCZOS)
    if kind == "sprite":
        arr = pack.sprite_array(item["sprite"])
        if "edit" in item:
            arr = apply_edit(arr, item["edit"])
        if "ink" in item:
            arr[..., :3] = item["ink"]
        size = arr.shape[0]
        scale = max(1, ITEM_PX // size)
        im = Image.fromarray(arr, "RGBA").resize((size * scale, size * scale), Image.NEAREST)  # crisp pixels
        tile = Image.new("RGBA", (ITEM_PX, ITEM_PX), (0, 0, 0, 0))
        tile.paste(im, ((ITEM_PX - im.width) // 2, (ITEM_PX - im.height) // 2))
        return tile
    raise ValueError(f"unknown item kind {kind!r}")


@functools.lru_cache(maxsize=256)
def _grid_background(pack: AssetPack, rows: int, cols: int, highlight: Region | None) -> Image.Image:
    lay = layout_for(rows, cols)
    im = Image.new("RGB", (lay.width, lay.height), BACKGROUND)
    d = ImageDraw.Draw(im)
    if highlight is not None:
        x0, y0, _, _ = lay.box(highlight.r0, highlight.c0)
        _, _, x1, y1 = lay.box(highlight.r1, highlight.c1)
        d.rectangle((x0, y0, x1 - 1, y1 - 1), fill=HIGHLIGHT_FILL)
    for r in range(rows + 1):
        y = lay.top + r * lay.cell
        d.line((lay.left, y, lay.left + cols * lay.cell, y), fill=GRID_LINE)
    for c in range(cols + 1):
        x = lay.left + c * lay.cell
        d.line((x, lay.top, x, lay.top + rows * lay.cell), fill=GRID_LINE)
    font = pack.font(17)
    for r in range(1, rows + 1):
        x0, y0, x1, y1 = lay.box(r, 1)
        d.text((lay.left - 6, (y0 + y1) // 2), f"R{r}", font=font, fill=LABEL, anchor="rm")
    for c in range(1, cols + 1):
        x0, y0, x1, y1 = lay.box(1, c)
        d.text(((x0 + x1) // 2, lay.top - 6), f"C{c}", font=font, fill=LABEL, anchor="md")
    if highlight is not None:
        x0, y0, _, _ = lay.box(highlight.r0, highlight.c0)
        _, _, x1, y1 = lay.box(highlight.r1, highlight.c1)
        d.rectangle((x0, y0, x1 - 1, y1 - 1), outline=HIGHLIGHT_EDGE, width=HIGHLIGHT_EDGE_PX)
    return im


def render_scene(pack: AssetPack, scene: Scene, highlight: bool = False) -> Image.Image:
    """The scene as models and participants see it; highlight=True marks the T4 region."""
    lay = layout_for(scene.rows, scene.cols)
    im = _grid_background(pack, scene.rows, scene.cols, scene.regions["T4"] if highlight else None).copy()
    majority = item_tile(pack, scene.params["majority"])
    exception = item_tile(pack, scene.params["exception"])
    targets = set(scene.targets)
    off = ITEM_INSET
    for r in range(1, scene.rows + 1):
        for c in range(1, scene.cols + 1):
            tile = exception if (r, c) in targets else majority
            x0, y0, _, _ = lay.box(r, c)
            im.paste(tile, (x0 + off, y0 + off), tile)
    return im


def item_view(pack: AssetPack, item: dict, background: tuple[int, int, int] = BACKGROUND) -> np.ndarray:
    """The item box of a cell as displayed: the tile pasted over the cell's fill, exactly as
    `render_scene` pastes it (same call, same mask), as an RGB array (ITEM_PX, ITEM_PX, 3)."""
    tile = item_tile(pack, item)
    box = Image.new("RGB", (ITEM_PX, ITEM_PX), background)
    box.paste(tile, (0, 0), tile)
    return np.asarray(box)


def encode_png(im: Image.Image) -> bytes:
    """PNG bytes with fixed settings: same pixels, same bytes."""
    buf = io.BytesIO()
    im.save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
