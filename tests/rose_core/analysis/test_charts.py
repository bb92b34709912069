"""The figures' building blocks: the colour rules, and aggregates the browser gets instead of every value."""
import numpy as np
import pandas as pd
import pytest

from rose_core.analysis.charts import (
    PALETTE, box_figure, box_stats, colours, dot_figure, histogram_figure, line_figure, series_styles,
)


def test_colours_never_repeat_and_fixed_ones_hold():
    got = colours(["G-Cnt", "x", "y"], {"G-Cnt": "#0072B2"})
    assert got["G-Cnt"] == "#0072B2" and len(set(got.values())) == 3
    with pytest.raises(ValueError, match="colours"):
        colours([str(k) for k in range(len(PALETTE) + 1)], {})


def test_series_look_distinct_beyond_the_palette():
    styles = series_styles([f"s{k}" for k in range(40)])
    assert len({(s["color"], s["dash"]) for s in styles.values()}) == 40
    assert len({s["color"] for s in list(styles.values())[:16]}) == 16


def test_histogram_counts_every_finite_value_once():
    rng = np.random.default_rng(1)
    a, b = rng.lognormal(1, 0.5, 1000), np.append(rng.lognormal(0.2, 0.3, 300), [np.nan, np.inf])
    fig = histogram_figure({"kept": a, "excluded": b}, "t", "s", bins=30)
    counts = {t.name: sum(t.y) for t in fig.data}
    assert counts == {"kept": 1000, "excluded": 300}
    assert len(fig.data[0].x) == 30 and fig.data[0].x == fig.data[1].x      # the same bins for both groups


def test_box_statistics_are_tukeys():
    v = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 100])
    s = box_stats(v)
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    assert (s["q1"], s["median"], s["q3"]) == (q1, med, q3)
    assert s["lowerfence"] == 1.0 and s["upperfence"] == 8.0                # 100 lies beyond 1.5 IQR
    assert box_stats(np.array([np.nan])) is None
    df = pd.DataFrame({"template": ["T1"] * 9 + ["T2"] * 2, "s": list(v) + [1.0, 3.0], "g": ["kept"] * 11})
    fig = box_figure(df, "template", "s", "g", "t", "s")
    assert list(fig.data[0].x) == ["T1", "T2"] and list(fig.data[0].median) == [5.0, 2.0]


def test_dot_figure_rows_markers_and_connectors():
    df = pd.DataFrame({"solver": ["m", "Human", "GPT (published)"], "kind": ["model", "human", "published"],
                       "Counting Avg": [90.0, 99.0, 80.0], "Action Avg": [40.0, np.nan, 20.0]})
    fig, height = dot_figure(df, [("Counting Avg", "Counting"), ("Action Avg", "Action")], "gap")
    assert list(fig.layout.yaxis.ticktext) == ["Human", "m", "GPT (published)"]   # humans, models, published
    lines = [t for t in fig.data if t.mode == "lines"]
    assert [t.line.dash for t in lines] == ["solid", "dot"]        # a row with one value has no connector
    markers = {t.name: t for t in fig.data if t.mode == "markers" and t.legendgroup != "kinds"}
    assert list(markers["Counting"].marker.symbol) == ["circle", "square", "square-open"]
    assert markers["Action"].x[0] is None and height > 0


def test_line_figure_one_line_per_series():
    df = pd.DataFrame({"value": ["16", "25", "16", "25"], "PASS": [90.0, 80.0, 50.0, 40.0], "solver": ["a", "a", "b", "b"],
                       "n": [3, 4, 5, 6]})
    fig = line_figure(df, "value", "PASS", "solver", "t", "x", "y", hover="n")
    assert [t.name for t in fig.data] == ["a", "b"] and list(fig.data[1].customdata) == [5, 6]


# Machado, Oliveira & Fernandes (2009), "A physiologically-based model for simulation of color vision deficiency",
# severity 1.0 (dichromacy), applied to linear RGB.
PROTANOPIA = np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                       [-0.003882, -0.048116, 1.051998]])
DEUTERANOPIA = np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                         [-0.011820, 0.042940, 0.968881]])
SRGB_TO_XYZ = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                        [0.0193339, 0.1191920, 0.9503041]])
D65 = np.array([0.95047, 1.0, 1.08883])


def _linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(rgb: np.ndarray) -> np.ndarray:
    x = SRGB_TO_XYZ @ np.clip(rgb, 0, 1) / D65
    f = np.where(x > (6 / 29) ** 3, np.cbrt(x), x / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _views(hex_colour: str) -> dict[str, np.ndarray]:
    rgb = _linear(hex_colour)
    return {"normal": _lab(rgb), "deuteranopia": _lab(DEUTERANOPIA @ rgb), "protanopia": _lab(PROTANOPIA @ rgb)}


def _grey_lightness(hex_colour: str) -> float:
    """L* of the colour printed in greyscale (its luminance Y)."""
    y = float(SRGB_TO_XYZ[1] @ _linear(hex_colour))
    return 116 * (y ** (1 / 3) if y > (6 / 29) ** 3 else y / (3 * (6 / 29) ** 2) + 4 / 29) - 16


def test_cvd_simulation_matches_known_values():
    # the simulation itself: greys stay grey, and red and green (apart for a normal eye) collapse for dichromats
    assert np.allclose(_views("#808080")["deuteranopia"], _views("#808080")["normal"], atol=0.5)
    red, green = _views("#CC3333"), _views("#339933")
    assert np.linalg.norm(red["normal"] - green["normal"]) > 80
    assert np.linalg.norm(red["deuteranopia"] - green["deuteranopia"]) < 45
    assert _grey_lightness("#000000") == pytest.approx(0, abs=1e-6) and _grey_lightness("#FFFFFF") == pytest.approx(100)


def test_print_palette_stays_apart_for_colour_blind_eyes_and_in_greyscale():
    from itertools import combinations

    from rose_core.analysis.charts import PRINT_PALETTE, PRINT_PICK, print_colours

    lightness = [_grey_lightness(c) for c in PRINT_PALETTE]
    assert lightness == sorted(lightness) and lightness[-1] < 85     # ordered, none too pale for a white page
    for a, b in combinations(PRINT_PALETTE, 2):
        va, vb = _views(a), _views(b)
        for eye in va:
            assert np.linalg.norm(va[eye] - vb[eye]) >= 16, (a, b, eye)
        assert abs(_grey_lightness(a) - _grey_lightness(b)) >= 7.5, (a, b)
    # the fewer colours a figure needs, the further apart in greyscale they are
    need = {2: 40, 3: 30, 4: 15, 5: 15, 6: 9, 7: 7.5, 8: 7.5}
    for k, want in need.items():
        chosen = list(print_colours([f"m{i}" for i in range(k)]).values())
        assert len(set(chosen)) == k == len(PRINT_PICK[k])
        assert min(abs(_grey_lightness(a) - _grey_lightness(b)) for a, b in combinations(chosen, 2)) >= want, k
    with pytest.raises(ValueError, match="print palette"):
        print_colours([str(k) for k in range(9)])
