"""An SGP study's participant session: the one `ParticipantSession` with episodes as its kind of item.

The parts live apart: the kind (`episode_kind`: screens, feedback, moves), the browser's messages
(`episode_messages`), the study's pool, practice, creation, ranking and coverage (`episode_study`), the one
results writer (`results`). Here: the session under its name, and what the board component gets."""
from __future__ import annotations

from typing import Any, Union

from ..benchmarks.sgp.actions import allowed_words
from ..benchmarks.sgp.dataset import SgpDataset
from ..storage.connection import Store
from .config import Study, StudyError
from .episode_kind import EpisodeFeedback, EpisodeKind, EpisodeScreen, MoveReport, sgp_text
from .episode_messages import BoardMessage, BoardMove, allowed_inputs, parse_board_message
from .episode_study import (
    create_sgp_study, pick_episode, plan_sgp_practice, rank_episodes, sgp_coverage, sgp_pool, sgp_progress,
)
from .ids import Clock, system_clock
from .study_kind import open_participant_session, study_benchmark
from .screens import Consent, End, Instructions
from .session import ParticipantSession
from .tabs import Client

EpisodeStudyScreen = Union[Consent, Instructions, EpisodeFeedback, EpisodeScreen, End]


class EpisodeSession(ParticipantSession):
    """`ParticipantSession` of an SGP study (the episode kind), for callers that hold the SGP dataset."""

    def __init__(self, store: Store, ds: SgpDataset, study: Study, participant_id: str,
                 clock: Clock = system_clock, client: Client | None = None):
        if study.config.benchmark != "sgp":
            raise StudyError(f"study {study.study_id} is not an SGP study")
        super().__init__(store, ds, study, participant_id, clock, client, kind=EpisodeKind(ds))


def open_episode_session(store: Store, ds: SgpDataset, study_id: str, participant_id: str,
                         clock: Clock = system_clock) -> ParticipantSession | None:
    return open_participant_session(store, ds, study_id, participant_id, clock)


# --------------------------------------------------------------------------- what the board component gets

def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header (the component keeps the image's aspect ratio for its overlay)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def board_component_data(screen: EpisodeScreen, image: str | None, goal_image: str | None,
                         size: tuple[int, int] | None, input_mode: str, goal_view: str,
                         error: str | None = None, *, several: bool = False,
                         piece_coordinates: bool = False) -> dict[str, Any]:
    """Everything the browser gets for one episode screen (the CONTRACT with ui/sgp_board.js): the board after
    the stored moves and the goal (images by URL, or text), the pieces with their names and cells, click
    polygons (`SgpItem.hit_cells`), the move count against the cap, and how many moves the server has stored
    (`ack_seq`)."""
    item = screen.item
    w, h = size or (0, 0)
    return {
        "view_id": screen.view_id, "progress": screen.progress, "instruction": item.instruction,
        "modality": item.modality, "input": input_mode, "goal_view": goal_view,
        "image": image, "goal_image": goal_image, "width": w, "height": h, "board_size": item.board_size,
        "cells": item.hit_cells(screen.state), "geoms": item.geoms(screen.state),
        # the board as text only where the model gets it too (the text modality), or where the study chose
        # piece buttons with cells (sgp_piece_coordinates)
        **({"text": item.text(screen.state), "goal_text": item.text(item.goal_state)}
           if item.modality == "text" or piece_coordinates else {"text": None, "goal_text": None}),
        "words": allowed_words(item.shape_names), "several": several, "piece_coordinates": piece_coordinates,
        "step_cap": item.step_cap, "ack_seq": screen.ack_seq, "last_command": screen.last_command,
        "restore": {"active_ms": screen.active_ms, "first_action_ms": screen.first_action_ms},
        "can_give_up": screen.can_give_up, "finished": False, "error": error,
    }


__all__ = ["EpisodeScreen", "EpisodeFeedback", "EpisodeSession", "EpisodeStudyScreen", "MoveReport",
           "BoardMessage", "BoardMove", "parse_board_message", "create_sgp_study", "sgp_pool", "plan_sgp_practice",
           "pick_episode", "rank_episodes", "sgp_progress", "open_episode_session", "allowed_inputs",
           "board_component_data", "png_size", "sgp_coverage", "sgp_text", "study_benchmark"]
