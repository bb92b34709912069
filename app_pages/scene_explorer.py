"""Scene explorer (experimenters): both renderings, every instance with its gold answer, the parameters."""
import json

import numpy as np
import pandas as pd
import streamlit as st
from PIL import Image

from rose_core import SUBSETS
from rose_core.analysis.display import MISSING
from rose_core.benchmarks.rose.explore import instance_rows, outline_cells, scene_ids, scene_summary
from rose_core.benchmarks.rose.visibility import scene_difference_view
from ui.dash import table
from ui.resources import dataset

st.title("Scene explorer")
ds = dataset()
m = ds.manifest
st.caption(f"{m['name']} · seed {m['seed']} · scale {m['scale']} · dataset hash `{ds.dataset_hash}` · "
           f"{m['composition']['scenes']} scenes, {m['composition']['instances']} T1–T5 instances")

c1, c2, c3 = st.columns([2, 1, 2])
subset = c1.selectbox("Subset", SUBSETS, key="explorer_subset")
split = c2.selectbox("Split", ["all", "dev", "test"], key="explorer_split")
ids = scene_ids(ds, subset, None if split == "all" else split)
if not ids:
    st.info("No scene in this subset and split.")
    st.stop()
pos = c3.number_input(f"Scene (1–{len(ids)})", 1, len(ids), 1, key="explorer_pos")
scene = ds.scenes[ids[pos - 1]]
show_targets = st.toggle("Outline the targets", key="explorer_targets")

st.subheader(f"{scene.scene_id} · {scene.split} · {scene.rows}×{scene.cols} · {len(scene.targets)} targets")
left, right = st.columns(2)
for col, kind, title in ((left, "base", "Base rendering"), (right, "highlight", "Highlight rendering (T4)")):
    im = Image.open(ds.image_path(scene, kind))
    if show_targets:
        im = outline_cells(im, scene.layout, scene.targets)
    col.image(im, caption=f"{title} · sha256 {scene.image_sha256[kind][:12]}…")

st.markdown("#### Odd cell against the majority, as displayed")
view = scene_difference_view(np.asarray(Image.open(ds.image_path(scene, "base")).convert("RGB")), scene.layout,
                             scene.targets)
vis = scene.params.get("visibility")
st.image(view.image, caption=f"majority R{view.majority_cell[0]}C{view.majority_cell[1]} · least visible odd cell "
         f"R{view.exception_cell[0]}C{view.exception_cell[1]} · difference (grey: differs faintly; orange → dark red: "
         f"ΔE00 above the threshold, darker = larger) · 6× NEAREST")
f = view.figures
m1, m2, m3, m4, m5 = st.columns(5)
m1.metric("Visibly different px", f.visible_px)
m2.metric("Differing px", f.diff_px)
m3.metric("Max ΔE00", f"{f.max_de00:.1f}")
m4.metric("Mean ΔE00 (differing)", f"{f.mean_de00:.1f}")
if vis:
    m5.metric("Floor · redraws", f"{vis['floor']} · {vis['redraws']}")
    st.caption(f"Stored figure ({vis['scheme']}, ΔE00 > {vis['threshold_de00']:g}): {vis['visible_px']} px in the "
               f"hardest odd cell over both renderings (base {vis['visible_px_by_rendering']['base']}, highlight "
               f"{vis['visible_px_by_rendering']['highlight']}); above, the base PNG read back.")
else:
    m5.metric("Floor · redraws", MISSING)
    st.caption("This dataset was built before visibility was measured: no stored figure.")

st.markdown("#### Instances")
rows = instance_rows(ds, scene.scene_id)
table(pd.DataFrame(rows).drop(columns=["prompt"]), f"rose_instances_{scene.scene_id}", "scene_instances")
with st.expander("Model-facing prompts"):
    for r in rows:
        st.markdown(f"**{r['instance']}** ({r['label']})")
        st.code(r["prompt"], language=None)
st.markdown("#### Generation parameters")
st.json(scene_summary(scene), expanded=False)
with st.expander("Cell layout (pixel boxes)"):
    st.code(json.dumps(scene.layout.to_json()["cells"]), language="json")
