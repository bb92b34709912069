"""The paper's figures, drawn from the bundle's tables in the visual language of `rose_core.analysis.charts` (the
dashboards draw the same figures) and rendered on the server by Plotly's static export (kaleido) in the system
Chromium: SVG, PDF and PNG."""
from __future__ import annotations

import asyncio
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go

from ...benchmarks.rose.records import MAIN_TEMPLATES, TEMPLATE_LABEL
from ..charts import WIDTH, dot_figure, failure_figure
from .paper import BundleError, PaperReport

FORMATS = ("svg", "pdf", "png")
PNG_SCALE = 2
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
