"""ROSE v0.1 composition and the documented ranges scenes are drawn from.

Every number a scene's difficulty depends on lives here, so docs/dataset.md and the
scene explorer can show the same table the generator uses.
"""
from __future__ import annotations

from dataclasses import dataclass

from .records import SUBSETS

# v0.1: scenes per subset and dev scenes per subset (dev instances / 5 templates).
V01_SCENES: dict[str, int] = {
    "ChineseGlyph": 412, "EmojiStyle": 300, "EmojiContent": 300, "PixelEdit": 300, "PixelContent": 200,
}
V01_DEV_SCENES: dict[str, int] = {
    "ChineseGlyph": 111, "EmojiStyle": 79, "EmojiContent": 79, "PixelEdit": 79, "PixelContent": 52,
}
DEFAULT_SEED = 20260619  # the preprint's month; any integer works

# Ranges (inclusive) every scene is drawn from. Recorded in each scene's params too.
GRID_ROWS = (4, 8)
GRID_COLS = (4, 8)
TARGET_SHARE_MAX = 0.2          # at most a fifth of the cells are exceptions: a clear majority
TARGETS_MIN, TARGETS_MAX = 2, 9
RECT_MAX_SHARE = 0.5            # numeric and highlighted rectangles cover at most half the grid
EXCLUDED_SHARE = (0.2, 0.5)     # the T5 excluded rectangle covers a fifth to a half of the grid
# Share of scenes whose region for that template holds no target (abstention cases).
EMPTY_SHARE: dict[str, float] = {"T2": 0.2, "T3": 0.2, "T4": 0.2, "T5": 0.1}
# PixelEdit: changed sprite pixels, by sprite kind. A sprite pixel is shown as a 2x2 (24 px icons)
# or 3x3 (16 px colour sprites) block of display pixels, so both ranges start at >= 64 display pixels
# (the PixelEdit visibility floor) when every changed pixel is visibly different, as make_edit ensures.
EDIT_K: dict[str, tuple[int, int]] = {"icon": (16, 24), "pxemoji": (8, 14)}
EDIT_WINDOW = (5, 7)            # PixelEdit: side of the square window holding them
CELL_PX = 64                    # rendered cell size; items are drawn inside a 52 px box

# Visibility (rose_core/benchmarks/rose/visibility.py): a display pixel counts as visibly different above this
# CIEDE2000 difference, and a scene's hardest odd cell must have at least FLOOR such pixels;
# a draw below its subset's floor is redrawn. Chosen from the measured v0.1 distributions (docs/dataset.md).
VISIBLE_DE00 = 10.0
VISIBILITY_FLOORS: dict[str, int] = {
    "ChineseGlyph": 64, "EmojiStyle": 200, "EmojiContent": 64, "PixelEdit": 64, "PixelContent": 64,
}


@dataclass(frozen=True)
class SubsetPlan:
    subset: str
    scenes: int
    dev_scenes: int


def plan(scale: float = 1.0) -> list[SubsetPlan]:
    """Scenes and dev scenes per subset; scale < 1 keeps v0.1's proportions."""
    if not 0 < scale <= 1:
        raise ValueError(f"--scale must be in (0, 1], got {scale}")
    out = []
    for s in SUBSETS:
        n = max(1, round(V01_SCENES[s] * scale))
        dev = min(n, round(V01_DEV_SCENES[s] * scale))
        if n >= 2:  # a scaled-down set still has both splits
            dev = min(max(dev, 1), n - 1)
        out.append(SubsetPlan(s, n, dev))
    return out
