"""The paper's figures, drawn from the bundle's tables in the visual language of `rose_core.analysis.charts` (the
dashboards draw the same figures) at a venue's exact width, and rendered on the server by Plotly's static export
(kaleido) in the system Chromium: SVG, PDF and PNG.

Why Plotly and not Matplotlib: the dashboards already draw these figures with Plotly, so the paper shows the same
drawing; Plotly's export places text at an exact pixel size on an exact page (96 px per inch), which the tests
measure; and Matplotlib is not among the project's dependencies (adding it would add a second plotting stack to
keep in one visual language). The price is a browser: the system Chromium, never a downloaded one."""
from __future__ import annotations

import asyncio
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd
import plotly.graph_objects as go

from ...benchmarks.rose.records import MAIN_TEMPLATES, TEMPLATE_LABEL
from ...benchmarks.rose.scoring import FAILURES
from ..charts import Print, dot_figure, failure_figure, legend_width
from .paper import BundleError, PaperReport

FORMATS = ("svg", "pdf", "png")
PNG_SCALE = 2
CHROMIUM = "/usr/bin/chromium"
FigureWidth = Literal["single", "double"]
FIGURE_WIDTHS: dict[str, float] = {"single": 3.25, "double": 6.75}   # inches: a column, the text width (ICML)
PX_PER_IN = 96          # CSS pixels per inch: what Chromium's export maps a figure's width onto
# Every text is FONT_PX CSS pixels: 8.25 pt in the SVG (0.75 pt per pixel). Chromium's PDF keeps a 9 px page
# margin and shrinks the figure into it (0.707 pt per pixel at 3.25 in, measured), so 7.8 pt there: both >= 7 pt,
# the smallest a venue allows, which tests/rose_core/analysis/test_bundle.py measures in the files.
FONT_PX = 11
SHAPE_OF = {"human": "circle, humans", "model": "square, models", "agent": "diamond, agents"}
PUBLISHED = " (published)"


def short_name(solver: str) -> str:
    """A solver's name on a figure's axis: "X (published)" as "X*" (the caption says what * means), so that a
    column-wide figure keeps its width for the plot."""
    return solver[:-len(PUBLISHED)] + "*" if solver.endswith(PUBLISHED) else solver


def shapes(frame: pd.DataFrame, connect: bool) -> str:
    """The caption's key to the marker shapes of the rows the figure shows."""
    kinds = set(frame["kind"].astype(str)) if "kind" in frame else set()
    bits = [text for kind, text in SHAPE_OF.items() if kind in kinds]
    if "published" in kinds:
        bits.append("open markers" + (" on dotted lines" if connect else "") + " and names marked *, the paper's "
                    "published numbers")
    return "Markers: " + "; ".join(bits) + "." if bits else ""


def _short(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(solver=frame["solver"].astype(str).map(short_name)) if "solver" in frame else frame


@dataclass(frozen=True)
class FigureFile:
    name: str
    width: int      # CSS pixels of the figure; the PNG is PNG_SCALE times larger
    height: int
    width_in: float
    height_in: float


@dataclass(frozen=True)
class PaperFigure:
    figure: go.Figure
    height: int     # CSS pixels
    width: int
    caption: str
    wide: bool      # spans both columns of a two-column paper (`figure*`)


def chromium_path() -> str:
    """The system Chromium (Debian's, installed by scripts/run.sh and scripts/test.sh); `ROSE_CHROMIUM` overrides.
    Nothing here ever downloads a browser."""
    path = os.environ.get("ROSE_CHROMIUM", CHROMIUM)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise BundleError(f"no Chromium at {path}: the figures are rendered by the system Chromium (install it with "
                          "`bash scripts/run.sh`, or `apt-get install chromium`; ROSE_CHROMIUM names another), or "
                          "write the bundle without figures (--no-figures)")
    return path


def solver_order(paper: PaperReport) -> list[str]:
    """The solvers top to bottom in every figure: by the main table's Avg, highest first (rows without an Avg
    last, in the table's order)."""
    main = paper.table("main").frame
    avg = pd.to_numeric(main["Avg"], errors="coerce") if "Avg" in main else pd.Series(float("nan"), index=main.index)
    return main.assign(_avg=avg).sort_values("_avg", ascending=False, na_position="last",
                                             kind="stable")["solver"].astype(str).tolist()


def _bars(frame: pd.DataFrame, keys: list[str]) -> str:
    """What the error bars are, from the columns the figure's table carries."""
    with_iv = [k for k in keys if f"{k} lo" in frame and frame[f"{k} lo"].notna().any()]
    if not with_iv:
        return "No error bars: the table carries no interval for these values."
    return ("Error bars: the 95% intervals printed in the table (" + ", ".join(with_iv) + "); rows without one have "
            "no bar.")


def paper_figures(paper: PaperReport, width: FigureWidth = "single") -> dict[str, PaperFigure]:
    """name -> figure, for print at `width` (a column or the text width): the main table, the gap (the paper's
    dumbbell), the same on scenes with a correct global count, both bridges, failure kinds. Solvers sorted by
    Avg; error bars from the tables' own interval columns; captions instead of titles."""
    if width not in FIGURE_WIDTHS:
        raise BundleError(f"figure width {width!r}: expected one of {', '.join(FIGURE_WIDTHS)}")
    px = round(FIGURE_WIDTHS[width] * PX_PER_IN)
    style = Print(px, FONT_PX)
    order = [short_name(s) for s in solver_order(paper)]
    sort = "Solvers sorted by Avg (main table), highest first."

    def dots(table: str, metrics: list[tuple[str, str]], caption: str, connect: bool = True) -> PaperFigure:
        frame = _short(paper.table(table).frame)
        fig, height = dot_figure(frame, metrics, None, connect=connect, order=order, style=style)
        keys = [k for k, _ in metrics]
        shown = frame[frame[keys].notna().any(axis=1)]
        text = " ".join(t for t in (caption, _bars(frame, keys), sort, shapes(shown, connect)) if t)
        return PaperFigure(fig, height, px, text, width == "double")

    templates = [(TEMPLATE_LABEL[t], TEMPLATE_LABEL[t]) for t in MAIN_TEMPLATES]
    counting = [("Counting Avg", "Counting"), ("Action Avg", "Action")]
    out = {
        "main_pass": dots("main", templates, "PASS (%) per template and solver, as in the main table.",
                          connect=False),
        "gap": dots("gap", counting, "Perception-to-action gap: Counting Avg (mean of G-Cnt, L-Cnt) and Action Avg "
                    "(mean of L-Clk, V-Clk, Excl-CS) per solver, PASS (%)."),
        "gap_conditioned": dots("gap_conditioned", counting, "Counting vs action on scenes whose global count (T1) "
                                "was answered correctly, PASS (%)."),
        "bridge_global": dots("bridge_global", [("G-Cnt", "G-Cnt"), ("G-Clk", "G-Clk"), ("V-Clk", "V-Clk")],
                              "Global-click bridge: G-Cnt, G-Clk, V-Clk per solver, PASS (%)."),
        "bridge_matched": dots("bridge_matched", [("mL-Cnt", "mL-Cnt"), ("L-Clk", "L-Clk"), ("L-Clk†", "L-Clk†")],
                               "Matched local count-to-click: mL-Cnt, L-Clk, and L-Clk† (L-Clk given a correct "
                               "mL-Cnt) on the same pairs, PASS (%)."),
    }
    fk = _short(paper.table("failure_kinds").frame)
    present = [k for k in FAILURES if k in set(fk["failure"])] if len(fk) else []
    # up to eight kinds: at a column's width their legend is no longer one line, so this one takes the text's width
    fk_style = style
    if legend_width([(FAILURE_NAMES[k], "") for k in present], FONT_PX) > px - 16:
        fk_style = Print(round(FIGURE_WIDTHS["double"] * PX_PER_IN), FONT_PX)
    fig, height = failure_figure(fk, None, order=order, style=fk_style, names=FAILURE_NAMES)
    shortened = [f"{FAILURE_NAMES[k]}, {k.replace('_', ' ')}" for k in present
                 if FAILURE_NAMES[k] != k.replace("_", " ")]
    caption = ("Failure kinds: share (%) of a solver's responses to a template by primary failure kind (the "
               "scorer's precedence)" + (": " + "; ".join(shortened) if shortened else "") + ". " + sort)
    out["failure_kinds"] = PaperFigure(fig, height, fk_style.width, caption,
                                       fk_style.width > round(FIGURE_WIDTHS["single"] * PX_PER_IN))
    return out


# Legend labels short enough for one row at a column's width (the caption spells out the shortened ones).
FAILURE_NAMES = {"invalid": "invalid", "failure_to_abstain": "abstain", "region_ignored": "region",
                 "count_anchoring": "anchor", "false_click": "false", "missed_target": "missed",
                 "repeated_click": "repeat", "miscount": "miscount"}


def captions_markdown(figs: dict[str, PaperFigure]) -> str:
    lines = ["# Figure captions", "", "One caption per figure (the figures carry no title); `captions.tex` holds the "
             "same as LaTeX figure environments.", ""]
    for name, f in figs.items():
        lines += [f"## {name}", "", f.caption, ""]
    return "\n".join(lines)


def captions_latex(figs: dict[str, PaperFigure], files: list[FigureFile]) -> str:
    """A figure environment per figure (`figure*` at double width), the PDF at its own size: never scaled, so
    its text keeps its printed size."""
    from .render import latex_escape

    size = {f.name: f for f in files}
    out = ["% The bundle's figures: written by `python -m rose_core report --out`; needs \\usepackage{graphicx}; "
           "\\input from the bundle's folder"]
    for name, f in figs.items():
        env = "figure*" if f.wide else "figure"
        dim = size.get(name)
        w = f"width={dim.width_in:.2f}in" if dim else "width=\\linewidth"
        out += [f"\\begin{{{env}}}[t]", "\\centering", f"\\includegraphics[{w}]{{figures/{name}.pdf}}",
                f"\\caption{{{latex_escape(f.caption)}}}", f"\\label{{fig:rose-{name.replace('_', '-')}}}",
                f"\\end{{{env}}}", ""]
    return "\n".join(out)


async def _render(figs: dict[str, PaperFigure], folder: Path, browser: str) -> list[FigureFile]:
    import kaleido

    done = []
    async with kaleido.Kaleido(path=browser, mathjax=False, n=1, timeout=120) as k:
        for name, f in figs.items():
            spec = f.figure.to_dict()
            for fmt in FORMATS:
                data = await k.calc_fig(spec, opts={"format": fmt, "width": f.width, "height": f.height,
                                                    "scale": PNG_SCALE if fmt == "png" else 1})
                if not data:
                    raise BundleError(f"figure {name}: the {fmt} export came back empty")
                (folder / f"{name}.{fmt}").write_bytes(data)
            done.append(FigureFile(name, f.width, f.height, round(f.width / PX_PER_IN, 4),
                                   round(f.height / PX_PER_IN, 4)))
    return done


def render_figures(figs: dict[str, PaperFigure], folder: Path) -> list[FigureFile]:
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
