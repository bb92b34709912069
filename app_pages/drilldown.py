"""Drill-down (experimenters): one instance's image with the human click heatmap, each model's clicks,
every response, and a replay of one participant's clicks."""
import base64

import plotly.graph_objects as go
import streamlit as st
from PIL import Image

from rose_core.analysis import drill_down, replay, replay_disagrees
from rose_core.analysis.drilldown import GOLD_COLOUR, HEAT_RGB, instances_answered, model_colours
from ui.dash import View, chart, table

v = View()
st.title("Drill-down")
v.header()
# opens on instances humans answered (the drill-down's question: how do people and models differ on one instance)
humans_only = st.toggle("Only instances humans answered", value=True, key="drill_humans_only")
answered = instances_answered(v.df, humans_only)
if not answered:
    st.info("No instance answered by a participant in this selection." if humans_only
            else "No response in this selection.")
    st.stop()
iid = st.selectbox(f"Instance ({len(answered)} {'answered by humans' if humans_only else 'with responses'})",
                   answered, key="drill_instance")
try:
    d = drill_down(v.df, v.ds, iid, v.db)
except LookupError as e:   # the responses changed between the page's frame and its records: never mixed
    st.error(f"{e}.")
    st.stop()
inst, scene = d["instance"], d["scene"]
st.markdown(f"**{inst.instance_id}** · {inst.instruction}  \nGold: `{inst.protocol_answer}`")

png = (v.ds.root / inst.image).read_bytes()
height = Image.open(v.ds.root / inst.image).size[1]
# the instance's own PNG, as a data URI: the browser gets the file's bytes, not a number per pixel and channel
picture = go.Image(source="data:image/png;base64," + base64.b64encode(png).decode())
fig = go.Figure(picture)
n = max(1, d["n_humans"])
for r in range(scene.rows):
    for c in range(scene.cols):
        share = d["heat"][r, c] / n
        if share > 0:
            x0, y0, x1, y1 = scene.layout.box(r + 1, c + 1)
            fig.add_shape(type="rect", x0=x0, y0=y0, x1=x1, y1=y1, line={"width": 0},
                          fillcolor=f"rgba({HEAT_RGB[0]},{HEAT_RGB[1]},{HEAT_RGB[2]},{0.15 + 0.55 * share:.2f})")
# legend entries for the shapes (heatmap, gold), in their own colours
fig.add_scatter(x=[None], y=[None], mode="markers", name=f"human clicks (share of {d['n_humans']})",
                marker={"size": 14, "symbol": "square", "color": "rgb({},{},{})".format(*HEAT_RGB)})
fig.add_scatter(x=[None], y=[None], mode="markers", name="gold", marker={"size": 14, "symbol": "square-open",
                                                                         "color": GOLD_COLOUR, "line": {"width": 2}})
markers = ["x", "circle-open", "diamond-open", "star-open", "triangle-up-open", "cross"]
clicked = sorted(s for s, cells in d["model_clicks"].items() if cells)
colours = model_colours(clicked)
for k, solver in enumerate(clicked):
    cells = d["model_clicks"][solver]
    xs = [scene.layout.box(r, c)[0] + scene.layout.cell * (0.3 + 0.1 * (k % 5)) for r, c in cells]
    ys = [scene.layout.box(r, c)[1] + scene.layout.cell * 0.3 for r, c in cells]
    fig.add_scatter(x=xs, y=ys, mode="markers", name=solver, marker={
        "size": 14, "symbol": markers[k % len(markers)], "color": colours[solver], "line": {"width": 2,
                                                                                         "color": colours[solver]}})
for r, c in scene.targets:
    if inst.in_context((r, c)):
        x0, y0, x1, y1 = scene.layout.box(r, c)
        fig.add_shape(type="rect", x0=x0 + 2, y0=y0 + 2, x1=x1 - 2, y1=y1 - 2, line={"color": GOLD_COLOUR, "width": 3})
fig.update_layout(title=f"Human clicks (vermillion, share of {d['n_humans']} participants), model clicks "
                        "(markers), gold (green outline)", height=min(900, height + 150), showlegend=True)
chart(fig, f"rose_drill_{iid}", "drill_fig", v.note())

resp = v.shown(d["responses"][["solver", "participant_id", "protocol", "passed", "valid", "failure", "total_ms"]])
resp = resp.assign(total_ms=resp["total_ms"] / 1000).rename(columns={"total_ms": "time (s)"})
table(resp, f"rose_responses_{iid}", "drill_responses", v.note(),
      kinds={"passed": "flag", "valid": "flag", "time (s)": "seconds"})

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
        steps = ev.iloc[:step][["view", "seq", "type", "row", "col", "t (s)", "selection after"]]
        steps = steps.assign(**{"t (s)": (steps["t (s)"] * 1000).round()}).rename(columns={"t (s)": "t (ms)"})
        table(steps, f"rose_replay_{pid}_{iid}", "drill_replay", kinds={"t (ms)": "count"})
        rfig = go.Figure(picture)
        for k, (r, c) in enumerate(ev.iloc[step - 1]["cells after"], 1):
            x0, y0, x1, y1 = scene.layout.box(r, c)
            rfig.add_shape(type="rect", x0=x0, y0=y0, x1=x1, y1=y1, line={"color": "royalblue", "width": 4})
            rfig.add_annotation(x=x0 + 8, y=y0 + 10, text=str(k), showarrow=False, font={"color": "royalblue"})
        rfig.update_layout(title=f"Selection after step {step}", height=min(900, height + 120))
        chart(rfig, f"rose_replay_{pid}_{iid}", "drill_fig_replay", v.note())
