"""The paper's figures, drawn from the bundle's tables by Matplotlib (the Agg canvas, no browser) at a venue's
exact width, as SVG, PDF and PNG.

Why Matplotlib and not Plotly's static export: a Matplotlib figure IS its page (inches and points, the size it is
given, text at the point size it is given: nothing shrinks it into a margin), it needs no browser (Plotly's export
runs plotly.js in a headless Chromium: a 700 MB system package for a few PDFs), and it writes the same bytes for
the same data (dates left out of the metadata, a fixed SVG hash salt, the DejaVu Sans that ships with Matplotlib,
so no system font can change a glyph). The dashboards stay Plotly (interactive); the paper draws the same
visual language: a solver is a row, colour says what is measured, the marker's shape who measured it."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from ...benchmarks.rose.records import MAIN_TEMPLATES, TEMPLATE_LABEL
from ...benchmarks.rose.scoring import FAILURES
from ..charts import CONNECTOR, KIND_ORDER, print_colours
from .paper import BundleError, PaperReport

if TYPE_CHECKING:   # Matplotlib (~0.5 s) is imported where a figure is drawn, not by every import of the bundle
    from matplotlib.figure import Figure

FORMATS = ("svg", "pdf", "png")
PNG_DPI = 300            # the raster copy at print resolution (journals ask for >= 300 dpi)
FigureWidth = Literal["single", "double"]
FIGURE_WIDTHS: dict[str, float] = {"single": 3.25, "double": 6.75}   # inches: a column, the text width (ICML)
FONT_PT = 8              # every text of every figure, at the printed size (a venue's minimum is 7 pt)
ROW_IN = 0.17            # inches per figure row (a solver, or a solver's template)
FRAME_IN = 0.62          # inches below and above the rows: tick labels, the axis title, the one-row legend
SHAPE_OF = {"human": "circle, humans", "model": "square, models", "agent": "diamond, agents"}
MARKER = {"human": "o", "model": "s", "agent": "D"}
PUBLISHED = " (published)"
# Fixed for every file: byte-identical output for the same data (no dates, a fixed SVG id salt, text as glyph
# outlines in the SVG and TrueType (Type 42) fonts in the PDF, which journals accept, from Matplotlib's own
# DejaVu Sans).
RC = {"font.family": "DejaVu Sans", "font.size": FONT_PT, "mathtext.fontset": "dejavusans",
      "svg.hashsalt": "rose-paper-bundle", "svg.fonttype": "path", "pdf.fonttype": 42, "pdf.compression": 6,
      "axes.unicode_minus": True, "path.simplify": False}
METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {}}
_LOCK = threading.Lock()  # rcParams are process-wide: one figure built or saved at a time (Streamlit's threads)


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
    width_in: float
    height_in: float
    png_pixels: tuple[int, int]


@dataclass(frozen=True)
class PaperFigure:
    figure: Figure  # a Matplotlib figure of its own (no pyplot): its size is the printed size
    caption: str
    wide: bool      # spans both columns of a two-column paper (`figure*`)

    @property
    def size_in(self) -> tuple[float, float]:
        w, h = self.figure.get_size_inches()
        return float(w), float(h)


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
    return ("Error bars: the 95% intervals printed in the table (" + ", ".join(with_iv) + "); rows without one "
            "(published numbers) have no bar.")


def _rows(df: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """The rows top to bottom: solvers in `order`, then any other in the table's order."""
    rank = {s: k for k, s in enumerate(order)}
    return df.assign(_o=df["solver"].astype(str).map(rank).fillna(len(rank))).sort_values(
        "_o", kind="stable").drop(columns="_o").reset_index(drop=True)


def _numbers(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)


def _canvas(width_in: float, n_rows: int) -> tuple[Figure, object]:
    """A figure of exactly `width_in` inches, tall enough for `n_rows` rows, and its one axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, FRAME_IN + ROW_IN * max(n_rows, 2)), layout="constrained")
    FigureCanvasAgg(fig)
    fig.get_layout_engine().set(w_pad=2 / 72, h_pad=2 / 72, wspace=0, hspace=0)
    ax = fig.add_subplot()
    ax.spines[["top", "right"]].set_visible(False)
    ax.spines[["left", "bottom"]].set_linewidth(0.6)
    ax.tick_params(labelsize=FONT_PT, width=0.6, length=2.5, pad=2)
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x", color="#dddddd", linewidth=0.4)
    ax.set_axisbelow(True)
    return fig, ax


def _finish(fig: Figure, ax, labels: list[str], xtitle: str, legend: list[tuple[str, str]]) -> None:
    """Rows top to bottom, the x axis 0–100 % with its title, and the legend in ONE row under it (`ncols` = the
    number of entries: Matplotlib never wraps it; `legend_fits` checks that it lies within the figure)."""
    from matplotlib.lines import Line2D

    n = len(labels)
    ax.set_yticks(range(n), labels)
    ax.set_ylim(max(n, 1) - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel(xtitle, fontsize=FONT_PT, labelpad=2)
    handles = [Line2D([], [], linestyle="none", marker="s", markersize=5, markerfacecolor=c, markeredgecolor=c)
               for _, c in legend]
    if handles:
        fig.legend(handles, [label for label, _ in legend], loc="outside lower center", ncols=len(handles),
                   frameon=False, fontsize=FONT_PT, handlelength=1.0, handleheight=0.7, handletextpad=0.35,
                   columnspacing=0.9, borderaxespad=0.1, borderpad=0.1)


def bundled_font() -> Path:
    """The font file every figure's text is set in: Matplotlib's own DejaVu Sans, never a system copy (another
    version would change the glyphs and so the bytes); refused when the font lookup resolves elsewhere."""
    import matplotlib
    from matplotlib import font_manager

    path = Path(font_manager.findfont(font_manager.FontProperties(family=RC["font.family"]),
                                      fallback_to_default=False)).resolve()
    own = (Path(matplotlib.get_data_path()) / "fonts" / "ttf").resolve()
    if path.parent != own:
        raise BundleError(f"the figures' font resolves to {path}, not Matplotlib's own DejaVu Sans in {own}: a "
                          "system font would change the figures' bytes")
    return path


def legend_fits(fig: Figure) -> bool:
    """Whether the figure's legend row lies within the figure's width (measured after layout)."""
    if not fig.legends:
        return True
    fig.canvas.draw()
    box = fig.legends[0].get_window_extent()
    return box.x0 >= -0.5 and box.x1 <= fig.bbox.width + 0.5


def dot_figure(frame: pd.DataFrame, metrics: list[tuple[str, str]], width_in: float, order: list[str],
               connect: bool = True, xtitle: str = "PASS (%)") -> Figure:
    """One row per solver, one coloured marker per metric (key, label), each metric a little lower than the one
    before so that equal values stay visible, joined by a grey line (a dumbbell for two metrics; dotted for
    published rows); error bars from the row's own interval columns (`<key> lo`, `<key> hi`: the table's). Rows
    without any value are left out."""
    keys = [k for k, _ in metrics]
    df = _rows(frame[frame[keys].notna().any(axis=1)], order)
    fig, ax = _canvas(width_in, len(df))
    kinds = df["kind"].astype(str).tolist()
    step = 0.5 / max(len(metrics), 2)
    offset = {key: (k - (len(metrics) - 1) / 2) * step for k, key in enumerate(keys)}
    values = {k: _numbers(df, k) for k in keys}
    shade = print_colours(keys)
    if connect:
        for i, kind in enumerate(kinds):
            pts = [(values[k][i], i + offset[k]) for k in keys if not np.isnan(values[k][i])]
            if len(pts) >= 2:
                ax.plot(*zip(*pts), color=CONNECTOR, linewidth=0.7, linestyle=":" if kind == "published" else "-",
                        zorder=1)
    for key, _ in metrics:
        y = np.arange(len(df)) + offset[key]
        lo, hi, v = _numbers(df, f"{key} lo"), _numbers(df, f"{key} hi"), values[key]
        has = ~np.isnan(lo) & ~np.isnan(hi) & ~np.isnan(v)
        if has.any():
            bars = ax.hlines(y[has], lo[has], hi[has], colors=shade[key], linewidth=0.8, zorder=2)
            bars.set_gid(f"interval {key}")
        for kind in sorted(set(kinds), key=lambda k: KIND_ORDER.get(k, 9)):
            for human_like in (True, False) if kind == "published" else (None,):
                rows = np.array([kd == kind and (human_like is None or
                                                 df["solver"].iloc[i].startswith("Human") == human_like)
                                 for i, kd in enumerate(kinds)]) & ~np.isnan(v)
                if not rows.any():
                    continue
                marker = ("o" if human_like else "s") if kind == "published" else MARKER.get(kind, "X")
                ax.plot(v[rows], y[rows], linestyle="none", marker=marker, markersize=3.6 if marker == "D" else 4,
                        markerfacecolor="white" if kind == "published" else shade[key], markeredgecolor=shade[key],
                        markeredgewidth=0.8, zorder=3, clip_on=False, gid=f"points {key}")
    _finish(fig, ax, df["solver"].astype(str).tolist(), xtitle,
            [(label, shade[k]) for k, label in metrics] if len(df) else [])
    if not len(df):
        ax.text(50, 0, "no solver in this selection", ha="center", va="center", fontsize=FONT_PT)
    return fig


def failure_frame(fk: pd.DataFrame, kinds_of: dict[str, str], order: list[str]) -> pd.DataFrame:
    """The failure-kinds table as figure rows: one per (solver, template), in `order` then the template's, a column
    per failure kind with its share and the table's interval of it (`<kind> lo`, `<kind> hi`)."""
    rank = {s: k for k, s in enumerate(order)}
    fk = fk.assign(row=fk["solver"].astype(str) + " · " + fk["label"].astype(str),
                   _o=fk["solver"].astype(str).map(rank).fillna(len(rank))).sort_values(
        ["_o", "solver", "template"], kind="stable")
    rows = list(dict.fromkeys(fk["row"]))
    out = pd.DataFrame({"solver": rows})
    out["kind"] = out["solver"].map(dict(zip(fk["row"], fk["solver"].astype(str).map(kinds_of).fillna("model"))))
    for col in ("share", "share lo", "share hi"):
        if col not in fk:
            continue
        wide = fk.pivot(index="row", columns="failure", values=col).reindex(rows)
        for k in wide.columns:
            out[k if col == "share" else f"{k} {col.split()[1]}"] = wide[k].to_numpy(dtype=float)
    return out


def failure_figure(fk: pd.DataFrame, width_in: float, order: list[str], kinds_of: dict[str, str],
                   names: dict[str, str]) -> Figure:
    """Per (solver, template) the share of responses of each primary failure kind (the scorer's precedence), a
    coloured marker per kind with the table's interval of it; a kind the row never shows has no marker."""
    if fk.empty:
        fig, ax = _canvas(width_in, 1)
        _finish(fig, ax, [], "% of responses", [])
        ax.text(50, 0, "no failing response in this selection", ha="center", va="center", fontsize=FONT_PT)
        return fig
    kinds = sorted(set(fk["failure"]), key=lambda k: FAILURES.index(k) if k in FAILURES else len(FAILURES))
    frame = failure_frame(fk, kinds_of, order)
    return dot_figure(frame, [(k, names.get(k, k.replace("_", " "))) for k in kinds], width_in,
                      frame["solver"].tolist(), connect=False, xtitle="% of responses")


def paper_figures(paper: PaperReport, width: FigureWidth = "single") -> dict[str, PaperFigure]:
    """name -> figure, for print at `width` (a column or the text width): the main table, the gap (the paper's
    dumbbell), the same on scenes with a correct global count, both bridges, failure kinds. Solvers sorted by
    Avg; error bars from the tables' own interval columns; captions instead of titles."""
    if width not in FIGURE_WIDTHS:
        raise BundleError(f"figure width {width!r}: expected one of {', '.join(FIGURE_WIDTHS)}")
    inches = FIGURE_WIDTHS[width]
    order = [short_name(s) for s in solver_order(paper)]
    sort = "Solvers sorted by Avg (main table), highest first."
    out: dict[str, PaperFigure] = {}
    import matplotlib

    with _LOCK, matplotlib.rc_context(RC):
        bundled_font()
        def dots(name: str, table: str, metrics: list[tuple[str, str]], caption: str, connect: bool = True) -> None:
            frame = _short(paper.table(table).frame)
            fig = dot_figure(frame, metrics, inches, order, connect=connect)
            if not legend_fits(fig):
                raise BundleError(f"figure {name}: its legend does not fit one row at {inches} in")
            keys = [k for k, _ in metrics]
            shown = frame[frame[keys].notna().any(axis=1)]
            text = " ".join(t for t in (caption, _bars(frame, keys), sort, shapes(shown, connect)) if t)
            out[name] = PaperFigure(fig, text, width == "double")

        templates = [(TEMPLATE_LABEL[t], TEMPLATE_LABEL[t]) for t in MAIN_TEMPLATES]
        counting = [("Counting Avg", "Counting"), ("Action Avg", "Action")]
        dots("main_pass", "main", templates, "PASS (%) per template and solver, as in the main table.", connect=False)
        dots("gap", "gap", counting, "Perception-to-action gap: Counting Avg (mean of G-Cnt, L-Cnt) and Action Avg "
             "(mean of L-Clk, V-Clk, Excl-CS) per solver, PASS (%).")
        dots("gap_conditioned", "gap_conditioned", counting, "Counting vs action on scenes whose global count (T1) "
             "was answered correctly, PASS (%).")
        dots("bridge_global", "bridge_global", [("G-Cnt", "G-Cnt"), ("G-Clk", "G-Clk"), ("V-Clk", "V-Clk")],
             "Global-click bridge: G-Cnt, G-Clk, V-Clk per solver, PASS (%).")
        dots("bridge_matched", "bridge_matched", [("mL-Cnt", "mL-Cnt"), ("L-Clk", "L-Clk"), ("L-Clk†", "L-Clk†")],
             "Matched local count-to-click: mL-Cnt, L-Clk, and L-Clk† (L-Clk given a correct mL-Cnt) on the same "
             "pairs, PASS (%).")
        fk = _short(paper.table("failure_kinds").frame)
        main = _short(paper.table("main").frame)
        kinds_of = dict(zip(main["solver"].astype(str), main["kind"].astype(str)))
        present = [k for k in FAILURES if k in set(fk["failure"])] if len(fk) else []
        # up to eight kinds: when their legend does not fit one row at a column's width, the text's width
        fig = failure_figure(fk, inches, order, kinds_of, FAILURE_NAMES)
        if not legend_fits(fig):
            fig = failure_figure(fk, FIGURE_WIDTHS["double"], order, kinds_of, FAILURE_NAMES)
            if not legend_fits(fig):
                raise BundleError(f"figure failure_kinds: its legend does not fit one row at "
                                  f"{FIGURE_WIDTHS['double']} in")
    shortened = [f"{FAILURE_NAMES[k]}, {k.replace('_', ' ')}" for k in present
                 if FAILURE_NAMES[k] != k.replace("_", " ")]
    bars = ("Error bars: the 95% intervals of the shares printed in the table." if "share lo" in fk and
            fk["share lo"].notna().any() else "No error bars: the table carries no interval for these shares.")
    caption = ("Failure kinds: share (%) of a solver's responses to a template by primary failure kind (the "
               "scorer's precedence)" + (": " + "; ".join(shortened) if shortened else "") + "; a kind the solver "
               "never showed on the template has no marker. " + bars + " " + sort + " " +
               shapes(fk.assign(kind=fk["solver"].astype(str).map(kinds_of)), connect=False))
    out["failure_kinds"] = PaperFigure(fig, caption, float(fig.get_size_inches()[0]) > FIGURE_WIDTHS["single"])
    return out


# Legend labels short enough for one row (the caption spells out the shortened ones).
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


def render_figures(figs: dict[str, PaperFigure], folder: Path) -> list[FigureFile]:
    """Write every figure as SVG, PDF and PNG into `folder` at its own size (never cropped or scaled: no
    `bbox_inches`), the same bytes for the same figure."""
    import matplotlib

    folder.mkdir(parents=True, exist_ok=True)
    done = []
    with _LOCK, matplotlib.rc_context(RC):
        for name, f in figs.items():
            for fmt in FORMATS:
                f.figure.savefig(folder / f"{name}.{fmt}", format=fmt, metadata=METADATA[fmt],
                                 dpi=PNG_DPI if fmt == "png" else 72, facecolor="white")
            w, h = f.size_in
            done.append(FigureFile(name, round(w, 4), round(h, 4), (round(w * PNG_DPI), round(h * PNG_DPI))))
    return done
