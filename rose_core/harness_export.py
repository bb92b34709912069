"""Export the benchmark for model harnesses: plain JSONL, an imagefolder, Parquet, a VLMEvalKit TSV.

Every row carries the instance id, the global integer `index` (position in instances.jsonl, what
lmms-eval's doc_id and VLMEvalKit's index refer back to), the dataset hash, the prompt, the template
and the gold protocol answer. Output is written beside the target and renamed into place at the end.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Literal

import pandas as pd

from .dataset import Dataset
from .records import TEMPLATE_LABEL, Instance

ExportFormat = Literal["jsonl", "hf", "parquet", "vlmevalkit"]
FORMATS: tuple[ExportFormat, ...] = ("jsonl", "hf", "parquet", "vlmevalkit")


def _row(ds: Dataset, inst: Instance) -> dict:
    return {
        "instance_id": inst.instance_id, "index": ds.index[inst.instance_id], "dataset_hash": ds.dataset_hash,
        "scene_id": inst.scene_id, "subset": inst.subset, "split": inst.split, "template": inst.template,
        "label": TEMPLATE_LABEL[inst.template], "prompt": inst.prompt, "answer": inst.protocol_answer,
        "gold": json.dumps(inst.gold.to_json()),
    }


def export_dataset(ds: Dataset, fmt: ExportFormat, out: Path | str, split: str | None = None,
                   templates: list[str] | None = None) -> int:
    """Write the chosen instances in `fmt` to `out` (a file, or a folder for "hf"); returns the row count."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: expected one of {', '.join(FORMATS)}")
    out = Path(out)
    insts = ds.select(split=split, templates=templates)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        if fmt == "jsonl":
            target = tmp / "x.jsonl"
            with target.open("w") as f:
                for inst in insts:
                    f.write(json.dumps({**_row(ds, inst), "image": str((ds.root / inst.image).resolve())},
                                       ensure_ascii=False) + "\n")
        elif fmt == "hf":
            target = tmp / "folder"
            (target / "images").mkdir(parents=True)
            with (target / "metadata.jsonl").open("w") as f:
                for inst in insts:
                    name = Path(inst.image).name
                    if not (target / "images" / name).exists():
                        shutil.copyfile(ds.root / inst.image, target / "images" / name)
                    f.write(json.dumps({"file_name": f"images/{name}", **_row(ds, inst)}, ensure_ascii=False) + "\n")
        elif fmt == "parquet":
            target = tmp / "x.parquet"
            rows = [{**_row(ds, i), "image": {"bytes": (ds.root / i.image).read_bytes(), "path": Path(i.image).name}}
                    for i in insts]
            pd.DataFrame(rows).to_parquet(target, index=False)
        else:
            target = tmp / "x.tsv"
            rows = [{"index": ds.index[i.instance_id], "image": base64.b64encode((ds.root / i.image).read_bytes()).decode(),
                     "question": i.prompt, "answer": i.protocol_answer, "instance_id": i.instance_id,
                     "category": i.subset, "l2-category": TEMPLATE_LABEL[i.template], "split": i.split} for i in insts]
            pd.DataFrame(rows).to_csv(target, sep="\t", index=False)
        if out.exists():
            shutil.rmtree(out) if out.is_dir() else out.unlink()
        os.replace(target, out)
        return len(insts)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
