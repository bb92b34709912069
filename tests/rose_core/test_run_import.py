"""Importers on real-shaped files of each harness, and on every kind of bad input."""
import json
import zipfile

import pandas as pd
import pytest

from rose_core.run_import import RunImportError, delete_run, import_run, list_runs, read_run
from rose_core.store import Store


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "rose.db")


def insts(ds, n=12):
    return list(ds.instances.values())[:n]


def write_lmms(path, ds, wrapped=True):
    with path.open("w") as f:
        for inst in insts(ds):
            ans = "Let me look. " + inst.protocol_answer
            f.write(json.dumps({
                "doc_id": ds.index[inst.instance_id], "doc_hash": "x", "target": inst.protocol_answer,
                "arguments": [[inst.prompt, {"max_new_tokens": 512}]], "resps": [[ans]] if wrapped else [ans],
                "filtered_resps": [ans] if wrapped else ans, "exact_match": 1.0}) + "\n")


def write_inspect_eval(path, ds, epochs=1):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("_journal/start.json", json.dumps({"version": 2, "eval": {"task": "rose"}}))
        z.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "rose"}}))
        for inst in insts(ds):
            for ep in range(1, epochs + 1):
                z.writestr(f"samples/{inst.instance_id}_epoch_{ep}.json", json.dumps({
                    "id": inst.instance_id, "epoch": ep, "input": inst.prompt, "target": inst.protocol_answer,
                    "output": {"model": "m", "choices": [{"message": {"role": "assistant",
                                                                      "content": inst.protocol_answer}}],
                               "completion": inst.protocol_answer},
                    "scores": {"match": {"value": "C"}}}))


def test_plain_jsonl(store, small_dataset, tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": i.protocol_answer}) + "\n"
                         for i in insts(small_dataset)))
    res = import_run(store, small_dataset, f, "gpt-x")
    assert (res.format, res.responses, res.run_id) == ("jsonl", 12, "model:gpt-x")
    rows = store.query("SELECT passed, valid, protocol FROM responses WHERE run_id = 'model:gpt-x'")
    assert len(rows) == 12 and all(r["passed"] and r["valid"] for r in rows)


@pytest.mark.parametrize("wrapped", [True, False])
def test_lmms_eval_samples(store, small_dataset, tmp_path, wrapped):
    f = tmp_path / "qwen_samples_rose.jsonl"
    write_lmms(f, small_dataset, wrapped)
    res = import_run(store, small_dataset, f, "qwen")
    assert res.format == "lmms-eval" and "doc_id" in res.detected and res.responses == 12
    assert all(r["passed"] for r in store.query("SELECT passed FROM responses"))


@pytest.mark.parametrize("ext", ["xlsx", "tsv"])
def test_vlmevalkit(store, small_dataset, tmp_path, ext):
    rows = [{"index": small_dataset.index[i.instance_id], "question": i.prompt, "answer": i.protocol_answer,
             "prediction": i.protocol_answer, "category": i.subset} for i in insts(small_dataset)]
    f = tmp_path / f"GPT_ROSE.{ext}"
    df = pd.DataFrame(rows)
    df.to_excel(f, index=False) if ext == "xlsx" else df.to_csv(f, sep="\t", index=False)
    res = import_run(store, small_dataset, f, f"vlm-{ext}")
    assert res.format == "vlmevalkit" and res.responses == 12


def test_inspect_eval_zip_and_json(store, small_dataset, tmp_path):
    f = tmp_path / "2026-11-21_rose_abc.eval"
    write_inspect_eval(f, small_dataset, epochs=2)
    res = import_run(store, small_dataset, f, "insp")
    assert res.format == "inspect" and res.responses == 12
    assert any("epochs after the first" in n for n in res.notes)
    j = tmp_path / "log.json"
    j.write_text(json.dumps({"version": 2, "status": "success", "eval": {"task": "rose"}, "samples": [
        {"id": small_dataset.index[i.instance_id], "epoch": 1, "output": {"completion": i.protocol_answer}}
        for i in insts(small_dataset)]}, indent=2))
    res = import_run(store, small_dataset, j, "insp-json")
    assert res.format == "inspect" and res.responses == 12


def test_bad_inputs_are_specific_and_store_nothing(store, small_dataset, tmp_path):
    good = insts(small_dataset)
    cases = {}
    f = tmp_path / "unknown.jsonl"
    f.write_text(json.dumps({"instance_id": good[0].instance_id, "response": "x"}) + "\n" +
                 json.dumps({"instance_id": "Nope-0001-T1", "response": "x"}) + "\n")
    cases[f] = [f"{f}:2: unknown instance 'Nope-0001-T1'"]
    f = tmp_path / "dup.jsonl"
    f.write_text(2 * (json.dumps({"instance_id": good[0].instance_id, "response": "x"}) + "\n"))
    cases[f] = [f"{f}:2: duplicate response for {good[0].instance_id} (first at {f}:1)"]
    f = tmp_path / "missing.jsonl"
    f.write_text(json.dumps({"instance_id": good[0].instance_id}) + "\n" + json.dumps({"response": "x"}) + "\n")
    cases[f] = [f"{f}:1: field 'response' missing", f"{f}:2: field 'instance_id' missing"]
    f = tmp_path / "wrongds.jsonl"
    f.write_text(json.dumps({"instance_id": good[0].instance_id, "response": "x", "dataset_hash": "deadbeef"}) + "\n")
    cases[f] = ["dataset_hash 'deadbeef' is not this dataset's", "wrong dataset"]
    f = tmp_path / "otherds.jsonl"
    f.write_text("".join(json.dumps({"instance_id": f"X-{k}", "response": "x"}) + "\n" for k in range(5)))
    cases[f] = ["most ids (5 of 5) are unknown: is this a run on another dataset?"]
    f = tmp_path / "trunc.jsonl"
    full = "".join(json.dumps({"instance_id": i.instance_id, "response": i.protocol_answer}) + "\n" for i in good)
    f.write_text(full[:-25])
    cases[f] = ["not valid JSON", "(the file looks truncated)"]
    f = tmp_path / "garbage.jsonl"
    f.write_bytes(json.dumps({"instance_id": good[0].instance_id, "response": "x"}).encode() + b"\n\x00\xff\xfe\x89PNG")
    cases[f] = [f"{f}:2: not UTF-8 text"]
    f = tmp_path / "garbage.bin"
    f.write_bytes(bytes(range(256)) * 4)
    cases[f] = ["binary data cannot be a run file"]
    f = tmp_path / "trunc.eval"
    write_inspect_eval(f, small_dataset)
    f.write_bytes(f.read_bytes()[:300])
    cases[f] = ["not a readable .eval (zip) archive", "truncated?"]
    f = tmp_path / "cols.tsv"
    pd.DataFrame([{"index": 0, "answer": "DONE"}]).to_csv(f, sep="\t", index=False)
    cases[f] = ["column(s) prediction missing"]
    f = tmp_path / "lmms_samples.jsonl"
    f.write_text(json.dumps({"doc_id": 0, "target": "x"}) + "\n")
    cases[f] = [f"{f}:1: neither 'filtered_resps' nor 'resps' present"]
    f = tmp_path / "empty.jsonl"
    f.write_text("")
    cases[f] = ["empty file"]
    for path, needles in cases.items():
        with pytest.raises(RunImportError) as e:
            import_run(store, small_dataset, path, f"bad-{path.stem}")
        for needle in needles:
            assert needle in str(e.value), (path.name, str(e.value))
    assert list_runs(store) == [] and store.query("SELECT count(*) AS n FROM responses")[0]["n"] == 0


def test_reimport_is_refused_or_replaced_explicitly(store, small_dataset, tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": "COUNT(0)"}) + "\n"
                         for i in insts(small_dataset)))
    import_run(store, small_dataset, f, "m")
    with pytest.raises(RunImportError, match="already imported"):
        import_run(store, small_dataset, f, "m")
    f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": i.protocol_answer}) + "\n"
                         for i in insts(small_dataset, 5)))
    res = import_run(store, small_dataset, f, "m", replace=True)
    assert res.replaced and res.responses == 5
    rows = store.query("SELECT passed FROM responses WHERE run_id = 'model:m'")
    assert len(rows) == 5 and all(r["passed"] for r in rows)
    delete_run(store, "model:m")
    assert list_runs(store) == []


def test_format_can_be_forced_and_detection_reports(small_dataset, tmp_path):
    f = tmp_path / "x.jsonl"
    write_lmms(f, small_dataset)
    fmt, why, recs, _ = read_run(f, small_dataset, "lmms-eval")
    assert fmt == "lmms-eval" and why == "given with --format" and len(recs) == 12
    with pytest.raises(RunImportError, match="unknown format"):
        read_run(f, small_dataset, "csv")


def test_cli_import_run(small_dataset, tmp_path):
    import subprocess
    import sys

    f = tmp_path / "run_samples_rose.jsonl"
    write_lmms(f, small_dataset)
    db = tmp_path / "cli.db"
    args = [sys.executable, "-m", "rose_core", "import-run", str(f), "--solver", "q", "--dataset",
            str(small_dataset.root), "--db", str(db)]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0 and "format: lmms-eval" in r.stdout and "imported 12 responses" in r.stdout
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 2 and "nothing was stored" in r.stderr and "--replace" in r.stderr
    r = subprocess.run(args + ["--replace"], capture_output=True, text=True)
    assert r.returncode == 0 and "replaced" in r.stdout
