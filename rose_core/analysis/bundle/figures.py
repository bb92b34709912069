"""The paper's figures, drawn from the bundle's tables and rendered on the server by Plotly's static export
(kaleido) in the system Chromium: SVG, PDF and PNG.

One visual language in every figure: a solver is a row; colour says WHAT is measured (a template, a bridge
step, counting vs action, a failure kind), from the Okabe–Ito colour-blind-safe palette, and never repeats
within a figure; the marker's shape says WHO (circle: humans, square: models, diamond: agents) and published
reference rows are open markers with dotted connectors, labelled "(published)"."""
from __future__ import annotations

import asyncio
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from ...benchmarks.rose.records import MAIN_TEMPLATES, TEMPLATE_LABEL
from ...benchmarks.rose.scoring import FAILURES
from .paper import BundleError, PaperReport

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
# One meaning per colour across the bundle: counting is blue (G-Cnt, Counting Avg), clicking in a region orange
# (L-Clk, Action Avg); no figure shows two metrics in one colour.
METRIC_COLOUR = {"G-Cnt": "#0072B2", "L-Cnt": "#56B4E9", "L-Clk": "#E69F00", "V-Clk": "#D55E00",
                 "Excl-CS": "#CC79A7", "G-Clk": "#009E73", "mL-Cnt": "#000000", "L-Clk†": "#882255",
                 "Counting Avg": "#0072B2", "Action Avg": "#E69F00"}
FAILURE_COLOUR = dict(zip(FAILURES, PALETTE))  # the scorer's precedence order, the eight Okabe–Ito colours
KIND_SYMBOL = {"human": "circle", "model": "square", "agent": "diamond", "published": "circle-open"}
KIND_ORDER = {"human": 0, "model": 1, "agent": 2, "published": 3}
FORMATS = ("svg", "pdf", "png")
PNG_SCALE = 2
WIDTH = 900
CHROMIUM = "/usr/bin/chromium"


@dataclass(frozen=True)
class FigureFile:
    name: str
    width: int      # CSS pixels of the figure; the PNG is PNG_SCALE times larger
    height: int


def chromium_path() -> str:
    """The system Chromium (Debian's, installed by scripts/run.sh and scripts/test.sh); `ROSE_CHROMIUM` overrides.
    Nothing here ever downloads a browser."""
    path = os.environ.get("ROSE_CHROMIUM", CHROMIUM)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise BundleError(f"no Chromium at {path}: the figures are rendered by the system Chromium (install it with "
                          "`bash scripts/run.sh`, or `apt-get install chromium`; ROSE_CHROMIUM names another), or "
                          "write the bundle without figures (--no-figures)")
    return path


def _colours(keys: list[str], fixed: dict[str, str]) -> dict[str, str]:
    """Each key's fixed colour; keys without one take the palette's unused colours (never a repeat)."""
    out = {k: fixed[k] for k in keys if k in fixed}
    free = iter(c for c in PALETTE if c not in out.values())
    for k in keys:
        if k not in out:
            out[k] = next(free, None)
            if out[k] is None:
                raise BundleError(f"a figure needs {len(keys)} colours, the palette has {len(PALETTE)}")
    return out


def _symbol(kind: str, solver: str) -> str:
    if kind == "published":
        return "circle-open" if solver.startswith("Human") else "square-open"
    return KIND_SYMBOL.get(kind, "x")


def _ordered(df: pd.DataFrame) -> pd.DataFrame:
    """Humans, models, agents, published rows, each in the table's order (top to bottom)."""
    return df.assign(_o=df["kind"].map(KIND_ORDER).fillna(9)).sort_values("_o", kind="stable").drop(columns="_o")


def _layout(fig: go.Figure, title: str, n_rows: int, xtitle: str, xrange: tuple[float, float] | None = (0, 100)) -> int:
    top, bottom = 60, 150   # the legend sits in the bottom margin, below the axis title
    plot = 30 * max(n_rows, 3)
    height = top + bottom + plot
    fig.update_layout(
        title={"text": title, "x": 0.01}, width=WIDTH, height=height, template="simple_white",
        font={"family": "Arial, Helvetica, sans-serif", "size": 13}, margin={"l": 10, "r": 20, "t": top, "b": bottom},
        legend={"orientation": "h", "y": -62 / plot, "x": 0, "yanchor": "top"})
    fig.update_xaxes(title=xtitle, range=list(xrange) if xrange else None, showgrid=True, gridcolor="#e6e6e6")
    fig.update_yaxes(autorange="reversed", automargin=True)
    return height


def _kind_legend(fig: go.Figure, kinds: list[str]) -> None:
    """Grey legend entries that explain the marker shapes (who), apart from the colours (what)."""
    names = {"human": "humans", "model": "models", "agent": "agents", "published": "published (open markers)"}
    for k in sorted(set(kinds), key=lambda k: KIND_ORDER.get(k, 9)):
        fig.add_scatter(x=[None], y=[None], mode="markers", name=names.get(k, k), legendgroup="kinds",
                        marker={"symbol": KIND_SYMBOL.get(k, "x"), "color": "#7f7f7f", "size": 10})


def dot_figure(df: pd.DataFrame, metrics: list[tuple[str, str]], title: str, xtitle: str = "PASS (%)",
               connect: bool = True, xrange: tuple[float, float] | None = (0, 100)) -> tuple[go.Figure, int]:
    """One row per solver, one coloured marker per metric (key, label), each metric a little lower than the one
    before so that equal values stay visible, joined by a grey line (a dumbbell for two metrics). Rows without
    any value are left out."""
    df = _ordered(df[df[[k for k, _ in metrics]].notna().any(axis=1)]).reset_index(drop=True)
    fig = go.Figure()
    solvers = df["solver"].astype(str).tolist()
    step = 0.5 / max(len(metrics), 2)
    offset = {key: (k - (len(metrics) - 1) / 2) * step for k, (key, _) in enumerate(metrics)}
    if connect:
        for i, r in df.iterrows():
            pts = [(r[k], i + offset[k]) for k, _ in metrics if pd.notna(r[k])]
            if len(pts) >= 2:
                fig.add_scatter(x=[x for x, _ in pts], y=[y for _, y in pts], mode="lines", showlegend=False,
                                hoverinfo="skip", line={"color": "#9a9a9a", "width": 2,
                                                        "dash": "dot" if r["kind"] == "published" else "solid"})
    colours = _colours([key for key, _ in metrics], METRIC_COLOUR)
    for key, label in metrics:
        fig.add_scatter(x=df[key], y=[i + offset[key] for i in range(len(df))], mode="markers", name=label,
                        cliponaxis=False, text=solvers, hovertemplate="%{text}: %{x:.1f}",
                        marker={"color": colours[key], "size": 10,
                                "symbol": [_symbol(k, s) for k, s in zip(df["kind"], solvers)],
                                "line": {"width": 2, "color": colours[key]}})
    _kind_legend(fig, df["kind"].tolist())
    height = _layout(fig, title, len(df), xtitle, xrange)
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(df))), ticktext=solvers, range=[len(df) - 0.5, -0.5],
                     autorange=False)
    return fig, height


def failure_figure(fk: pd.DataFrame, title: str) -> tuple[go.Figure, int]:
    """Stacked horizontal bars: per (solver, template) the share of responses by primary failure kind."""
    fig = go.Figure()
    if fk.empty:
        fig.add_annotation(text="no failing response in this selection", showarrow=False, x=50, y=0)
        return fig, _layout(fig, title, 1, "% of responses")
    fk = fk.assign(row=fk["solver"].astype(str) + " · " + fk["label"].astype(str))
    rows = list(dict.fromkeys(fk.sort_values(["solver", "template"], kind="stable")["row"]))
    kinds = sorted(set(fk["failure"]), key=lambda k: FAILURES.index(k) if k in FAILURES else len(FAILURES))
    colours = _colours(kinds, FAILURE_COLOUR)
    for k in kinds:
        part = fk[fk["failure"] == k]
        fig.add_bar(y=part["row"], x=part["share"], orientation="h", name=k.replace("_", " "),
                    marker={"color": colours[k]})
    fig.update_layout(barmode="stack")
    fig.update_yaxes(categoryorder="array", categoryarray=rows)
    return fig, _layout(fig, title, len(rows), "% of responses")


def paper_figures(paper: PaperReport) -> dict[str, tuple[go.Figure, int]]:
    """name -> (figure, height): the main table, the gap (the paper's dumbbell), the same on scenes with a
    correct global count, both bridges, failure kinds."""
    main = paper.table("main").frame
    out = {
        "main_pass": dot_figure(main, [(TEMPLATE_LABEL[t], TEMPLATE_LABEL[t]) for t in MAIN_TEMPLATES],
                                "PASS per template and solver", connect=False),
        "gap": dot_figure(paper.table("gap").frame, [("Counting Avg", "Counting Avg"), ("Action Avg", "Action Avg")],
                          "Perception-to-action gap: counting vs action"),
        "gap_conditioned": dot_figure(paper.table("gap_conditioned").frame,
                                      [("Counting Avg", "Counting Avg"), ("Action Avg", "Action Avg")],
                                      "Counting vs action on scenes with a correct global count"),
        "bridge_global": dot_figure(paper.table("bridge_global").frame,
                                    [("G-Cnt", "G-Cnt"), ("G-Clk", "G-Clk"), ("V-Clk", "V-Clk")],
                                    "Global-click bridge: G-Cnt → G-Clk → V-Clk"),
        "bridge_matched": dot_figure(paper.table("bridge_matched").frame,
                                     [("mL-Cnt", "mL-Cnt"), ("L-Clk", "L-Clk"), ("L-Clk†", "L-Clk† (given mL-Cnt right)")],
                                     "Matched local count-to-click"),
        "failure_kinds": failure_figure(paper.table("failure_kinds").frame, "Failure kinds per solver and template"),
    }
    return out


async def _render(figs: dict[str, tuple[go.Figure, int]], folder: Path, browser: str) -> list[FigureFile]:
    import kaleido

    done = []
    async with kaleido.Kaleido(path=browser, mathjax=False, n=1, timeout=120) as k:
        for name, (fig, height) in figs.items():
            spec = fig.to_dict()
            for fmt in FORMATS:
                data = await k.calc_fig(spec, opts={"format": fmt, "width": WIDTH, "height": height,
                                                    "scale": PNG_SCALE if fmt == "png" else 1})
                if not data:
                    raise BundleError(f"figure {name}: the {fmt} export came back empty")
                (folder / f"{name}.{fmt}").write_bytes(data)
            done.append(FigureFile(name, WIDTH, height))
    return done


def render_figures(figs: dict[str, tuple[go.Figure, int]], folder: Path) -> list[FigureFile]:
    """Write every figure as SVG, PDF and PNG into `folder`, in one headless Chromium session (plotly.js from
    the installed plotly package; no MathJax, nothing fetched)."""
    browser = chromium_path()
    folder.mkdir(parents=True, exist_ok=True)
    result: list = []
    error: list = []

    def run() -> None:  # a thread of its own: the caller may already run an event loop (Streamlit, tests)
        try:
            result.extend(asyncio.run(_render(figs, folder, browser)))
        except BaseException as e:  # noqa: BLE001 (re-raised in the caller's thread)
            error.append(e)

    t = threading.Thread(target=run, name="rose-figure-export")
    t.start()
    t.join()
    if error:
        if isinstance(error[0], BundleError):
            raise error[0]
        raise BundleError(f"figure export in {browser} failed: {error[0]!r}") from error[0]
    return result
