"""Studies (experimenters): create a study, share its link, watch it run, export what it collected."""
import os

import pandas as pd
import streamlit as st

from rose_core import MAIN_TEMPLATES, SUBSETS, TEMPLATES
from rose_core.analysis.formats import MISSING, fmt_count, fmt_number, fmt_rate
from rose_core.analysis.plan import plan_for_config, plan_rows, summary_lines
from rose_core.instrument.monitor import coverage, participants_frame
from rose_core.instrument.study import (
    StudyConfig, StudyError, create_study, list_studies, set_active, update_texts,
)
from rose_core.instrument.texts import (
    INFO_FIELDS, OPTIONAL_TEXTS, QUESTIONS, TEXT_KEYS, full_texts, opening_problems, texts_version,
)
from rose_core.instrument.page_data import PUBLIC_URL_ENV, app_base_url, participant_links
from ui.dash import table as show_table, table_downloads, warm_up
from ui.resources import dataset, store
from ui.sgp_forms import sgp_study_form, sgp_study_monitor
from ui.sgp_resources import sgp_dataset


def texts_section(study) -> None:
    """What participants read: the study's texts (Markdown, {fields} filled from the facts), its facts and the end
    questions. Saved as a new text version; an open study never takes a marker or an empty fact."""
    cfg = study.config
    version = texts_version(db, study.study_id)
    problems = opening_problems(cfg)
    st.markdown(f"#### Participant texts (version {version})")
    if problems:
        st.warning("The study cannot open to participants until these are filled in:\n\n"
                   + "\n".join(f"- {p}" for p in problems))
    with st.expander("Edit consent, instructions, end pages, facts and questions", expanded=bool(problems)):
        with st.form(f"studies_texts_{study.study_id}"):
            st.caption("Facts (required; the texts name them as {field}, e.g. {researcher}):")
            info = {}
            cols = st.columns(2)
            for i, (k, what) in enumerate(INFO_FIELDS.items()):
                info[k] = cols[i % 2].text_input(f"{k}: {what}", (cfg.info or {}).get(k, ""),
                                                 key=f"studies_info_{study.study_id}_{k}")
            texts = {}
            current = full_texts(cfg)
            for k in TEXT_KEYS:
                texts[k] = st.text_area(f"{k} (Markdown{', optional: empty = not shown' if k in OPTIONAL_TEXTS else ''})",
                                        current[k], height=160, key=f"studies_text_{study.study_id}_{k}")
            questions = st.multiselect("End questionnaire (after the last item)", list(QUESTIONS),
                                       default=[q for q in cfg.questionnaire if q in QUESTIONS],
                                       format_func=lambda q: f"{q}: {QUESTIONS[q].label}",
                                       key=f"studies_questions_{study.study_id}")
            if st.form_submit_button("Save texts"):
                try:
                    saved = update_texts(db, study.study_id, texts, info, questions)
                except StudyError as e:
                    st.error(f"Not saved: {e}")
                else:
                    st.success(f"Saved as text version {saved}.")
                    st.rerun()


def plan_section() -> None:
    """Planning: participants, expected interval widths, time and cost (rose_core.analysis.plan)."""
    st.markdown("#### Plan a study")
    with st.container(border=True):
        c1, c2, c3 = st.columns(3)
        p_split = c1.selectbox("Split", ["test", "dev", "all"], key="plan_split")
        p_subsets = c2.multiselect("Subsets", SUBSETS, default=list(SUBSETS), key="plan_subsets")
        p_templates = c3.multiselect("Templates", TEMPLATES, default=list(MAIN_TEMPLATES), key="plan_templates")
        c1, c2, c3, c4 = st.columns(4)
        p_items = c1.number_input("Items per participant", 1, 500, 20, key="plan_items")
        p_target = c2.number_input("Participants per instance", 1, 100, 3, key="plan_target")
        p_acc = c3.number_input("Expected accuracy (%)", 0.0, 100.0, 95.0, step=1.0, key="plan_acc")
        p_rate = c4.number_input("Hourly rate (0 = no cost)", 0.0, 1000.0, 12.0, step=0.5, key="plan_rate")
        c1, c2, c3, c4 = st.columns(4)
        p_secs = c1.number_input("Seconds per item (0 = median so far)", 0.0, 3600.0, 0.0, key="plan_secs")
        p_practice = c2.number_input("Practice items per round", 0, 20, 4, key="plan_practice")
        p_att = c3.number_input("Attention check every N items", 0, 100, 10, key="plan_att")
        p_cur = c4.text_input("Currency", "£", key="plan_currency")
        try:
            plan = plan_for_config(ds, StudyConfig(name="plan", split=p_split, subsets=p_subsets, templates=p_templates,
                                                   items_per_participant=int(p_items), target_per_instance=int(p_target),
                                                   practice_items=int(p_practice), attention_every=int(p_att)),
                                   p_acc / 100, db, p_secs or None, p_rate or None)
        except ValueError as e:
            st.error(f"Cannot plan this study: {e}")
        else:
            m1, m2, m3, m4 = st.columns(4)
            m1.metric("Plan: participants", fmt_count(plan.participants))
            m2.metric("Plan: minutes per participant", fmt_number(plan.minutes_per_participant))
            m3.metric("Plan: human Avg 95 % interval width", fmt_rate(plan.avg_width) + ("" if plan.avg_width is None else " pp"))
            m4.metric("Plan: cost", MISSING if plan.cost is None else f"{p_cur}{plan.cost:,.2f}")
            show_table(pd.DataFrame(plan_rows(plan)), "rose_study_plan", "plan_table")
            st.caption(" · ".join(summary_lines(plan, p_cur)) + ". Template widths: 95 % Wilson interval at the "
                       "expected accuracy; Avg: normal approximation of the bootstrap over participants.")


warm_up()  # experimenters land here: prepare the analysis pages in the background (first: it starts reading rows)
db, ds = store(), dataset()
st.title("Studies")

with st.expander("Create a study", expanded=not list_studies(db)):
    with st.form("studies_create"):
        name = st.text_input("Name", key="studies_name")
        c1, c2, c3 = st.columns(3)
        split = c1.selectbox("Split", ["test", "dev", "all"], key="studies_split")
        subsets = c2.multiselect("Subsets", SUBSETS, default=list(SUBSETS), key="studies_subsets")
        templates = c3.multiselect("Templates (bridges included)", TEMPLATES, default=list(MAIN_TEMPLATES),
                                   key="studies_templates")
        c1, c2, c3, c4 = st.columns(4)
        items = c1.number_input("Items per participant", 1, 500, 20, key="studies_items")
        target = c2.number_input("Participants per instance", 1, 100, 3, key="studies_target")
        practice = c3.number_input("Practice items per round", 0, 20, 4, key="studies_practice",
                                   help="At least one per kind of answer the templates ask for (count; click in a "
                                        "region; click in the highlighted region; click outside + count). A failed "
                                        "round is retried on new items.")
        pass_frac = c4.slider("Practice pass criterion (share correct)", 0.0, 1.0, 2 / 3, key="studies_pass")
        c1, c2, c3, c4 = st.columns(4)
        attempts = c1.number_input("Practice attempts", 1, 5, 2, key="studies_attempts")
        attention = c2.number_input("Attention check every N items (0 = none)", 0, 100, 10, key="studies_att")
        ordering = c3.selectbox("Ordering", ["counterbalanced", "random"], key="studies_order",
                                help="Counterbalanced rotates template and subset order across participants.")
        seed = c4.number_input("Seed", 0, 2**31 - 1, 1, key="studies_seed")
        c1, c2, c3, c4 = st.columns(4)
        same_scene = c1.checkbox("Same scene under several templates", key="studies_same")
        time_limit = c2.number_input("Time limit, minutes (0 = none)", 0, 600, 0, key="studies_limit")
        release = c3.number_input("Release a silent participant's item after (min)", 1, 1440, 30,
                                  key="studies_release")
        code = c4.text_input("Completion code", key="studies_code")
        url = st.text_input("Completion URL (e.g. https://app.prolific.com/submissions/complete?cc=CODE)",
                            key="studies_url")
        if st.form_submit_button("Create study", type="primary"):
            cfg = StudyConfig(name=name, split=split, subsets=subsets, templates=templates,
                              items_per_participant=int(items), target_per_instance=int(target),
                              practice_items=int(practice), practice_pass_fraction=float(pass_frac),
                              practice_max_attempts=int(attempts), attention_every=int(attention), ordering=ordering,
                              seed=int(seed), same_scene_multiple_templates=same_scene,
                              time_limit_minutes=int(time_limit), release_after_minutes=int(release),
                              completion_code=code.strip(), completion_url=url.strip())
            try:
                study = create_study(db, ds, cfg)
                st.success(f"Created study {study.study_id}." + ("" if study.active else " It is a draft until its "
                           "participant texts are filled in (below)."))
            except StudyError as e:
                st.error(f"Cannot create the study: {e}")

if st.toggle("Set up an SGP study (iVISPAR's sliding geom puzzle)", key="studies_sgp_open"):
    sgp_study_form(db, sgp_dataset())

studies = list_studies(db)
if not studies:
    st.info("No study yet.")
    plan_section()
    st.stop()
labels = {s.study_id: f"{s.name} ({s.study_id}){'' if s.active else ' · closed'}" for s in studies}
sid = st.selectbox("Study", list(labels), format_func=labels.get, key="studies_pick")
study = next(s for s in studies if s.study_id == sid)
cfg = study.config

st.markdown("#### Participant link")
base = app_base_url(os.environ.get(PUBLIC_URL_ENV), st.context.url, dict(st.context.headers or {}),
                    ("studies", "model_runs", "scene_explorer", "results", "agreement", "participants_overview",
                     "drilldown"))
if base is None:
    st.warning(f"The app's public address is unknown: set {PUBLIC_URL_ENV} (e.g. https://rose.example.org).")
else:
    prolific, plain = participant_links(base, sid)
    st.code(prolific, language=None)
    st.caption(f"Without Prolific: {plain} (an anonymous id is generated and kept in the URL). "
               f"Address taken from {'$' + PUBLIC_URL_ENV if os.environ.get(PUBLIC_URL_ENV) else 'this page'}.")
if st.toggle("Open for participants", value=study.active, key=f"studies_active_{sid}") != study.active:
    try:
        set_active(db, sid, not study.active)
    except StudyError as e:
        st.error(str(e))
    else:
        st.rerun()

if cfg.benchmark == "sgp":  # its own episode pool, participants and tables
    sgp_study_monitor(db, sgp_dataset(), study)
    st.stop()
texts_section(study)
cov = coverage(db, ds, study)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Pool instances", cov["pool"])
c2.metric("Main answers", cov["answers"])
c3.metric("Instances at target", f"{cov['complete_instances']} / {cov['pool']}")
c4.metric("Progress", f"{100 * cov['progress']:.1f} %")
st.progress(cov["progress"])
c1, c2 = st.columns(2)
c1.metric("Participants needed", cov["participants_needed"],
          help="pool × participants per instance ÷ items per participant, rounded up")
c2.metric("Participants completed", f"{cov['participants_completed']} / {cov['participants_needed']}")
st.caption(f"{cov['pool']} instances × {cov['target']} ÷ {cfg.items_per_participant} items each = "
           f"{cov['participants_needed']} participants who finish. By status: "
           + ", ".join(f"{k}: {v}" for k, v in cov["participants_by_status"].items())
           + ". Answers per instance: " + ", ".join(f"{k}×: {v}" for k, v in cov["histogram"].items()))

st.markdown("#### Participants")
parts = participants_frame(db, study)
if parts.empty:
    st.info("Nobody has opened the link yet.")
else:
    show_table(parts, f"{sid}-participants", "studies_parts")

st.markdown("#### Export")
table_downloads(db, ("responses", "events", "participant_flags"), sid, "studies")
with st.expander("Configuration"):
    st.json(pd.Series(cfg.__dict__).to_dict())

plan_section()
