"""The participant page's plugin for episodes (iVISPAR's sliding geom puzzle): draws an episode's board and reads
its moves, and draws a practice episode's feedback. app_pages/participant.py calls it for an `EpisodeScreen` /
`EpisodeFeedback`; consent, instructions, the time limit, other tabs and the end are that page's, for every kind.

Every move is stored by `ParticipantSession.record_moves` in the component's callback, before the board is drawn
again. Whatever the browser sends, the participant sees a calm line on the board, never a traceback: a message
that cannot be read is refused whole (nothing stored) and the board stays as the server holds it.
"""
from __future__ import annotations

import sys
from functools import partial
from typing import Any

import streamlit as st

from rose_core.instrument.episode_kind import EpisodeFeedback, EpisodeScreen
from rose_core.instrument.episode_session import board_component_data, png_size
from rose_core.instrument.config import StudyError
from rose_core.instrument.screens import OtherTabError
from rose_core.instrument.session import ParticipantSession
from rose_core.instrument.storage_errors import StorageError
from ui.click_grid import image_url
from ui.sgp_board import sgp_board
from ui.sgp_resources import board_png

ss = st.session_state
UNREADABLE = "the page sent something it should not have"
STORAGE = ("Your move could not be saved just now (a problem on our side). The board shows what was saved; "
           "please make the move again in a moment.")
ROUND_NOTES = {"passed": "Practice complete. From now on there is no feedback; solve each puzzle as well as you can.",
               "retry": "Not enough practice puzzles were solved yet: let's practise once more, on new puzzles."}
END_WORDS = {"practice": "practice puzzles", "exhausted": "Every puzzle of this study already has enough players."}
OUTCOME_WORDS = {"effective": "brought the board closer to the goal", "ineffective": "moved a piece away from the goal",
                 "occupied": "were blocked: another piece was in the way",
                 "out_of_bounds": "would have left the board", "illegal": "could not be read as a move"}


def _log(what: str, e: BaseException) -> None:
    try:
        print(f"ROSE participant page (SGP): {what}: {e}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def take_moves(session: ParticipantSession, screen: EpisodeScreen, payload: Any) -> str | None:
    """Store the moves of a board message; None when stored (or nothing to store), else the calm line the board
    shows. "other_tab" when another tab drives the participant (the page then shows so)."""
    try:
        report = session.record_moves(screen, payload)
        if report.refused_note:   # typed moves after the goal or the cap (sgp_several_moves): said, not made
            ss["sgpp_notice"] = report.refused_note
    except OtherTabError:
        return "other_tab"
    except StorageError as e:
        _log("storing moves", e)
        return STORAGE
    except StudyError as e:
        _log("a board message refused", e)
        return f"Your move could not be read ({e}). Please try again."
    except Exception as e:  # a message no board of ours sends: refused, said calmly
        _log("a board message the page could not read", e)
        return f"Your move could not be read ({UNREADABLE}). Please try again."
    return None


def _images(screen: EpisodeScreen) -> tuple[str | None, str | None, tuple[int, int] | None]:
    item = screen.item
    if item.modality == "text":
        return None, None, None
    png = board_png(screen.state, item.modality)
    return (image_url(png, "rose_sgp_board.current"),
            image_url(board_png(item.goal_state, item.modality, "goal"), "rose_sgp_board.goal"), png_size(png))


def show_episode(session: ParticipantSession, first: EpisodeScreen) -> None:
    """One puzzle. Each move is stored in the component's callback, before the fragment reruns; the rerun draws
    the board after it. The move that ends the puzzle stores its result there too, and the next screen is
    computed: another puzzle is shown by the same fragment rerun, feedback or the end by a full rerun."""
    cfg = session.cfg
    ss["sgpp_item"] = first

    def on_board(screen: EpisodeScreen) -> None:
        payload = (ss.get(f"sgpp_board_{screen.view_id}") or {}).get("board")
        said = take_moves(session, screen, payload)
        if said == "other_tab":
            ss["sgpp_leave"] = True
            return
        if said is not None:
            ss["sgpp_error"] = said
        try:
            nxt = session.screen()
        except (StorageError, StudyError) as e:
            _log("the next screen", e)
            ss["sgpp_leave"] = True
            return
        if isinstance(nxt, EpisodeScreen):
            ss["sgpp_item"] = nxt
        else:
            if "sgpp_notice" in ss:   # the puzzle that ended was the last one on this screen: said above the next
                ss["part_notice"] = ss.pop("sgpp_notice")
            ss["sgpp_leave"] = True

    @st.fragment
    def episode() -> None:
        if ss.pop("sgpp_leave", False):
            st.rerun(scope="app")
        screen: EpisodeScreen = ss["sgpp_item"]
        st.progress(screen.progress_fraction)
        if notice := ss.pop("sgpp_notice", None):
            st.info(notice)
        image, goal, size = _images(screen)
        data = board_component_data(screen, image, goal, size, cfg.sgp_input, cfg.sgp_goal_view,
                                    ss.pop("sgpp_error", None), several=cfg.sgp_several_moves,
                                    piece_coordinates=cfg.sgp_piece_coordinates)
        sgp_board(key=f"sgpp_board_{screen.view_id}", data=data, on_board=partial(on_board, screen))

    episode()


def show_feedback(fb: EpisodeFeedback) -> None:
    """A practice puzzle's feedback: solved or not against the shortest solution, the end board beside the goal,
    what the moves did (where the round stands and 'Continue': the page's, for every kind)."""
    st.title("Practice")
    if fb.solved:
        st.success(f"Solved in {fb.moves} moves. The shortest solution takes {fb.shortest}.")
    elif fb.given_up:
        st.warning(f"You gave up after {fb.moves} moves. The shortest solution takes {fb.shortest}.")
    else:
        st.warning(f"Not solved within {fb.moves} moves. The shortest solution takes {fb.shortest}.")
    item = fb.item
    a, b = st.columns(2)
    if item.modality == "text":
        a.code(item.text(fb.final_state), language=None)
        b.code(item.text(item.goal_state), language=None)
    else:
        a.image(board_png(fb.final_state, item.modality), caption="Your board at the end", output_format="PNG")
        b.image(board_png(item.goal_state, item.modality, "goal"), caption="The goal", output_format="PNG")
    lines = [f"- {n} {'move' if n == 1 else 'moves'} {OUTCOME_WORDS.get(k, k)}" for k, n in fb.outcomes.items() if n]
    if lines:
        st.markdown("\n".join(lines))
