"""Participants (experimenters): time per item, first action, practice and attention checks, exclusions, devices,
the end questionnaire."""
import pandas as pd
import streamlit as st

from rose_core.analysis.charts import box_figure, histogram_figure, scatter_figure
from rose_core.analysis.devices import device_mix
from rose_core.analysis.selection import counted, shown_participants
from rose_core.instrument.exports import table_frame
from rose_core.instrument.study import list_studies
from rose_core.instrument.texts import QUESTIONS, questionnaire_summary
from ui.dash import View, chart, participants_overview, table

v = View()
st.title("Participants")
v.header()
sgp_studies = [s for s in list_studies(v.db) if s.config.benchmark == "sgp"]
if sgp_studies:
    st.caption(f"ROSE studies only. The participants of the {len(sgp_studies)} SGP "
               f"{'study' if len(sgp_studies) == 1 else 'studies'}, with their exclusions, are on **SGP results**.")
# the participants that count (real ones; a dry run's simulated ones too when the sidebar includes them)
everything, parts = counted(v.everything, v.participants, v.filters.origins)
if parts.empty:
    st.info("No participant in a ROSE study yet.")
    st.stop()
if v.filters.studies:
    parts = parts[parts["study_id"].isin(v.filters.studies)]
ex = participants_overview(shown_participants(parts), v.rules.describe(), "rose_participants", "parts_table",
                           v.note(), {"main_pass_rate": "rate", "practice_pass_rate": "rate", "median_item_s": "seconds",
                                      "median_first_action_s": "seconds", "practice rounds": "count",
                                      "practice_passed": "flag"})
st.caption("practice rounds: practice rounds completed (the failed ones and the one passed: 1 for a participant who "
           "passed the first time); median_item_s and median_first_action_s in seconds, measured on the server.")

# every chosen participant's answers under the sidebar's filters, the excluded ones too (shown apart): the charts
# say the selection in their subtitle, so they draw the selection's answers (split, subsets, templates, studies)
humans = v.filters.apply(everything[everything["solver_kind"] == "human"])
if not humans.empty:
    out = humans["participant_id"].isin(ex["participant_id"]).to_numpy()
    seconds = humans["total_ms"].to_numpy(dtype=float) / 1000
    fig = histogram_figure({"kept": seconds[~out], "excluded": seconds[out]}, "Time per item (s)", "seconds")
    chart(fig, "rose_time_per_item", "parts_fig_time", v.note())
    first = humans.assign(first_action_s=humans["first_action_ms"] / 1000,
                          excluded=["excluded" if o else "kept" for o in out])
    fig = box_figure(first, "template", "first_action_s", "excluded", "Time to first action by template", "seconds")
    chart(fig, "rose_first_action", "parts_fig_first", v.note())
    st.caption("Boxes: quartiles; whiskers: the most extreme times within 1.5 × IQR of the box (Tukey); the times "
               "beyond are not drawn.")
fig = scatter_figure(parts.assign(excluded=parts["excluded"].replace("", "kept")), "practice_pass_rate",
                     "main_pass_rate", "excluded", "Practice vs main accuracy", "practice PASS %", "main PASS %",
                     hover="external_id")
chart(fig, "rose_practice_vs_main", "parts_fig_practice", v.note())

# The device mix: what the browsers claimed before consent (window, device pixel ratio, touch), counted participants
# of the chosen studies only; a browser that never reported is "not reported", never a size.
st.subheader("Devices")
mix = device_mix(v.db, sorted(parts["study_id"].unique()))  # the ROSE studies chosen above
st.caption(f"Claimed by each participant's browser before consent (a claim, not verified): {mix.reported} of "
           f"{mix.total} participants reported. Shares are of those that reported. Each study's minimum window is "
           "its device policy (Studies page).")
table(mix.summary, "rose_device_mix", "parts_devices", v.note(), kinds={"participants": "count", "share %": "rate"})
with st.expander("Device per participant"):
    table(mix.participants, "rose_devices", "parts_devices_each", v.note())

def questionnaire_section(study_ids: list[str]) -> None:
    """The end questionnaire: each answer's count and share, per question, over real participants who stored it."""
    st.markdown("#### End questionnaire")
    counts, strategies = questionnaire_summary(v.db, study_ids)
    if not counts:
        st.caption("No answers: the chosen studies ask no end questions, or nobody has reached them yet.")
        return
    table(pd.DataFrame([{"question": QUESTIONS[a.question].label, "answer": a.answer, "participants": a.n,
                              "share": a.percent, "of": a.of} for a in counts]),
               "rose_questionnaire", "parts_questionnaire", kinds={"share": "rate", "participants": "count", "of": "count"})
    st.caption("Share: of the participants who reached the questions (those who skipped them count as no answer). "
               "Real participants only, excluded ones included.")
    if strategies:
        st.markdown("Strategies in their words:")
        table(pd.DataFrame(strategies, columns=["participant_id", "strategy"]), "rose_strategies",
                   "parts_strategies")


def flags_section(study_ids: list[str]) -> None:
    """What the server refused and kept (participant_flags: takeover attempts, late answers, damaged images…),
    per participant and kind; every row in the `participant_flags` export."""
    st.markdown("#### Refused requests (participant flags)")
    rows = pd.concat([table_frame(v.db, "participant_flags", s) for s in study_ids], ignore_index=True)
    if rows.empty:
        st.caption("None: no takeover attempt, late answer or damaged image in the chosen studies.")
        return
    table(rows, "rose_participant_flags", "parts_flags")
    st.caption("One row per refused request, with what the server recorded (detail) and when (UTC). Every "
               "participant's, excluded and not counted ones included.")


questionnaire_section(sorted(parts["study_id"].unique()))
flags_section(sorted(parts["study_id"].unique()))
