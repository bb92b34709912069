"""One visual language for every ROSE figure: the dashboards' (drawn here with Plotly) and the paper bundle's
(drawn by Matplotlib in `analysis.bundle.figures`, in the print palette defined here).

A solver is a row; colour says WHAT is measured (a template, a bridge step, counting vs action, a failure kind),
from the Okabe–Ito colour-blind-safe palette, and never repeats within a figure; the marker's shape says WHO
(circle: humans, square: models, diamond: agents) and published reference rows are open markers with dotted
connectors, labelled "(published)".

Figures are built as one specification (traces and layout as plain dicts, validated once by `go.Figure`):
Plotly Express and per-trace `add_*`/`update_*` calls validate the figure again at every step, which cost a
dashboard page most of its time."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..benchmarks.rose.scoring import FAILURES

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
# One meaning per colour across the figures: counting is blue (G-Cnt, Counting Avg), clicking in a region orange
# (L-Clk, Action Avg); no figure shows two metrics in one colour.
METRIC_COLOUR = {"G-Cnt": "#0072B2", "L-Cnt": "#56B4E9", "L-Clk": "#E69F00", "V-Clk": "#D55E00",
                 "Excl-CS": "#CC79A7", "G-Clk": "#009E73", "mL-Cnt": "#000000", "L-Clk†": "#882255",
                 "Counting Avg": "#0072B2", "Action Avg": "#E69F00"}
FAILURE_COLOUR = dict(zip(FAILURES, PALETTE))  # the scorer's precedence order, the eight Okabe–Ito colours
KIND_SYMBOL = {"human": "circle", "model": "square", "agent": "diamond", "published": "circle-open"}
KIND_ORDER = {"human": 0, "model": 1, "agent": 2, "published": 3}
KIND_NAME = {"human": "humans", "model": "models", "agent": "agents", "published": "published (open markers)"}
WIDTH = 900        # a figure exported at a fixed width without a `Print` style (CSS pixels); the dashboards pass None
CONNECTOR = "#9a9a9a"

# The paper's palette: eight colours ordered by lightness (CIE L* 0, 22, 32, 48, 56, 64, 72, 82) whose every pair
# stays apart for a normal, a deuteranopic and a protanopic eye (CIE76 ΔE >= 16 after Machado, Oliveira & Fernandes
# 2009's simulation) and in greyscale (ΔL* >= 7.5); a figure of k colours takes the k of them that lie furthest
# apart in lightness (`PRINT_PICK`: two colours 42 L* apart, three 32, five 16). tests/rose_core/analysis/
# test_charts.py simulates the deficiencies and greyscale and checks these separations.
PRINT_PALETTE = ("#000000", "#332288", "#882255", "#0077BB", "#CC6677", "#E68310", "#EE99AA", "#DDCC77")
PRINT_PICK = {1: (3,), 2: (1, 5), 3: (0, 2, 5), 4: (0, 2, 4, 6), 5: (0, 1, 3, 5, 7), 6: (0, 1, 2, 3, 5, 7),
              7: (0, 1, 2, 3, 5, 6, 7), 8: tuple(range(8))}


def print_colours(keys: list[str]) -> dict[str, str]:
    """The print palette's colours for `keys`: the most separated choice for their number (`PRINT_PICK`)."""
    if len(keys) > len(PRINT_PALETTE):
        raise ValueError(f"a figure needs {len(keys)} colours, the print palette has {len(PRINT_PALETTE)}")
    return {k: PRINT_PALETTE[i] for k, i in zip(keys, PRINT_PICK[len(keys)])} if keys else {}


def colours(keys: list[str], fixed: dict[str, str]) -> dict[str, str]:
    """Each key's fixed colour; keys without one take the palette's unused colours (never a repeat)."""
    out = {k: fixed[k] for k in keys if k in fixed}
    free = iter(c for c in PALETTE if c not in out.values())
    for k in keys:
        if k not in out:
            out[k] = next(free, None)
            if out[k] is None:
                raise ValueError(f"a figure needs {len(keys)} colours, the palette has {len(PALETTE)}")
    return out


def symbol(kind: str, solver: str) -> str:
    if kind == "published":
        return "circle-open" if solver.startswith("Human") else "square-open"
    return KIND_SYMBOL.get(kind, "x")


def ordered(df: pd.DataFrame) -> pd.DataFrame:
    """Humans, models, agents, published rows, each in the table's order (top to bottom)."""
    return df.assign(_o=df["kind"].map(KIND_ORDER).fillna(9)).sort_values("_o", kind="stable").drop(columns="_o")


@lru_cache(maxsize=1)
def _template() -> dict:
    """Plotly's "simple_white" look for the trace types drawn here, read from plotly's own template file: naming
    the template makes plotly build it whole (every trace type's defaults: 0.6 s at a page's first figure)."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "templates" / "simple_white.json"
    spec = json.loads(path.read_text(encoding="utf-8"))
    return {"layout": spec["layout"], "data": {t: spec["data"][t] for t in ("scatter", "bar")}}


def _layout(title: str, n_rows: int, xtitle: str, xrange: tuple[float, float] | None,
            width: int | None) -> tuple[dict, int]:
    """The layout; with a `width` (a fixed-size export) also the white look, which the dashboards take from their
    own theme instead."""
    top, bottom = 60, 150   # the legend sits in the bottom margin, below the axis title
    plot = 30 * max(n_rows, 3)
    height = top + bottom + plot
    layout = {
        "title": {"text": title, "x": 0.01}, "height": height,
        "font": {"family": "Arial, Helvetica, sans-serif", "size": 13},
        "margin": {"l": 10, "r": 20, "t": top, "b": bottom},
        "legend": {"orientation": "h", "y": -62 / plot, "x": 0, "yanchor": "top"},
        "xaxis": {"title": {"text": xtitle}, "showgrid": True, "gridcolor": "#e6e6e6",
                  **({"range": list(xrange)} if xrange else {})},
        "yaxis": {"autorange": "reversed", "automargin": True},
    }
    if width:
        layout["width"] = width
        layout["template"] = _template()
    return layout, height


def _kind_legend(kinds: list[str]) -> list[dict]:
    """Grey legend entries that explain the marker shapes (who), apart from the colours (what)."""
    return [{"type": "scatter", "x": [None], "y": [None], "mode": "markers", "name": KIND_NAME.get(k, k),
             "legendgroup": "kinds", "marker": {"symbol": KIND_SYMBOL.get(k, "x"), "color": "#7f7f7f", "size": 10}}
            for k in sorted(set(kinds), key=lambda k: KIND_ORDER.get(k, 9))]


def dot_figure(df: pd.DataFrame, metrics: list[tuple[str, str]], title: str | None, xtitle: str = "PASS (%)",
               connect: bool = True, xrange: tuple[float, float] | None = (0, 100),
               width: int | None = WIDTH) -> tuple[go.Figure, int]:
    """One row per solver (humans, models, agents, published), one coloured marker per metric (key, label), each
    metric a little lower than the one before so that equal values stay visible, joined by a grey line (a
    dumbbell for two metrics; dotted for published rows). Rows without any value are left out. Returns (figure,
    height in pixels)."""
    keys = [k for k, _ in metrics]
    df = ordered(df[df[keys].notna().any(axis=1)]).reset_index(drop=True)
    solvers = df["solver"].astype(str).tolist()
    kinds = df["kind"].astype(str).tolist()
    step = 0.5 / max(len(metrics), 2)
    offset = {key: (k - (len(metrics) - 1) / 2) * step for k, key in enumerate(keys)}
    values = {k: pd.to_numeric(df[k], errors="coerce").to_numpy(dtype=float) for k in keys}
    traces: list[dict] = []
    if connect:  # one trace per line style, rows separated by gaps (None), instead of a trace per row
        lines: dict[bool, tuple[list, list]] = {False: ([], []), True: ([], [])}
        for i, kind in enumerate(kinds):
            pts = [(float(values[k][i]), i + offset[k]) for k in keys if not np.isnan(values[k][i])]
            if len(pts) >= 2:
                xs, ys = lines[kind == "published"]
                xs += [x for x, _ in pts] + [None]
                ys += [y for _, y in pts] + [None]
        for dotted, (xs, ys) in lines.items():
            if xs:
                traces.append({"type": "scatter", "x": xs, "y": ys, "mode": "lines", "showlegend": False,
                               "hoverinfo": "skip", "line": {"color": CONNECTOR, "width": 2,
                                                             "dash": "dot" if dotted else "solid"}})
    shade = colours(keys, METRIC_COLOUR)
    symbols = [symbol(k, s) for k, s in zip(kinds, solvers)]
    for key, label in metrics:
        tr = {"type": "scatter", "x": [None if np.isnan(v) else float(v) for v in values[key]],
              "y": [i + offset[key] for i in range(len(df))], "mode": "markers", "name": label,
              "cliponaxis": False, "text": solvers, "hovertemplate": "%{text}: %{x:.1f}",
              "marker": {"color": shade[key], "size": 10, "symbol": symbols,
                         "line": {"width": 2, "color": shade[key]}}}
        traces.append(tr)
    traces += _kind_legend(kinds)
    layout, height = _layout(title or "", len(df), xtitle, xrange, width)
    layout["yaxis"] = {**layout["yaxis"], "automargin": True, "tickmode": "array", "tickvals": list(range(len(df))),
                       "ticktext": solvers, "range": [len(df) - 0.5, -0.5], "autorange": False}
    return go.Figure({"data": traces, "layout": layout}), height


def failure_figure(fk: pd.DataFrame, title: str | None, width: int | None = WIDTH) -> tuple[go.Figure, int]:
    """Stacked horizontal bars: per (solver, template) the share of responses by primary failure kind."""
    def layout_for(n_rows: int) -> tuple[dict, int]:
        return _layout(title or "", n_rows, "% of responses", (0, 100), width)

    if fk.empty:
        layout, height = layout_for(1)
        layout["annotations"] = [{"text": "no failing response in this selection", "showarrow": False, "x": 50,
                                  "y": 0}]
        return go.Figure({"data": [], "layout": layout}), height
    fk = fk.assign(row=fk["solver"].astype(str) + " · " + fk["label"].astype(str))
    rows = list(dict.fromkeys(fk.sort_values(["solver", "template"], kind="stable")["row"]))
    kinds = sorted(set(fk["failure"]), key=lambda k: FAILURES.index(k) if k in FAILURES else len(FAILURES))
    shade = colours(kinds, FAILURE_COLOUR)
    traces = []
    for k in kinds:
        part = fk[fk["failure"] == k]
        traces.append({"type": "bar", "y": part["row"].tolist(), "x": part["share"].astype(float).tolist(),
                       "orientation": "h", "name": k.replace("_", " "), "marker": {"color": shade[k]}})
    layout, height = layout_for(len(rows))
    layout["barmode"] = "stack"
    layout["yaxis"] = {**layout["yaxis"], "categoryorder": "array", "categoryarray": rows}
    return go.Figure({"data": traces, "layout": layout}), height


# --------------------------------------------------------------------------- the dashboards' other figures

# More distinct colours when one figure shows one line per solver: Okabe–Ito, then Paul Tol's "muted" scheme (also
# designed for colour-blind readers); beyond these a colour comes back with another dash pattern, never alike.
SERIES = PALETTE + ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#AA4499")
DASHES = ("solid", "dash", "dot", "dashdot")


def series_styles(names: list[str]) -> dict[str, dict]:
    """Per series: a colour, and a dash pattern once the colours run out; no two series look alike."""
    return {n: {"color": SERIES[k % len(SERIES)], "dash": DASHES[(k // len(SERIES)) % len(DASHES)]}
            for k, n in enumerate(names)}


def _plain_layout(title: str, xtitle: str, ytitle: str, **extra) -> dict:
    return {"title": {"text": title}, "xaxis": {"title": {"text": xtitle}}, "yaxis": {"title": {"text": ytitle}},
            **extra}


def line_figure(df: pd.DataFrame, x: str, y: str, series: str, title: str, xtitle: str, ytitle: str,
                hover: str | None = None, yrange: tuple[float, float] | None = (0, 100)) -> go.Figure:
    """One line with markers per series (e.g. PASS by a generation parameter, per solver), x in the frame's order."""
    names = list(dict.fromkeys(df[series].astype(str).tolist()))
    styles = series_styles(names)
    traces = []
    for name in names:
        part = df[df[series].astype(str) == name]
        tr = {"type": "scatter", "mode": "lines+markers", "name": name, "x": part[x].astype(str).tolist(),
              "y": part[y].astype(float).tolist(), "line": styles[name], "marker": {"color": styles[name]["color"]}}
        if hover:
            tr["customdata"] = part[hover].tolist()
            tr["hovertemplate"] = f"{name}<br>{x} %{{x}}<br>{y} %{{y:.1f}}<br>{hover} %{{customdata}}<extra></extra>"
        traces.append(tr)
    layout = _plain_layout(title, xtitle, ytitle, xaxis={"title": {"text": xtitle}, "type": "category"})
    if yrange:
        layout["yaxis"]["range"] = list(yrange)
    return go.Figure({"data": traces, "layout": layout})


def bar_figure(x: list[str], bars: list[tuple[str, list, list | None]], title: str, ytitle: str) -> go.Figure:
    """Grouped bars: per (name, values, error or None) one colour, over the categories `x`."""
    shade = colours([name for name, _, _ in bars], {})
    traces = []
    for name, values, error in bars:
        tr = {"type": "bar", "name": name, "x": list(x), "y": [None if pd.isna(v) else float(v) for v in values],
              "marker": {"color": shade[name]}}
        if error is not None:
            tr["error_y"] = {"type": "data", "array": [0.0 if pd.isna(e) else float(e) for e in error]}
        traces.append(tr)
    return go.Figure({"data": traces, "layout": _plain_layout(title, "", ytitle, barmode="group")})


def histogram_figure(groups: dict[str, np.ndarray], title: str, xtitle: str, bins: int = 60) -> go.Figure:
    """Counts per bin (the same `bins` equal-width bins over every group's finite values), stacked per group: the
    browser gets one bar per bin, not every value."""
    finite = {g: v[np.isfinite(v)] for g, v in groups.items()}
    every = np.concatenate(list(finite.values())) if finite else np.zeros(0)
    layout = _plain_layout(title, xtitle, "count", barmode="stack", bargap=0)
    if not len(every):
        return go.Figure({"data": [], "layout": layout})
    edges = np.histogram_bin_edges(every, bins=bins)
    centres, widths = ((edges[:-1] + edges[1:]) / 2).tolist(), np.diff(edges).tolist()
    shade = colours(list(finite), {})
    traces = [{"type": "bar", "name": g, "x": centres, "width": widths,
               "y": np.histogram(v, bins=edges)[0].tolist(), "marker": {"color": shade[g]},
               "hovertemplate": "%{x:.2f}: %{y}<extra>" + g + "</extra>"} for g, v in finite.items()]
    return go.Figure({"data": traces, "layout": layout})


def box_stats(v: np.ndarray) -> dict | None:
    """Tukey's box: quartiles (linear interpolation, as plotly.js computes them) and whiskers at the most extreme
    values within 1.5 × IQR of the box."""
    v = v[np.isfinite(v)]
    if not len(v):
        return None
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    iqr = q3 - q1
    return {"q1": float(q1), "median": float(med), "q3": float(q3),
            "lowerfence": float(v[v >= q1 - 1.5 * iqr].min()), "upperfence": float(v[v <= q3 + 1.5 * iqr].max())}


def box_figure(df: pd.DataFrame, x: str, y: str, group: str, title: str, ytitle: str) -> go.Figure:
    """Boxes of `y` per category `x`, side by side per `group`, from precomputed statistics (`box_stats`): the
    browser gets five numbers per box, not every value; outlying values are not drawn."""
    cats = sorted(df[x].dropna().astype(str).unique())
    names = [str(g) for g in dict.fromkeys(df[group].tolist())]
    shade = colours(names, {})
    traces = []
    for name, part in df.groupby(df[group].astype(str), sort=False):
        stats = {c: box_stats(g[y].to_numpy(dtype=float)) for c, g in part.groupby(part[x].astype(str))}
        shown = [c for c in cats if stats.get(c)]
        if not shown:
            continue
        traces.append({"type": "box", "name": name, "x": shown, "offsetgroup": name,
                       "marker": {"color": shade[name]},
                       **{k: [stats[c][k] for c in shown] for k in ("q1", "median", "q3", "lowerfence", "upperfence")}})
    return go.Figure({"data": traces, "layout": _plain_layout(title, x, ytitle, boxmode="group")})


def scatter_figure(df: pd.DataFrame, x: str, y: str, group: str, title: str, xtitle: str, ytitle: str,
                   hover: str | None = None) -> go.Figure:
    """Points coloured by `group`."""
    names = [str(g) for g in dict.fromkeys(df[group].tolist())]
    shade = colours(names, {}) if len(names) <= len(PALETTE) else {n: s["color"] for n, s in series_styles(names).items()}
    traces = []
    for name, part in df.groupby(df[group].astype(str), sort=False):
        tr = {"type": "scatter", "mode": "markers", "name": name, "x": part[x].astype(float).tolist(),
              "y": part[y].astype(float).tolist(), "marker": {"color": shade[name]}}
        if hover:
            tr["text"] = part[hover].astype(str).tolist()
            tr["hovertemplate"] = "%{text}: (%{x:.1f}, %{y:.1f})<extra>" + name + "</extra>"
        traces.append(tr)
    return go.Figure({"data": traces, "layout": _plain_layout(title, xtitle, ytitle)})
