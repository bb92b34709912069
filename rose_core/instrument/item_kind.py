"""The contract between the one participant session and a kind of item (`ItemKind`), and the one fault a kind
raises to it (`ItemUnavailable`). Apart from both sides: the session (`instrument.session`) and each kind
(`rose_kind.RoseKind`, `episode_kind.EpisodeKind`) import it without a circle."""
from __future__ import annotations

from typing import Any, Iterator, Protocol

from ..storage import participants
from .config import StudyConfig, StudyError
from .screens import RoundOutcome


class ItemUnavailable(StudyError):
    """An item's image is missing or damaged: a main or attention item is released and replaced; a practice item
    cannot be replaced, and the participant is asked to come back later."""

    def __init__(self, assignment: participants.Assignment, why: str):
        super().__init__(why)
        self.assignment, self.why = assignment, why


class ItemKind(Protocol):
    """What the one participant session asks of a kind of item (jsPsych's plugin for a trial type): the session
    runs the timeline (consent, instructions, practice rounds with feedback, main items, the end) and stores
    through the one writer (`instrument.results`); the kind says which items come, draws the screen of one, and
    reads the input it takes. `rose_kind.RoseKind` (one-shot items), `episode_kind.EpisodeKind` (episodes).
    `s`: the `ParticipantSession` asking (`Any` here: the session imports this contract, not the other way)."""

    benchmark: str

    def text(self, cfg: StudyConfig, key: str) -> str: ...
    def templates(self, cfg: StudyConfig) -> tuple[str, ...]: ...
    def scene_of(self, instance_id: str) -> str: ...
    def practice_label(self, position: int, of: int) -> str: ...
    def progress(self, cfg: StudyConfig, answered_main: int, answered_attention: int) -> str: ...
    def rank(self, s: Any, counts: dict[str, int], mains: list[participants.Assignment],
             counterbalance: int, answered: int) -> Iterator[str]: ...
    def item_screen(self, s: Any, c: Any, a: participants.Assignment, progress: str,
                    fraction: float) -> Any: ...
    def feedback(self, s: Any, c: Any, p: participants.Participant, a: participants.Assignment,
                 outcome: RoundOutcome, of: int) -> Any: ...
