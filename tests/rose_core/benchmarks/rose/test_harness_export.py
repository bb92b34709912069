"""`export`: every format writes a manifest with the export's own order; the task folders hold what each
harness runs, and what they log comes back to the right instances."""
import json

import pandas as pd
import pytest

from rose_core.benchmarks.rose.harness_export import (
    FORMATS,
    export_dataset,
    manifest_path,
)
from rose_core.runs.importer import import_run
from rose_core.storage import open_store


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_writes_its_manifest(small_dataset, tmp_path, fmt):
    out = tmp_path / ("x.data" if fmt in ("jsonl", "parquet", "vlmevalkit") else "folder")
    n = export_dataset(small_dataset, fmt, out, split="dev", templates=["T2", "T5"])
    man = json.loads(manifest_path(out, fmt).read_text())
    expected = [i.instance_id for i in small_dataset.select(split="dev", templates=["T2", "T5"])]
    assert man["instance_ids"] == expected and man["rows"] == n == len(expected)
    assert man["dataset_hash"] == small_dataset.dataset_hash and man["split"] == "dev"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # nothing half-written left behind


def test_task_folders_hold_the_harness_files(small_dataset, tmp_path):
    yaml = pytest.importorskip("yaml")
    export_dataset(small_dataset, "lmms-eval-task", tmp_path / "lm", split="dev")
    loader = type("L", (yaml.SafeLoader,), {})
    loader.add_constructor("!function", lambda ld, node: f"function:{ld.construct_scalar(node)}")
    task = yaml.load((tmp_path / "lm" / "rose_dev.yaml").read_text(), Loader=loader)
    assert task["task"] == "rose_dev" and task["dataset_kwargs"]["data_dir"] == str(tmp_path / "lm" / "data")
    assert task["doc_to_target"] == "function:utils.doc_to_target" and (tmp_path / "lm" / "utils.py").exists()
    meta = [json.loads(x) for x in (tmp_path / "lm" / "data" / "metadata.jsonl").read_text().splitlines()]
    assert all((tmp_path / "lm" / "data" / m["file_name"]).exists() for m in meta)
    export_dataset(small_dataset, "inspect-task", tmp_path / "in", split="dev")
    rows = [json.loads(x) for x in (tmp_path / "in" / "rose.jsonl").read_text().splitlines()]
    assert (tmp_path / "in" / "rose_inspect.py").exists() and all((tmp_path / "in" / r["image"]).exists() for r in rows)
    export_dataset(small_dataset, "vlmevalkit-task", tmp_path / "lmu", split="dev")
    cfg = json.loads((tmp_path / "lmu" / "rose_vlmevalkit.json").read_text())
    assert cfg == {"data": {"ROSE_DEV": {"class": "CustomVQADataset", "dataset": "ROSE_DEV"}}}


def test_vlmevalkit_prediction_file_of_the_task_comes_back(small_dataset, tmp_path):
    """VLMEvalKit writes the dataset's rows without the image and with a prediction column: the rows keep
    instance_id and dataset_hash, so a shuffled prediction file still lands on the right instances."""
    export_dataset(small_dataset, "vlmevalkit-task", tmp_path / "lmu", split="test", templates=["T3"])
    data = pd.read_csv(tmp_path / "lmu" / "ROSE_TEST.tsv", sep="\t")
    pred = data.drop(columns=["image"]).sample(frac=1.0, random_state=3)
    pred["prediction"] = ["Final: " + a for a in pred["answer"]]
    f = tmp_path / "M_ROSE_TEST.xlsx"
    pred.to_excel(f, index=False)
    store = open_store(tmp_path / "rose.db")
    res = import_run(store, small_dataset, f, "m")
    rows = store.query("SELECT instance_id, passed FROM responses")
    assert res.responses == len(data) and {r["instance_id"] for r in rows} == set(data["instance_id"])
    assert all(r["passed"] for r in rows)
