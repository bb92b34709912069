"""Participant flow of an SGP study (iVISPAR's sliding geom puzzle): consent → instructions → practice puzzles
with feedback → puzzles → end page. Run by app_pages/participant.py when the study link names an SGP study.

Layout only: `EpisodeSession.screen()` decides what to show from the database, so a reload, a closed tab or a
restarted server resumes at the same board; every move is stored by `record_moves` before the board is drawn.
"""
from functools import partial

import streamlit as st

from rose_core.instrument.episode_session import (
    EpisodeFeedback, EpisodeScreen, EpisodeSession, board_component_data, png_size,
)
from rose_core.instrument.config import sgp_move_help
from rose_core.instrument.study import Consent, End, Instructions, StudyError, get_study, join
from rose_core.instrument.manage import is_preview
from rose_core.instrument.page_data import identity_from_query
from ui.click_grid import image_url
from ui.redirect import end_page, reload_with_param
from ui.resources import store
from ui.sgp_board import sgp_board
from ui.sgp_resources import board_png, sgp_dataset

ss = st.session_state
db = store()
sgp = sgp_dataset()

# -- who is this? (the same identities as a ROSE study: Prolific's parameters or an anonymous id) --------------
if "part_pid" not in ss:
    ident = identity_from_query(st.query_params.to_dict())
    study = get_study(db, ident.study_id) if ident.study_id else None
    if study is None or not (study.active or is_preview(db, study.study_id, ident.external_id)):
        st.error("This study link is not valid or the study is closed. Please check the link you were given.")
        st.stop()
    if study.dataset_hash != sgp.dataset_hash:
        st.error("This study was set up on a different version of the puzzles; please contact the researcher.")
        st.stop()
    if ident.generated:  # a new anonymous id: into the address first (in place: Back never finds the id-less link)
        st.caption("Starting the study…")
        reload_with_param("pid", ident.external_id)
        st.stop()
    try:
        p = join(db, study, ident.external_id, ident.source, ident.prolific_study_id, ident.prolific_session_id)
    except StudyError as e:
        st.error(f"Cannot start: {e}")
        st.stop()
    ss["part_pid"], ss["part_study"] = p.participant_id, study.study_id

session = EpisodeSession(db, sgp, get_study(db, ss["part_study"]), ss["part_pid"])
cfg = session.cfg
screen = session.screen()


def images(screen: EpisodeScreen) -> tuple[str | None, str | None, tuple[int, int] | None]:
    item = screen.item
    if item.modality == "text":
        return None, None, None
    png = board_png(screen.state, item.modality)
    return (image_url(png, "rose_sgp_board.current"),
            image_url(board_png(item.goal_state, item.modality, "goal"), "rose_sgp_board.goal"), png_size(png))


def show_episode(first: EpisodeScreen) -> None:
    """One puzzle. Each move is stored in the component's callback, before the fragment reruns; the rerun draws
    the board after it. The move that ends the puzzle stores its result there too, and the next screen is
    computed: another puzzle is shown by the same fragment rerun, feedback or the end by a full rerun."""
    ss["sgpp_item"] = first

    def on_board(screen: EpisodeScreen) -> None:
        payload = (ss.get(f"sgpp_board_{screen.view_id}") or {}).get("board")
        try:
            report = session.record_moves(screen, payload)
            if report.refused_note:
                ss["sgpp_notice"] = report.refused_note
        except StudyError as e:
            ss["sgpp_error"] = str(e)
        nxt = session.screen()
        if isinstance(nxt, EpisodeScreen):
            ss["sgpp_item"] = nxt
        else:
            ss["sgpp_leave"] = True

    @st.fragment
    def episode() -> None:
        if ss.pop("sgpp_leave", False):
            st.rerun(scope="app")
        screen: EpisodeScreen = ss["sgpp_item"]
        st.progress(screen.progress_fraction)
        err = ss.pop("sgpp_error", None)
        if notice := ss.pop("sgpp_notice", None):
            st.info(notice)
        image, goal, size = images(screen)
        data = board_component_data(screen, image, goal, size, cfg.sgp_input, cfg.sgp_goal_view,
                                    None if err is None else f"Your move could not be read ({err}). Please try again.",
                                    several=cfg.sgp_several_moves, piece_coordinates=cfg.sgp_piece_coordinates)
        sgp_board(key=f"sgpp_board_{screen.view_id}", data=data, on_board=partial(on_board, screen))

    episode()


def show_feedback(fb: EpisodeFeedback) -> None:
    st.title("Practice")
    if fb.solved:
        st.success(f"Solved in {fb.moves} moves. The shortest solution takes {fb.shortest}.")
    elif fb.given_up:
        st.warning(f"You gave up after {fb.moves} moves. The shortest solution takes {fb.shortest}.")
    else:
        st.warning(f"Not solved within {fb.moves} moves. The shortest solution takes {fb.shortest}.")
    item = fb.item
    if item.modality == "text":
        a, b = st.columns(2)
        a.code(item.text(fb.final_state), language=None)
        b.code(item.text(item.goal_state), language=None)
    else:
        a, b = st.columns(2)
        a.image(board_png(fb.final_state, item.modality), caption="Your board at the end", output_format="PNG")
        b.image(board_png(item.goal_state, item.modality, "goal"), caption="The goal", output_format="PNG")
    said = {"effective": "brought the board closer to the goal", "ineffective": "moved a piece away from the goal",
            "occupied": "were blocked: another piece was in the way", "out_of_bounds": "would have left the board",
            "illegal": "could not be read as a move"}
    lines = [f"- {n} {'move' if n == 1 else 'moves'} {said.get(k, k)}" for k, n in fb.outcomes.items() if n]
    if lines:
        st.markdown("\n".join(lines))
    if fb.outcome == "passed":
        st.info("Practice complete. From now on there is no feedback; solve each puzzle as well as you can.")
    elif fb.outcome == "retry":
        st.info("Not enough practice puzzles were solved yet: let's practise once more, on new puzzles.")
    elif fb.outcome == "screened_out":
        st.info("That was the last practice round.")
    st.button("Continue", type="primary", key="sgpp_fb_btn", on_click=session.acknowledge_feedback,
              args=(fb.view_id,))


if notice := ss.pop("sgpp_notice", None):  # typed moves after the last puzzle's goal or cap
    st.info(notice)

match screen:
    case Consent(time_limit_minutes=limit):
        st.title("Welcome")
        st.markdown(
            "You are invited to take part in a short research study on how people solve sliding puzzles. Each "
            "screen shows a small board with coloured pieces and the goal board; you move the pieces until your "
            "board matches the goal. Your moves and their timing are recorded together with your participant id. "
            "No other personal data is collected. Participation is voluntary and you may stop at any time by "
            "closing this page.")
        if limit:
            st.info(f"The study has a time limit of {limit} minutes from the moment you agree.")
        agree = st.checkbox("I have read the above and agree to take part.", key="part_agree")
        st.button("Continue", type="primary", disabled=not agree, key="part_consent_btn", on_click=session.consent)

    case Instructions(has_practice=has_practice):
        st.title("How it works")
        cap = (f"You have at most **{cfg.step_cap} moves** per puzzle; every move counts, also one that is blocked."
               if cfg.step_cap else "There is no limit on the number of moves; if you are stuck you may give up a "
                                    "puzzle.")
        st.markdown(
            "Each puzzle shows **your board** and **the goal**. Columns are **A, B, C, …** from the left and rows "
            "**1, 2, 3, …** from the bottom, so A1 is the bottom-left cell. A piece moves one cell **up, down, left "
            "or right**, and only into a free cell. Make your board look exactly like the goal, in as few moves "
            f"as you can.\n\n{sgp_move_help(cfg)}\n\n{cap}")
        if has_practice:
            st.markdown("First a few practice puzzles, with feedback after each.")
        st.button("Continue", type="primary", key="part_instr_btn", on_click=session.finish_instructions)

    case EpisodeFeedback():
        show_feedback(screen)

    case EpisodeScreen():
        show_episode(screen)

    case End():
        end_page(screen, practice="practice puzzles", exhausted="Every puzzle of this study already has enough players.")
