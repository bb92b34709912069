"""The scene explorer's data: a subset's scenes, a scene's instances, its generation parameters, outlined cells."""
from __future__ import annotations

from PIL import Image, ImageDraw

from .dataset import Dataset
from .records import TEMPLATE_LABEL, Cell, Layout, Scene


def scene_ids(ds: Dataset, subset: str, split: str | None) -> list[str]:
    return [s.scene_id for s in ds.scenes.values() if s.subset == subset and (split is None or s.split == split)]


def instance_rows(ds: Dataset, scene_id: str) -> list[dict]:
    """One row per instance of a scene: what it asks, how, and the gold answer."""
    rows = []
    for inst in ds.instances.values():
        if inst.scene_id != scene_id:
            continue
        rows.append({
            "instance": inst.instance_id, "template": inst.template, "label": TEMPLATE_LABEL[inst.template],
            "split": inst.split, "image": "highlight" if inst.image.endswith("-hl.png") else "base",
            "context": inst.context.describe() + (" (excluded)" if inst.context_mode == "outside" else ""),
            "gold": inst.protocol_answer, "instruction": inst.instruction, "prompt": inst.prompt,
        })
    return rows


def outline_cells(image: Image.Image, layout: Layout, cells: list[Cell], colour=(220, 0, 120), width: int = 3) -> Image.Image:
    """A copy of the image with the given cells outlined (experimenter views only)."""
    out = image.convert("RGB").copy()
    d = ImageDraw.Draw(out)
    for r, c in cells:
        x0, y0, x1, y1 = layout.box(r, c)
        d.rectangle((x0 + 1, y0 + 1, x1 - 2, y1 - 2), outline=colour, width=width)
    return out


def scene_summary(scene: Scene) -> dict:
    """Generation parameters worth a glance, flattened for a table."""
    p = scene.params
    keep = {k: v for k, v in p.items() if k not in ("majority", "exception")}
    keep["majority"] = _item_label(p["majority"])
    keep["exception"] = _item_label(p["exception"])
    return keep


def _item_label(item: dict) -> str:
    if item["kind"] == "glyph":
        return item["char"]
    if item["kind"] == "emoji":
        return f"{item['emoji']} ({item['provider']})"
    return item["sprite"] + (f" + edit k={item['edit']['k']}" if "edit" in item else "")
