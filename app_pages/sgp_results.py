"""SGP results (experimenters): participants beside model runs (their episode logs, uploaded) and the optimal and
random agents on the same episodes — solved
rate, mean step deviation (d at t = c1), the regret curve, outcome counts per episode, heatmaps by number of
geoms × c1 — with 95 % intervals and the same participant exclusions as ROSE studies. The figures are the
benchmark's own metric functions (rose_core.benchmarks.sgp.metrics), through rose_core.analysis.sgp."""
import tempfile
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

from rose_core.analysis.sgp import (
    INFERENCE_DEFINITION, SUMMARY_DEFINITION, SgpExclusions, agent_logs, group_heatmap, heatmap_labels, inference_results,
    inference_scored, inference_version, sgp_results,
)
from rose_core.benchmarks.sgp.logs import SgpLogError, read_logs
from rose_core.benchmarks.sgp.metrics import INFERENCE_CLASSES, INFERENCE_PER_BOARD
from rose_core.instrument.study import list_studies
from ui.dash import chart, participants_overview, table
from ui.resources import store
from ui.sgp_resources import sgp_dataset

db = store()
st.title("SGP results")
sgp = sgp_dataset()
studies = {s.study_id: s for s in list_studies(db) if s.config.benchmark == "sgp"}


@st.cache_data(show_spinner="Playing the reference agents…", max_entries=16)
def cached_agents(dataset_hash: str, episodes: tuple[str, ...], samples: int, seed: int, cap: int):
    return agent_logs(sgp, episodes, samples, seed, cap)


@st.cache_data(show_spinner="Replaying the model's episode logs…", max_entries=16)
def cached_model_logs(dataset_hash: str, name: str, data: bytes):
    """One uploaded log file, checked by replaying every play (as `sgp score` does): its plays, or its problems."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(name).name
        path.write_bytes(data)
        try:
            return read_logs(path, sgp, reader=None), None
        except SgpLogError as e:
            return [], str(e)


@st.cache_data(show_spinner="Scoring the board-state answers…", max_entries=8)
def cached_inference(db_location: str, version: tuple, dataset_hash: str):
    """(the table of this build, answers stored, answers of this build): scored once per import."""
    scored = inference_scored(db)
    here = scored[scored["dataset_hash"] == dataset_hash]
    table = inference_results(here).drop(columns=["dataset_hash"]) if len(here) else None
    return table, len(scored), len(here)


def participants_section() -> None:
    """Everyone of the chosen SGP studies (this build), with why (if) excluded: the SGP side of the Participants
    page, under this page's exclusion rules."""
    parts = sel.participants
    st.markdown("#### Participants and exclusions")
    if parts.empty:
        st.info("No participant in the chosen SGP studies yet.")
        return
    participants_overview(parts, rules.describe(), "sgp_participants", "sgpres_parts", note,
                          {"solved_pct": "rate", "median_episode_s": "seconds", "practice_attempts": "count",
                           "practice_passed": "flag", "episodes": "count", "longest_streak": "count"})
    st.caption("Episodes, solved % and the rules count the main episodes in this selection (this build, the chosen "
               "studies and modalities).")


def inference_section() -> None:
    """The auxiliary board-state inference task: stored answers of this build, scored now."""
    st.markdown("#### Board-state inference")
    t, n_all, n_here = cached_inference(db.location, inference_version(db), sgp.dataset_hash)
    if n_all > n_here:
        st.warning(f"{n_all - n_here:,} board-state answers on another SGP build are left out (their boards "
                   "are not this build's).")
    if not n_here:
        st.info("No board-state inference answers on this build yet: `python -m rose_core sgp infer-run …` writes "
                "them, `python -m rose_core sgp infer-import FILE` stores them.")
        return
    table(t, "sgp_inference", "sgpres_inference", intervals=("exact", *INFERENCE_CLASSES, *INFERENCE_PER_BOARD),
          kinds={"boards": "count", "episodes": "count", "geoms": "count"})
    st.caption(INFERENCE_DEFINITION)
    fig = go.Figure()
    for r in t.to_dict(orient="records"):
        fig.add_bar(x=list(INFERENCE_CLASSES), y=[r[c] for c in INFERENCE_CLASSES],
                    name=f"{r['solver']} · {r['modality']}",
                    error_y={"type": "data", "symmetric": False,
                             "array": [r[f"{c} hi"] - r[c] for c in INFERENCE_CLASSES],
                             "arrayminus": [r[c] - r[f"{c} lo"] for c in INFERENCE_CLASSES]})
    fig.update_layout(barmode="group", title="Board-state inference: per 100 geoms on the true boards, 95 % interval",
                      yaxis_title="per 100 true geoms")
    chart(fig, "sgp_inference", "sgpres_inference_fig")


sb = st.sidebar
sb.markdown("### Filters")
chosen = sb.multiselect("SGP studies (participants)", list(studies), format_func=lambda s: studies[s].name,
                        key="sgpres_studies")
modalities = sb.multiselect("Modalities (participants)", ["2d", "3d", "text"], key="sgpres_modalities")
cap = sb.number_input("Step cap compared", 1, 500, 20, key="sgpres_cap",
                      help="Episodes played under another cap (or none) have other regret curves: counted, left out.")
uploads = sb.file_uploader("Model runs: episode logs (JSONL)", type=["jsonl"], accept_multiple_files=True,
                           key="sgpres_models",
                           help="The files `sgp run-model` writes (or any episode log `sgp score` reads): each play "
                                "is replayed and checked, then shown beside the participants on the same episodes "
                                "and step cap.")
sb.markdown("### Participant exclusions")
fast_on = sb.checkbox("Too fast", value=True, key="sgpres_fast")
fast = sb.number_input("… median seconds per episode below", 0.1, 600.0, 1.5, key="sgpres_fast_s") if fast_on else None
streak_on = sb.checkbox("Same moves streaks", value=True, key="sgpres_streak")
streak = sb.number_input("… episodes in a row with the same moves", 2, 100, 10, key="sgpres_streak_n") \
    if streak_on else None
sb.markdown("### Reference agents")
samples = sb.number_input("Random agent: plays per episode", 1, 50, 3, key="sgpres_samples")
seed = sb.number_input("Random agent: seed", 0, 2**31 - 1, 0, key="sgpres_seed")

rules = SgpExclusions(fast * 1000 if fast else None, int(streak) if streak else None)
other = sorted(s for s, x in studies.items() if x.dataset_hash != sgp.dataset_hash)
if other:
    st.warning("Studies run on another SGP build are left out (their episodes are not this build's): "
               + ", ".join(other))


runs = {}
for f in uploads or []:
    got, problem = cached_model_logs(sgp.dataset_hash, f.name, f.getvalue())
    if problem:
        st.error(f"{f.name} is left out: {problem}")
    runs[f.name] = got


def analysed(whole_build: bool):
    return sgp_results(db, sgp, int(cap), rules, tuple(chosen), tuple(modalities), int(samples), int(seed),
                       whole_build=whole_build, models=runs,
                       agents=lambda ds, eps, n, s, c: cached_agents(ds.dataset_hash, eps, n, s, c))


try:
    out_ = analysed(whole_build=False)
except ValueError as e:       # a model run that takes a reserved name, or pools different protocols
    st.error(str(e))
    st.stop()
sel, played, episodes = out_.selection, out_.played, out_.agent_episodes
note = f"exclusions on: {sel.n_excluded} participants excluded" if rules != SgpExclusions(None, None) \
    else "exclusions off"
st.caption(f"{len(sel.logs):,} participant episodes ({len(chosen) or 'all'} SGP studies"
           f"{'; ' + ', '.join(modalities) if modalities else ''}) · exclusions: {rules.describe()} "
           f"({sel.n_excluded} participants excluded) · {sel.other_cap} episodes under another step cap left out · "
           f"agents on the {len(episodes)} {'episodes the participants played' if played else 'episodes of the build'}"
           f", step cap {cap}; random agent: {samples} plays per episode, seed {seed}")
if out_.models is not None:
    st.caption(f"Model runs: {len(out_.models.logs):,} plays on these episodes at step cap {cap}"
               f" ({out_.models.other_cap} plays under another step cap and {out_.models.other_episodes} on episodes "
               "the participants did not play left out).")
if not played:
    st.info("No participant episode in this selection yet.")
    # The agents alone on the whole build take a while (the random agent's 300 plays: ~30-50 s on 2 cores).
    if not st.checkbox(f"Play the reference agents on all {len(sgp.episodes)} episodes of the build",
                       key="sgpres_agents_all"):
        participants_section()
        inference_section()
        st.stop()
res = out_.tables if out_.tables is not None else analysed(whole_build=True).tables
st.markdown("#### Solved rate and step deviation")
OUTCOME_COLUMNS = ("effective", "ineffective", "occupied", "out_of_bounds", "illegal")
table(res["summary"].rename(columns={"lo": "solved_pct lo", "hi": "solved_pct hi", "lo_dev": "deviation lo",
                                     "hi_dev": "deviation hi"}),
      "sgp_summary", "sgpres_summary", note, intervals=("solved_pct", "deviation"),
      kinds={"participants": "count", "plays": "count", "solved": "count", "episodes": "count",
             **{c: "number" for c in (*OUTCOME_COLUMNS, "illegal_strict", "illegal_ivispar", "unclassified_ivispar")}})
st.caption(f"{SUMMARY_DEFINITION}. Outcome columns: mean moves of each class per play. "
           "illegal_strict, illegal_ivispar: mean illegal commands per play as this project's strict reader and as "
           "iVISPAR's engine count the same texts; unclassified_ivispar: texts iVISPAR's engine moves nothing for "
           "and counts in no class (a geom not on the board, no direction).")

fig = go.Figure()
for (solver, modality), g in res["regret"].groupby(["solver", "modality"], sort=False):
    fig.add_scatter(x=g["t"], y=g["regret"], mode="lines+markers",
                    name=f"{solver} · {modality}" if modality != "-" else solver,
                    error_y={"type": "data", "symmetric": False, "array": g["regret_hi"] - g["regret"],
                             "arrayminus": g["regret"] - g["regret_lo"]})
fig.update_layout(title="Regret over steps: d_t − (c1 − t), mean with 95 % interval", xaxis_title="step t",
                  yaxis_title="regret")
chart(fig, "sgp_regret", "sgpres_regret", note)

out = res["outcomes"]
fig = go.Figure()
labels = [f"{s} · {m}" if m != "-" else s for s, m in zip(out["solver"], out["modality"])]
for k in [c for c in out.columns if c not in ("solver", "modality")]:
    fig.add_bar(x=labels, y=out[k], name=k)
fig.update_layout(barmode="stack", title="Outcome classes per episode (mean moves of each class)",
                  yaxis_title="moves per episode")
chart(fig, "sgp_outcomes", "sgpres_outcomes", note)

st.markdown("#### Heatmaps: number of geoms × c1")
groups = [(s, m) for s, m in zip(res["summary"]["solver"], res["summary"]["modality"])]
who = st.selectbox("Solver", range(len(groups)), key="sgpres_heat_solver",
                   format_func=lambda i: " · ".join(x for x in groups[i] if x != "-"))
value = st.radio("Cell value", ["solved", "d_at_c1", "min_d"], horizontal=True, key="sgpres_heat_value",
                 format_func={"solved": "solved %", "d_at_c1": "d at t = c1", "min_d": "closest to the goal"}.get)
hm = group_heatmap(res["episodes"], *groups[who], value)
cell_text = heatmap_labels(res["episodes"], *groups[who], value)
fig = go.Figure(go.Heatmap(z=hm.values, x=[str(c) for c in hm.columns], y=[str(i) for i in hm.index],
                           colorscale="Viridis", text=cell_text.values, texttemplate="%{text}", hoverinfo="text",
                           zmin=0, zmax=100 if value == "solved" else None))
fig.update_layout(title=f"{' · '.join(x for x in groups[who] if x != '-')}: {value} by number of geoms × c1",
                  xaxis_title="c1 (shortest path)", yaxis_title="number of geoms", xaxis_type="category",
                  yaxis_type="category")
chart(fig, "sgp_heatmap", "sgpres_heat", note)
participants_section()
inference_section()
