"""Attention checks read like the study's other instructions: nothing announces them as checks, and the phrasing is
that of a real click item, on a real scene."""
from __future__ import annotations

import re

from rose_core.instrument.items import attention_item, attention_item_id

ANNOUNCING = ("only", "whatever", "attention", "check", "regardless", "ignore what", "no matter", "test")


def test_attention_items_are_worded_like_a_click_instruction(small_dataset):
    t3 = [i.instruction for i in small_dataset.instances.values() if i.template == "T3"]
    ending = "(and nothing else), then press DONE."
    assert all(t.endswith(ending) for t in t3)  # the real items' wording the check borrows
    for n, scene_id in enumerate(sorted(small_dataset.scenes)[:20]):
        item = attention_item(small_dataset, attention_item_id(scene_id, f"p-{n}"))
        words = item.instruction.lower()
        assert not [w for w in ANNOUNCING if re.search(rf"\b{w}\b", words)], item.instruction
        assert item.instruction.startswith("Click the cell in row R") and item.instruction.endswith(ending)
        (r, c), = item.key.gold_cells
        assert f"row R{r}, column C{c}" in item.instruction
        assert item.image == small_dataset.scenes[scene_id].images["base"]  # a real picture, as any item
