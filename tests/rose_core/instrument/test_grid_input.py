"""Everything the browser sends is checked: crafted messages no real click grid sends get a short, specific
StudyError (never a traceback, never a silent truncation, never a long echo), and client times are secondary."""
import json
import math

import pytest

from rose_core.instrument.config import StudyError
from rose_core.instrument.grid_input import MAX_EVENTS, MAX_MS, parse_state, parse_submit

ROWS = COLS = 4


@pytest.mark.parametrize("payload, needle", [
    ({"view_id": "v", "selection": [[1e30, 1]]}, "row: expected a whole number"),
    ({"view_id": "v", "selection": [[float("inf"), 1]]}, "row: expected a whole number"),
    ({"view_id": "v", "selection": [[1, float("nan")]]}, "column: expected a whole number"),
    ({"view_id": "v", "selection": [[1.5, 1]]}, "row: expected a whole number"),
    ({"view_id": "v", "selection": [[2.0, 1]]}, "row: expected a whole number"),
    ({"view_id": "v", "selection": [[10 ** 30, 1]]}, "row: expected 1..4"),
    ({"view_id": "v", "selection": [[0, 1]]}, "row: expected 1..4"),
    ({"view_id": "v", "selection": [[1, 1]] * 300_000}, "at most 16 cells, got 300000"),
    ({"view_id": "v", "selection": {"r": 1}}, "selection: expected a list"),
    ({"view_id": "v", "selection": [[1, 1, 1]]}, r"selection\[0\]: expected \[row, column\]"),
    ({"view_id": "v", "count": "1e30"}, "count: expected a whole number 0-999999"),     # on submit only: the
    ({"view_id": "v", "count": "Infinity"}, "count: expected a whole number 0-999999"),  # field may hold it
    ({"view_id": "v", "count": float("inf")}, "count: expected text"),
    ({"view_id": "v", "count": "9" * 17}, "at most 16 characters"),
    ({"view_id": "v", "events": [{"seq": 1e30, "type": "blur"}]}, "seq: expected a whole number"),
    ({"view_id": "v", "events": [{"seq": 10 ** 9, "type": "blur"}]}, "seq: expected 0..20000"),
    ({"view_id": "v", "events": [{"seq": 0, "type": "click", "r": 1, "c": 99}]}, r"events\[0\]\.c: expected 1..4"),
    ({"view_id": "v", "events": [{"seq": 0, "type": "count_input", "value": float("inf")}]}, "expected text"),
    ({"view_id": "v", "events": [{"seq": 0, "type": "x" * 10_000}]}, r"type: expected one of .*\.\.\.$"),
    ({"view_id": "v", "events": [{"seq": i, "type": "blur"} for i in range(MAX_EVENTS + 1)]}, "got 2001"),
    ({"view_id": "v", "events": "x" * 13_000_000}, "events: expected a list of at most 2000$"),
    ({"view_id": "x" * 13_000_000}, "view_id: expected 1-64 characters"),
    ("not an object", "expected an object"),
])
def test_crafted_messages_get_a_short_specific_error(payload, needle):
    for parse in (parse_submit,) if "0-999999" in needle else (parse_submit, parse_state):
        with pytest.raises(StudyError, match=needle) as e:
            parse(payload, ROWS, COLS)
        assert len(str(e.value)) < 300 and str(e.value).startswith("malformed message from the browser")


def test_client_values_out_of_bounds_are_kept_as_null():
    base = {"view_id": "v", "selection": [[1, 2]], "count": "3", "focus_lost": True}
    for bad in (None, math.nan, math.inf, -math.inf, -1.0, MAX_MS + 1, 1e300, "12", False, {"x": 1}):
        sub = parse_submit({**base, "client_total_ms": bad, "active_ms": bad, "first_action_ms": bad, "dpr": bad,
                            "viewport": [bad, 800], "events": [{"seq": 0, "type": "focus", "t": bad,
                                                                "active_ms": bad}]}, ROWS, COLS)
        assert (sub.client_total_ms, sub.active_ms, sub.first_action_ms, sub.dpr, sub.viewport) == (None,) * 5
        assert (sub.events[0].t, sub.events[0].active_ms) == (None, None)
    sub = parse_submit({**base, "client_total_ms": 2500.5, "dpr": 3, "viewport": [390, 844]}, ROWS, COLS)
    assert (sub.client_total_ms, sub.dpr, sub.viewport, sub.selection, sub.count) == (2500.5, 3.0, (390, 844),
                                                                                       ((1, 2),), 3)
    for vp in ([0, 800], [10 ** 9, 800], [1280.5, 800], [1280], "1280x800"):
        assert parse_submit({**base, "viewport": vp}, ROWS, COLS).viewport is None


def test_a_message_as_json_parses_the_same():
    """What arrives went through JSON: the parse of the decoded text equals the parse of the object."""
    msg = {"view_id": "v1", "selection": [[1, 1], [4, 4]], "count": "2", "events": [
        {"seq": 0, "type": "click", "r": 1, "c": 1, "t": 100.0, "active_ms": 90.0},
        {"seq": 1, "type": "undo", "r": 1, "c": 1, "value": "click", "t": 200.0, "active_ms": 180.0}],
        "first_action_ms": 100.0, "active_ms": 300.0, "client_total_ms": 400.0, "viewport": [1280, 720],
        "dpr": 1.25, "focus_lost": False}
    assert parse_submit(json.loads(json.dumps(msg)), ROWS, COLS) == parse_submit(msg, ROWS, COLS)
