"""What a participant is shown and what their actions come back as: the screens `ParticipantSession.screen()`
returns (Consent … End, Closed), a submitted answer's `Recorded` and its refusals. Plain records, so the page
only matches on them; the session that computes them is `instrument.session`. Gold answers stay on the server:
a screen's `component_data()` holds none."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Union

from ..benchmarks.items import ItemResult
from ..benchmarks.rose.item import RoseItem
from ..benchmarks.rose.records import Cell
from .config import EndReason, StudyError
from .grid_input import Restore, component_data


@dataclass(frozen=True)
class Consent:
    """`text`: the study's consent Markdown, fields filled in (`instrument.texts`)."""

    time_limit_minutes: int
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Deadline:
    """When the study's time limit runs out (server clock, epoch seconds), and the server's time when the screen
    was computed: the page counts down `ends_at - now` from there (it only displays; the server decides)."""

    ends_at: float
    now: float

    @property
    def seconds_left(self) -> float:
        return max(0.0, self.ends_at - self.now)


@dataclass(frozen=True)
class Instructions:
    """`text`: the study's instructions; `templates`: what the worked examples cover (one per output kind)."""

    has_practice: bool
    text: str = field(default="", compare=False)
    templates: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Questionnaire:
    """The end questionnaire, after the last item and before the end page (`ParticipantSession.answer_questionnaire`)."""

    questions: tuple[str, ...]


@dataclass(frozen=True)
class ItemScreen:
    view_id: str
    kind: str
    item: RoseItem = field(repr=False)
    progress: str
    progress_fraction: float
    ack_seq: int
    restore: Restore
    drawing: bytes | None = field(default=None, repr=False)   # a picture check's key (`items.picture_key`): server only

    def component_data(self, image: bytes | str, stored_seq: int = -1, refusals: int = 0,
                       pending: bool = False) -> dict[str, Any]:
        """What the grid component gets; `image`: the PNG bytes or a URL serving exactly them. `stored_seq`: the
        highest seq of this view stored since the screen was computed (`record_events`' return): the browser then
        drops those events and sends only newer ones (ack_seq), not the item's whole log with every change.
        `refusals`, `pending`: what became of this view's answer (grid_input.component_data)."""
        return component_data(self.view_id, image, self.item.layout, self.item.mode, self.item.instruction,
                              self.progress, max(self.ack_seq, stored_seq + 1), self.restore, refusals, pending)


RoundOutcome = Literal["next", "passed", "retry", "screened_out"]


@dataclass(frozen=True)
class FeedbackLine:
    """One correct cell and whether the participant clicked it, or one cell they clicked that was not correct."""

    cell: Cell
    correct: bool
    clicked: bool


@dataclass(frozen=True)
class PracticeFeedback:
    view_id: str
    item: RoseItem = field(repr=False)
    instruction: str
    passed: bool
    clicked: list[Cell]
    count: int | None
    gold_cells: list[Cell]
    gold_count: int | None        # None when the item asks no number
    lines: list[FeedbackLine]
    outcome: RoundOutcome
    position: int
    of: int


@dataclass(frozen=True)
class OtherTab:
    """The participant is driven by another open tab; this one may take over (`take_over`)."""


class OtherTabError(StudyError):
    """This tab no longer drives the participant: the study was continued in another tab or window."""


@dataclass(frozen=True)
class Wait:
    """No item can be given now, but one may be soon: every remaining item is held by someone who has not answered
    yet ("held"), or this address already holds as many items as one client may ("address")."""

    reason: Literal["held", "address"]


@dataclass(frozen=True)
class End:
    """The end screen: why, and what the participant takes back to the platform. A completed participant gets the
    completion code / URL, a screened-out one the screen-out code / URL (`code`, `url` say which applies);
    `attention`: screened out by a failed attention check rather than the practice. `text`: the study's end page
    (its screen-out page when screened out); `debrief`: "" when none."""

    reason: EndReason
    completion_code: str
    completion_url: str
    screen_out_code: str = ""
    screen_out_url: str = ""
    attention: bool = False
    text: str = field(default="", compare=False)
    debrief: str = field(default="", compare=False)

    @property
    def code(self) -> str:
        return {"completed": self.completion_code, "screened_out": self.screen_out_code}.get(self.reason, "")

    @property
    def url(self) -> str:
        return {"completed": self.completion_url, "screened_out": self.screen_out_url}.get(self.reason, "")


Stopped = Literal["closed", "excluded"]


@dataclass(frozen=True)
class Closed:
    """This participant may store nothing more: their study was closed or deleted ("closed"), or they were
    excluded ("excluded"), while their tab was open. The page says so calmly; answers are refused on the server."""

    why: Stopped


Screen = Union[Consent, Instructions, PracticeFeedback, ItemScreen, OtherTab, Wait, Questionnaire, End, Closed]
Refusal = Literal["answered", "unknown", "released", "late", "other_tab", "closed", "excluded"]


@dataclass(frozen=True)
class Recorded:
    result: ItemResult | None
    duplicate: bool               # nothing stored (already answered, not this participant's, or refused)
    refused: Refusal | None = None  # why nothing was stored

