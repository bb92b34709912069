import colorsys
import hashlib

import pytest

import numpy as np

from PIL import Image
import io

from rose_core.benchmarks.sgp import BACKGROUND, render_png, render_text, text_lines
from rose_core.benchmarks.sgp.render import cell_at, hit_map, render_3d

from .helpers import state

S = state(red_cube="A1", green_sphere="B2", blue_pyramid="B3", yellow_cylinder="D4", blue_cube="B1")


def _img(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def test_images_are_deterministic_bytes_and_depend_on_the_state():
    for modality in ("2d", "3d"):
        a, b = render_png(S, modality, "active"), render_png(S, modality, "active")
        assert a == b
        other = state(red_cube="A2", green_sphere="B2", blue_pyramid="B3", yellow_cylinder="D4", blue_cube="B1")
        assert hashlib.sha256(render_png(other, modality, "active")).digest() != hashlib.sha256(a).digest()


def test_background_colour_says_the_kind_of_state():
    for modality in ("2d", "3d"):
        for kind, rgb in BACKGROUND.items():
            im = _img(render_png(S, modality, kind))
            assert im.getpixel((2, 2)) == rgb
            assert im.getpixel((im.width - 3, im.height - 3)) == rgb


def test_2d_marker_is_drawn_in_the_geoms_colour_on_its_cell():
    im = _img(render_png(state(red_cube="A1"), "2d"))
    # A1's cell centre (left margin 44, top 64, cell 96, 4 rows)
    assert im.getpixel((44 + 48, 64 + 3 * 96 + 48)) == (220, 38, 38)
    assert im.getpixel((44 + 48, 64 + 48)) != (220, 38, 38)      # A4 is free


def test_3d_nearer_geom_occludes_the_one_behind():
    # a tall red cylinder on B1 in front of a yellow cube on B2: the cube's lower front is hidden
    both = _img(render_png(state(red_cylinder="B1", yellow_cube="B2"), "3d"))
    alone = _img(render_png(state(yellow_cube="B2"), "3d"))
    def yellowish(im):   # any shade of the cube's yellow (lit top, darker front), not the red cylinder
        a = np.asarray(im).astype(int)
        return int(((a[..., 0] > 90) & (a[..., 1] > 0.6 * a[..., 0]) & (a[..., 2] < 60)).sum())
    assert 0 < yellowish(both) < yellowish(alone) - 500


def test_text_observation_lists_geoms_in_coordinate_order():
    assert text_lines(S) == ["red cube: A1", "blue cube: B1", "green sphere: B2", "blue pyramid: B3",
                             "yellow cylinder: D4"]
    assert text_lines(S, "2d")[0] == "red square: A1"
    assert render_text(S, "goal").splitlines()[0].startswith("Goal state")


# Pixels (RGB bytes, SHA-256, first 32 hex digits) and text of the paper's 16 geoms as the build before the
# original's further bodies and colours were added (commit ced590d) drew them: those must not change.
PAPER_16_BEFORE = {
    "full-2d-active": "ea1f889797c8d9f850bacfc08350a4dc", "full-3d-goal": "3d8dc121eff4583c7ad11982cbfbd7a6",
    "full-2d-past": "803d1172bb73a58fcef005259e7d3c2e", "full-3d-active": "ca96c7562a6f82230f5d43fe0f1ba57c",
    "reversed-2d-active": "03a929b15b75d8f8731721b2ae50ec17", "reversed-3d-goal": "8931f4f66c0b055b3a8b68251f964856",
    "b5-2d-past": "0f720dcd5c80f29eba05d9846a72a796", "b5-3d-active": "4b7d5b4a35d0ef4a584f77bc5353766a",
    "full-text": "f906ba45f7b924cf268beb5bd40a5590", "reversed-text": "60e13f83220a6d4fc40dc6e0fb47e3fa",
    "b5-text": "6f6375a2d6c728ae8eba8613be943774",
}


def test_the_paper_16_geoms_draw_as_before_the_further_geoms_were_added():
    from rose_core.benchmarks.sgp import ALL_GEOMS, Board, render

    cells = [(c, r) for r in range(4) for c in range(4)]
    boards = {"full": Board.of(4, dict(zip(ALL_GEOMS, cells))),
              "reversed": Board.of(4, dict(zip(ALL_GEOMS, cells[::-1]))),
              "b5": Board.of(5, dict(zip(ALL_GEOMS, [(c, r) for r in range(5) for c in range(5)][3:19])))}
    for key, want in PAPER_16_BEFORE.items():
        name, *rest = key.split("-")
        if rest == ["text"]:
            got = hashlib.sha256(render_text(boards[name]).encode()).hexdigest()[:32]
        else:
            got = hashlib.sha256(render(boards[name], rest[0], rest[1]).tobytes()).hexdigest()[:32]
        assert got == want, key


EXTRA = state(orange_cone="A1", green_prism="B2", purple_prism="C1", blue_pyramid="D2", purple_cone="C4",
              white_cylinder="D4")


def test_the_originals_further_bodies_and_colours_render_in_2d_3d_and_text():
    for modality in ("2d", "3d"):
        a = render_png(EXTRA, modality, "active")
        assert a == render_png(EXTRA, modality, "active")      # same state, same bytes
    im = _img(render_png(EXTRA, "2d"))
    assert im.getpixel((44 + 48, 64 + 3 * 96 + 48)) == (255, 165, 0)          # the orange star on A1
    assert im.getpixel((44 + 2 * 96 + 48, 64 + 3 * 96 + 48)) == (128, 0, 128)  # the purple diamond on C1
    # each further body has its own look: a prism drawn where a cube was differs in 2D and 3D, as does a cone
    # where a sphere was
    for modality in ("2d", "3d"):
        shots = {s: render_png(state(red_cube="A1", **{f"green_{s}": "B2"}), modality) for s in
                 ("cube", "prism", "sphere", "cone", "pyramid")}
        assert len(set(shots.values())) == 5, modality
    assert text_lines(EXTRA) == ["orange cone: A1", "green prism: B2", "purple prism: C1", "purple cone: C4",
                                 "blue pyramid: D2", "white cylinder: D4"]
    assert text_lines(EXTRA, "2d")[:2] == ["orange star: A1", "green diamond: B2"]


def _geom_hue(px) -> str | None:
    """Which geom colour a pixel shows (shaded), None for board, background, labels and edges."""
    hue, sat, val = colorsys.rgb_to_hsv(*(c / 255 for c in px))
    if val < 0.25 or sat < 0.7:
        return None
    deg = 360 * hue
    return next((name for name, lo, hi in (("red", -1, 20), ("yellow", 35, 70), ("green", 100, 170),
                                            ("blue", 200, 250), ("red", 340, 361)) if lo < deg < hi), None)


@pytest.mark.parametrize("size", [3, 4, 5])
def test_the_3d_hit_map_agrees_with_the_rendered_pixels(size):
    """Every pixel that shows a geom (inside its solid, not on an edge) maps to that geom's cell; the centre of
    every free cell's floor polygon shows the floor and maps to that cell; the map spans the image."""
    far = f"{chr(64 + size)}{size}"
    b = state(size, red_cube="A1", blue_sphere="B2", yellow_cylinder="B3" if size > 3 else "C3",
              green_pyramid=far if size > 3 else "C2")
    im = render_3d(b)
    hits = hit_map(b, "3d")
    assert len(hits) == size * size and {h.coord for h in hits} == {f"{chr(65 + c)}{r + 1}" for c in range(size)
                                                                     for r in range(size)}
    where = {g["coord"]: g["color"] for g in b["geoms"]}
    w, h = im.size
    checked = 0
    for y in range(2, h - 2, 3):
        for x in range(2, w - 2, 3):
            hue = _geom_hue(im.getpixel((x, y)))
            if hue is None or any(_geom_hue(im.getpixel((x + dx, y + dy))) != hue
                                  for dx in (-2, 0, 2) for dy in (-2, 0, 2)):
                continue
            checked += 1
            cell = cell_at(hits, x, y)
            assert cell is not None and where.get(cell) == hue, ((x, y), hue, cell)
    assert checked > 200
    for hit in hits:
        if hit.piece:
            continue
        xs, ys = zip(*hit.points)
        cx, cy = sum(xs) / 4, sum(ys) / 4
        assert cell_at(hits, cx, cy) == hit.coord
        assert _geom_hue(im.getpixel((int(cx), int(cy)))) is None


def test_the_2d_hit_map_is_the_grid_and_off_board_clicks_hit_nothing():
    hits = hit_map(S, "2d")
    im = _img(render_png(S, "2d"))
    for g in S["geoms"]:
        poly = next(h.points for h in hits if h.coord == g["coord"])
        cx, cy = sum(p[0] for p in poly) / 4, sum(p[1] for p in poly) / 4
        assert cell_at(hits, cx, cy) == g["coord"]
        assert _geom_hue(im.getpixel((int(cx), int(cy)))) == g["color"]
    assert cell_at(hits, 5, 5) is None and cell_at(hits, im.size[0] - 3, im.size[1] - 3) is None
    assert [h.piece for h in hits].count(True) == len(S["geoms"])
    with pytest.raises(ValueError, match="modality 'text'"):
        hit_map(S, "text")  # type: ignore[arg-type]
