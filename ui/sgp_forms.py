"""The Studies page's SGP parts: the set-up form of an SGP study and what an experimenter watches while it runs
(app_pages/studies.py calls these; the logic is in rose_core.instrument.episode_session)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from rose_core.instrument.config import SGP_DEFAULT_STEP_CAP, Study, StudyConfig, StudyError
from rose_core.instrument.episode_session import create_sgp_study, sgp_coverage
from rose_core.storage import episodes
from rose_core.storage.connection import Store
from ui.dash import table_downloads

MODALITY_LABEL = {"2d": "2D schematic (the paper's look)", "3d": "3D view", "text": "text (list of pieces)"}
INPUT_LABEL = {"click": "click a piece, then a highlighted cell or an arrow", "keyboard": "keyboard (arrow keys)",
               "typed": "typed command, as iVISPAR's participants did"}
GOAL_LABEL = {"side_by_side": "goal beside the board", "toggle": "goal behind a toggle"}


def sgp_study_form(store: Store, sgp) -> None:
    """Create an SGP study: episodes per participant, players per episode, practice, modality, move input, goal
    view, piece buttons with or without cells, several moves per submission, step cap (20 as for the models, or
    no cap, recorded), which episodes."""
    levels_g = sorted({len(e.geoms) for e in sgp.episodes.values()})
    levels_c = sorted({e.c1 for e in sgp.episodes.values()})
    with st.form("studies_sgp_create"):
        name = st.text_input("Name", key="studies_sgp_name")
        c1, c2, c3 = st.columns(3)
        modality = c1.selectbox("What participants see", list(MODALITY_LABEL), format_func=MODALITY_LABEL.get,
                                key="studies_sgp_modality")
        how = c2.selectbox("Move input", list(INPUT_LABEL), format_func=INPUT_LABEL.get, key="studies_sgp_input",
                           help="A text-only board needs typed commands.")
        goal = c3.selectbox("Goal", list(GOAL_LABEL), format_func=GOAL_LABEL.get, key="studies_sgp_goal")
        c1, c2 = st.columns(2)
        coords = c1.checkbox("Piece buttons name the cell too (\"red cube at B3\")", key="studies_sgp_coords",
                             help="Off by default: the cell names give the board as text beside the image, which "
                                  "the models never get in 2D or 3D. Click and keyboard input only.")
        several = c2.checkbox("Several moves per submission (typed, comma-separated, as iVISPAR's humans)",
                              key="studies_sgp_several",
                              help="Each move is still one step, stored and capped on its own; moves typed after "
                                   "the goal or the cap are not made, and the participant is told.")
        c1, c2, c3, c4 = st.columns(4)
        no_cap = c1.checkbox("No step cap (iVISPAR's humans had none)", key="studies_sgp_nocap",
                             help="Recorded with every episode. Without a cap a participant may give up a puzzle.")
        cap = c2.number_input("Step cap (moves per episode)", 1, 500, SGP_DEFAULT_STEP_CAP, key="studies_sgp_cap",
                              help="Every move counts, blocked ones included; 20 as for the models.")
        items = c3.number_input("Episodes per participant", 1, 300, 10, key="studies_sgp_items")
        target = c4.number_input("Participants per episode", 1, 100, 3, key="studies_sgp_target")
        c1, c2 = st.columns(2)
        geoms = c1.multiselect("Numbers of pieces (empty: all)", levels_g, key="studies_sgp_geoms")
        c1s = c2.multiselect("Shortest path lengths c1 (empty: all)", levels_c, key="studies_sgp_c1")
        c1, c2, c3, c4 = st.columns(4)
        practice = c1.number_input("Practice episodes per round", 0, 10, 2, key="studies_sgp_practice",
                                   help="The easiest episodes (fewest pieces, shortest path), fresh per attempt and "
                                        "kept out of the main pool.")
        pass_frac = c2.slider("Practice pass criterion (share solved)", 0.0, 1.0, 0.5, key="studies_sgp_pass")
        attempts = c3.number_input("Practice attempts", 1, 5, 2, key="studies_sgp_attempts")
        ordering = c4.selectbox("Ordering", ["counterbalanced", "random"], key="studies_sgp_order",
                                help="Counterbalanced rotates the path length c1 across participants.")
        c1, c2, c3, c4 = st.columns(4)
        seed = c1.number_input("Seed", 0, 2**31 - 1, 1, key="studies_sgp_seed")
        time_limit = c2.number_input("Time limit, minutes (0 = none)", 0, 600, 0, key="studies_sgp_limit")
        release = c3.number_input("Release a silent participant's episode after (min)", 1, 1440, 30,
                                  key="studies_sgp_release")
        code = c4.text_input("Completion code", key="studies_sgp_code")
        url = st.text_input("Completion URL (e.g. https://app.prolific.com/submissions/complete?cc=CODE)",
                            key="studies_sgp_url")
        if st.form_submit_button("Create SGP study", type="primary"):
            cfg = StudyConfig(name=name, benchmark="sgp", sgp_modality=modality, sgp_input=how, sgp_goal_view=goal,
                              step_cap=None if no_cap else int(cap), sgp_piece_coordinates=coords,
                              sgp_several_moves=several, items_per_participant=int(items),
                              target_per_instance=int(target), sgp_num_geoms=[int(x) for x in geoms],
                              sgp_c1=[int(x) for x in c1s], practice_items=int(practice),
                              practice_pass_fraction=float(pass_frac), practice_max_attempts=int(attempts),
                              attention_every=0, ordering=ordering, seed=int(seed),
                              time_limit_minutes=int(time_limit), release_after_minutes=int(release),
                              completion_code=code.strip(), completion_url=url.strip())
            try:
                study = create_sgp_study(store, sgp, cfg)
                st.success(f"Created SGP study {study.study_id}.")
            except StudyError as e:
                st.error(f"Cannot create the study: {e}")


def sgp_study_monitor(store: Store, sgp, study: Study) -> None:
    """Coverage of the study's own episode pool, its participants, and its moves and results for download."""
    cfg = study.config
    cov = sgp_coverage(store, sgp, study)
    st.caption(f"SGP study · {MODALITY_LABEL[cfg.sgp_modality]} · {INPUT_LABEL[cfg.sgp_input]} · "
               f"{GOAL_LABEL[cfg.sgp_goal_view]} · step cap: {cfg.step_cap if cfg.step_cap else 'none'}"
               + (" · piece buttons with cells" if cfg.sgp_piece_coordinates else "")
               + (" · several moves per submission" if cfg.sgp_several_moves else ""))
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Pool episodes", cov["pool"])
    c2.metric("Main episodes played", cov["answers"])
    c3.metric("Episodes at target", f"{cov['complete_instances']} / {cov['pool']}")
    c4.metric("Progress", f"{100 * cov['progress']:.1f} %")
    st.progress(cov["progress"])
    c1, c2 = st.columns(2)
    c1.metric("Participants needed", cov["participants_needed"],
              help="pool × participants per episode ÷ episodes per participant, rounded up")
    c2.metric("Participants completed", f"{cov['participants_completed']} / {cov['participants_needed']}")
    st.caption(f"{cov['pool']} episodes × {cov['target']} ÷ {cfg.items_per_participant} episodes each = "
               f"{cov['participants_needed']} participants who finish. By status: "
               + ", ".join(f"{k}: {v}" for k, v in cov["participants_by_status"].items())
               + ". Players per episode: " + ", ".join(f"{k}×: {v}" for k, v in cov["histogram"].items()))
    st.markdown("#### Participants")
    with store.connect() as c:
        parts = pd.DataFrame(episodes.participants_summary(c, study.run_id, study.study_id))
    if parts.empty:
        st.info("Nobody has opened the link yet.")
    else:
        st.dataframe(parts, hide_index=True, width="stretch")
    st.markdown("#### Export")
    table_downloads(store, tuple(episodes.EXPORT_TABLES), study.study_id, "studies_sgp")
    with st.expander("Configuration"):
        st.json(pd.Series(cfg.__dict__).to_dict())
