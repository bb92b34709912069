"""SGP episode replay (experimenters): one participant's episode, the board after every move, the command, its
outcome, d_t and when it was made (server clock; the page's clock beside it)."""
import json

import streamlit as st

from rose_core.analysis.sgp import played_episodes, replay
from rose_core.benchmarks.sgp.item import sgp_item
from rose_core.instrument.study import list_studies
from ui.dash import table
from ui.resources import store
from ui.sgp_resources import board_png, sgp_dataset

db = store()
st.title("SGP episode replay")
studies = [s for s in list_studies(db) if s.config.benchmark == "sgp"]
if not studies:
    st.info("No SGP study yet (Studies → Set up an SGP study).")
    st.stop()
labels = {s.study_id: f"{s.name} ({s.study_id})" for s in studies}
sid = st.selectbox("Study", list(labels), format_func=labels.get, key="sgprep_study")
study = next(s for s in studies if s.study_id == sid)
sgp = sgp_dataset()
if study.dataset_hash != sgp.dataset_hash:
    st.error(f"This study was run on another SGP build ({study.dataset_hash[:12]}); the app serves "
             f"{sgp.dataset_hash[:12]}. Its boards cannot be redrawn from this build.")
    st.stop()
eps = played_episodes(db, study.run_id)
if eps.empty:
    st.info("No finished episode in this study yet.")
    st.stop()
eps["label"] = [f"{x} · {k}{f' (round {a + 1})' if k == 'practice' else ''} · {e} · "
                f"{'solved' if p else r['ended']} in {n} moves"
                for x, k, a, e, p, n, r in zip(eps["external_id"], eps["kind"], eps["attempt"], eps["episode_id"],
                                                eps["passed"], eps["steps"], eps.to_dict("records"))]
pick = st.selectbox(f"Episode ({len(eps)} finished)", range(len(eps)), format_func=lambda i: eps["label"].iloc[i],
                    key="sgprep_episode")
row = eps.iloc[pick]
item = sgp_item(sgp, row["episode_id"], study.config.sgp_modality, study.config.step_cap)
parsed = json.loads(row["parsed"])
st.markdown(f"**{row['episode_id']}** · {item.num_geoms} pieces · c1 = {item.c1} · step cap "
            f"{row['step_cap'] if row['step_cap'] is not None else 'none'} · ended **{row['ended']}** after "
            f"{row['steps']} moves · {row['total_ms'] / 1000:.1f} s (server, shown → ended)"
            + (" · given up" if parsed.get("given_up") else ""))
steps = replay(db, study.run_id, row["participant_id"], row["view_id"])
table(steps.drop(columns=["state"]), f"sgp_replay_{sid}_{row['participant_id']}_{row['episode_id']}",
      "sgprep_steps")
if steps.empty:
    st.info("This episode ended without a move (given up at once).")
    st.stop()
k = st.slider("Board after move", 0, len(steps), len(steps), key="sgprep_step")
state = item.start() if k == 0 else json.loads(steps["state"].iloc[k - 1])
what = "the start" if k == 0 else (f"move {k}: `{steps['command'].iloc[k - 1]}` → {steps['outcome'].iloc[k - 1]}, "
                                  f"d = {steps['d_t'].iloc[k - 1]}")
st.markdown(f"Board after {what}")
a, b = st.columns(2)
if item.modality == "text":
    a.code(item.text(state), language=None)
    b.code(item.text(item.goal_state), language=None)
else:
    a.image(board_png(state, item.modality, "active" if k == len(steps) else "past"), output_format="PNG",
            caption=f"after move {k}" if k else "start")
    b.image(board_png(item.goal_state, item.modality, "goal"), output_format="PNG", caption="goal")
