"""Participant flow: consent → instructions → practice with feedback → main items → end page.

Layout only: every decision (stage, next item, scoring, storage) is made in rose_core.study
from the database, so a reload, a closed tab or a restarted server resumes where it was.
"""
import uuid

import streamlit as st

from rose_core.study import (
    StudyError, Submission, current_item, finish_instructions, get_participant, get_study, give_consent, join,
    log_events, record_response, stage,
)
from rose_core.views import feedback_image, identity_from_query, image_bytes, worked_example
from ui.click_grid import click_grid, grid_data
from ui.redirect import redirect
from ui.resources import dataset, store

ss = st.session_state
db = store()
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

study = get_study(db, ss["part_study"])
p = get_participant(db, ss["part_pid"])
cfg = study.config
now_stage = stage(db, study, p)


def show_item(item) -> None:
    """The item: instruction, the model's own image as a click grid, DONE/SUBMIT. Reruns per click stay here."""
    view_key = f"part_view_{item.kind}_{item.attempt}_{item.position}_{item.instance_id}"
    view_id = ss.setdefault(view_key, uuid.uuid4().hex)
    layout = ds.scenes[item.scene_id].layout
    count_label = {"count": "Number of odd cells:", "click_submit": "Number of odd cells outside the excluded area:"}.get(item.output, "")
    data = grid_data(view_id, image_bytes(str(ds.root / item.image)), layout, item.output, count_label)

    @st.fragment
    def grid() -> None:
        res = click_grid(key=f"part_grid_{view_id}", data=data)
        live = res.grid
        logged = ss.setdefault("part_logged", {})
        if live and live.get("view_id") == view_id and len(live.get("events") or []) > logged.get(view_id, 0):
            log_events(db, p, item, view_id, live["events"])
            logged[view_id] = len(live["events"])
        sub = res.submit
        if sub and sub.get("view_id") == view_id:
            try:
                rec = record_response(db, study, p, item, Submission.from_client(sub))
            except StudyError as e:
                st.error(f"Your answer could not be read ({e}). Please try again.")
                return
            if item.kind == "practice" and not rec.duplicate:
                ss["part_feedback"] = {"instance_id": item.instance_id, "passed": rec.score.passed,
                                       "attempt": item.attempt}
            st.rerun(scope="app")

    st.markdown(f"#### {item.instruction}")
    grid()


# -- stages ------------------------------------------------------------------------------------
if now_stage == "consent":
    st.title("Welcome")
    st.markdown(
        "You are invited to take part in a short research study on how people find the odd items in a grid of "
        "pictures. Each screen shows a grid; you will count or click the cells that look different from the rest. "
        "Your answers, the clicks you make and their timing are recorded together with your participant id. "
        "No other personal data is collected. Participation is voluntary and you may stop at any time by closing "
        "this page.")
    if cfg.time_limit_minutes:
        st.info(f"The study has a time limit of {cfg.time_limit_minutes} minutes from the moment you agree.")
    agree = st.checkbox("I have read the above and agree to take part.", key="part_agree")
    if st.button("Continue", type="primary", disabled=not agree, key="part_consent_btn"):
        give_consent(db, p)
        st.rerun()

elif now_stage == "instructions":
    st.title("How it works")
    plain, solved, cells = worked_example()
    st.markdown(
        "Each picture is a grid. Rows are numbered **R1, R2, …** from the top and columns **C1, C2, …** from "
        "the left. Almost every cell shows the same item; **a few cells show a slightly different item: these are "
        "the odd cells**. Which item is the odd one is never said: you decide from what most cells show.\n\n"
        "Depending on the screen you will **count** odd cells, or **click** them, sometimes only inside a "
        "region (a row, a column, a rectangle, a highlighted area) or only outside an excluded area. Read the "
        "instruction above each picture. Click a cell again to unselect it; **Undo** and **Clear** help. "
        "The keyboard works too: arrow keys move, Enter or Space selects. Press **DONE** (or **SUBMIT**) "
        "when you are finished; if no cell fits the instruction, press DONE without clicking anything.")
    a, b = st.columns(2)
    a.image(plain, caption="Example grid")
    b.image(solved, caption=f"The odd cells, outlined: {cells}")
    if st.button("I understand, start the practice" if cfg.practice_instance_ids else "I understand, start",
                 type="primary", key="part_instr_btn"):
        finish_instructions(db, p)
        st.rerun()

elif "part_feedback" in ss:
    fb = ss["part_feedback"]
    inst = ds.instances[fb["instance_id"]]
    st.title("Practice")
    if fb["passed"]:
        st.success("Correct, well done.")
    else:
        st.warning("Not quite." + (f" The right number was {inst.gold.count}." if inst.gold.count is not None else ""))
    shown = inst.gold.cells if inst.gold.cells is not None else [
        t for t in ds.scenes[inst.scene_id].targets if inst.in_context(t)]
    st.image(feedback_image(ds, inst.instance_id, shown), caption="The odd cells for this instruction, outlined in green")
    if p.practice_passed:
        st.info("Practice complete. From now on there is no feedback; answer as accurately as you can.")
    elif p.practice_attempts > fb["attempt"] and p.finished_at is None:
        st.info("Not enough practice answers were right yet: let's do the practice once more.")
    if st.button("Continue", type="primary", key="part_fb_btn"):
        del ss["part_feedback"]
        st.rerun()

elif now_stage == "practice":
    item = current_item(db, ds, study, p)
    if item is None:  # the practice round just closed (passed, retry or screened out)
        st.rerun()
    st.caption(f"Practice item {item.position + 1} of {len(cfg.practice_instance_ids)}")
    show_item(item)

elif now_stage == "main":
    item = current_item(db, ds, study, p)
    if item is None:
        st.rerun()
    st.progress(min(1.0, item.main_index / cfg.items_per_participant),
                text=f"Item {min(item.main_index + 1, cfg.items_per_participant)} of {cfg.items_per_participant}")
    show_item(item)

else:  # done
    st.title("Thank you!")
    reason = p.end_reason
    if reason == "completed":
        st.success("You have finished the study.")
        if cfg.completion_code:
            st.markdown(f"Your completion code is **`{cfg.completion_code}`**.")
        if cfg.completion_url:
            st.link_button("Return to the study platform", cfg.completion_url, type="primary")
            st.caption("You will be redirected in a few seconds.")
            redirect(cfg.completion_url)
    elif reason == "screened_out":
        st.info("Thank you for your time. Your practice answers did not reach the study's criterion, so the "
                "study ends here.")
    elif reason == "timed_out":
        st.info("The time limit for this study has passed. Thank you for your time.")
    else:
        st.info("Every item of this study already has enough answers. Thank you for your time.")
