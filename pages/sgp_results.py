"""SGP results (experimenters): humans beside the optimal and random agents on the same episodes — solved
rate, mean step deviation (d at t = c1), the regret curve, outcome counts per episode, and heatmaps by number
of geoms × c1 — with 95 % intervals and the same participant exclusions as ROSE studies."""
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from rose_core.analysis.sgp import (
    SgpExclusions, agent_frame, episode_frame, heatmap_frame, outcome_frame, regret_frame, select_sgp, summary_table,
)
from rose_core.study import list_studies
from ui.dash import chart, table
from ui.resources import store
from ui.sgp_resources import sgp_dataset

db = store()
st.title("SGP results")
studies = {s.study_id: s for s in list_studies(db) if s.config.benchmark == "sgp"}
sgp = sgp_dataset()

sb = st.sidebar
sb.markdown("### Filters")
chosen = sb.multiselect("SGP studies (human rows)", list(studies), format_func=lambda s: studies[s].name,
                        key="sgpres_studies")
modalities = sb.multiselect("Modalities", ["2d", "3d", "text"], key="sgpres_modalities")
sb.markdown("### Participant exclusions")
fast_on = sb.checkbox("Too fast", value=True, key="sgpres_fast")
fast = sb.number_input("… median seconds per episode below", 0.1, 600.0, 1.5, key="sgpres_fast_s") if fast_on else None
streak_on = sb.checkbox("Same moves streaks", value=True, key="sgpres_streak")
streak = sb.number_input("… episodes in a row with the same moves", 2, 100, 10, key="sgpres_streak_n") \
    if streak_on else None
sb.markdown("### Reference agents")
samples = sb.number_input("Random agent: samples per episode", 1, 50, 5, key="sgpres_samples")
seed = sb.number_input("Random agent: seed", 0, 2**31 - 1, 0, key="sgpres_seed")
cap = sb.number_input("Agents' step cap", 1, 500, 20, key="sgpres_cap")

rules = SgpExclusions(fast * 1000 if fast else None, int(streak) if streak else None)
other_builds = sorted({s.study_id for s in studies.values() if s.dataset_hash != sgp.dataset_hash})
if other_builds:
    st.warning(f"Studies on another SGP build are left out (their episodes are not this build's): "
               f"{', '.join(other_builds)}.")
humans = episode_frame(db)
humans = humans[~humans["study_id"].isin(other_builds)]
sel = select_sgp(humans, rules, tuple(chosen), tuple(modalities))
played = sorted(set(sel.df["episode_id"])) if len(sel.df) else []
episodes = played or sorted(sgp.episodes)
agents = agent_frame(sgp, tuple(episodes), int(samples), int(seed), int(cap))
both = pd.concat([sel.df, agents], ignore_index=True) if len(sel.df) else agents
note = (f"exclusions on: {sel.n_excluded} participants excluded" if rules != SgpExclusions(None, None)
        else "exclusions off")
st.caption(f"{len(sel.df):,} human episodes ({len(chosen) or 'all'} SGP studies"
           f"{', ' + ', '.join(modalities) if modalities else ''}) · exclusions: {rules.describe()} "
           f"({sel.n_excluded} participants excluded) · agents on the {len(episodes)} "
           f"{'episodes humans played' if played else 'episodes of the build (no human episode yet)'}, "
           f"step cap {cap}; random: {samples} samples per episode, seed {seed}")
if sel.df.empty:
    st.info("No human episode in this selection yet: the agents are shown alone.")

summary = summary_table(both)
st.markdown("#### Solved rate and step deviation")
table(summary, "sgp_summary", "sgpres_summary", note)
st.caption("Solved: share of episodes whose board reached the goal, 95 % Wilson interval. Step deviation: d at "
           "t = c1 (A* distance left after as many moves as the shortest path has), mean with a 95 % percentile "
           "bootstrap over participants (humans) or episodes (agents). Humans: per modality.")

reg = regret_frame(both)
fig = go.Figure()
for solver, g in reg.groupby("solver", sort=False):
    fig.add_scatter(x=g["t"], y=g["mean"], name=solver, mode="lines+markers",
                    error_y={"type": "data", "symmetric": False, "array": g["hi"] - g["mean"],
                             "arrayminus": g["mean"] - g["lo"]})
fig.update_layout(title="Regret over steps: d_t − (c1 − t), mean with 95 % interval", xaxis_title="step t",
                  yaxis_title="regret")
chart(fig, "sgp_regret", "sgpres_regret", note)

out = outcome_frame(both)
fig = go.Figure()
for k in [c for c in out.columns if c != "solver"]:
    fig.add_bar(x=out["solver"], y=out[k], name=k)
fig.update_layout(barmode="stack", title="Outcome classes per episode (mean count)", yaxis_title="moves per episode")
chart(fig, "sgp_outcomes", "sgpres_outcomes", note)
table(out, "sgp_outcomes", "sgpres_outcomes_table", note)

st.markdown("#### Heatmaps: number of geoms × c1")
solvers = list(summary["solver"])
who = st.selectbox("Solver", solvers, key="sgpres_heat_solver")
metric = st.radio("Cell value", ["solved rate", "step deviation"], horizontal=True, key="sgpres_heat_metric")
hm = heatmap_frame(both[both["solver"] == who], metric)
fig = go.Figure(go.Heatmap(z=hm.values, x=[str(c) for c in hm.columns], y=[str(i) for i in hm.index],
                           colorscale="Viridis", text=hm.round(2).values, texttemplate="%{text}"))
fig.update_layout(title=f"{who}: {metric} by number of geoms × c1", xaxis_title="c1 (shortest path)",
                  yaxis_title="number of geoms")
chart(fig, f"sgp_heatmap_{who}", "sgpres_heat", note)
if len(sel.participants):
    st.markdown("#### Participants and exclusions")
    table(sel.participants, "sgp_participants", "sgpres_parts", note)
