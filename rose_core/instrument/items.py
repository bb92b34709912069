"""The instrument's items: attention checks (an instructed-response item drawn on a real ROSE scene) and the item
of an assignment by its kind."""
from __future__ import annotations

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.item import RoseItem, rose_item
from ..benchmarks.rose.scenes import rng_for
from ..benchmarks.rose.scoring import ScoreKey


def attention_item_id(scene_id: str, seed: str) -> str:
    return f"ATT:{scene_id}:{seed}"


def attention_text(r: int, c: int) -> str:
    return f"Click the cell in row R{r}, column C{c} (and nothing else), then press DONE."


def attention_item(ds: Dataset, item_id: str) -> RoseItem:
    """An instructed-response item on a real image: click one named cell, the right answer whatever it shows.

    Worded in the voice of the study's own click instructions (a named place, "(and nothing else), then press
    DONE"), with none of the words that announce a check ("only", "whatever it shows", "attention"): a participant
    who reads each instruction passes, one who clicks the odd cells by habit does not."""
    _, scene_id, seed = item_id.split(":", 2)
    scene = ds.scenes[scene_id]
    rng = rng_for(0, "attention", seed)
    r, c = rng.randint(1, scene.rows), rng.randint(1, scene.cols)
    key = ScoreKey(instance_id=item_id, template="ATT", output="click", rows=scene.rows, cols=scene.cols,
                   gold_count=1, gold_cells=frozenset({(r, c)}), global_count=1, outside_targets=frozenset(),
                   terminal="DONE")
    text = attention_text(r, c)
    return RoseItem(item_id, scene_id, "ATT", scene.subset, scene.split, scene.images["base"], scene.layout,
                    "click", text, None, "inside", key)


def item_for(ds: Dataset, kind: str, item_id: str) -> RoseItem:
    return attention_item(ds, item_id) if kind == "attention" else rose_item(ds, item_id)
