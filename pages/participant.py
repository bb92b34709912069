"""Participant flow: consent → instructions → practice with feedback → main items → end page.

Layout only: `ParticipantSession.screen()` decides what to show from the database (one transaction), so a
reload, a closed tab or a restarted server resumes at the same screen; this script matches on it.
"""
import runpy
from functools import partial
from pathlib import Path

import streamlit as st

from rose_core.instrument.episode_session import study_benchmark
from rose_core.study import (
    Consent, End, Instructions, ItemScreen, ParticipantSession, PracticeFeedback, StudyError, get_study, join,
)
from rose_core.views import identity_from_query, practice_feedback_png, worked_example
from ui.click_grid import click_grid, image_url, item_png
from ui.redirect import redirect
from ui.resources import dataset, store

ss = st.session_state
db = store()
if study_benchmark(db, ss.get("part_study") or st.query_params.get("study")) == "sgp":
    runpy.run_path(str(Path(__file__).with_name("sgp_participant.py")))  # iVISPAR's puzzle: its own flow
    st.stop()
ds = dataset()

# -- who is this? ------------------------------------------------------------------------------
if "part_pid" not in ss:
    ident = identity_from_query(st.query_params.to_dict())
    study = get_study(db, ident.study_id) if ident.study_id else None
    if study is None or not study.active:
        st.error("This study link is not valid or the study is closed. Please check the link you were given.")
        st.stop()
    if study.dataset_hash != ds.dataset_hash:
        st.error("This study was set up on a different version of the dataset; please contact the researcher.")
        st.stop()
    if ident.generated:
        st.query_params["pid"] = ident.external_id  # a reload keeps the same anonymous participant
    try:
        p = join(db, study, ident.external_id, ident.source, ident.prolific_study_id, ident.prolific_session_id)
    except StudyError as e:
        st.error(f"Cannot start: {e}")
        st.stop()
    ss["part_pid"], ss["part_study"] = p.participant_id, study.study_id

session = ParticipantSession(db, ds, get_study(db, ss["part_study"]), ss["part_pid"])
# A full run (first request, reload, reopened tab) computes the screen from the database; after that every step
# (consent, instructions, an answer, Continue) stores what the participant did and computes the next screen in
# its widget's callback, and one rerun of the `participant_screen` fragment below shows it: no full rerun
# between screens, and a click's rerun only re-renders the item.
ss["part_screen"] = session.screen()


def go_on(action, *args) -> None:
    """A button's callback: store the step, then compute the next screen (before the fragment reruns)."""
    action(*args)
    ss["part_screen"] = session.screen()


def on_submit(screen: ItemScreen) -> None:
    """DONE / SUBMIT: store the answer and compute the next screen, before the fragment reruns."""
    sub = (ss.get("part_grid") or {}).get("submit")
    if not sub or sub.get("view_id") != screen.view_id:
        return
    try:
        session.submit(screen, sub)
    except StudyError as e:
        ss["part_grid_error"] = str(e)
        return
    ss["part_screen"] = session.screen()


def show_item(screen: ItemScreen) -> None:
    """The item: the component shows the progress, "Item k of n", the instruction, the grid and DONE/SUBMIT.

    A click reruns this fragment only: its events are stored (validated, once by seq) and the rerun sends the
    new `ack_seq` back; nothing else is recomputed."""
    known = ss.setdefault("part_known_seq", {})
    # The PNG is read once per process and registered by URL (the browser fetches it once per item).
    data = screen.component_data(image_url(item_png(str(ds.root / screen.item.image))))
    data["progress_fraction"] = screen.progress_fraction
    # One key for every item: the component rebuilds itself for a new view_id, and Streamlit keeps one widget
    # state instead of one per item answered since the last full rerun (each is re-read at every rerun).
    res = click_grid(key="part_grid", data=data, on_submit=partial(on_submit, screen))
    try:
        if res.grid:
            known[screen.view_id] = session.record_events(screen, res.grid, known.get(screen.view_id, -1))
    except StudyError as e:
        ss["part_grid_error"] = str(e)
    err = ss.pop("part_grid_error", None)
    if err:
        st.error(f"Your answer could not be read ({err}). Please try again.")


def show_feedback(fb: PracticeFeedback) -> None:
    st.title("Practice")
    st.markdown(f"**The instruction was:** {fb.instruction}")
    if fb.passed:
        st.success("Correct, well done.")
    else:
        st.warning("Not quite. Here is the right answer next to yours.")
    st.image(practice_feedback_png(ds, fb.item, fb.clicked), output_format="PNG", caption=(
        "Green: the right cells. Blue dot: your clicks. Orange: the region the instruction names; "
        "red: the excluded region."))
    if fb.gold_count is not None:
        st.markdown(f"Your number: **{'—' if fb.count is None else fb.count}** · the right number: "
                    f"**{fb.gold_count}**")
    if fb.item.mode != "count":
        rows = [f"- R{r},C{c}: " + ("a right cell, " if line.correct else "not one of the cells asked for, ")
                + ("you clicked it" if line.clicked else "**you did not click it**")
                for line in fb.lines for r, c in [line.cell]]
        st.markdown("\n".join(rows) if rows else "No cell fits this instruction: the right answer clicks nothing.")
    if fb.outcome == "passed":
        st.info("Practice complete. From now on there is no feedback; answer as accurately as you can.")
    elif fb.outcome == "retry":
        st.info("Not enough practice answers were right yet: let's do the practice once more, with new pictures.")
    elif fb.outcome == "screened_out":
        st.info("That was the last practice round.")
    # Stored in the callback, before the rerun: that one rerun already shows the next screen.
    st.button("Continue", type="primary", key="part_fb_btn", on_click=go_on,
              args=(session.acknowledge_feedback, fb.view_id))


@st.fragment
def participant_screen() -> None:
    screen = ss["part_screen"]
    match screen:
        case Consent(time_limit_minutes=limit):
            st.title("Welcome")
            st.markdown(
                "You are invited to take part in a short research study on how people find the odd items in a grid of "
                "pictures. Each screen shows a grid; you will count or click the cells that look different from the "
                "rest. Your answers, the clicks you make and their timing are recorded together with your participant "
                "id. No other personal data is collected. Participation is voluntary and you may stop at any time by "
                "closing this page.")
            if limit:
                st.info(f"The study has a time limit of {limit} minutes from the moment you agree.")
            agree = st.checkbox("I have read the above and agree to take part.", key="part_agree")
            st.button("Continue", type="primary", disabled=not agree, key="part_consent_btn",
                      on_click=go_on, args=(session.consent,))

        case Instructions(has_practice=has_practice):
            st.title("How it works")
            plain, solved, cells = worked_example()
            st.markdown(
                "Each picture is a grid. Rows are numbered **R1, R2, …** from the top and columns **C1, C2, …** from "
                "the left. Almost every cell shows the same item; **a few cells show a slightly different item: these "
                "are the odd cells**. Which item is the odd one is never said: you decide from what most cells show.\n\n"
                "Depending on the screen you will **count** odd cells, or **click** them, sometimes only inside a "
                "region (a row, a column, a rectangle, a highlighted area) or only outside an excluded area. Read the "
                "instruction above each picture. Click a cell again to unselect it; **Undo** and **Clear** help. "
                "The keyboard works too: arrow keys move, Enter or Space selects. Press **DONE** (or **SUBMIT**) "
                "when you are finished; if no cell fits the instruction, press DONE without clicking anything.")
            a, b = st.columns(2)
            a.image(plain, output_format="PNG", caption="Example grid")
            b.image(solved, output_format="PNG", caption=f"The odd cells, outlined: {cells}")
            if has_practice:
                st.markdown("First a short practice with feedback: one screen of each kind you will meet.")
            st.button("I understand, start the practice" if has_practice else "I understand, start",
                      type="primary", key="part_instr_btn", on_click=go_on, args=(session.finish_instructions,))

        case PracticeFeedback():
            show_feedback(screen)

        case ItemScreen():
            show_item(screen)

        case End(reason=reason, completion_code=code, completion_url=url):
            st.title("Thank you!")
            if reason == "completed":
                st.success("You have finished the study.")
                if code:
                    st.markdown(f"Your completion code is **`{code}`**.")
                if url:
                    st.link_button("Return to the study platform", url, type="primary")
                    st.caption("You will be redirected in a few seconds.")
                    redirect(url)
            elif reason == "screened_out":
                st.info("Thank you for your time. Your practice answers did not reach the study's criterion, so the "
                        "study ends here.")
            elif reason == "timed_out":
                st.info("The time limit for this study has passed. Thank you for your time.")
            else:
                st.info("Every item of this study already has enough answers. Thank you for your time.")


participant_screen()
