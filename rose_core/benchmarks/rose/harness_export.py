"""Export the benchmark for model harnesses: data files, and ready-to-run harness task folders.

Data: plain JSONL, an imagefolder, Parquet, a VLMEvalKit TSV. Task folders (data plus the harness's own
files, run with one command): `lmms-eval-task`, `inspect-task`, `vlmevalkit-task`. Every row carries the
instance id, the global integer `index` (position in instances.jsonl), the dataset hash, the prompt, the
template and the gold protocol answer. Every export also writes a manifest (`rose_export.json` in a
folder, `<file>.rose.json` beside a file) with the dataset hash and the export's own instance order, which
is what a harness's row position (lmms-eval's doc_id) counts. Output is written beside the target and
renamed into place at the end.
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

from ...common.csv_safety import harness_tsv_bytes
from .dataset import Dataset
from .records import TEMPLATE_LABEL, Instance

ExportFormat = Literal["jsonl", "hf", "parquet", "vlmevalkit", "lmms-eval-task", "inspect-task", "vlmevalkit-task"]
FORMATS: tuple[ExportFormat, ...] = ("jsonl", "hf", "parquet", "vlmevalkit", "lmms-eval-task", "inspect-task",
                                     "vlmevalkit-task")
FOLDER_FORMATS = ("hf", "lmms-eval-task", "inspect-task", "vlmevalkit-task")
MANIFEST = "rose_export.json"
HARNESS = Path(__file__).parent / "harness"

LMMS_YAML = """\
# ROSE for lmms-eval (written by `python -m rose_core export --format lmms-eval-task`). Run:
#   python -m lmms_eval --model openai --model_args model_version=MODEL --tasks {task} \\
#       --include_path {folder} --log_samples --output_path OUT
# then: python -m rose_core import-run OUT/<...>_samples_{task}.jsonl --solver MODEL
task: {task}
dataset_path: imagefolder
dataset_kwargs:
  data_dir: {data_dir}
test_split: train
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: !function utils.doc_to_target
process_results: !function utils.process_results
generation_kwargs:
  max_new_tokens: 2048
  temperature: 0
metric_list:
  - metric: rose_exact
    aggregation: mean
    higher_is_better: true
"""


def _row(ds: Dataset, inst: Instance) -> dict:
    return {
        "instance_id": inst.instance_id, "index": ds.index[inst.instance_id], "dataset_hash": ds.dataset_hash,
        "scene_id": inst.scene_id, "subset": inst.subset, "split": inst.split, "template": inst.template,
        "label": TEMPLATE_LABEL[inst.template], "prompt": inst.prompt, "answer": inst.protocol_answer,
        "gold": json.dumps(inst.gold.to_json()),
    }


def _manifest(ds: Dataset, fmt: str, split: str | None, templates: list[str] | None, insts: list[Instance]) -> str:
    return json.dumps({"dataset_hash": ds.dataset_hash, "format": fmt, "split": split, "templates": templates,
                       "rows": len(insts), "instance_ids": [i.instance_id for i in insts]}) + "\n"


def _imagefolder(ds: Dataset, insts: list[Instance], folder: Path, meta_name: str = "metadata.jsonl", name_key: str = "file_name") -> None:
    (folder / "images").mkdir(parents=True)
    with (folder / meta_name).open("w") as f:
        for inst in insts:
            name = Path(inst.image).name
            if not (folder / "images" / name).exists():
                shutil.copyfile(ds.root / inst.image, folder / "images" / name)
            f.write(json.dumps({name_key: f"images/{name}", **_row(ds, inst)},
                               ensure_ascii=False) + "\n")


def _vlm_rows(ds: Dataset, insts: list[Instance]) -> pd.DataFrame:
    return pd.DataFrame([{"index": ds.index[i.instance_id],
                          "image": base64.b64encode((ds.root / i.image).read_bytes()).decode(),
                          "question": i.prompt, "answer": i.protocol_answer, "instance_id": i.instance_id,
                          "dataset_hash": ds.dataset_hash, "category": i.subset,
                          "l2-category": TEMPLATE_LABEL[i.template], "split": i.split} for i in insts])


def _task_name(split: str | None) -> str:
    return f"rose_{split}" if split else "rose"


def export_dataset(ds: Dataset, fmt: ExportFormat, out: Path | str, split: str | None = None,
                   templates: list[str] | None = None) -> int:
    """Write the chosen instances in `fmt` to `out` (a file, or a folder for "hf" and the task folders);
    returns the row count. A task folder refers to itself by its final absolute path."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: expected one of {', '.join(FORMATS)}")
    out = Path(out).resolve()
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
            _imagefolder(ds, insts, target)
        elif fmt == "parquet":
            target = tmp / "x.parquet"
            rows = [{**_row(ds, i), "image": {"bytes": (ds.root / i.image).read_bytes(), "path": Path(i.image).name}}
                    for i in insts]
            pd.DataFrame(rows).to_parquet(target, index=False)
        elif fmt == "vlmevalkit":
            target = tmp / "x.tsv"
            target.write_bytes(harness_tsv_bytes(_vlm_rows(ds, insts)))
        elif fmt == "lmms-eval-task":
            target = tmp / "folder"
            _imagefolder(ds, insts, target / "data")
            (target / f"{_task_name(split)}.yaml").write_text(LMMS_YAML.format(
                task=_task_name(split), folder=out, data_dir=out / "data"))
            shutil.copyfile(HARNESS / "lmms_eval_utils.py", target / "utils.py")
        elif fmt == "inspect-task":
            target = tmp / "folder"
            _imagefolder(ds, insts, target, meta_name="rose.jsonl", name_key="image")
            shutil.copyfile(HARNESS / "inspect_task.py", target / "rose_inspect.py")
        else:  # vlmevalkit-task: LMUData folder with the TSV; VLMEvalKit treats an unknown name as a custom VQA set
            target = tmp / "folder"
            target.mkdir()
            name = _task_name(split).upper()
            (target / f"{name}.tsv").write_bytes(harness_tsv_bytes(_vlm_rows(ds, insts)))
            (target / "rose_vlmevalkit.json").write_text(json.dumps({"data": {name: {
                "class": "CustomVQADataset", "dataset": name}}}, indent=2) + "\n")
        manifest = _manifest(ds, fmt, split, templates, insts)
        if fmt in FOLDER_FORMATS:
            (target / MANIFEST).write_text(manifest)
        else:
            (tmp / "manifest.json").write_text(manifest)
        if out.exists():
            shutil.rmtree(out) if out.is_dir() else out.unlink()
        os.replace(target, out)
        if fmt not in FOLDER_FORMATS:
            os.replace(tmp / "manifest.json", manifest_path(out, fmt))
        return len(insts)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def manifest_path(out: Path | str, fmt: ExportFormat) -> Path:
    """Where an export's manifest is: inside a folder export, beside a file export."""
    out = Path(out)
    return out / MANIFEST if fmt in FOLDER_FORMATS else out.with_name(out.name + ".rose.json")
