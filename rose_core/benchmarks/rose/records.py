"""Records shared by every part of ROSE Studio: scenes, regions, instances.

They are plain dataclasses that round-trip through JSON (`to_json` / `from_json`),
because the dataset on disk, the participant app and the importers all read the
same files and none of them should depend on how a scene was generated.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Subset = Literal["ChineseGlyph", "EmojiStyle", "EmojiContent", "PixelEdit", "PixelContent"]
SUBSETS: tuple[Subset, ...] = ("ChineseGlyph", "EmojiStyle", "EmojiContent", "PixelEdit", "PixelContent")
SUBSET_GROUP: dict[str, str] = {
    "ChineseGlyph": "Glyph", "EmojiStyle": "Emoji", "EmojiContent": "Emoji",
    "PixelEdit": "Pixel", "PixelContent": "Pixel",
}
GROUPS: tuple[str, ...] = ("Glyph", "Emoji", "Pixel")

Template = Literal["T1", "T2", "T3", "T4", "T5", "G-Clk", "mL-Cnt"]
MAIN_TEMPLATES: tuple[Template, ...] = ("T1", "T2", "T3", "T4", "T5")
BRIDGE_TEMPLATES: tuple[Template, ...] = ("G-Clk", "mL-Cnt")
TEMPLATES: tuple[Template, ...] = MAIN_TEMPLATES + BRIDGE_TEMPLATES
TEMPLATE_LABEL: dict[str, str] = {
    "T1": "G-Cnt", "T2": "L-Cnt", "T3": "L-Clk", "T4": "V-Clk", "T5": "Excl-CS",
    "G-Clk": "G-Clk", "mL-Cnt": "mL-Cnt",
}
# What each template asks for: a count, clicks ending in DONE, or clicks ending in SUBMIT(n).
Output = Literal["count", "click", "click_submit"]
TEMPLATE_OUTPUT: dict[str, Output] = {
    "T1": "count", "T2": "count", "mL-Cnt": "count",
    "T3": "click", "T4": "click", "G-Clk": "click",
    "T5": "click_submit",
}
Split = Literal["dev", "test"]
RegionKind = Literal["grid", "row", "column", "rect"]
Cell = tuple[int, int]  # (row, column), 1-based


@dataclass(frozen=True)
class Region:
    """A rectangle of cells, 1-based and inclusive; rows and columns are rectangles too."""

    kind: RegionKind
    r0: int
    c0: int
    r1: int
    c1: int

    def __contains__(self, cell: Cell) -> bool:
        r, c = cell
        return self.r0 <= r <= self.r1 and self.c0 <= c <= self.c1

    @property
    def area(self) -> int:
        return (self.r1 - self.r0 + 1) * (self.c1 - self.c0 + 1)

    def cells(self) -> list[Cell]:
        return [(r, c) for r in range(self.r0, self.r1 + 1) for c in range(self.c0, self.c1 + 1)]

    def describe(self) -> str:
        """Words a prompt uses for the region, in the image's own coordinates."""
        if self.kind == "grid":
            return "the whole grid"
        if self.kind == "row":
            return f"row R{self.r0}"
        if self.kind == "column":
            return f"column C{self.c0}"
        return (f"the rectangle from R{self.r0},C{self.c0} to R{self.r1},C{self.c1} "
                f"(rows {self.r0}-{self.r1}, columns {self.c0}-{self.c1})")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(d: dict[str, Any]) -> Region:
        return Region(d["kind"], d["r0"], d["c0"], d["r1"], d["c1"])

    @staticmethod
    def whole(rows: int, cols: int) -> Region:
        return Region("grid", 1, 1, rows, cols)


@dataclass(frozen=True)
class Layout:
    """Pixel geometry of a rendering: every cell's box, so a UI overlays clicks on the same pixels."""

    width: int
    height: int
    cell: int
    left: int
    top: int
    rows: int
    cols: int

    def box(self, r: int, c: int) -> tuple[int, int, int, int]:
        x0 = self.left + (c - 1) * self.cell
        y0 = self.top + (r - 1) * self.cell
        return (x0, y0, x0 + self.cell, y0 + self.cell)

    def cell_boxes(self) -> list[list[int]]:
        """[[row, col, x0, y0, x1, y1], ...] row-major; saved beside every image."""
        return [[r, c, *self.box(r, c)] for r in range(1, self.rows + 1) for c in range(1, self.cols + 1)]

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "cells": self.cell_boxes()}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Layout:
        return Layout(d["width"], d["height"], d["cell"], d["left"], d["top"], d["rows"], d["cols"])


@dataclass
class Scene:
    """One grid: which cells hold the exception (targets), its regions, how it was drawn."""

    scene_id: str
    subset: Subset
    index: int
    split: Split
    rows: int
    cols: int
    targets: list[Cell]
    regions: dict[str, Region]  # "T2", "T3", "T4" (highlight), "T5" (excluded)
    params: dict[str, Any]      # generation parameters: items, providers, edit, seeds…
    layout: Layout | None = None
    images: dict[str, str] = field(default_factory=dict)        # "base"/"highlight" -> relative path
    image_sha256: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "scene_id": self.scene_id, "subset": self.subset, "index": self.index, "split": self.split,
            "rows": self.rows, "cols": self.cols, "targets": [list(t) for t in self.targets],
            "regions": {k: v.to_json() for k, v in self.regions.items()}, "params": self.params,
            "layout": self.layout.to_json() if self.layout else None,
            "images": self.images, "image_sha256": self.image_sha256,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> Scene:
        return Scene(
            scene_id=d["scene_id"], subset=d["subset"], index=d["index"], split=d["split"],
            rows=d["rows"], cols=d["cols"], targets=[(r, c) for r, c in d["targets"]],
            regions={k: Region.from_json(v) for k, v in d["regions"].items()}, params=d["params"],
            layout=Layout.from_json(d["layout"]) if d.get("layout") else None,
            images=d.get("images", {}), image_sha256=d.get("image_sha256", {}),
        )


@dataclass
class Gold:
    """The right answer to an instance. Never sent to a participant's browser."""

    count: int | None          # COUNT(n) or SUBMIT(n); None for CLICK…DONE
    cells: list[Cell] | None   # the target set to click; None for COUNT

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "cells": None if self.cells is None else [list(c) for c in self.cells]}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Gold:
        return Gold(d["count"], None if d["cells"] is None else [(r, c) for r, c in d["cells"]])


@dataclass
class Instance:
    """One question about one scene: a template, a context region, a prompt and its gold answer."""

    instance_id: str
    scene_id: str
    subset: Subset
    split: Split
    template: Template
    image: str                   # relative path of the rendering shown (base or highlight)
    context: Region              # where targets count: grid, row, column, rect; for T5 the excluded rect
    context_mode: Literal["inside", "outside"]
    prompt: str                  # model-facing, explains the protocol, never names the target identity
    instruction: str             # short human-facing instruction
    gold: Gold
    protocol_answer: str         # the gold answer as a protocol string (oracle, docs)

    def to_json(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id, "scene_id": self.scene_id, "subset": self.subset,
            "split": self.split, "template": self.template, "label": TEMPLATE_LABEL[self.template],
            "image": self.image, "context": self.context.to_json(), "context_mode": self.context_mode,
            "prompt": self.prompt, "instruction": self.instruction, "gold": self.gold.to_json(),
            "protocol_answer": self.protocol_answer,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> Instance:
        return Instance(
            instance_id=d["instance_id"], scene_id=d["scene_id"], subset=d["subset"], split=d["split"],
            template=d["template"], image=d["image"], context=Region.from_json(d["context"]),
            context_mode=d["context_mode"], prompt=d["prompt"], instruction=d["instruction"],
            gold=Gold.from_json(d["gold"]), protocol_answer=d["protocol_answer"],
        )

    def in_context(self, cell: Cell) -> bool:
        return (cell in self.context) == (self.context_mode == "inside")
