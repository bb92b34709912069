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

    Cached per process: a scene's visibility measurement and both its renderings use the same two
    tiles (through `item_view`). Callers paste it and never modify it.
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


@functools.lru_cache(maxsize=32)
def _grid(pack: AssetPack, rows: int, cols: int) -> np.ndarray:
    """The empty grid: white, the grid lines and the R/C labels (read-only RGB array)."""
    lay = layout_for(rows, cols)
    im = Image.new("RGB", (lay.width, lay.height), BACKGROUND)
    d = ImageDraw.Draw(im)
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
    grid = np.array(im)
    grid.flags.writeable = False
    return grid


def _mark_region(im: np.ndarray, lay: Layout, region: Region) -> None:
    """Paint the highlighted region into a grid array: its cells' fill, the grid lines over it, and its edge
    (HIGHLIGHT_EDGE_PX wide, inside the region's box). The labels sit in the margins, outside any region."""
    x0, y0, _, _ = lay.box(region.r0, region.c0)
    _, _, x1, y1 = lay.box(region.r1, region.c1)
    im[y0:y1, x0:x1] = HIGHLIGHT_FILL
    im[y0:y1:lay.cell, x0:x1] = GRID_LINE  # the lines at the region's top and between its rows
    im[y0:y1, x0:x1:lay.cell] = GRID_LINE  # and at its left and between its columns
    w = HIGHLIGHT_EDGE_PX
    im[y0:y0 + w, x0:x1] = im[y1 - w:y1, x0:x1] = HIGHLIGHT_EDGE
    im[y0:y1, x0:x0 + w] = im[y0:y1, x1 - w:x1] = HIGHLIGHT_EDGE


def render_scene(pack: AssetPack, scene: Scene, highlight: bool = False) -> Image.Image:
    """The scene as models and participants see it; highlight=True marks the T4 region.

    Every cell's item box is `item_view` of its item over the cell's fill (the highlight fill
    inside the T4 region, white elsewhere): the tile pasted with its own mask, the very pixels the
    visibility measurement compares. The grid lines and the highlight edge lie outside the boxes."""
    lay = layout_for(scene.rows, scene.cols)
    region = scene.regions["T4"] if highlight else None
    im = _grid(pack, scene.rows, scene.cols).copy()
    if region is not None:
        _mark_region(im, lay, region)
    majority, exception = scene.params["majority"], scene.params["exception"]
    # the item boxes of all cells as one view (rows, ITEM_PX, cols, ITEM_PX, 3) into the image
    grid = im[lay.top:lay.top + scene.rows * lay.cell, lay.left:lay.left + scene.cols * lay.cell]
    boxes = grid.reshape(scene.rows, lay.cell, scene.cols, lay.cell, 3, copy=False)[
        :, ITEM_INSET:ITEM_INSET + ITEM_PX, :, ITEM_INSET:ITEM_INSET + ITEM_PX]
    boxes[...] = item_view(pack, majority, BACKGROUND)[:, None]
    if region is not None:
        boxes[region.r0 - 1:region.r1, :, region.c0 - 1:region.c1] = item_view(pack, majority, HIGHLIGHT_FILL)[:, None]
    for r, c in scene.targets:
        fill = HIGHLIGHT_FILL if region is not None and (r, c) in region else BACKGROUND
        boxes[r - 1, :, c - 1] = item_view(pack, exception, fill)
    return Image.fromarray(im)


def item_view(pack: AssetPack, item: dict, background: tuple[int, int, int] = BACKGROUND) -> np.ndarray:
    """The item box of a cell as displayed: the tile pasted over the cell's fill with its own mask,
    as a read-only RGB array (ITEM_PX, ITEM_PX, 3). `render_scene` sets these arrays into the grid.

    Cached per process with the tiles: a scene's visibility measurement and both its renderings
    use the same four views."""
    return _item_view(pack, json.dumps(item, sort_keys=True), tuple(background))


@functools.lru_cache(maxsize=64)
def _item_view(pack: AssetPack, key: str, background: tuple[int, int, int]) -> np.ndarray:
    tile = _item_tile(pack, key)
    box = Image.new("RGB", (ITEM_PX, ITEM_PX), background)
    box.paste(tile, (0, 0), tile)
    view = np.array(box)
    view.flags.writeable = False
    return view


def encode_png(im: Image.Image) -> bytes:
    """PNG bytes with fixed settings: same pixels, same bytes."""
    buf = io.BytesIO()
    im.save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
