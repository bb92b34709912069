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
