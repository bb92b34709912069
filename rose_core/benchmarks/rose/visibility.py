"""How visible the odd cells are: the majority item against each exception, as displayed.

ROSE asks people to find the odd cells, so a scene is only fair to a human if a careful
person can see the difference at the size the scene is shown. The participant page shows
a rendering at most at its own pixel size (one PNG pixel per CSS pixel), so we measure on
the rendered cell crops themselves — the item box of a cell, composited on its background
by the same code that paints the PNG — never on the source sprite, whose pixels are
enlarged, anti-aliased or resampled on the way to the screen.

For each pixel of the item box we take the CIEDE2000 colour difference (ΔE00, sRGB → CIELAB
D65) between the majority crop and the exception crop. A pixel *counts* as visibly different
when ΔE00 > `VISIBLE_DE00`; the figure a scene is judged by is `visible_px`, the number of
such display pixels in its hardest exception cell (the minimum over every target cell and
both renderings): a person finds every odd cell or fails the scene, so the least visible
cell decides. `max_de00` and `mean_de00` (over the pixels that differ at all) are stored
beside it so that "few pixels but very different" and "many pixels, faint" stay apart.
The threshold and the per-subset floors live in `composition.py` with the other ranges a
scene's difficulty depends on; docs/dataset.md (Visibility) says why those values.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable

import numpy as np
from PIL import Image

from .assets import AssetPack
from .composition import VISIBLE_DE00
from .records import Layout
from .render import BACKGROUND, HIGHLIGHT_FILL, ITEM_INSET, item_tile, item_view

VISIBILITY_SCHEME = "ciede2000-v1"
MAX_REDRAWS = 50  # a subset whose draws keep failing is a bug in the asset pack or the floors: fail loudly


# --------------------------------------------------------------------------- colour science

def _srgb_to_linear_lut() -> np.ndarray:
    c = np.arange(256, dtype=np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


_LINEAR = _srgb_to_linear_lut()
_RGB_TO_XYZ = np.array([[0.4124564, 0.3575761, 0.1804375],
                        [0.2126729, 0.7151522, 0.0721750],
                        [0.0193339, 0.1191920, 0.9503041]])
_WHITE_D65 = _RGB_TO_XYZ.sum(1)  # sRGB white: neutral greys get a* = b* = 0 exactly


def srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65, 2°) of 8-bit sRGB values, shape (..., 3) -> (..., 3) float64."""
    xyz = _LINEAR[np.asarray(rgb, np.uint8)] @ _RGB_TO_XYZ.T / _WHITE_D65
    d = 6 / 29
    f = np.where(xyz > d ** 3, np.cbrt(xyz), xyz / (3 * d * d) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1)


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIEDE2000 colour difference (kL = kC = kH = 1), element-wise over (..., 3) Lab arrays.

    Follows Sharma, Wu & Dalal (2005), including their notes on hue at zero chroma and on
    the mean hue across the 0°/360° seam; checked against their 34 published test pairs.
    """
    lab1, lab2 = np.asarray(lab1, np.float64), np.asarray(lab2, np.float64)
    L1, a1, b1 = lab1[..., 0], lab1[..., 1], lab1[..., 2]
    L2, a2, b2 = lab2[..., 0], lab2[..., 1], lab2[..., 2]
    c_bar7 = ((np.hypot(a1, b1) + np.hypot(a2, b2)) / 2) ** 7
    g = 0.5 * (1 - np.sqrt(c_bar7 / (c_bar7 + 25.0 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    zero = (c1p * c2p) == 0
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(zero, 0.0, dh)
    d_l = L2 - L1
    d_c = c2p - c1p
    d_h = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_bar = (L1 + L2) / 2
    c_bar_p = (c1p + c2p) / 2
    h_sum = h1p + h2p
    h_bar = np.where(np.abs(h1p - h2p) <= 180, h_sum / 2,
                     np.where(h_sum < 360, (h_sum + 360) / 2, (h_sum - 360) / 2))
    h_bar = np.where(zero, h_sum, h_bar)
    t = (1 - 0.17 * np.cos(np.radians(h_bar - 30)) + 0.24 * np.cos(np.radians(2 * h_bar))
         + 0.32 * np.cos(np.radians(3 * h_bar + 6)) - 0.20 * np.cos(np.radians(4 * h_bar - 63)))
    d_theta = 30 * np.exp(-(((h_bar - 275) / 25) ** 2))
    cp7 = c_bar_p ** 7
    r_c = 2 * np.sqrt(cp7 / (cp7 + 25.0 ** 7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c = 1 + 0.045 * c_bar_p
    s_h = 1 + 0.015 * c_bar_p * t
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c
    tl, tc, th = d_l / s_l, d_c / s_c, d_h / s_h
    return np.sqrt(np.maximum(tl * tl + tc * tc + th * th + r_t * tc * th, 0.0))


# --------------------------------------------------------------------------- one cell against the majority

@dataclass(frozen=True)
class CellDifference:
    """The displayed difference between a majority crop and one exception crop."""

    diff_px: int       # display pixels whose RGB differs at all
    visible_px: int    # display pixels with ΔE00 > VISIBLE_DE00: the figure floors apply to
    max_de00: float    # largest ΔE00 of any pixel
    mean_de00: float   # mean ΔE00 over the pixels that differ at all (0 when none do)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def delta_map(majority: np.ndarray, exception: np.ndarray) -> np.ndarray:
    """Per-pixel ΔE00 between two equally sized RGB crops (H, W, 3) uint8 -> (H, W) float."""
    a, b = np.asarray(majority, np.uint8), np.asarray(exception, np.uint8)
    if a.shape != b.shape or a.ndim != 3 or a.shape[2] != 3:
        raise ValueError(f"crops must be equal (H, W, 3) RGB arrays, got {a.shape} and {b.shape}")
    out = np.zeros(a.shape[:2])
    differ = (a != b).any(-1)
    if differ.any():  # only the differing pixels go through the colour maths
        out[differ] = pixel_de(a[differ], b[differ])
    return out


def pixel_de(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ΔE00 of pixel pairs (N, 3) uint8, computed once per distinct colour pair (tiles repeat colours)."""
    a32, b32 = a.astype(np.int64), b.astype(np.int64)
    key = (a32[:, 0] << 40) | (a32[:, 1] << 32) | (a32[:, 2] << 24) | (b32[:, 0] << 16) | (b32[:, 1] << 8) | b32[:, 2]
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return ciede2000(srgb_to_lab(a[first]), srgb_to_lab(b[first]))[inverse.reshape(-1)]


def _figures(de: np.ndarray, differ: np.ndarray) -> CellDifference:
    n = int(differ.sum())
    return CellDifference(diff_px=n, visible_px=int((de > VISIBLE_DE00).sum()),
                          max_de00=round(float(de.max()), 2),
                          mean_de00=round(float(de[differ].mean()), 2) if n else 0.0)


def cell_difference(majority: np.ndarray, exception: np.ndarray) -> CellDifference:
    return _figures(delta_map(majority, exception), (np.asarray(majority) != np.asarray(exception)).any(-1))


def hardest(diffs: Iterable[CellDifference]) -> CellDifference:
    """The least visible exception decides (fewest visible pixels, then smallest mean ΔE00)."""
    return min(diffs, key=lambda d: (d.visible_px, d.mean_de00, d.max_de00, d.diff_px))


def measure_items(pack: AssetPack, majority: dict, exception: dict) -> tuple[CellDifference, dict[str, int]]:
    """The displayed difference of an item pair: the hardest of the two renderings' fills.

    The item box is drawn by the renderer's own paste (`render.item_view`) over white (the base
    rendering) and over the highlight fill (cells inside the T4 region), since a target may sit
    on either; the figures are those of the less visible of the two. Where both tiles are opaque
    the fill does not show, so the highlight pass only recomputes ΔE00 where either is not.
    """
    va, vb = item_view(pack, majority, BACKGROUND), item_view(pack, exception, BACKGROUND)
    de = delta_map(va, vb)
    base = _figures(de, (va != vb).any(-1))
    ha, hb = item_view(pack, majority, HIGHLIGHT_FILL), item_view(pack, exception, HIGHLIGHT_FILL)
    opaque = (np.asarray(item_tile(pack, majority).getchannel("A")) == 255) & \
             (np.asarray(item_tile(pack, exception).getchannel("A")) == 255)
    differ_h = (ha != hb).any(-1)
    de_h = np.where(opaque, de, 0.0)
    redo = differ_h & ~opaque
    if redo.any():
        de_h[redo] = pixel_de(ha[redo], hb[redo])
    by = {"base": base, "highlight": _figures(de_h, differ_h)}
    return hardest(by.values()), {name: d.visible_px for name, d in by.items()}


def scene_figures(diff: CellDifference, by_rendering: dict[str, int], redraws: int, floor: int) -> dict[str, Any]:
    """What a scene's params record about its visibility (`params["visibility"]`)."""
    return {"scheme": VISIBILITY_SCHEME, "threshold_de00": VISIBLE_DE00, "floor": floor, "redraws": redraws,
            **diff.to_json(), "visible_px_by_rendering": by_rendering}


# --------------------------------------------------------------------------- reading a rendered PNG back

def cell_crop(image: np.ndarray, layout: Layout, cell: tuple[int, int], inset: int = ITEM_INSET) -> np.ndarray:
    """The item box of one cell cut from a rendered RGB image (H, W, 3)."""
    x0, y0, x1, y1 = layout.box(*cell)
    return image[y0 + inset:y1 - inset, x0 + inset:x1 - inset]


def majority_cell(layout: Layout, targets: Iterable[tuple[int, int]]) -> tuple[int, int]:
    """The first non-target cell in row-major order: every majority cell shows the same tile."""
    tset = set(targets)
    for r in range(1, layout.rows + 1):
        for c in range(1, layout.cols + 1):
            if (r, c) not in tset:
                return (r, c)
    raise ValueError("every cell is a target: no majority cell to compare against")


# --------------------------------------------------------------------------- the explorer's zoomed view

def difference_image(majority: np.ndarray, exception: np.ndarray, zoom: int = 6, gap: int = 8) -> Image.Image:
    """Majority crop | exception crop | difference map, each enlarged `zoom`× with NEAREST.

    The difference map is white where the pixels are equal, light grey where they differ by
    at most VISIBLE_DE00 (present but faint), and from orange to dark red as ΔE00 grows past
    it (saturating at 50), so the pixels that count towards `visible_px` stand out.
    """
    a, b = np.asarray(majority, np.uint8), np.asarray(exception, np.uint8)
    de = delta_map(a, b)
    differ = (a != b).any(-1)
    diff = np.full(a.shape, 255, np.uint8)
    diff[differ] = (200, 200, 200)
    vis = de > VISIBLE_DE00
    s = np.clip((de[vis] - VISIBLE_DE00) / (50 - VISIBLE_DE00), 0, 1)[:, None]
    diff[vis] = np.round((1 - s) * np.array([255, 150, 40]) + s * np.array([140, 0, 0])).astype(np.uint8)
    h, w = a.shape[:2]
    panels = [Image.fromarray(p, "RGB").resize((w * zoom, h * zoom), Image.NEAREST) for p in (a, b, diff)]
    out = Image.new("RGB", (3 * w * zoom + 2 * gap, h * zoom), (255, 255, 255))
    for k, p in enumerate(panels):
        out.paste(p, (k * (w * zoom + gap), 0))
    return out


@dataclass(frozen=True)
class DifferenceView:
    """The scene explorer's zoomed difference: which cells, the picture, and the figures read off the PNG."""

    majority_cell: tuple[int, int]
    exception_cell: tuple[int, int]
    figures: CellDifference
    image: Image.Image


def scene_difference_view(image: np.ndarray, layout: Layout, targets: list[tuple[int, int]],
                          zoom: int = 6) -> DifferenceView:
    """Majority crop, the hardest exception crop and their difference map, read from a rendered image."""
    ref_cell = majority_cell(layout, targets)
    ref = cell_crop(image, layout, ref_cell)
    diffs = {t: cell_difference(ref, cell_crop(image, layout, t)) for t in targets}
    cell = min(targets, key=lambda t: (diffs[t].visible_px, diffs[t].mean_de00, t))
    return DifferenceView(ref_cell, cell, diffs[cell], difference_image(ref, cell_crop(image, layout, cell), zoom))
