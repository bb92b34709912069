"""SgpItem: a human's move is the model's command string, applied by the same engine, ended by the same cap."""
import io

import pytest
from PIL import Image

from rose_core.benchmarks.sgp.item import SgpItem
from rose_core.benchmarks.sgp.render import GEOM_RGB
from rose_core.benchmarks.items import EpisodeItem, Move

from .helpers import board

# red cube A1 -> C1 (two moves right); green pyramid stays on A2. c1 = 2.
START = board(red_cube="A1", green_pyramid="A2")
GOAL = board(red_cube="C1", green_pyramid="A2")


def item(cap=20, modality="2d") -> SgpItem:
    return SgpItem("ep-test", 4, 2, 2, START.to_state(), GOAL.to_state(), modality, cap)


def play(it: SgpItem, texts):
    state, outs = it.start(), []
    for k, text in enumerate(texts):
        out = it.step(state, Move(k, text), k)
        outs.append(out)
        state = out.state
        if out.end:
            break
    return [Move(k, t) for k, t in enumerate(texts[:len(outs)])], outs


def test_is_an_episode_item():
    assert isinstance(item(), EpisodeItem) and item().shape == "episode"


def test_solved_in_the_shortest_path():
    it = item()
    moves, outs = play(it, ["move red cube right", "move red cube right"])
    assert [o.outcome for o in outs] == ["effective", "effective"]
    assert [o.end for o in outs] == [None, "solved"]
    r = it.result(moves, outs)
    assert r.passed and r.valid and r.failure is None and r.errors == ()
    assert r.response == "move red cube right\nmove red cube right"
    assert r.protocol == "move red cube right; move red cube right"
    assert r.parsed["distances"] == [2, 1, 0]
    assert r.parsed["end"] == "solved" and r.parsed["step_cap"] == 20
    assert r.parsed["outcomes"]["effective"] == 2


def test_a_models_reply_and_a_typed_command_are_the_same_move():
    it = item()
    bare = it.step(it.start(), Move(0, "move red cube right"), 0)
    reply = it.step(it.start(), Move(0, "The cube must go right.\naction: **move red cube right**"), 0)
    square = it.step(it.start(), Move(0, "Move Red Square Right."), 0)   # the 2D name of the same geom
    assert bare == reply == square


def test_every_move_counts_towards_the_cap_invalid_ones_included():
    it = item(cap=3)
    moves, outs = play(it, ["move red cube up", "move red cube left", "hello"])
    # up: A1 -> ... occupied by the green pyramid on A2; left: off the board; "hello": not a command
    assert [o.outcome for o in outs] == ["occupied", "out_of_bounds", "illegal"]
    assert [o.end for o in outs] == [None, None, "step_cap"]
    assert all(o.state == it.start() for o in outs)          # invalid moves leave the board as it was
    r = it.result(moves, outs)
    assert not r.passed and not r.valid and r.failure == "step_cap"
    assert r.errors == ("occupied", "out_of_bounds", "illegal")
    assert r.parsed["distances"] == [2, 2, 2, 2]
    assert r.protocol == "move red cube up; move red cube left; illegal"
    with pytest.raises(ValueError, match="past the step cap 3"):
        it.step(it.start(), Move(3, "move red cube right"), 3)


def test_ineffective_moves_raise_the_distance():
    it = item()
    moves, outs = play(it, ["move green pyramid up", "move green pyramid down"])
    assert [o.outcome for o in outs] == ["ineffective", "effective"]
    assert it.result(moves, outs).parsed["distances"] == [2, 3, 2]


def test_no_cap_never_ends_at_a_count_and_giving_up_is_recorded():
    it = item(cap=None)
    texts = ["move green pyramid up", "move green pyramid down"] * 15
    moves, outs = play(it, texts)
    assert len(outs) == 30 and all(o.end is None for o in outs)
    r = it.result(moves, outs, given_up=True)
    assert not r.passed and r.failure == "given_up" and r.parsed["given_up"] and r.parsed["step_cap"] is None


def test_pieces_are_named_as_the_modality_shows_them():
    assert [g["name"] for g in item(modality="2d").geoms(item().start())] == ["red square", "green triangle"]
    three = item(modality="3d")
    assert [(g["name"], g["coord"]) for g in three.geoms(three.start())] == [("red cube", "A1"),
                                                                              ("green pyramid", "A2")]
    assert item(modality="text").hit_cells(item().start()) == []


@pytest.mark.parametrize("size", [3, 4, 5])
def test_click_targets_lie_over_the_rendered_cells(size):
    """Each geom's colour is at the centre of its cell box in the 2D image the participant sees."""
    b = board(size, red_cube="A1", blue_sphere=f"{chr(64 + size)}{size}", yellow_cylinder="B2")
    it = SgpItem("x", size, 1, 3, b.to_state(), b.to_state(), "2d", 20)
    im = Image.open(io.BytesIO(it.png(it.start()))).convert("RGB")
    boxes = {c["coord"]: [*c["points"][0], *c["points"][2]] for c in it.hit_cells(it.start())}
    assert len(boxes) == size * size
    for g in it.geoms(it.start()):
        x0, y0, x1, y1 = boxes[g["coord"]]
        px = im.getpixel((int(x0 + x1) // 2, int(y0 + y1) // 2))
        assert max(abs(a - b) for a, b in zip(px, GEOM_RGB[g["color"]])) < 12, (g, px)
    free = boxes["C1"]
    assert im.getpixel((int(free[0] + free[2]) // 2, int(free[1]) + 6)) == (255, 255, 255)  # a free cell's white, inside


@pytest.mark.parametrize("modality", ["2d", "3d"])
def test_a_board_click_is_checked_against_the_board_and_its_own_hit_map(modality):
    """click_move accepts the piece's cell, the cell next to it the command names and a point inside that cell's
    polygon; each disagreement is refused, naming it."""
    it = item(modality=modality)
    s = it.start()                                   # red cube A1, green pyramid A2
    polys = {c["coord"]: c["points"] for c in it.hit_cells(s)}
    xs, ys = zip(*polys["B1"])
    inside = (sum(xs) / len(xs), sum(ys) / len(ys))
    red = "red square" if modality == "2d" else "red cube"
    it.click_move(s, f"move {red} right", "A1", "B1", inside)          # nothing raised: the move stands
    bad = [
        ((f"move {red} right", "A2", "B2", inside), "not on A2"),
        ((f"move {red} right", "A1", "A2", inside), "A2 is not the cell right of A1"),
        ((f"move {red} left", "A1", "Z1", inside), "not the cell left of A1"),          # off the board
        ((f"move {red} right", "A1", "B1", (1.0, 1.0)), "is on no cell, not B1"),
        ((f"move {red} right", "A1", "B1", tuple(sum(p) / 4 for p in zip(*polys["C1"]))), "on C1, not B1"),
        (("move red cube", "A1", "B1", inside), "is not a move"),
    ]
    for args, needle in bad:
        with pytest.raises(ValueError, match=needle):
            it.click_move(s, *args)
    with pytest.raises(ValueError, match="text board"):
        item(modality="text").click_move(s, "move red cube right", "A1", "B1", inside)


def test_a_click_on_a_cells_very_edge_has_a_pixels_leeway_and_no_more():
    it = item(modality="2d")
    s = it.start()
    xs, ys = zip(*next(c["points"] for c in it.hit_cells(s) if c["coord"] == "B1"))
    left, mid = min(xs), (min(ys) + max(ys)) / 2
    it.click_move(s, "move red square right", "A1", "B1", (left - 0.5, mid))       # rounded onto A1's side
    with pytest.raises(ValueError, match="is on A1, not B1"):
        it.click_move(s, "move red square right", "A1", "B1", (left - 3, mid))
