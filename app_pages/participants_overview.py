"""Participants (experimenters): time per item, first action, practice and attention checks, exclusions."""
import plotly.express as px
import streamlit as st

from rose_core.study import list_studies
from ui.dash import View, chart, participants_overview

v = View()
st.title("Participants")
v.header()
sgp_studies = [s for s in list_studies(v.db) if s.config.benchmark == "sgp"]
if sgp_studies:
    st.caption(f"ROSE studies only. The participants of the {len(sgp_studies)} SGP "
               f"{'study' if len(sgp_studies) == 1 else 'studies'}, with their exclusions, are on **SGP results**.")
parts = v.participants
if parts.empty:
    st.info("No participant in a ROSE study yet.")
    st.stop()
if v.filters.studies:
    parts = parts[parts["study_id"].isin(v.filters.studies)]
ex = participants_overview(parts, v.rules.describe(), "rose_participants", "parts_table", v.note(),
                           {"main_pass_rate": "rate", "practice_pass_rate": "rate", "median_item_s": "seconds",
                            "median_first_action_s": "seconds", "practice_attempts": "count",
                            "practice_passed": "flag"})

humans = v.everything[v.everything["solver_kind"] == "human"]
if v.filters.studies:
    humans = humans[humans["study_id"].isin(v.filters.studies)]
if not humans.empty:
    humans = humans.assign(item_s=humans["total_ms"] / 1000, first_action_s=humans["first_action_ms"] / 1000,
                           excluded=humans["participant_id"].isin(ex["participant_id"]))
    fig = px.histogram(humans, x="item_s", color="excluded", nbins=60, title="Time per item (s)",
                       labels={"item_s": "seconds"})
    chart(fig, "rose_time_per_item", "parts_fig_time", v.note())
    fig = px.box(humans, x="template", y="first_action_s", color="excluded", title="Time to first action by template",
                 labels={"first_action_s": "seconds"})
    chart(fig, "rose_first_action", "parts_fig_first", v.note())
fig = px.scatter(parts, x="practice_pass_rate", y="main_pass_rate", color="excluded", hover_data=["external_id"],
                 title="Practice vs main accuracy", labels={"practice_pass_rate": "practice PASS %",
                                                            "main_pass_rate": "main PASS %"})
chart(fig, "rose_practice_vs_main", "parts_fig_practice", v.note())
