"""Difficulty: PASS against the scene's generation parameters, per solver."""
from __future__ import annotations

import pandas as pd

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import TEMPLATE_LABEL


DIFFICULTY_PARAMS = {
    "grid cells": "n_cells", "targets in grid": "n_targets", "context size (cells)": "context_size",
    "subset": "subset", "EmojiStyle provider pair": "provider_pair", "PixelEdit changed pixels": "edit_k",
    "ChineseGlyph similarity": "similarity_bin", "template": "label",
}


def instance_params(ds: Dataset) -> pd.DataFrame:
    rows = []
    for inst in ds.instances.values():
        scene = ds.scenes[inst.scene_id]
        p = scene.params
        area = inst.context.area if inst.context_mode == "inside" else scene.rows * scene.cols - inst.context.area
        rows.append({"instance_id": inst.instance_id, "n_cells": scene.rows * scene.cols,
                     "n_targets": len(scene.targets), "context_size": area, "label": TEMPLATE_LABEL[inst.template],
                     "provider_pair": " vs ".join(p["providers"]) if "providers" in p else None,
                     "edit_k": p.get("edit_k"),
                     "similarity_bin": f"{int(p['similarity'] * 20) / 20:.2f}" if "similarity" in p else None})
    return pd.DataFrame(rows)


def difficulty_table(df: pd.DataFrame, params: pd.DataFrame, param: str) -> pd.DataFrame:
    """PASS per value of a generation parameter, per solver (with n)."""
    col = DIFFICULTY_PARAMS[param]
    merged = df.merge(params, on="instance_id", how="left", suffixes=("", "_p"))
    merged = merged[merged[col].notna()]
    out = merged.groupby(["solver", col])["passed"].agg(["mean", "size"]).reset_index()
    out["PASS"] = 100 * out["mean"]
    return out.rename(columns={col: "value", "size": "n"}).drop(columns=["mean"])


