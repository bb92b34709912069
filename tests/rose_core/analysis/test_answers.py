"""One decoder of stored answers and cells: what SQLite or pandas hands back, decoded the same way."""
import json

from rose_core.analysis import as_int, decode_answer, decode_cell


def test_integers_whatever_their_storage():
    assert [as_int(v) for v in (3, 3.0, "3", "3.0", " 3 ")] == [3, 3, 3, 3, 3]
    assert [as_int(v) for v in (None, float("nan"), "1.5", 1.5, "x", True)] == [None] * 6
    assert decode_cell(1.0, "2.0") == (1, 2) and decode_cell(None, 2) is None


def test_answers():
    a = decode_answer(json.dumps({"clicks": [[2, 3], [1, 1], [2, 3]], "count": None, "terminal": "DONE"}))
    assert a.clicks == ((2, 3), (1, 1), (2, 3)) and a.cells == {(1, 1), (2, 3)} and a.count is None
    assert a.says() == (((1, 1), (2, 3)), 2)
    # DONE, COUNT(0) and SUBMIT(0) say the same thing: nothing
    assert decode_answer(json.dumps({"clicks": [], "count": 0})).says() == decode_answer('{"clicks": []}').says()
    bad = decode_answer("{not json")
    assert not bad.readable and bad.says() == ("?",)
    assert not decode_answer("[1, 2]").readable
