"""The one results writer of the participant session: whatever the item's kind, what a participant did is stored
as the item's events (a one-shot item's clicks, an episode's moves) and its outcome as one result (an
`ItemResult` with who, when and how long), through these functions only.

The rows go to two tables per kind (`events` + `responses` for one-shot items, `episode_steps` +
`episode_results` for episodes; docs/architecture.md says why they are not merged): this module is the single
writer over both, so the session's practice, feedback and round closing read one answer ("did this round
pass?") whichever kind the study has."""
from __future__ import annotations

from typing import Any, Sequence, Union

from ..storage import episodes
from ..storage.events import insert_events
from ..storage.responses import ResponseRow, practice_round_passes, response_of, write_responses

ResultRow = Union[ResponseRow, episodes.EpisodeResultRow]


def write_events(c, participant_id: str, item_id: str, view_id: str, events: Sequence[Any], t: float) -> int:
    """A one-shot item's grid events (repeats ignored by seq). Returns rows added."""
    return insert_events(c, participant_id, item_id, view_id, events, t)


def write_move(c, row: episodes.StepRow) -> bool:
    """One move of an episode (an event of the item): False when its seq was stored before (the first stays)."""
    return episodes.insert_step(c, row)


def write_result(c, row: ResultRow) -> None:
    """The item's outcome, inside the caller's transaction (a second result for the same item and attempt raises
    IntegrityError)."""
    if isinstance(row, episodes.EpisodeResultRow):
        episodes.write_episode_results(c, [row])
    elif isinstance(row, ResponseRow):
        write_responses(c, [row])
    else:
        raise TypeError(f"not a result row: {type(row).__name__}")


def result_of(c, run_id: str, participant_id: str, item_id: str, kind: str, attempt: int, episode: bool) -> Any:
    """The stored result of one assignment (a row readable by column name), None when there is none."""
    if episode:
        return episodes.episode_result_of(c, run_id, participant_id, item_id, kind, attempt)
    return response_of(c, run_id, participant_id, item_id, kind, attempt)


def round_passes(c, run_id: str, participant_id: str, attempt: int) -> list[int]:
    """The verdicts (1 passed / solved, 0 not) of a participant's practice round `attempt`, of either kind."""
    return practice_round_passes(c, participant_id, attempt) + episodes.practice_round_solved(
        c, run_id, participant_id, attempt)
