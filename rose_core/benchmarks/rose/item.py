"""ROSE's item: an instance as a `OneShotItem` (the contract in `benchmarks.items`), scored by ROSE's scorer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..items import ItemResult, ItemShape, OneShotAnswer
from .dataset import Dataset
from .instances import protocol_string
from .records import TEMPLATE_OUTPUT, Cell, Layout, Output, Region
from .scoring import ScoreKey, score


@dataclass(frozen=True)
class RoseItem:
    """A ROSE instance (or an attention check drawn on a ROSE scene) as a one-shot item.

    `key` is the gold answer: it stays on the server; `public()` is what a browser may see."""

    item_id: str
    scene_id: str
    template: str                 # "ATT" for attention checks
    subset: str
    split: str
    image: str                    # dataset-relative PNG path
    layout: Layout
    mode: Output
    instruction: str
    region: Region | None         # the context region (None: the whole grid)
    region_mode: Literal["inside", "outside"]
    key: ScoreKey = field(repr=False)
    shape: ItemShape = "one_shot"

    def protocol(self, answer: OneShotAnswer) -> str:
        """The same protocol string a model would write for this answer."""
        cells = list(answer.selection)
        if self.mode == "count":
            return "" if answer.count is None else protocol_string("count", answer.count, None)
        if self.mode == "click_submit" and answer.count is None:
            return protocol_string("click", None, cells).removesuffix("DONE").strip()
        return protocol_string(self.mode, answer.count, cells)

    def result(self, answer: OneShotAnswer) -> ItemResult:
        text = self.protocol(answer)
        s = score(self.key, text)
        return ItemResult(text, s.parsed.canonical, s.parsed.to_json(), s.valid, s.passed, s.failure, tuple(s.errors))

    def gold_cells(self) -> list[Cell]:
        """The cells a right answer clicks (for a count: the cells it counts). Server-side feedback only."""
        return sorted(self.key.gold_cells)


def rose_item(ds: Dataset, instance_id: str) -> RoseItem:
    inst = ds.instances[instance_id]
    scene = ds.scenes[inst.scene_id]
    region = None if inst.context.kind == "grid" else inst.context
    return RoseItem(inst.instance_id, inst.scene_id, inst.template, inst.subset, inst.split, inst.image,
                    scene.layout, TEMPLATE_OUTPUT[inst.template], inst.instruction, region, inst.context_mode,
                    ds.key(instance_id))
