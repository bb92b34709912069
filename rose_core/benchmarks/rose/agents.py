"""Reference agents: bounds and diagnostics that answer in the protocol, like any solver.

oracle           always right (upper bound)
random           uniform clicks over the grid, as many as the template's expected number of targets;
                 random counts around that expectation (lower bound)
region-ignoring  acts on every target of the whole grid, whatever the context
count-anchored   right clicks, but answers the *global* count wherever a count is asked
never-abstains   right, except that an empty context still gets a click
pixel            reads the rendered PNG only: crops the cells, takes the majority look, acts on the odd
                 ones; finds the T4 highlight from the pixels too. Says how hard perception is for a
                 trivial algorithm.

All but `pixel` read the scene's targets: they are ablations of the answer, not perception.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Callable, Literal

import numpy as np
from PIL import Image

from .dataset import Dataset
from .instances import protocol_string
from .records import TEMPLATE_OUTPUT, Cell, Instance, Scene
from .render import HIGHLIGHT_FILL

AgentName = Literal["oracle", "random", "region-ignoring", "count-anchored", "never-abstains", "pixel"]
AGENTS: tuple[AgentName, ...] = ("oracle", "random", "region-ignoring", "count-anchored", "never-abstains", "pixel")


def _answer(inst: Instance, cells: list[Cell], count: int | None) -> str:
    return protocol_string(TEMPLATE_OUTPUT[inst.template], count, cells)


def _in_context(inst: Instance, scene: Scene) -> list[Cell]:
    return sorted(t for t in scene.targets if inst.in_context(t))


def oracle(ds: Dataset, inst: Instance, rng: random.Random) -> str:
    return inst.protocol_answer


def region_ignoring(ds: Dataset, inst: Instance, rng: random.Random) -> str:
    scene = ds.scenes[inst.scene_id]
    return _answer(inst, sorted(scene.targets), len(scene.targets))


def count_anchored(ds: Dataset, inst: Instance, rng: random.Random) -> str:
    scene = ds.scenes[inst.scene_id]
    return _answer(inst, _in_context(inst, scene), len(scene.targets))


def never_abstains(ds: Dataset, inst: Instance, rng: random.Random) -> str:
    scene = ds.scenes[inst.scene_id]
    cells = _in_context(inst, scene)
    if not cells and TEMPLATE_OUTPUT[inst.template] != "count":
        region = [c for c in inst.context.cells() if inst.in_context(c)] if inst.context_mode == "inside" else \
            [(r, c) for r in range(1, scene.rows + 1) for c in range(1, scene.cols + 1) if inst.in_context((r, c))]
        cells = [rng.choice(region)]
    return _answer(inst, cells, len(cells))


class RandomAgent:
    """Uniform clicks over the grid, matched on the template's expected number of targets."""

    def __init__(self, ds: Dataset):
        sums: dict[str, list[int]] = {}
        for i in ds.instances.values():
            n = len(i.gold.cells) if i.gold.cells is not None else i.gold.count
            sums.setdefault(i.template, []).append(n or 0)
        self.expected = {t: float(np.mean(v)) for t, v in sums.items()}

    def __call__(self, ds: Dataset, inst: Instance, rng: random.Random) -> str:
        scene = ds.scenes[inst.scene_id]
        e = self.expected[inst.template]
        k = int(e) + (rng.random() < e - int(e))  # random rounding keeps the mean
        cells = rng.sample([(r, c) for r in range(1, scene.rows + 1) for c in range(1, scene.cols + 1)], k)
        return _answer(inst, cells, rng.randint(0, max(1, round(2 * e))))


# --------------------------------------------------------------------------- pixel baseline

def _cell_features(im: np.ndarray, box: list[int], inset: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """The cell's pixels (inside any region outline) with its own background colour replaced by white,
    and that background colour."""
    _, _, x0, y0, x1, y1 = box
    crop = im[y0 + inset:y1 - inset, x0 + inset:x1 - inset].astype(np.int16)
    bg = crop[0, 0].copy()
    diff = np.abs(crop - bg).sum(-1)
    fg = np.where((diff > 60)[..., None], crop, 255)
    return fg, bg


def pixel_read(png: Path, cells: list[list[int]]) -> tuple[set[Cell], set[Cell]]:
    """(odd cells, highlighted cells) read from the image alone.

    Cells are grouped by background colour (plain, highlighted); within a group the majority look is
    the per-pixel median, and a cell is odd when its distance to it lies above the largest gap in the
    sorted distances of the whole grid (the majority sits tight near zero).
    """
    im = np.asarray(Image.open(png).convert("RGB"))
    feats, bgs = zip(*(_cell_features(im, box) for box in cells))
    stack = np.stack(feats)
    groups: dict[tuple, list[int]] = {}
    for k, b in enumerate(bgs):
        groups.setdefault(tuple(int(v) // 16 for v in b), []).append(k)
    dist = np.zeros(len(cells))
    for idx in groups.values():
        proto = np.median(stack[idx], axis=0)
        dist[idx] = np.abs(stack[idx] - proto).mean(axis=(1, 2, 3))
    order = np.sort(dist)
    gaps = np.diff(order)
    cut = order[int(np.argmax(gaps))] if len(gaps) and gaps.max() > 0.2 else np.inf
    odd = {(box[0], box[1]) for box, d in zip(cells, dist) if d > cut}
    hl = np.array(HIGHLIGHT_FILL, np.int16)
    highlighted = {(box[0], box[1]) for box, b in zip(cells, bgs) if np.abs(b - hl).sum() < 30}
    return odd, highlighted


def pixel(ds: Dataset, inst: Instance, rng: random.Random) -> str:
    scene = ds.scenes[inst.scene_id]
    odd, highlighted = pixel_read(ds.root / inst.image, scene.layout.cell_boxes())
    if inst.template == "T4":
        chosen = sorted(c for c in odd if c in highlighted)
    else:
        chosen = sorted(c for c in odd if inst.in_context(c))
    return _answer(inst, chosen, len(chosen))


def make_agent(name: AgentName, ds: Dataset) -> Callable[[Dataset, Instance, random.Random], str]:
    table: dict[str, Callable] = {
        "oracle": oracle, "region-ignoring": region_ignoring, "count-anchored": count_anchored,
        "never-abstains": never_abstains, "pixel": pixel,
    }
    if name == "random":
        return RandomAgent(ds)
    if name not in table:
        raise ValueError(f"unknown agent {name!r}: expected one of {', '.join(AGENTS)}")
    return table[name]


def run_agent(name: AgentName, ds: Dataset, out: Path | str, split: str | None = None, seed: int = 0,
              progress: Callable[[int, int], None] | None = None) -> int:
    """Write the agent's answers as a plain JSONL run; returns the count.

    Every line carries the dataset hash (per line, not a header: lines stay self-describing when files are
    concatenated or resumed), so an import into a database of another build is refused."""
    agent = make_agent(name, ds)
    insts = ds.select(split=split)
    out = Path(out)
    tmp = out.with_name(f".{out.name}.part")
    with tmp.open("w") as f:
        for k, inst in enumerate(insts, 1):
            rng = random.Random(f"{seed}:{name}:{inst.instance_id}")
            f.write(json.dumps({"instance_id": inst.instance_id, "response": agent(ds, inst, rng),
                                "solver": f"agent:{name}", "dataset_hash": ds.dataset_hash}) + "\n")
            if progress:
                progress(k, len(insts))
    tmp.replace(out)
    return len(insts)
