"""Deterministic scene generation from (seed, subset, index).

A scene is drawn in three steps, each from its own seeded stream so that one
choice never shifts another: the item pair (majority item, exception item), the
grid and its targets, then the regions each template asks about. Everything
drawn is recorded in `Scene.params`, so difficulty can be analysed later and a
scene can be re-rendered from its record alone.
"""
from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import composition as comp
from .assets import AssetPack
from .records import Cell, Region, Scene, Split
from .visibility import MAX_REDRAWS, ciede2000, measure_items, scene_figures, srgb_to_lab

ICON_INKS = [(25, 25, 25), (28, 64, 160), (150, 32, 32), (20, 110, 55), (110, 40, 140)]


def rng_for(seed: int, *parts: object) -> random.Random:
    """A stream keyed by text: stable across Python versions and processes (no hash())."""
    return random.Random(":".join(["rose", str(seed), *map(str, parts)]))


def scene_id(subset: str, index: int) -> str:
    return f"{subset}-{index:04d}"


# --------------------------------------------------------------------------- item pairs

@functools.lru_cache(maxsize=32)
def _pair_options(pack: AssetPack, subset: str, seed: int) -> list[tuple]:
    """All (majority, exception) options of a subset, in a seeded order: scene i takes option i."""
    if subset == "ChineseGlyph":
        opts = pack.glyph_pairs()
    elif subset == "EmojiStyle":
        provs = pack.emoji_providers
        opts = [(e, a, b) for e in pack.emoji_slots for a in provs for b in provs if a != b]
    elif subset == "EmojiContent":
        opts = [(sid, a, b) for sid, ms in pack.emoji_content_sets for a in ms for b in ms if a != b]
    elif subset == "PixelEdit":
        opts = [(b,) for b in pack.edit_bases]
    elif subset == "PixelContent":
        opts = [(fid, a, b) for fid, ms in pack.sprite_families for a in ms for b in ms if a != b]
    else:
        raise ValueError(f"unknown subset {subset!r}")
    opts = sorted(opts)
    rng_for(seed, subset, "items").shuffle(opts)
    return opts


def _sprite_item(pack: AssetPack, sprite_id: str, ink: tuple[int, int, int] | None) -> dict[str, Any]:
    item: dict[str, Any] = {"kind": "sprite", "sprite": sprite_id}
    if pack.sprites[sprite_id].kind == "icon":
        item["ink"] = list(ink or ICON_INKS[0])
    return item


def make_edit(base: np.ndarray, rng: random.Random, icon: bool) -> dict[str, Any] | None:
    """A localized edit a careful person can see: k sprite pixels inside a w x w window change.

    Icons (one colour) toggle ink on/off: ink against the cell's fill is always a strong
    difference. Colour sprites recolour opaque pixels to the sprite's own palette colour
    farthest from the pixel's colour in CIEDE2000, so the edit is drawn in the sprite's style;
    only pixels with a palette colour more than VISIBLE_DE00 away are eligible, so every changed
    pixel is a visibly different block on screen. k starts where k sprite pixels make at least
    the PixelEdit floor of display pixels (composition.EDIT_K). Returns None when the sprite
    offers no such window (a grey ball whose palette holds only near shades): the caller draws again.
    """
    size = base.shape[0]
    alpha = base[..., 3] > 0
    k_lo, k_hi = comp.EDIT_K["icon" if icon else "pxemoji"]
    if icon:
        eligible = np.ones_like(alpha)
        recolour: dict[tuple[int, ...], tuple[int, ...]] = {}
    else:
        palette = sorted({tuple(int(v) for v in base[y, x, :3]) for y, x in zip(*np.nonzero(alpha))})
        lab = srgb_to_lab(np.array(palette))
        de = ciede2000(lab[:, None, :], lab[None, :, :])
        recolour = {}
        for i, p in enumerate(palette):  # farthest colour; ties broken by the colour itself
            j = max(range(len(palette)), key=lambda j: (round(float(de[i, j]), 6), palette[j]))
            if de[i, j] > comp.VISIBLE_DE00:
                recolour[p] = palette[j]
        eligible = alpha & np.array([[tuple(int(v) for v in base[y, x, :3]) in recolour for x in range(size)]
                                     for y in range(size)])
    centres = list(zip(*(a.tolist() for a in np.nonzero(eligible & alpha))))
    if not centres:
        return None
    for _ in range(100):
        w = rng.randint(*comp.EDIT_WINDOW)
        cy, cx = centres[rng.randrange(len(centres))]
        y0 = min(max(0, cy - w // 2), size - w)
        x0 = min(max(0, cx - w // 2), size - w)
        cand = [(y, x) for y in range(y0, y0 + w) for x in range(x0, x0 + w) if eligible[y, x]]
        if len(cand) < k_lo:
            continue
        k = rng.randint(k_lo, min(k_hi, len(cand)))
        pixels = []
        for y, x in rng.sample(cand, k):
            if icon:
                new = [0, 0, 0, 0] if alpha[y, x] else [0, 0, 0, 255]
            else:
                new = [*recolour[tuple(int(v) for v in base[y, x, :3])], 255]
            pixels.append([x, y, *new])
        return {"k": k, "window": [x0, y0, w, w], "pixels": sorted(pixels)}
    return None


def draw_items(pack: AssetPack, subset: str, seed: int, index: int, redraw: int = 0) -> dict[str, Any] | None:
    """The majority item, the exception item and what they were drawn from (None: no usable draw).

    Draw 0 is scene i's own option from the seeded list, with the stream `(seed, subset, i, "item")`;
    draw r > 0 (a redraw after a draw below the visibility floor) picks an option and its choices
    from the stream `(seed, subset, i, "item", r)`. Either way it depends on (seed, subset, i, r) only.
    """
    opts = _pair_options(pack, subset, seed)
    if redraw == 0:
        rng = rng_for(seed, subset, index, "item")
        opt = opts[index % len(opts)]
    else:
        rng = rng_for(seed, subset, index, "item", redraw)
        opt = opts[rng.randrange(len(opts))]
    if subset == "ChineseGlyph":
        set_id, a, b, sim = opt
        return {"majority": {"kind": "glyph", "char": a}, "exception": {"kind": "glyph", "char": b},
                "glyph_set": set_id, "similarity": sim}
    if subset == "EmojiStyle":
        e, pa, pb = opt
        return {"majority": {"kind": "emoji", "emoji": e, "provider": pa},
                "exception": {"kind": "emoji", "emoji": e, "provider": pb}, "providers": [pa, pb]}
    if subset == "EmojiContent":
        set_id, a, b = opt
        prov = rng.choice(pack.emoji_providers)
        return {"majority": {"kind": "emoji", "emoji": a, "provider": prov},
                "exception": {"kind": "emoji", "emoji": b, "provider": prov}, "content_set": set_id,
                "provider": prov}
    if subset == "PixelEdit":
        (base,) = opt
        icon = pack.sprites[base].kind == "icon"
        ink = rng.choice(ICON_INKS) if icon else None
        edit = make_edit(pack.sprite_array(base), rng, icon)
        if edit is None:
            return None
        exc = _sprite_item(pack, base, ink)
        exc["edit"] = edit
        return {"majority": _sprite_item(pack, base, ink), "exception": exc, "edit_k": edit["k"],
                "edit_window": edit["window"]}
    fam, a, b = opt
    ink = rng.choice(ICON_INKS)
    return {"majority": _sprite_item(pack, a, ink), "exception": _sprite_item(pack, b, ink), "family": fam}


def draw_visible_items(pack: AssetPack, subset: str, seed: int, index: int,
                       floors: dict[str, int] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Items whose displayed difference holds the subset's floor, and the visibility figures.

    Draw 0 first; while a draw falls below the floor (or yields no usable edit), the next draw
    of the same (seed, subset, index) stream. The number of rejected draws is recorded.
    """
    floors = floors or comp.VISIBILITY_FLOORS
    for redraw in range(MAX_REDRAWS + 1):
        items = draw_items(pack, subset, seed, index, redraw)
        if items is None:
            continue
        hardest_cell, by_rendering = measure_items(pack, items["majority"], items["exception"])
        if hardest_cell.visible_px >= floors[subset]:
            return items, scene_figures(hardest_cell, by_rendering, redraw, floors[subset])
    raise ValueError(f"{scene_id(subset, index)} (seed {seed}): no draw in {MAX_REDRAWS + 1} holds the "
                     f"{subset} visibility floor of {floors[subset]} px; check the asset pack or the floors")


# --------------------------------------------------------------------------- grid and regions

def _rects(rows: int, cols: int, min_side: int, min_area: int, max_area: int) -> list[Region]:
    out = []
    for h in range(min_side, rows + 1):
        for w in range(min_side, cols + 1):
            if not (min_area <= h * w <= max_area) or (h == rows and w == cols):
                continue
            for r0 in range(1, rows - h + 2):
                for c0 in range(1, cols - w + 2):
                    out.append(Region("rect", r0, c0, r0 + h - 1, c0 + w - 1))
    return out


def numeric_regions(rows: int, cols: int) -> dict[str, list[Region]]:
    """Candidates for T2/T3, by kind: every row, every column, rectangles of sides >= 2."""
    return {
        "row": [Region("row", r, 1, r, cols) for r in range(1, rows + 1)],
        "column": [Region("column", 1, c, rows, c) for c in range(1, cols + 1)],
        "rect": _rects(rows, cols, 2, 4, int(rows * cols * comp.RECT_MAX_SHARE)),
    }


@dataclass(frozen=True, eq=False)
class _Candidates:
    """Regions a draw picks from, in their order, with their bounds as one array for counting targets."""

    regions: tuple[Region, ...]
    bounds: np.ndarray  # (n, 4): r0, c0, r1, c1

    @staticmethod
    def of(regions: list[Region]) -> _Candidates:
        bounds = np.array([(g.r0, g.c0, g.r1, g.c1) for g in regions], np.int64).reshape(-1, 4)
        bounds.flags.writeable = False
        return _Candidates(tuple(regions), bounds)

    def hits(self, targets: list[Cell]) -> np.ndarray:
        """Targets inside each region: `_hits` of every candidate at once."""
        t = np.array(targets, np.int64).reshape(-1, 2)
        r, c = t[:, 0], t[:, 1]
        b = self.bounds[:, :, None]
        return ((b[:, 0] <= r) & (r <= b[:, 2]) & (b[:, 1] <= c) & (c <= b[:, 3])).sum(1)

    def where(self, keep: np.ndarray) -> list[Region]:
        return [self.regions[i] for i in np.flatnonzero(keep)]


@functools.lru_cache(maxsize=256)
def _rect_candidates(rows: int, cols: int, min_side: int, min_area: int, max_area: int) -> _Candidates:
    return _Candidates.of(_rects(rows, cols, min_side, min_area, max_area))


@functools.lru_cache(maxsize=64)
def _numeric_candidates(rows: int, cols: int) -> dict[str, _Candidates]:
    return {kind: _Candidates.of(regions) for kind, regions in numeric_regions(rows, cols).items()}


def _hits(region: Region, targets: list[Cell]) -> int:
    r0, c0, r1, c1 = region.r0, region.c0, region.r1, region.c1
    return sum(1 for r, c in targets if r0 <= r <= r1 and c0 <= c <= c1)


def _pick_region(rng: random.Random, cands: dict[str, _Candidates], targets: list[Cell], empty: bool,
                 avoid: Region | None = None) -> tuple[Region, bool]:
    """A region with zero targets (empty=True) or at least one; falls back when none fits."""
    kinds = list(cands)
    rng.shuffle(kinds)
    holds_none = {kind: cands[kind].hits(targets) == 0 for kind in kinds}
    for want in (empty, not empty):
        for kind in kinds:
            ok = [r for r in cands[kind].where(holds_none[kind] == want) if r != avoid]
            if ok:
                return rng.choice(ok), want == empty
    raise ValueError("no region candidates")


def generate_scene(pack: AssetPack, seed: int, subset: str, index: int, split: Split,
                   floors: dict[str, int] | None = None) -> Scene:
    """The scene record (targets, regions, params); rendering adds layout and images.

    The grid, targets and regions come from their own streams, so redrawing the items for
    visibility never changes the composition (counts, splits, abstention cases).
    """
    items, visibility = draw_visible_items(pack, subset, seed, index, floors)
    rng = rng_for(seed, subset, index, "grid")
    rows = rng.randint(*comp.GRID_ROWS)
    cols = rng.randint(*comp.GRID_COLS)
    n_cells = rows * cols
    n_targets = rng.randint(comp.TARGETS_MIN, max(comp.TARGETS_MIN, min(comp.TARGETS_MAX, int(n_cells * comp.TARGET_SHARE_MAX))))
    want_empty = {t: rng.random() < p for t, p in comp.EMPTY_SHARE.items()}
    all_cells = [(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)]
    lo, hi = comp.EXCLUDED_SHARE
    excl_cands = _rect_candidates(rows, cols, 2, max(4, int(n_cells * lo)), int(n_cells * hi))
    rrng = rng_for(seed, subset, index, "regions")
    fallbacks = []
    if want_empty["T5"]:
        # All targets inside the excluded rectangle: the right T5 answer is SUBMIT(0).
        roomy = [r for r in excl_cands.regions if r.area >= 2 * n_targets]
        excluded = rrng.choice(roomy)
        targets = sorted(rng.sample(excluded.cells(), n_targets))
    else:
        targets = sorted(rng.sample(all_cells, n_targets))
        hits = excl_cands.hits(targets)
        both = excl_cands.where((0 < hits) & (hits < n_targets))
        some_out = excl_cands.where(hits < n_targets)
        excluded = rrng.choice(both or some_out)
    num = _numeric_candidates(rows, cols)
    r2, ok2 = _pick_region(rrng, num, targets, want_empty["T2"])
    r3, ok3 = _pick_region(rrng, num, targets, want_empty["T3"], avoid=r2)
    hl = {"rect": _rect_candidates(rows, cols, 2, 4, int(n_cells * comp.RECT_MAX_SHARE))}
    r4, ok4 = _pick_region(rrng, hl, targets, want_empty["T4"])
    for t, ok in (("T2", ok2), ("T3", ok3), ("T4", ok4)):
        if not ok:
            fallbacks.append(t)
    regions = {"T2": r2, "T3": r3, "T4": r4, "T5": excluded}
    params = {
        **items,
        "rows": rows, "cols": cols, "n_cells": n_cells, "n_targets": n_targets,
        "region_sizes": {t: r.area for t, r in regions.items()},
        "region_kinds": {t: r.kind for t, r in regions.items()},
        "region_targets": {"T2": _hits(r2, targets), "T3": _hits(r3, targets), "T4": _hits(r4, targets),
                           "T5_outside": n_targets - _hits(excluded, targets)},
        "empty_wanted": want_empty, "empty_fallbacks": fallbacks,
        "visibility": visibility,
        "seed": seed,
    }
    return Scene(scene_id=scene_id(subset, index), subset=subset, index=index, split=split, rows=rows,
                 cols=cols, targets=targets, regions=regions, params=params)
