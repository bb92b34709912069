"""What the instrument needs of a benchmark's item: a one-shot answer (ROSE) or a multi-step episode (iVISPAR).

A participant session, a run import and an agent all end in the same `ItemResult` (the benchmark columns of a
`responses` or `episode_results` row), whichever kind the item is:

- `OneShotItem`: the solver sees the item once and gives one answer (ROSE: clicks and/or a count, turned into
  the protocol string a model writes and scored by the benchmark's scorer).
- `EpisodeItem`: the solver makes a sequence of moves; each move changes a state, is timed and classified,
  and the episode ends when it is solved, failed, or reaches its step cap (iVISPAR's sliding geom puzzle).
  The moves are stored as the episode's events (one row per move, idempotent by sequence number, like a
  one-shot item's clicks) and the final `ItemResult` as its result.

A participant session drives either kind the same way (`instrument.item_kind.ItemKind`: one timeline, one
practice and feedback path) and stores both through one writer (`instrument.results`).

ROSE implements `OneShotItem` (`benchmarks.rose.item.RoseItem`), SGP `EpisodeItem` (`benchmarks.sgp.item`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, Sequence, runtime_checkable

from .rose.records import Cell

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
    step_cap: int | None          # every move counts, invalid ones included; None: no cap (a study's choice)

    def start(self) -> dict[str, Any]: ...
    def step(self, state: dict[str, Any], move: Move, steps_taken: int) -> StepOutcome: ...
    def result(self, moves: Sequence[Move], outcomes: Sequence[StepOutcome],
               given_up: bool = False) -> ItemResult: ...  # given_up: ended by the solver (no step cap)
