import pytest

from rose_core.benchmarks.sgp import apply_action, find_command, parse_action
from rose_core.benchmarks.sgp.actions import allowed_words, split_moves

from .helpers import state

# red cube on A1 must go to B1; blue sphere on B2 stays; green pyramid on A2 stays.
START = state(red_cube="A1", blue_sphere="B2", green_pyramid="A2")
GOAL = state(red_cube="B1", blue_sphere="B2", green_pyramid="A2")


@pytest.mark.parametrize("text, outcome, moved_to", [
    ("move red cube right", "effective", "B1"),
    ("move red cube up", "occupied", None),            # green pyramid on A2
    ("move red cube left", "out_of_bounds", None),
    ("move red cube down", "out_of_bounds", None),
    ("move blue sphere up", "ineffective", "B3"),
    ("move yellow cube up", "illegal", None),          # no such geom on the board
    ("move red cube diagonally", "illegal", None),
    ("please move the red cube right", "illegal", None),
    ("", "illegal", None),
])
def test_outcomes_on_a_crafted_board(text, outcome, moved_to):
    r = apply_action(START, text, GOAL)
    assert r.outcome == outcome
    if moved_to is None:
        assert r.state == START          # invalid actions leave the board unchanged
        assert r.distance == 1
        assert not r.valid
    else:
        assert r.valid
        geom = text.split()[1:3]
        where = {(g["color"], g["shape"]): g["coord"] for g in r.state["geoms"]}
        assert where[tuple(geom)] == moved_to
        assert r.distance == (0 if outcome == "effective" else 2)


def test_effective_means_the_exact_distance_drops_not_the_manhattan_sum():
    # blue sphere must go from A1 to C1; the red cube is home on B1, in the way. Distance 4: sphere up,
    # right, right, down (or: cube up, sphere right, right, cube down).
    start = state(blue_sphere="A1", red_cube="B1")
    goal = state(blue_sphere="C1", red_cube="B1")
    up = apply_action(start, "move blue sphere up", goal)         # away from its goal row, yet on a shortest path
    assert (up.outcome, up.distance) == ("effective", 3)
    aside = apply_action(start, "move red cube up", goal)         # the cube leaves its goal: also on a shortest path
    assert (aside.outcome, aside.distance) == ("effective", 3)
    # cube onto the sphere's goal: cube up, sphere right, right, cube left, down = 5
    wrong = apply_action(start, "move red cube right", goal)
    assert (wrong.outcome, wrong.distance) == ("ineffective", 5)


def test_final_action_line_inside_free_text():
    reply = ("The red cube must go right. I considered action: move blue sphere up, but no.\n"
             "**Action:** `move red cube right`.\nThanks")
    assert find_command(reply) == "`move red cube right`."
    p = parse_action(reply)
    assert p.action is not None and p.action.command() == "move red cube right"
    assert apply_action(START, reply, GOAL).outcome == "effective"


def test_two_d_shape_names_and_case_name_the_same_geoms():
    for text in ("MOVE Red Square Right", "action: move red square right", "move red cube right."):
        assert apply_action(START, text, GOAL).command == "move red cube right"
    assert parse_action("move blue circle up").action.shape == "sphere"
    assert parse_action("move green triangle up").action.shape == "pyramid"
    assert parse_action("move yellow hexagon up").action.shape == "cylinder"


def test_illegal_commands_say_why():
    assert "unknown colour" in parse_action("move pink cube up").error
    assert "unknown shape" in parse_action("move red cuboid up").error
    # a body of the original's engine parses, and is still illegal on a board without it
    assert parse_action("move purple cone up").error is None
    assert apply_action(START, "move purple cone up", GOAL).error == "there is no purple cone on the board"
    assert "unknown direction" in parse_action("move red cube north").error
    assert "nothing after" in parse_action("I will think.\naction:").error
    assert apply_action(START, "move yellow cube up", GOAL).error == "there is no yellow cube on the board"


def test_a_word_ending_in_action_after_the_command_is_not_a_second_action_line():
    """'interaction:', 'reaction:' or 'transaction:' after the model's action line are prose, not its last
    `action:`: taking them as the command would turn a legal move into an illegal one."""
    for word in ("interaction", "Reaction", "transaction"):
        p = parse_action(f"action: move red cube up\n{word}: the blue sphere is in the way")
        assert p.action is not None and p.action.command() == "move red cube up", word
    # a marker written with a prefix still counts
    assert parse_action("thinking...\nnext_action: move red cube up").action.command() == "move red cube up"
    assert parse_action("Final action: move red cube down").action.command() == "move red cube down"


@pytest.mark.parametrize("text, parts", [
    ("move red cube up", ["move red cube up"]),
    ("move red cube up, move blue sphere left", ["move red cube up", "move blue sphere left"]),
    ("move red cube up,move blue sphere left ,", ["move red cube up", "move blue sphere left"]),  # trailing comma
    ("move red cube up,, move red cube up", ["move red cube up", "move red cube up"]),           # blank part
    (" , ", []),
    ("", []),
])
def test_several_moves_split_on_commas_as_ivispars_humans_typed_them(text, parts):
    assert split_moves(text) == parts


def test_each_of_several_moves_is_parsed_strictly_on_its_own():
    got = [parse_action(part)
           for part in split_moves("move red square up, move red cube sideways, MOVE Blue Circle left., hello")]
    assert [p.action.command() if p.action else None for p in got] == [
        "move red cube up", None, "move blue sphere left", None]
    assert "unknown direction 'sideways'" in got[1].error and got[3].error.startswith("expected 'move")


def test_allowed_words_name_the_shapes_as_the_modality_does():
    assert allowed_words("2d") == {"verb": ["move"], "colours": ["red", "green", "blue", "yellow"],
                                   "shapes": ["square", "triangle", "circle", "hexagon"],
                                   "directions": ["up", "down", "left", "right"]}
    assert allowed_words("3d")["shapes"] == ["cube", "pyramid", "sphere", "cylinder"]
    for words in (allowed_words("2d"), allowed_words("3d")):       # every listed word makes a legal command
        for c in words["colours"]:
            for sh in words["shapes"]:
                assert parse_action(f"move {c} {sh} {words['directions'][0]}").action is not None
