"""Studies (experimenters): create a study (form or study file), edit it in versions, clone, close, share its link,
watch it run, export what it collected."""
import copy
import dataclasses
import os

import pandas as pd
import streamlit as st

from rose_core import MAIN_TEMPLATES, SUBSETS, TEMPLATES
from rose_core.analysis.display import MISSING, fmt_count, fmt_number, fmt_rate
from rose_core.analysis.plan import plan_for_config, plan_rows, summary_lines
from rose_core.instrument.monitor import coverage, participants_frame
from rose_core.instrument.config import SAMPLE_BY, SAMPLE_SCENES, ItemSample, Study
from rose_core.instrument.config import StudyConfig, StudyError
from rose_core.instrument.study import list_studies, set_active, update_texts
from rose_core.instrument.study_edit import clone_study, create_any, edit_study, real_participants
from rose_core.instrument.study_file import dump_study, load_study_text, toml_message
from rose_core.instrument.texts import (
    INFO_FIELDS, OPTIONAL_TEXTS, QUESTIONS, TEXT_KEYS, full_texts, opening_problems, texts_version,
)
from rose_core.analysis.approvals import review
from rose_core.common.csv_safety import frame_bytes
from rose_core.instrument import manage
from rose_core.instrument.monitor import uncounted_frame
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


def plan_section(study: Study | None = None) -> None:
    """Planning: participants, expected interval widths, time and cost (rose_core.analysis.plan), for the settings
    given here or for the selected study's own (its stored item sample)."""
    st.markdown("#### Plan a study")
    with st.container(border=True):
        own = study is not None and study.config.benchmark == "rose" and st.toggle(
            f"Plan {study.name} as it is set up (its item sample)", key="plan_own")
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
        c1, c2, c3, c4 = st.columns(4)
        p_cell = c1.number_input("Sample: instances per cell (0 = every instance)", 0, 10_000, 0, key="plan_per_cell")
        p_by = c2.multiselect("Sample: cells by", list(SAMPLE_BY), default=["template", "subset"], key="plan_by")
        p_seed = c3.number_input("Sample: seed", 0, 2**31 - 1, 1, key="plan_sample_seed")
        p_scenes = c4.selectbox("Sample: scenes", SAMPLE_SCENES, key="plan_sample_scenes")
        try:
            if own:
                cfg = study.config
            else:
                cfg = StudyConfig(name="plan", split=p_split, subsets=p_subsets, templates=p_templates,
                                  items_per_participant=int(p_items), target_per_instance=int(p_target),
                                  practice_items=int(p_practice), attention_every=int(p_att),
                                  sample=ItemSample(int(p_cell), list(p_by), int(p_seed), p_scenes) if p_cell else None)
            plan = plan_for_config(ds, cfg, p_acc / 100, db, p_secs or None, p_rate or None,
                                   study.study_id if own else None)
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


def whole(col, label: str, lo: int, hi: int, value: int, **kw) -> int:
    """A whole-number field whose range takes in the study's own value: a study file may set more than the form's
    usual range (the study's checks accept any value from `lo` up), and Streamlit raises on a value outside it."""
    return col.number_input(label, min(lo, value), max(hi, value), value, **kw)


def study_form(key: str, initial: StudyConfig, submit: str) -> StudyConfig | None:
    """The study settings as a form (the same StudyConfig a study file makes); the config on submit, else None.
    Settings the form does not show (added by other parts of a study file) are kept from `initial`."""
    c = initial
    with st.form(f"{key}_form"):
        name = st.text_input("Name", c.name, key=f"{key}_name")
        c1, c2, c3 = st.columns(3)
        splits = ["test", "dev", "all"]
        split = c1.selectbox("Split", splits, splits.index(c.split), key=f"{key}_split")
        subsets = c2.multiselect("Subsets", SUBSETS, default=list(c.subsets), key=f"{key}_subsets")
        templates = c3.multiselect("Templates (bridges included)", TEMPLATES, default=list(c.templates),
                                   key=f"{key}_templates")
        modes = ["every instance", "a sample per cell", "a list of instance ids"]
        mode = st.radio("Items", modes, index=0 if c.sample is None and not c.items else 1 if c.sample else 2,
                        horizontal=True, key=f"{key}_mode",
                        help="Every instance of split × subsets × templates, a seeded sample of N per cell (a "
                             "pilot's α and panel need several raters per item), or your own list.")
        c1, c2, c3, c4 = st.columns(4)
        smp = c.sample or ItemSample(per_cell=4)
        per_cell = whole(c1, "Sample: instances per cell", 1, 10_000, smp.per_cell, key=f"{key}_per_cell")
        by = c2.multiselect("Sample: cells by", list(SAMPLE_BY), default=list(smp.by), key=f"{key}_by")
        s_seed = whole(c3, "Sample: seed", 0, 2**31 - 1, smp.seed, key=f"{key}_sample_seed")
        s_scenes = c4.selectbox("Sample: scenes", SAMPLE_SCENES, SAMPLE_SCENES.index(smp.scenes),
                                key=f"{key}_sample_scenes",
                                help="distinct: every item on its own scene where possible; shared: templates drawn "
                                     "on the same scenes (the conditioned gap and the bridges compare them)")
        items_text = st.text_area("Instance ids (one per line)", "\n".join(c.items), key=f"{key}_ids", height=80)
        c1, c2, c3, c4 = st.columns(4)
        items = whole(c1, "Items per participant", 1, 500, c.items_per_participant, key=f"{key}_items")
        target = whole(c2, "Raters per item", 1, 100, c.target_per_instance, key=f"{key}_target",
                       help="raters_per_item: every item reaches k raters before any reaches k + 1")
        planned = whole(c3, "Participants planned (0 = as many as needed)", 0, 100_000, c.participants,
                        key=f"{key}_planned")
        practice = whole(c4, "Practice items per round", 0, 20, c.practice_items, key=f"{key}_practice",
                         help="At least one per kind of answer the templates ask for (count; click in a "
                              "region; click in the highlighted region; click outside + count). A failed "
                              "round is retried on new items.")
        c1, c2, c3, c4 = st.columns(4)
        pass_frac = c1.slider("Practice pass criterion (share correct)", 0.0, 1.0, float(c.practice_pass_fraction),
                              key=f"{key}_pass")
        attempts = whole(c2, "Practice attempts", 1, 5, c.practice_max_attempts, key=f"{key}_attempts")
        attention = whole(c3, "Attention check every N items (0 = none)", 0, 100, c.attention_every,
                          key=f"{key}_att")
        orderings = ["counterbalanced", "random"]
        ordering = c4.selectbox("Ordering", orderings, orderings.index(c.ordering), key=f"{key}_order",
                                help="Counterbalanced rotates template and subset order across participants.")
        c1, c2, c3, c4 = st.columns(4)
        seed = whole(c1, "Seed", 0, 2**31 - 1, c.seed, key=f"{key}_seed")
        same_scene = c2.checkbox("Same scene under several templates", c.same_scene_multiple_templates,
                                 key=f"{key}_same")
        time_limit = whole(c3, "Time limit, minutes (0 = none)", 0, 600, c.time_limit_minutes,
                           key=f"{key}_limit")
        release = whole(c4, "Release a silent participant's item after (min)", 1, 1440,
                        c.release_after_minutes, key=f"{key}_release")
        c1, c2 = st.columns([1, 3])
        code = c1.text_input("Completion code", c.completion_code, key=f"{key}_code")
        url = c2.text_input("Completion URL (e.g. https://app.prolific.com/submissions/complete?cc=CODE)",
                            c.completion_url, key=f"{key}_url")
        c1, c2, c3 = st.columns([1, 2, 1])
        so_code = c1.text_input("Screen-out code", c.screen_out_code, key=f"{key}_so_code",
                                help="Prolific's code for participants screened out at the practice")
        so_url = c2.text_input("Screen-out URL", c.screen_out_url, key=f"{key}_so_url")
        att_so = c3.checkbox("A failed attention check screens out", c.attention_screen_out, key=f"{key}_att_so",
                             help="Ends the study at once, with the same screen-out code and URL")
        if not st.form_submit_button(submit, type="primary"):
            return None
    return dataclasses.replace(
        copy.deepcopy(initial), name=name, split=split, subsets=subsets, templates=templates,
        sample=ItemSample(int(per_cell), list(by), int(s_seed), s_scenes) if mode == modes[1] else None,
        items=[ln.strip() for ln in items_text.splitlines() if ln.strip()] if mode == modes[2] else [],
        items_per_participant=int(items), target_per_instance=int(target), participants=int(planned),
        practice_items=int(practice), practice_pass_fraction=float(pass_frac), practice_max_attempts=int(attempts),
        attention_every=int(attention), ordering=ordering, seed=int(seed), same_scene_multiple_templates=same_scene,
        time_limit_minutes=int(time_limit), release_after_minutes=int(release), completion_code=code.strip(),
        completion_url=url.strip(), screen_out_code=so_code.strip(), screen_out_url=so_url.strip(),
        attention_screen_out=att_so)


def create_section(have_studies: bool) -> None:
    """Create a study: from the form, or from an uploaded study file (the same settings either way)."""
    with st.expander("Create a study", expanded=not have_studies):
        cfg = study_form("studies", StudyConfig(name=""), "Create study")
        if cfg is not None:
            _create(cfg)
        st.markdown("**Or from a study file** (TOML; `python -m rose_core study export-config` writes one, "
                    "docs/running-a-study.md lists every key)")
        up = st.file_uploader("Study file", type=["toml"], key="studies_upload")
        if up is not None and st.button("Create from the file", key="studies_upload_create"):
            try:
                cfg = load_study_text(up.getvalue().decode("utf-8"), up.name, None)
            except (StudyError, UnicodeDecodeError) as e:
                st.error(f"Cannot create the study: {e}")
            else:
                _create(cfg)


def _create(cfg: StudyConfig) -> None:
    try:
        study = create_any(db, sgp_dataset() if cfg.benchmark == "sgp" else ds, cfg)
        st.success(f"Created study {study.study_id}." + ("" if study.active else " It is a draft until its "
                   "participant texts are filled in (below)."))
    except StudyError as e:
        st.error(f"Cannot create the study: {toml_message(str(e))}")


def manage_section(study: Study) -> None:
    """The study's version, its settings as a file, edit (all settings until the first real participant, then
    only the texts), clone."""
    sid, cfg = study.study_id, study.config
    real = real_participants(db, sid)
    c1, c2 = st.columns(2)
    c1.download_button("Download the study file (export-config)", dump_study(cfg, f"ROSE Studio study file: study "
                       f"{sid}, version {study.version}, dataset {study.dataset_hash}"),
                       file_name=f"{sid}-v{study.version}.toml", mime="application/toml", key=f"studies_export_{sid}")
    with c2.popover("Clone"):
        new_name = st.text_input("Name of the copy", f"{study.name} (copy)", key=f"studies_clone_name_{sid}")
        if st.button("Create the copy", key=f"studies_clone_{sid}"):
            try:
                twin = clone_study(db, sgp_dataset() if cfg.benchmark == "sgp" else ds, study, new_name)
                st.success(f"Created study {twin.study_id} ({twin.name}) with these settings.")
            except StudyError as e:
                st.error(f"Cannot clone the study: {e}")
    with st.expander(f"Edit settings (version {study.version})"):
        if real:
            st.info(f"{real} participant{'s have' if real > 1 else ' has'} joined: only the texts participants read "
                    "can change now (clone the study to change the rest).")
        if cfg.benchmark == "sgp":
            st.caption("SGP studies: download the study file, edit it and create a new study from it.")
            return
        new = study_form(f"studies_edit_{sid}", cfg, "Save as a new version")
        if new is not None:
            try:
                edited = edit_study(db, ds, study, new)
                st.success(f"Saved version {edited.version}.")
                st.rerun()
            except StudyError as e:
                st.error(f"Cannot save: {toml_message(str(e))}")


def preview_section(study, base: str | None) -> None:
    """Open the study as a participant: a preview participant (stored, never counted) and its link."""
    st.markdown("#### Preview")
    st.caption("Go through the study as a participant would. Your answers are stored as a preview: they never reach "
               "a number, an export, the approvals or the checklist, and take no participant's place. A closed study "
               "can be previewed too.")
    key = f"studies_preview_{study.study_id}"
    if st.button("Open the study as a participant", key=f"{key}_btn"):
        st.session_state[key] = manage.open_preview(db, study).external_id
    pid = st.session_state.get(key)
    if pid and base is not None:
        st.link_button("Start the preview (new tab)", f"{base}/?study={study.study_id}&pid={pid}", type="primary")
    elif pid:
        st.warning(f"The app's public address is unknown: open /?study={study.study_id}&pid={pid} on this server.")


def approvals_section(study) -> None:
    """The approvals CSV for Prolific's review: one row per Prolific id, following the exclusion rules (built when
    asked: the rules read every participant's answers)."""
    st.markdown("#### Approvals (Prolific)")
    st.caption("One row per Prolific id: approve, reject (with the reason and Prolific's rejection category), "
               "return, screened out or still working. Reasons follow the analyses' standard exclusion rules and "
               "your own exclusions; paste the approve rows' participant_id into Prolific's bulk approve.")
    st.download_button("Approvals CSV", lambda: frame_bytes(review(db, study).rows, "csv"),
                       f"{study.study_id}-approvals.csv", "text/csv", key=f"studies_approvals_{study.study_id}",
                       on_click="ignore")
    if st.toggle("Show the approvals here", key=f"studies_approvals_show_{study.study_id}"):
        r = review(db, study)
        counts = r.counts()
        st.caption(("By status: " + ", ".join(f"{k}: {v}" for k, v in counts.items()) if counts
                    else "No Prolific participant yet.")
                   + (f" · {r.left_out} participants not from Prolific are not in it." if r.left_out else ""))
        if len(r.rows):
            show_table(r.rows, f"{study.study_id}-approvals", "studies_approvals_table")


def exclusion_section(study, parts: pd.DataFrame) -> None:
    """Exclude a participant by hand (reason, who, when), lift it, or mark a participant as a test."""
    st.markdown("#### Exclude or mark participants")
    others = uncounted_frame(db, study)
    tests = others[others["origin"] == "test"] if len(others) else others
    people = pd.concat([parts, tests], ignore_index=True) if len(tests) else parts
    if people.empty:
        st.caption("Nobody to exclude yet.")
        return
    by = st.text_input("Your name or initials (kept with each decision)", key="studies_decided_by")
    labels = {r["participant_id"]: f"{r['external_id']} ({r.get('origin', 'participant')})"
              for _, r in people.iterrows()}
    pick = st.selectbox("Participant", list(labels), format_func=labels.get, key=f"studies_ex_pick_{study.study_id}")
    c1, c2, c3 = st.columns([3, 1, 1])
    reason = c1.text_input("Reason (goes to the approvals and the exports)", key=f"studies_ex_reason_{study.study_id}")
    try:
        if c2.button("Exclude", key=f"studies_ex_btn_{study.study_id}", disabled=not reason.strip() or not by.strip()):
            manage.exclude(db, pick, reason, by)
            st.rerun()
        if c2.button("Lift exclusion", key=f"studies_unex_btn_{study.study_id}", disabled=not by.strip()):
            manage.lift_exclusion(db, pick, by)
            st.rerun()
        is_test = labels[pick].endswith("(test)")
        if c3.button("Count again" if is_test else "Mark as test", key=f"studies_test_btn_{study.study_id}",
                     disabled=not by.strip()):
            manage.mark_test(db, pick, not is_test, by)
            st.rerun()
    except StudyError as e:
        st.error(str(e))
    history = manage.exclusion_history(db, study.study_id)
    if history:
        ids = dict(zip(people["participant_id"], people["external_id"]))
        show_table(pd.DataFrame([{"participant": ids.get(h.participant_id, h.participant_id), "reason": h.reason,
                                  "excluded_by": h.excluded_by,
                                  "excluded_at": pd.to_datetime(h.excluded_at, unit="s", utc=True),
                                  "lifted_by": h.revoked_by or "",
                                  "lifted_at": pd.to_datetime(h.revoked_at, unit="s", utc=True)}
                                 for h in history]), f"{study.study_id}-exclusions", "studies_ex_history")
    if len(others):
        st.caption("Previews, simulated and test participants (never counted):")
        show_table(others, f"{study.study_id}-uncounted", "studies_uncounted")


def delete_section(study) -> None:
    """Delete the study and everything it stored, after its name is typed."""
    with st.expander("Delete this study"):
        st.warning("Deletes the study, its participants, their answers and events, for good. Export first.")
        st.markdown(f"To confirm, type its name: **`{study.name}`**")
        typed = st.text_input("Name, exactly", key=f"studies_del_{study.study_id}")
        if st.button("Delete the study", type="primary", disabled=typed != study.name,
                     key=f"studies_del_btn_{study.study_id}"):
            try:
                gone = manage.delete_study(db, study.study_id, typed)
            except StudyError as e:
                st.error(str(e))
            else:
                st.session_state.pop("studies_pick", None)
                st.success(f"Deleted {gone.name}.")
                st.rerun()


warm_up()  # experimenters land here: prepare the analysis pages in the background (first: it starts reading rows)
db, ds = store(), dataset()
st.title("Studies")

create_section(bool(list_studies(db)))

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
st.caption(f"Version {study.version} · {'open' if study.active else 'closed'} · dataset {study.dataset_hash}")
manage_section(study)

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

preview_section(study, base)
if cfg.benchmark == "sgp":  # its own episode pool, participants and tables
    sgp_study_monitor(db, sgp_dataset(), study)
    approvals_section(study)
    delete_section(study)
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

exclusion_section(study, parts)
approvals_section(study)

st.markdown("#### Export")
table_downloads(db, ("responses", "events", "participant_flags"), sid, "studies")
with st.expander("Configuration"):
    st.json(pd.Series(cfg.__dict__).to_dict())
delete_section(study)

plan_section(study)
