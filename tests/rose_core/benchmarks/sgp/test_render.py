import hashlib

import numpy as np

from PIL import Image
import io

from rose_core.benchmarks.sgp import BACKGROUND, render_png, render_text, text_lines

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
