import pytest

from rose_core.benchmarks.sgp import BoardError, board_from_state, coord, parse_coord

from .helpers import board, state


def test_chess_coordinates_put_a1_bottom_left():
    assert coord((0, 0)) == "A1"
    assert coord((3, 0)) == "D1"
    assert coord((0, 3)) == "A4"
    assert parse_coord(" c2 ", 4) == (2, 1)


@pytest.mark.parametrize("text", ["E1", "A5", "A0", "1A", "AA", "", "A10"])
def test_off_board_or_malformed_coordinates_are_refused(text):
    with pytest.raises(BoardError):
        parse_coord(text, 4)


def test_state_round_trips_in_canonical_order():
    s = state(yellow_cylinder="D4", red_cube="A1", red_sphere="B2")
    assert [(g["color"], g["shape"]) for g in s["geoms"]] == [("red", "cube"), ("red", "sphere"), ("yellow", "cylinder")]
    assert board_from_state(s).to_state() == s
    assert board_from_state(s) == board(yellow_cylinder="D4", red_sphere="B2", red_cube="A1")


@pytest.mark.parametrize("bad, message", [
    ({"board_size": 4, "geoms": [{"color": "red", "shape": "cube", "coord": "A1"},
                                 {"color": "red", "shape": "cube", "coord": "B1"}]}, "appears twice"),
    ({"board_size": 4, "geoms": [{"color": "red", "shape": "cube", "coord": "A1"},
                                 {"color": "blue", "shape": "cube", "coord": "A1"}]}, "two geoms on A1"),
    ({"board_size": 4, "geoms": [{"color": "pink", "shape": "cube", "coord": "A1"}]}, "geoms[0].color"),
    ({"board_size": 4, "geoms": [{"color": "red", "shape": "torus", "coord": "A1"}]}, "geoms[0].shape"),
    ({"board_size": 4, "geoms": [{"color": "red", "shape": "cube", "coord": "E1"}]}, "off the 4x4 board"),
    ({"board_size": "4", "geoms": []}, "board_size"),
    ({"board_size": 4}, "geoms"),
])
def test_invalid_states_name_the_problem(bad, message):
    with pytest.raises(BoardError, match=message.replace("[", r"\[").replace("]", r"\]")):
        board_from_state(bad)


def test_the_originals_further_geoms_sort_after_the_papers_and_widen_the_vocabulary_only_where_present():
    from rose_core.benchmarks.sgp import ALL_GEOMS, COLOURS, KNOWN_COLOURS, KNOWN_GEOMS, KNOWN_SHAPES, SHAPES, vocabulary

    # the paper's 16 keep their canonical order (so their states, datasets and hashes do not change)
    assert [g.sort_key() for g in ALL_GEOMS] == [(COLOURS.index(g.color), SHAPES.index(g.shape)) for g in ALL_GEOMS]
    assert len(KNOWN_GEOMS) == 22 * 6 and len(set(KNOWN_GEOMS)) == len(KNOWN_GEOMS)
    b = board(orange_cone="A1", red_cube="B1", purple_prism="C1")
    assert [g.name for g in b.geoms] == ["red cube", "purple prism", "orange cone"]   # paper colours first
    assert board_from_state(b.to_state()) == b
    assert vocabulary(board(red_cube="A1")) == (COLOURS, SHAPES)
    assert vocabulary(b) == (KNOWN_COLOURS, KNOWN_SHAPES)
