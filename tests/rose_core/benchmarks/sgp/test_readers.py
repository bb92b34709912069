"""The two readers, case by case: what the ivispar reader makes of a reply, each row following a rule of the
original (SharkyBamboozle/iVISPAR, main branch), beside what the strict reader makes of the same reply.

Sources the rows cite:
  PA  Source/Experiment/agent_systems.py, LLMAgent.parse_action (split at the last "action: move ", lower-case,
      drop * and #, 2D names to 3D names anywhere) and parse_action_rmv_special_chars (only letters, digits,
      whitespace)
  DC  Source/iVISPAR/Assets/Scripts/Level/TurnManager.cs, decodeCommand (first known verb / body / direction
      in the order of its lists, contained anywhere; colour = the token before the body; digits, else number
      words, as a repeat count)
  AD  TurnManager.cs, ActionDecoder ("not a legal command" without a verb; "… is not a valid object", then the
      move invoked `repeat` times) and Source/iVISPAR/Assets/Scripts/Control/TargetBehaviour.cs,
      MovePlayer/MoveForward/MoveRight (one validity string per move: legal, occupied, out of bounds; none for
      an unknown direction)
  CM  Source/Evaluate/compile_mistakes_advanced.py, compile_mistakes (counts those strings: a command that
      produced none is in no class)
"""
import pytest

from rose_core.benchmarks.sgp.readers import (
    UNCLASSIFIED, counts_as_illegal, counts_as_unclassified, ivispar_extract, read_step, unity_decode,
)

from .helpers import board

# red cube on A1 must go to B1; the blue sphere on B2 and the green pyramid on A2 are home. d = 1.
START = board(red_cube="A1", blue_sphere="B2", green_pyramid="A2")
GOAL = board(red_cube="B1", blue_sphere="B2", green_pyramid="A2")
E, IN, OC, OOB = "effective", "ineffective", "occupied", "out_of_bounds"

CASES = [
    # reply, ivispar outcome, ivispar moves, ivispar command, strict outcome, source
    ("I think right.\naction: move red cube right", E, (E,), "move red cube right", E, "PA, DC, AD"),
    ("action: move blue sphere left\nno wait\nAction: Move red cube right", E, (E,), "move red cube right", E,
     "PA: the last mark, case-insensitive"),
    ("**Action:** move red cube right", E, (E,), "move red cube right", E, "PA: * dropped"),
    ("action:move red cube right", "illegal", ("illegal",), None, E, "PA: no 'action: move ' → AD not legal"),
    ("move red cube right", "illegal", ("illegal",), None, E, "PA: no mark → AD not a legal command"),
    ("action: move red square right", E, (E,), "move red cube right", E, "PA: 2D names become 3D names"),
    ("action: move blue sphere up to B3", IN, (IN, IN, OOB), "move blue sphere up", "illegal",
     "DC: the digit in B3 is a repeat count; AD: three moves, the third off the board"),
    ("action: move blue sphere up two", IN, (IN, IN), "move blue sphere up", "illegal", "DC: number words"),
    ("action: move blue sphere up two squares", UNCLASSIFIED, (), None, "illegal",
     "PA: squares → cubes; DC: 'cube' comes first in its body list, no token equals it, so no colour; "
     "AD: not a valid object; CM: no class"),
    ("action: move the red cube right", E, (E,), "move red cube right", "illegal", "DC: colour = token before"),
    ("action: move red cube to the right of the green pyramid", E, (E,), "move red cube right", "illegal",
     "DC: bodies in list order (cube before pyramid), direction anywhere"),
    ("action: move green pyramid up, not left", OOB, (OOB,), "move green pyramid left", "illegal",
     "DC: directions in list order (left before up)"),
    ("action: move red cube up", OC, (OC,), "move red cube up", OC, "AD: destination occupied"),
    ("action: move red cube upward", OC, (OC,), "move red cube up", "illegal", "DC: 'up' inside a word"),
    ("action: move yellow cube up", UNCLASSIFIED, (), None, "illegal",
     "AD: not a valid object (no such geom on the board); CM: no class"),
    ("action: move red cone up", UNCLASSIFIED, (), None, "illegal", "DC: cone is a body it knows; AD: not valid"),
    ("action: move red cube", UNCLASSIFIED, (), None, "illegal", "AD: no direction, MovePlayer does nothing"),
    ("action: move red cube right 0 times", UNCLASSIFIED, (), "move red cube right", "illegal",
     "DC: repeat 0; AD: the move is never invoked"),
    ("action: move red cube right. Then move blue sphere to B3", IN, (E, IN, IN), "move red cube right", "illegal",
     "PA: everything after the mark; DC: one body, one direction, 3 repeats"),
]


@pytest.mark.parametrize("reply, outcome, moves, command, strict, source", CASES, ids=[c[0][:40] for c in CASES])
def test_the_ivispar_reader_follows_the_original_case_by_case(reply, outcome, moves, command, strict, source):
    s = read_step("ivispar", START, reply, GOAL)
    assert (s.outcome, s.moves, s.command) == (outcome, moves, command), source
    if s.outcome in (E, IN):
        assert s.board != START and s.error is None
    else:
        assert s.board == START and s.distance == 1 and s.error
    assert read_step("strict", START, reply, GOAL).outcome == strict
    assert counts_as_illegal("ivispar", START, reply) == (outcome == "illegal")
    assert counts_as_illegal("strict", START, reply) == (strict == "illegal")
    assert counts_as_unclassified(START, reply) == (outcome == UNCLASSIFIED)


def test_distances_follow_every_engine_move():
    s = read_step("ivispar", START, "action: move red cube right. Then move blue sphere to B3", GOAL)
    assert s.distance == 2 and s.board == board(red_cube="D1", blue_sphere="B2", green_pyramid="A2")
    s = read_step("ivispar", START, "action: move blue sphere up to B3", GOAL)
    assert s.distance == 3 and s.board == board(red_cube="A1", blue_sphere="B4", green_pyramid="A2")


@pytest.mark.parametrize("reply, command", [
    ("Thoughts...\n## Action: move *red* cube up!", "move red cube up"),           # PA: * and # dropped, ! removed
    ("action: move red cube up\n\n(done)", "move red cube up done"),               # PA: everything after the mark
    ("ACTION: MOVE Yellow Circle  down.", "move yellow sphere down"),              # PA: lower-cased, spaces collapsed
    ("no action here", None),
])
def test_extraction(reply, command):
    assert ivispar_extract(reply) == command


def test_decoding_edge_cases():
    # TurnManager.decodeCommand: "done" contains "one" (repeat 1 either way); "often" contains "ten"
    assert unity_decode("move red cube up done").repeat == 1
    assert unity_decode("move red cube up often").repeat == 10
    # a tile names its attribute after the body, and takes no repeat count
    d = unity_decode("move tile 3 up")
    assert (d.body, d.colour, d.repeat) == ("tile", "3", 1)
    # the last exact body token names the colour
    assert unity_decode("move red cube or blue cube up").colour == "blue"
    # C#'s int.Parse overflows: the engine throws and nothing moves
    assert unity_decode("move red cube up 99999999999").crash
    assert read_step("ivispar", START, "action: move red cube right 99999999999", GOAL).outcome == UNCLASSIFIED


def test_a_repeat_into_a_wall_counts_every_blocked_move():
    s = read_step("ivispar", START, "action: move red cube left 5", GOAL)
    assert s.outcome == OOB and s.moves == (OOB,) * 5


def test_the_originals_further_geoms_are_read_on_boards_that_hold_them():
    # TurnManager.knownObjects has cone and prism, and the engine's colour names include orange: on a board that
    # holds an orange cone (an imported iVISPAR config) the ivispar reader moves it; on a paper board it is no geom
    start = board(orange_cone="A1", blue_sphere="B2")
    goal = board(orange_cone="B1", blue_sphere="B2")
    s = read_step("ivispar", start, "action: move orange cone right", goal)
    assert (s.outcome, s.command) == ("effective", "move orange cone right")
    assert read_step("strict", start, "action: move orange cone right", goal).outcome == "effective"
    assert read_step("ivispar", START, "action: move orange cone right", GOAL).outcome == UNCLASSIFIED


def test_huge_repeat_counts_are_refused_in_no_class_without_replaying_them():
    # a model that writes a long run of digits: never int() of it, never a list of a billion blocked moves
    s = read_step("ivispar", START, "action: move red cube right " + "9" * 5000, GOAL)
    assert s.outcome == UNCLASSIFIED and "overflows" in s.error and s.moves == ()
    s = read_step("ivispar", START, "action: move red cube left 999999999", GOAL)
    assert s.outcome == UNCLASSIFIED and s.moves == () and "repeat count 999999999" in s.error
    assert read_step("ivispar", START, "action: move red cube left 1000", GOAL).moves == ("out_of_bounds",) * 1000
