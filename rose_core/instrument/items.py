"""What the instrument needs of a benchmark's item: a one-shot answer (ROSE) or a multi-step episode (iVISPAR).

A participant session, a run import and an agent all end in the same `ItemResult` (what one `responses` row
holds), whichever kind the item is:

- `OneShotItem`: the solver sees the item once and gives one answer (ROSE: clicks and/or a count, turned into
  the protocol string a model writes and scored by the benchmark's scorer).
- `EpisodeItem`: the solver makes a sequence of moves; each move changes a state, is timed and classified,
  and the episode ends when it is solved, failed, or reaches its step cap (iVISPAR's sliding geom puzzle).
  The moves are stored as the episode's events (one row per move, idempotent by sequence number, like a
  one-shot item's clicks) and the final `ItemResult` as its response.

Only `RoseItem` is implemented here; the episode side is the interface the next benchmark implements.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Sequence, runtime_checkable

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.instances import protocol_string
from ..benchmarks.rose.records import TEMPLATE_OUTPUT, Cell, Layout, Output, Region
from ..benchmarks.rose.scenes import rng_for
from ..benchmarks.rose.scoring import ScoreKey, score

ItemShape = Literal["one_shot", "episode"]
EpisodeEnd = Literal["solved", "failed", "step_cap"]


@dataclass(frozen=True)
class ItemResult:
    """The scored outcome of one item for one solver: exactly the benchmark columns of a `responses` row."""

    response: str                 # what the solver produced (a protocol string, a move transcript, …)
    protocol: str | None          # its canonical form
    parsed: dict[str, Any]        # the parse, as JSON
    valid: bool
    passed: bool
    failure: str | None
    errors: tuple[str, ...]


@dataclass(frozen=True)
class OneShotAnswer:
    """A participant's one answer to a one-shot item: the cells they selected (in order) and the number field."""

    selection: tuple[Cell, ...] = ()
    count: int | None = None


@runtime_checkable
class OneShotItem(Protocol):
    item_id: str
    shape: ItemShape              # "one_shot"

    def result(self, answer: OneShotAnswer) -> ItemResult: ...


@dataclass(frozen=True)
class Move:
    """One move of an episode as the solver sent it; the server times it."""

    seq: int
    text: str
    client_ms: float | None = None


@dataclass(frozen=True)
class StepOutcome:
    """What one move did: the new state (JSON-able), its class (e.g. effective, ineffective, occupied,
    out_of_bounds, illegal), and whether the episode ended with it."""

    state: dict[str, Any]
    outcome: str
    valid: bool
    end: EpisodeEnd | None = None


@runtime_checkable
class EpisodeItem(Protocol):
    item_id: str
    shape: ItemShape              # "episode"
    step_cap: int                 # every move counts, invalid ones included

    def start(self) -> dict[str, Any]: ...
    def step(self, state: dict[str, Any], move: Move, steps_taken: int) -> StepOutcome: ...
    def result(self, moves: Sequence[Move], outcomes: Sequence[StepOutcome]) -> ItemResult: ...


@dataclass(frozen=True)
class RoseItem:
    """A ROSE instance (or an attention check drawn on a ROSE scene) as a one-shot item.

    `key` is the gold answer: it stays on the server; `public()` is what a browser may see."""

    item_id: str
    scene_id: str
    template: str                 # "ATT" for attention checks
    subset: str
    split: str
    image: str                    # dataset-relative PNG path
    layout: Layout
    mode: Output
    instruction: str
    region: Region | None         # the context region (None: the whole grid)
    region_mode: Literal["inside", "outside"]
    key: ScoreKey = field(repr=False)
    shape: ItemShape = "one_shot"

    def protocol(self, answer: OneShotAnswer) -> str:
        """The same protocol string a model would write for this answer."""
        cells = list(answer.selection)
        if self.mode == "count":
            return "" if answer.count is None else protocol_string("count", answer.count, None)
        if self.mode == "click_submit" and answer.count is None:
            return protocol_string("click", None, cells).removesuffix("DONE").strip()
        return protocol_string(self.mode, answer.count, cells)

    def result(self, answer: OneShotAnswer) -> ItemResult:
        text = self.protocol(answer)
        s = score(self.key, text)
        return ItemResult(text, s.parsed.canonical, s.parsed.to_json(), s.valid, s.passed, s.failure, tuple(s.errors))

    def gold_cells(self) -> list[Cell]:
        """The cells a right answer clicks (for a count: the cells it counts). Server-side feedback only."""
        return sorted(self.key.gold_cells)


def rose_item(ds: Dataset, instance_id: str) -> RoseItem:
    inst = ds.instances[instance_id]
    scene = ds.scenes[inst.scene_id]
    region = None if inst.context.kind == "grid" else inst.context
    return RoseItem(inst.instance_id, inst.scene_id, inst.template, inst.subset, inst.split, inst.image,
                    scene.layout, TEMPLATE_OUTPUT[inst.template], inst.instruction, region, inst.context_mode,
                    ds.key(instance_id))


def attention_item_id(scene_id: str, seed: str) -> str:
    return f"ATT:{scene_id}:{seed}"


def attention_item(ds: Dataset, item_id: str) -> RoseItem:
    """An instructed-response item on a real image: click one named cell, whatever it shows.

    Worded like any other instruction: it is not announced as a check."""
    _, scene_id, seed = item_id.split(":", 2)
    scene = ds.scenes[scene_id]
    rng = rng_for(0, "attention", seed)
    r, c = rng.randint(1, scene.rows), rng.randint(1, scene.cols)
    key = ScoreKey(instance_id=item_id, template="ATT", output="click", rows=scene.rows, cols=scene.cols,
                   gold_count=1, gold_cells=frozenset({(r, c)}), global_count=1, outside_targets=frozenset(),
                   terminal="DONE")
    text = f"Click only the cell in row R{r}, column C{c}, whatever it shows, then press DONE."
    return RoseItem(item_id, scene_id, "ATT", scene.subset, scene.split, scene.images["base"], scene.layout,
                    "click", text, None, "inside", key)


def item_for(ds: Dataset, kind: str, item_id: str) -> RoseItem:
    return attention_item(ds, item_id) if kind == "attention" else rose_item(ds, item_id)
