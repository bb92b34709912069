"""What grid_data sends to the browser (no browser needed): the contract's fields, no gold, checked restore."""
from __future__ import annotations

import base64
import json

import pytest

from rose_core import TEMPLATE_OUTPUT
from ui.click_grid import empty_restore, grid_data


@pytest.fixture(scope="module")
def t5(small_dataset):
    inst = sorted((i for i in small_dataset.instances.values() if i.template == "T5"), key=lambda i: i.instance_id)[0]
    return small_dataset, inst


def test_fields_and_defaults(t5):
    ds, inst = t5
    layout = ds.scenes[inst.scene_id].layout
    png = (ds.root / inst.image).read_bytes()
    d = grid_data("v1", png, layout, TEMPLATE_OUTPUT[inst.template], "How many?", instruction=inst.instruction,
                  progress="Item 1 of 3")
    assert set(d) == {"view_id", "mode", "image", "width", "height", "rows", "cols", "cells", "submit_label",
                      "count_label", "instruction", "progress", "ack_seq", "restore", "refusals", "pending"}
    assert (d["mode"], d["submit_label"], d["ack_seq"]) == ("click_submit", "SUBMIT", 0)
    assert d["restore"] == empty_restore()
    assert base64.b64decode(d["image"].split(",", 1)[1]) == png
    assert d["cells"] == layout.cell_boxes()
    # No gold: neither the target cells nor the count appear anywhere in what is sent.
    text = json.dumps({k: v for k, v in d.items() if k != "image"})
    assert inst.protocol_answer not in text and "gold" not in text and "target" not in text


def test_restore_is_checked(t5):
    ds, inst = t5
    layout = ds.scenes[inst.scene_id].layout
    png = (ds.root / inst.image).read_bytes()
    ok = grid_data("v", png, layout, "click", restore={"selection": [[1, 2]], "next_seq": 4, "active_ms": 10,
                                                       "first_action_ms": 5})
    assert ok["restore"] == {"selection": [[1, 2]], "count": None, "next_seq": 4, "active_ms": 10.0,
                             "first_action_ms": 5.0}
    bad = [({"selection": [[0, 1]]}, "outside"), ({"selection": [[1, layout.cols + 1]]}, "outside"),
           ({"selection": [["1", 2]]}, "integer pairs"), ({"selection": [[True, 2]]}, "integer pairs"),
           ({"count": 3}, "string"), ({"next_seq": -1}, "next_seq"), ({"active_ms": "9"}, "active_ms"),
           ({"first_action_ms": -2}, "first_action_ms"), ({"gold": [1]}, "unknown")]
    for restore, msg in bad:
        with pytest.raises(ValueError, match=msg):
            grid_data("v", png, layout, "click", restore=restore)
    with pytest.raises(ValueError, match="count_label"):
        grid_data("v", png, layout, "count")
    with pytest.raises(ValueError, match="ack_seq"):
        grid_data("v", png, layout, "click", ack_seq=-1)
    with pytest.raises(ValueError, match="mode"):
        grid_data("v", png, layout, "clicks")  # type: ignore[arg-type]
