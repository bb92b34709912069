"""Scene explorer (experimenters): both renderings, every instance with its gold answer, the parameters."""
import json

import pandas as pd
import streamlit as st
from PIL import Image

from rose_core import SUBSETS
from rose_core.views import instance_rows, outline_cells, scene_ids, scene_summary
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

st.markdown("#### Instances")
rows = instance_rows(ds, scene.scene_id)
st.dataframe(pd.DataFrame(rows).drop(columns=["prompt"]), hide_index=True, width="stretch")
with st.expander("Model-facing prompts"):
    for r in rows:
        st.markdown(f"**{r['instance']}** ({r['label']})")
        st.code(r["prompt"], language=None)
st.markdown("#### Generation parameters")
st.json(scene_summary(scene), expanded=False)
with st.expander("Cell layout (pixel boxes)"):
    st.code(json.dumps(scene.layout.to_json()["cells"]), language="json")
