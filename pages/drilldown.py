"""Drill-down (experimenters): one instance's image with the human click heatmap, each model's clicks,
every response, and a replay of one participant's clicks."""
import numpy as np
import plotly.graph_objects as go
import streamlit as st
from PIL import Image

from rose_core.analysis import drill_down, replay, replay_disagrees
from ui.dash import View, chart, table

v = View()
st.title("Drill-down")
v.header()
answered = sorted(v.df["instance_id"].unique())
if not answered:
    st.info("No response in this selection.")
    st.stop()
iid = st.selectbox(f"Instance ({len(answered)} with responses)", answered, key="drill_instance")
d = drill_down(v.df, v.ds, iid)
inst, scene = d["instance"], d["scene"]
st.markdown(f"**{inst.instance_id}** · {inst.instruction}  \nGold: `{inst.protocol_answer}`")

im = np.asarray(Image.open(v.ds.root / inst.image).convert("RGB"))
fig = go.Figure(go.Image(z=im))
n = max(1, d["n_humans"])
for r in range(scene.rows):
    for c in range(scene.cols):
        share = d["heat"][r, c] / n
        if share > 0:
            x0, y0, x1, y1 = scene.layout.box(r + 1, c + 1)
            fig.add_shape(type="rect", x0=x0, y0=y0, x1=x1, y1=y1, line={"width": 0},
                          fillcolor=f"rgba(220,20,60,{0.15 + 0.55 * share:.2f})")
markers = ["x", "circle-open", "diamond-open", "square-open", "star-open", "triangle-up-open"]
for k, (solver, cells) in enumerate(sorted(d["model_clicks"].items())):
    if not cells:
        continue
    xs = [scene.layout.box(r, c)[0] + scene.layout.cell * (0.3 + 0.1 * (k % 5)) for r, c in cells]
    ys = [scene.layout.box(r, c)[1] + scene.layout.cell * 0.3 for r, c in cells]
    fig.add_scatter(x=xs, y=ys, mode="markers", name=solver, marker={"size": 14, "symbol": markers[k % len(markers)],
                                                                     "line": {"width": 2}})
for r, c in scene.targets:
    if inst.in_context((r, c)):
        x0, y0, x1, y1 = scene.layout.box(r, c)
        fig.add_shape(type="rect", x0=x0 + 2, y0=y0 + 2, x1=x1 - 2, y1=y1 - 2, line={"color": "green", "width": 2})
fig.update_layout(title=f"Human clicks (red, share of {d['n_humans']} participants), model clicks (markers), "
                        "gold (green)", height=min(900, im.shape[0] + 150), showlegend=True)
chart(fig, f"rose_drill_{iid}", "drill_fig", v.note())

resp = d["responses"][["solver", "participant_id", "protocol", "passed", "valid", "failure", "total_ms"]]
table(resp, f"rose_responses_{iid}", "drill_responses", v.note())

humans = d["responses"][d["responses"]["solver_kind"] == "human"]
if not humans.empty:
    st.markdown("#### Replay")
    pid = st.selectbox("Participant", sorted(humans["participant_id"].unique()), key="drill_participant")
    ev = replay(v.db, pid, iid, grid=(scene.rows, scene.cols))
    if ev.empty:
        st.info("No event was logged for this participant on this instance.")
    else:
        views = ev["view"].nunique()
        st.caption(f"{len(ev)} events over {views} page view{'s' if views > 1 else ''} (a reload starts a new view).")
        stored = humans.loc[humans["participant_id"] == pid, "parsed"]
        if inst.gold.cells is not None and len(stored) and (why := replay_disagrees(ev, stored.iloc[0])):
            st.warning(why)
        step = st.slider("Step", 1, len(ev), len(ev), key="drill_step") if len(ev) > 1 else 1
        table(ev.iloc[:step][["view", "seq", "type", "row", "col", "t (s)", "selection after"]],
              f"rose_replay_{pid}_{iid}", "drill_replay")
        rfig = go.Figure(go.Image(z=im))
        for k, (r, c) in enumerate(ev.iloc[step - 1]["cells after"], 1):
            x0, y0, x1, y1 = scene.layout.box(r, c)
            rfig.add_shape(type="rect", x0=x0, y0=y0, x1=x1, y1=y1, line={"color": "royalblue", "width": 4})
            rfig.add_annotation(x=x0 + 8, y=y0 + 10, text=str(k), showarrow=False, font={"color": "royalblue"})
        rfig.update_layout(title=f"Selection after step {step}", height=min(900, im.shape[0] + 120))
        chart(rfig, f"rose_replay_{pid}_{iid}", "drill_fig_replay", v.note())
