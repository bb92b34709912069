"""Importers on real-shaped files of each harness, and on every kind of bad input: right, or refused with
nothing stored."""
import io
import json
import struct
import sys
import zipfile
import zlib
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from rose_core import Dataset, build_dataset
from rose_core.benchmarks.rose.agents import run_agent
from rose_core.benchmarks.rose.harness_export import export_dataset, manifest_path
from rose_core.runs.importer import (
    EXCEL_CELL_LIMIT, Limits, RunImportError, delete_run, import_run, read_run,
)
from rose_core.storage.runs import list_runs
from tests.command_line import run_cli

FIXTURES = Path(__file__).parents[2] / "fixtures" / "lmms-eval-0.7.3"


@pytest.fixture(scope="module")
def other_build(tmp_path_factory):
    """The same composition built with another seed: same instance ids, other scenes and answers."""
    root = tmp_path_factory.mktemp("other") / "ds"
    build_dataset(root, seed=8, scale=0.05)
    return Dataset.load(root)


def insts(ds, n=12):
    return list(ds.instances.values())[:n]


def nothing_stored(store):
    return list_runs(store) == [] and store.query("SELECT count(*) AS n FROM responses")[0]["n"] == 0


def stored(store, run_id):
    return {r["instance_id"]: r for r in store.query("SELECT * FROM responses WHERE run_id = ?", (run_id,))}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def lmms_07_lines(ds, instances, answer):
    """Lines shaped exactly like the captured lmms-eval 0.7.3 samples (same keys, `doc_id` = row position in
    the task's own dataset), filled with our instances."""
    shape = json.loads((FIXTURES / "samples_rose_dev.head.jsonl").read_text().splitlines()[0])
    out = []
    for k, inst in enumerate(instances):
        line = dict(shape)
        line.update(doc_id=k, target=inst.protocol_answer, filtered_resps=answer(k, inst), input=inst.prompt)
        out.append(line)
    assert set(out[0]) == set(shape) and "doc" not in shape and "resps" not in shape
    return out


# --------------------------------------------------------------------------- plain JSONL and identity

def test_plain_jsonl_with_hash_and_without(store, small_dataset, tmp_path):
    rows = [{"instance_id": i.instance_id, "response": i.protocol_answer, "dataset_hash": small_dataset.dataset_hash}
            for i in insts(small_dataset)]
    res = import_run(store, small_dataset, write_jsonl(tmp_path / "run.jsonl", rows), "gpt-x")
    assert (res.format, res.responses, res.run_id) == ("jsonl", 12, "model:gpt-x")
    assert all(r["passed"] and r["valid"] for r in stored(store, "model:gpt-x").values())
    bare = write_jsonl(tmp_path / "bare.jsonl", [{k: v for k, v in r.items() if k != "dataset_hash"} for r in rows])
    with pytest.raises(RunImportError, match=r"12 of 12 responses carry no dataset hash .*bare.jsonl:1.*--trust-ids"):
        import_run(store, small_dataset, bare, "bare")
    res = import_run(store, small_dataset, bare, "bare", trust_ids=True)
    assert res.responses == 12 and any("on trust" in n for n in res.notes)
    meta = json.loads(next(r for r in list_runs(store) if r["run_id"] == "model:bare")["meta"])
    assert meta["trust_ids"] is True


def test_agent_and_run_model_outputs_carry_the_hash(small_dataset, tmp_path):
    out = tmp_path / "oracle.jsonl"
    run_agent("oracle", small_dataset, out, split="dev")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines and all(x["dataset_hash"] == small_dataset.dataset_hash for x in lines)


def test_oracle_run_made_on_another_build_is_refused(store, small_dataset, other_build, tmp_path):
    assert other_build.dataset_hash != small_dataset.dataset_hash
    assert set(other_build.instances) == set(small_dataset.instances)  # the ids alone cannot tell the builds apart
    out = tmp_path / "other_oracle.jsonl"
    run_agent("oracle", other_build, out)
    with pytest.raises(RunImportError) as e:
        import_run(store, small_dataset, out, "other-oracle")
    assert f"{out}:1: dataset_hash '{other_build.dataset_hash}' is not this dataset's" in str(e.value)
    assert "another build" in str(e.value)
    bare = write_jsonl(tmp_path / "bare.jsonl", [{k: v for k, v in json.loads(x).items() if k != "dataset_hash"}
                                                 for x in out.read_text().splitlines()])
    with pytest.raises(RunImportError, match="carry no dataset hash"):
        import_run(store, small_dataset, bare, "other-oracle")
    # the same run through lmms-eval, which logs target and input: refused on the first bad lines
    dev = other_build.select(split="dev")
    lm = write_jsonl(tmp_path / "other_samples_rose.jsonl",
                     lmms_07_lines(other_build, dev, lambda k, i: i.protocol_answer))
    with pytest.raises(RunImportError) as e:
        import_run(store, small_dataset, lm, "other-lmms")
    assert "no export order fits this file" in str(e.value)
    assert f"{lm}:1: " in str(e.value) and "another build" in str(e.value)
    assert nothing_stored(store)


def test_a_run_of_another_build_is_refused_in_a_database_holding_this_builds_runs(store, small_dataset, other_build,
                                                                                  tmp_path):
    """Each run verified against its own build (the dataset given to import) landed in one database: the same
    instance ids name other scenes in the two builds, yet `report` showed both rows side by side as one table
    (an oracle at 100 beside a random run at 9.5, no word of the builds) and the per-instance analyses paired
    their answers by id. `rescore` already refused such a database; now the import that would make it is refused."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run_agent("oracle", small_dataset, a, split="dev")
    run_agent("random", other_build, b, split="dev")
    import_run(store, small_dataset, a, "oracle", kind="agent")
    with pytest.raises(RunImportError) as e:
        import_run(store, other_build, b, "random", kind="agent")
    msg = str(e.value)
    assert f"dataset {other_build.dataset_hash}" in msg and small_dataset.dataset_hash in msg
    assert "agent:oracle" in msg
    assert [r["run_id"] for r in list_runs(store)] == ["agent:oracle"]
    # replacing the only run with one of the other build is not mixing: the database then holds one build
    import_run(store, other_build, b, "oracle", kind="agent", replace=True)
    assert {r["dataset_hash"] for r in list_runs(store)} == {other_build.dataset_hash}


def test_ids_like_12_are_never_positions(store, small_dataset, tmp_path):
    h = small_dataset.dataset_hash
    f = write_jsonl(tmp_path / "ids.jsonl", [{"instance_id": "12", "response": "DONE", "dataset_hash": h},
                                              {"instance_id": 12, "response": "DONE", "dataset_hash": h}])
    with pytest.raises(RunImportError) as e:
        import_run(store, small_dataset, f, "ids")
    assert f"{f}:1: unknown instance '12'" in str(e.value)
    assert f"{f}:2: field 'instance_id' must be an instance id string, got 12" in str(e.value)
    j = tmp_path / "log.json"
    j.write_text(json.dumps({"eval": {"task": "rose"}, "samples": [
        {"id": 3, "epoch": 1, "output": {"completion": "DONE"}}, {"id": "3", "epoch": 1, "output": {"completion": "DONE"}}]}))
    with pytest.raises(RunImportError) as e:
        import_run(store, small_dataset, j, "insp")
    assert f"{j}:samples[0]: sample id 3 is not an instance id" in str(e.value)
    assert f"{j}:samples[1]: unknown instance '3'" in str(e.value)
    assert nothing_stored(store)


# --------------------------------------------------------------------------- lmms-eval

def test_a_byte_order_mark_is_not_part_of_the_first_line(store, small_dataset, tmp_path):
    f = tmp_path / "bom.jsonl"
    rows = [{"instance_id": i.instance_id, "response": i.protocol_answer, "dataset_hash": small_dataset.dataset_hash}
            for i in insts(small_dataset)]
    f.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in rows).encode())
    res = import_run(store, small_dataset, f, "bom")
    assert res.responses == len(rows) and all(r["passed"] for r in stored(store, "model:bom").values())


def test_lmms_eval_old_style_with_doc(store, small_dataset, tmp_path):
    f = write_jsonl(tmp_path / "qwen_samples_rose.jsonl", [{
        "doc_id": 999, "doc": {"instance_id": i.instance_id, "dataset_hash": small_dataset.dataset_hash},
        "target": i.protocol_answer, "arguments": [[i.prompt, {"max_new_tokens": 512}]],
        "resps": [["Let me look. " + i.protocol_answer]], "filtered_resps": ["Let me look. " + i.protocol_answer]}
        for i in insts(small_dataset)])
    res = import_run(store, small_dataset, f, "qwen")
    assert res.format == "lmms-eval" and "doc_id" in res.detected and res.responses == 12
    assert all(r["passed"] for r in stored(store, "model:qwen").values())


def test_lmms_eval_07_over_a_dev_only_export_lands_on_the_right_instances(store, small_dataset, tmp_path):
    """The measured bug: doc_id is the position in the dev-only export, read as the global index it put
    half of a run on the wrong instances without a word. Now each line's target and input are checked;
    the dev order is the one under which all match."""
    dev = small_dataset.select(split="dev")
    answer = lambda k, i: i.protocol_answer if k % 2 == 0 else "COUNT(99)"  # noqa: E731
    f = write_jsonl(tmp_path / "openai_samples_rose_dev.jsonl", lmms_07_lines(small_dataset, dev, answer))
    res = import_run(store, small_dataset, f, "dev-run")
    assert res.responses == len(dev) and any("--split dev export" in n for n in res.notes)
    rows = stored(store, "model:dev-run")
    assert set(rows) == {i.instance_id for i in dev}
    assert all(rows[i.instance_id]["response"] == answer(k, i) for k, i in enumerate(dev))
    assert sum(r["passed"] for r in rows.values()) == sum(
        1 for k, i in enumerate(dev) if k % 2 == 0 or i.protocol_answer == "COUNT(99)")
    # the same lines with doc_id as the only identity: refused, unless the export's manifest says the order
    bare = write_jsonl(tmp_path / "bare_samples.jsonl", [{"doc_id": k, "filtered_resps": answer(k, i)}
                                                          for k, i in enumerate(dev)])
    with pytest.raises(RunImportError, match="doc_id only .* position in the task's own dataset"):
        import_run(store, small_dataset, bare, "bare")
    export_dataset(small_dataset, "hf", tmp_path / "hf_dev", split="dev")
    res = import_run(store, small_dataset, bare, "bare", manifest=manifest_path(tmp_path / "hf_dev", "hf"))
    assert {k: r["response"] for k, r in stored(store, "model:bare").items()} == \
        {i.instance_id: answer(k, i) for k, i in enumerate(dev)}


def test_real_lmms_eval_073_file_from_another_build_is_refused(store, small_dataset):
    """The captured lmms-eval 0.7.3 file (a user's own task over a dev-only export of another build):
    no order of ours fits its targets and prompts, so it is refused, naming its first lines."""
    f = FIXTURES / "samples_rose_dev.head.jsonl"
    with pytest.raises(RunImportError) as e:
        import_run(store, small_dataset, f, "fixture")
    assert "no export order fits this file" in str(e.value) and f"{f}:1: target 'COUNT(4)'" in str(e.value)
    assert nothing_stored(store)


def test_lmms_eval_task_folder_target_carries_identity(store, small_dataset, tmp_path):
    """Our shipped task's doc_to_target names instance and hash: rows in any order map back with certainty."""
    folder = tmp_path / "lmms_task"
    export_dataset(small_dataset, "lmms-eval-task", folder, split="test")
    sys.path.insert(0, str(folder))
    try:
        import utils as task_utils
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("utils", None)
    yaml = (folder / "rose_test.yaml").read_text()
    assert "doc_to_target: !function utils.doc_to_target" in yaml and f"data_dir: {folder / 'data'}" in yaml
    docs = [json.loads(x) for x in (folder / "data" / "metadata.jsonl").read_text().splitlines()]
    docs.reverse()  # whatever order the harness loads the imagefolder in
    lines = [{"doc_id": k, "target": task_utils.doc_to_target(d), "filtered_resps": d["answer"],
              "input": task_utils.doc_to_text(d), "doc_hash": "x",
              **task_utils.process_results(d, [d["answer"]])} for k, d in enumerate(docs)]
    res = import_run(store, small_dataset, write_jsonl(tmp_path / "m_samples_rose_test.jsonl", lines), "m")
    rows = stored(store, "model:m")
    assert res.responses == len(docs) and all(r["passed"] for r in rows.values())
    assert set(rows) == {d["instance_id"] for d in docs}


# --------------------------------------------------------------------------- VLMEvalKit

def vlm_rows(ds, preds):
    return [{"index": ds.index[i.instance_id], "question": i.prompt, "answer": i.protocol_answer,
             "prediction": p, "category": i.subset, "instance_id": i.instance_id, "dataset_hash": ds.dataset_hash}
            for i, p in zip(insts(ds), preds)]


@pytest.mark.parametrize("ext", ["xlsx", "tsv", "json"])
def test_vlmevalkit(store, small_dataset, tmp_path, ext):
    preds = [i.protocol_answer for i in insts(small_dataset)]
    preds[3] = "Failed to obtain answer via API."
    preds[4] = "Failed to obtain answer via API.: Failed with all possible conversation turns."
    preds[5] = "CLICK(R1,C1); " * (EXCEL_CELL_LIMIT // 14) + "C" * (EXCEL_CELL_LIMIT % 14)
    assert len(preds[5]) == EXCEL_CELL_LIMIT
    df = pd.DataFrame(vlm_rows(small_dataset, preds))
    f = tmp_path / f"GPT_ROSE.{ext}"
    {"xlsx": lambda: df.to_excel(f, index=False), "tsv": lambda: df.to_csv(f, sep="\t", index=False),
     "json": lambda: df.to_json(f, orient="records")}[ext]()
    res = import_run(store, small_dataset, f, f"vlm-{ext}")
    assert res.format == "vlmevalkit" and res.responses == 9
    assert res.counts == {"errored": 2, "truncated": 1}
    assert any("2 errored samples" in n and "not stored" in n for n in res.notes)
    assert any("1 predictions cut at Excel's 32,767-character cell limit" in n for n in res.notes)
    res = import_run(store, small_dataset, f, f"vlm-{ext}-inv", errored="invalid")
    rows = stored(store, f"model:vlm-{ext}-inv")
    assert res.responses == 12 and sum(not r["valid"] for r in rows.values()) == 3


def test_vlmevalkit_index_only_is_verified_by_question_and_answer(store, small_dataset, other_build, tmp_path):
    rows = [{k: v for k, v in r.items() if k not in ("instance_id", "dataset_hash")}
            for r in vlm_rows(other_build, [i.protocol_answer for i in insts(other_build)])]
    f = tmp_path / "other.tsv"
    pd.DataFrame(rows).to_csv(f, sep="\t", index=False)
    with pytest.raises(RunImportError, match=r"other.tsv:row \d+: (target|the prompt)"):
        import_run(store, small_dataset, f, "other")
    assert nothing_stored(store)


# --------------------------------------------------------------------------- hostile and broken files

def test_bad_inputs_are_specific_and_store_nothing(store, small_dataset, tmp_path):
    good = insts(small_dataset)
    h = small_dataset.dataset_hash
    cases = {}
    f = write_jsonl(tmp_path / "unknown.jsonl", [{"instance_id": good[0].instance_id, "response": "x", "dataset_hash": h},
                                                 {"instance_id": "Nope-0001-T1", "response": "x", "dataset_hash": h}])
    cases[f] = [f"{f}:2: unknown instance 'Nope-0001-T1'"]
    f = write_jsonl(tmp_path / "dup.jsonl", 2 * [{"instance_id": good[0].instance_id, "response": "x", "dataset_hash": h}])
    cases[f] = [f"{f}:2: duplicate response for {good[0].instance_id} (first at {f}:1)"]
    f = write_jsonl(tmp_path / "missing.jsonl", [{"instance_id": good[0].instance_id}, {"response": "x"}])
    cases[f] = [f"{f}:1: field 'response' missing", f"{f}:2: field 'instance_id' missing"]
    f = write_jsonl(tmp_path / "otherds.jsonl", [{"instance_id": f"X-{k}", "response": "x"} for k in range(5)])
    cases[f] = ["most ids (5 of 5) are unknown: is this a run on another dataset?"]
    f = tmp_path / "trunc.jsonl"
    f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": i.protocol_answer}) + "\n"
                         for i in good)[:-25])
    cases[f] = ["not valid JSON", "(the file looks truncated)"]
    f = tmp_path / "garbage.jsonl"
    f.write_bytes(json.dumps({"instance_id": good[0].instance_id, "response": "x"}).encode() + b"\n\x00\xff\xfe\x89PNG")
    cases[f] = [f"{f}:2: not UTF-8 text"]
    f = tmp_path / "garbage.bin"
    f.write_bytes(bytes(range(256)) * 4)
    cases[f] = ["binary data cannot be a run file"]
    f = tmp_path / "trunc.eval"
    with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
        for i in good:
            z.writestr(f"samples/{i.instance_id}_epoch_1.json", json.dumps({"id": i.instance_id, "output": {
                "completion": i.protocol_answer}, "pad": "x" * 500}))
    f.write_bytes(f.read_bytes()[:300])
    cases[f] = ["not a readable zip archive", "truncated?"]
    f = tmp_path / "cols.tsv"
    pd.DataFrame([{"index": 0, "answer": "DONE"}]).to_csv(f, sep="\t", index=False)
    cases[f] = ["column(s) prediction missing"]
    f = write_jsonl(tmp_path / "lmms_samples.jsonl", [{"doc_id": 0, "target": "x"}])
    cases[f] = [f"{f}:1: neither 'filtered_resps' nor 'resps' present"]
    f = write_jsonl(tmp_path / "lmms2_samples.jsonl", [{"doc_id": "3", "filtered_resps": "DONE"}])
    cases[f] = [f"{f}:1: 'doc_id' must be an integer position, got '3'"]
    f = tmp_path / "empty.jsonl"
    f.write_text("")
    cases[f] = ["empty file"]
    f = tmp_path / "deep.jsonl"
    f.write_text(json.dumps({"instance_id": good[0].instance_id, "response": "x", "dataset_hash": h}) + "\n"
                 + "[" * 200_000 + "]" * 200_000 + "\n")
    cases[f] = [f"{f}:2: not usable JSON (nested too deeply)"]
    f = tmp_path / "deep.json"
    f.write_text('{"samples": ' + "[" * 200_000 + "]" * 200_000 + "}")
    cases[f] = [f"{f}: not usable JSON (nested too deeply)"]
    for path, needles in cases.items():
        with pytest.raises(RunImportError) as e:
            import_run(store, small_dataset, path, f"bad-{path.stem}")
        for needle in needles:
            assert needle in str(e.value), (path.name, str(e.value))
    assert nothing_stored(store)


def test_long_first_line_is_detected_beyond_4kb_and_bounded(store, small_dataset, tmp_path):
    i = insts(small_dataset)[0]
    long_answer = "Thinking... " * 2000 + i.protocol_answer  # a first line of ~24 KB
    f = write_jsonl(tmp_path / "run.jsonl", [{"response": long_answer, "instance_id": i.instance_id,
                                              "dataset_hash": small_dataset.dataset_hash}])
    assert f.stat().st_size > 4096
    res = import_run(store, small_dataset, f, "long")
    assert res.format == "jsonl" and res.responses == 1
    with pytest.raises(RunImportError, match=r"run.jsonl:1: line longer than 10,000 bytes"):
        import_run(store, small_dataset, f, "long2", limits=Limits(max_line_bytes=10_000))
    with pytest.raises(RunImportError, match=r"run.jsonl:1: response of 24,\d+ characters, above the limit of 1,000"):
        import_run(store, small_dataset, f, "long3", limits=Limits(max_response_chars=1000))


def _write_zip(path: Path, members: list[tuple[str, bytes, int, int]]) -> None:
    """A zip archive of deflated members (name, deflate stream, CRC-32, size), written by its format: local
    headers, the central directory, its end record (a 1980-01-01 timestamp: the same bytes every run)."""
    out, central = bytearray(), bytearray()
    for name, data, crc, size in members:
        raw = name.encode()
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 33, crc, len(data), size, len(raw),
                               0, 0, 0, 0, 0, len(out)) + raw
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 33, crc, len(data), size, len(raw), 0) + raw + data
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(out), 0)
    path.write_bytes(bytes(out + central + end))


def zip_bomb(path: Path, member: str, gib: float = 1.0, declared: int | None = None) -> None:
    """A deflate member of `gib` GiB of zeros (about 1 MB on disk); `declared` rewrites its declared size.

    Each 16 MiB chunk of zeros is deflated ending in a full flush (the compressor forgets what it saw, and the stream
    can be read on from there), so every chunk deflates to the same bytes: the member is one chunk's deflate
    repeated, a GiB in ~0.3 s of CPU (its CRC) instead of ~3 s of deflating, the same archive a zip writer makes."""
    chunk = b"\0" * 2**24
    n = int(gib * 2**30) // len(chunk)
    z = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
    block = z.compress(chunk) + z.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(n):
        crc = zlib.crc32(chunk, crc)
    head = json.dumps({"eval": {"task": "rose"}}).encode()
    z = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
    _write_zip(path, [("header.json", z.compress(head) + z.flush(), zlib.crc32(head), len(head)),
                      (member, block * n + zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15).flush(),
                       crc, n * len(chunk))])
    if declared is not None:  # lie in both headers: the reader must still stop
        data = bytearray(path.read_bytes())
        for sig in (b"PK\x03\x04", b"PK\x01\x02"):
            at = -1
            while (at := data.find(sig, at + 1)) >= 0:
                name_off = 30 if sig == b"PK\x03\x04" else 46
                n = struct.unpack("<H", data[at + (26 if sig == b"PK\x03\x04" else 28):][:2])[0]
                if bytes(data[at + name_off:at + name_off + n]) == member.encode():
                    size_off = 22 if sig == b"PK\x03\x04" else 24
                    data[at + size_off:at + size_off + 4] = struct.pack("<I", declared)
        path.write_bytes(bytes(data))


def test_zip_bomb_eval_is_refused_before_expanding(store, small_dataset, tmp_path):
    f = tmp_path / "bomb.eval"
    zip_bomb(f, f"samples/{insts(small_dataset)[0].instance_id}_epoch_1.json")
    assert f.stat().st_size < 2 * 2**20
    with pytest.raises(RunImportError) as e:
        import_run(store, small_dataset, f, "bomb")
    assert f"{f}: the archive declares 1,073,741,8" in str(e.value) and "refused before expanding it" in str(e.value)
    assert nothing_stored(store)


def test_zip_member_lying_about_its_size_stops_at_the_declared_size(store, small_dataset, tmp_path):
    f = tmp_path / "liar.eval"
    zip_bomb(f, "samples/x_epoch_1.json", gib=0.0625, declared=1000)
    with pytest.raises(RunImportError, match=r"samples/x_epoch_1.json: expands beyond its declared size"):
        import_run(store, small_dataset, f, "liar")
    x = tmp_path / "bomb.xlsx"
    zip_bomb(x, "xl/worksheets/sheet1.xml", gib=0.0625)
    with pytest.raises(RunImportError, match="bomb.xlsx: the archive declares 67,10"):
        import_run(store, small_dataset, x, "bomb", limits=Limits(max_expanded_bytes=2**25))
    assert nothing_stored(store)


def test_reimport_is_checked_before_reading_and_replaced_explicitly(store, small_dataset, tmp_path):
    h = small_dataset.dataset_hash
    f = write_jsonl(tmp_path / "run.jsonl", [{"instance_id": i.instance_id, "response": "COUNT(0)", "dataset_hash": h}
                                             for i in insts(small_dataset)])
    import_run(store, small_dataset, f, "m")
    with pytest.raises(RunImportError, match="already imported"):
        import_run(store, small_dataset, tmp_path / "not-even-there.eval", "m")
    write_jsonl(f, [{"instance_id": i.instance_id, "response": i.protocol_answer, "dataset_hash": h}
                    for i in insts(small_dataset, 5)])
    res = import_run(store, small_dataset, f, "m", replace=True)
    assert res.replaced and res.responses == 5
    rows = stored(store, "model:m")
    assert len(rows) == 5 and all(r["passed"] for r in rows.values())
    delete_run(store, "model:m")
    assert list_runs(store) == []
    # removed again (a second tab), or never imported: refused by name, not a TypeError
    for gone in ("model:m", "model:never"):
        with pytest.raises(RunImportError, match=f"no run '{gone}' is stored"):
            delete_run(store, gone)


def test_format_can_be_forced_and_detection_reports(small_dataset, tmp_path):
    f = write_jsonl(tmp_path / "x.jsonl", lmms_07_lines(small_dataset, small_dataset.select(split="dev"),
                                                        lambda k, i: i.protocol_answer))
    run = read_run(f, small_dataset, "lmms-eval")
    assert run.format == "lmms-eval" and run.detected == "given with --format" and run.resolved
    with pytest.raises(RunImportError, match="unknown format"):
        read_run(f, small_dataset, "csv")


def test_cli_import_run(small_dataset, tmp_path, fresh_location):
    f = write_jsonl(tmp_path / "run_samples_rose.jsonl", lmms_07_lines(
        small_dataset, small_dataset.select(split="dev"), lambda k, i: i.protocol_answer))
    db = fresh_location()
    args = ["import-run", str(f), "--solver", "q", "--dataset", str(small_dataset.root), "--db", str(db)]
    r = run_cli(*args)
    assert r.returncode == 0 and "format: lmms-eval" in r.stdout and "imported" in r.stdout, r.stderr
    r = run_cli(*args)
    assert r.returncode == 2 and "nothing was stored" in r.stderr and "--replace" in r.stderr
    r = run_cli(*args, "--replace")
    assert r.returncode == 0 and "replaced" in r.stdout
    bomb = tmp_path / "bomb.eval"
    zip_bomb(bomb, "samples/a_epoch_1.json", gib=0.0625)
    r = run_cli(args[0], str(bomb), "--solver", "bomb", *args[4:], "--max-expanded-mb", "32")
    assert r.returncode == 2 and "refused before expanding it" in r.stderr and "nothing was stored" in r.stderr
    bare = write_jsonl(tmp_path / "bare.jsonl", [{"instance_id": i.instance_id, "response": "DONE"}
                                                 for i in insts(small_dataset)])
    r = run_cli(args[0], str(bare), "--solver", "b", *args[4:])
    assert r.returncode == 2 and "--trust-ids" in r.stderr
    r = run_cli(args[0], str(bare), "--solver", "b", "--trust-ids", *args[4:])
    assert r.returncode == 0 and "imported 12 responses" in r.stdout


# --------------------------------------------------------------------------- uploads name the user's file

def _no_temp_path(texts):
    return not any("rose-upload-" in t or "/tmp" in t for t in texts)


def test_an_upload_s_errors_name_the_uploaded_file(store, small_dataset):
    from rose_core.runs.importer import import_upload

    data = (json.dumps({"instance_id": insts(small_dataset)[0].instance_id, "response": "DONE"}) + "\n{oops\n").encode()
    with pytest.raises(RunImportError) as e:
        import_upload(store, small_dataset, "my run (v2).jsonl", data, "m")
    assert e.value.problems[0].startswith("my run (v2).jsonl:2: not valid JSON"), e.value.problems
    assert _no_temp_path(e.value.problems) and nothing_stored(store)
    with pytest.raises(RunImportError) as e:  # a library's own message quotes the path it was given
        import_upload(store, small_dataset, "GPT_ROSE.xlsx", b"PK\x03\x04 truncated", "m")
    assert e.value.problems[0].startswith("GPT_ROSE.xlsx: ") and _no_temp_path(e.value.problems)
    with pytest.raises(RunImportError) as e:  # a path in the name is the user's name, not a place on the server
        import_upload(store, small_dataset, "../../etc/evil.jsonl", b"\x00\x01binary", "m")
    assert e.value.problems == ["../../etc/evil.jsonl: not text, not a zip archive: binary data cannot be a run file"]
    with pytest.raises(RunImportError) as e:  # a control character in the name cannot reach the file system
        import_upload(store, small_dataset, "bad\x00name.jsonl", b"\x00\x01binary", "m")
    assert e.value.problems == ["bad\x00name.jsonl: not text, not a zip archive: binary data cannot be a run file"]


def test_an_upload_s_notes_and_stored_source_name_the_uploaded_file(store, small_dataset):
    from rose_core.runs.importer import import_upload

    preds = [i.protocol_answer for i in insts(small_dataset)]
    preds[3] = "Failed to obtain answer via API."
    buf = io.BytesIO()
    pd.DataFrame(vlm_rows(small_dataset, preds)).to_csv(buf, sep="\t", index=False)
    res = import_upload(store, small_dataset, "GPT_ROSE.tsv", buf.getvalue())
    assert res.solver == "GPT_ROSE" and res.responses == 11
    assert any(n.startswith("1 errored samples") and "first at GPT_ROSE.tsv:row " in n for n in res.notes), res.notes
    run = list_runs(store)[0]
    meta = json.loads(run["meta"])
    assert run["source_file"] == "GPT_ROSE.tsv" and _no_temp_path(res.notes + [f["where"] for f in meta["failures"]])


# --------------------------------------------------------------------------- found by the audit (issue 8)

@pytest.mark.parametrize("ext", ["tsv", "json"])
def test_a_whole_prediction_longer_than_excel_s_limit_is_scored_not_called_truncated(store, small_dataset, tmp_path,
                                                                                      ext):
    """A TSV or JSON keeps a 44,000-character answer whole: it cannot have been cut at 32,767. It was reported
    as 'cut at Excel's limit' and left out (or stored empty with --errored invalid), though it passes."""
    preds = [i.protocol_answer for i in insts(small_dataset)]
    preds[0] = "Reasoning. " * 4000 + preds[0]
    preds[1] = ("x" * EXCEL_CELL_LIMIT)  # exactly the cut: flagged
    df = pd.DataFrame(vlm_rows(small_dataset, preds))
    f = tmp_path / f"M_ROSE.{ext}"
    df.to_csv(f, sep="\t", index=False) if ext == "tsv" else df.to_json(f, orient="records")
    res = import_run(store, small_dataset, f, "long", errored="invalid")
    rows = stored(store, "model:long")
    assert res.counts == {"truncated": 1} and len(rows) == 12
    assert rows[insts(small_dataset)[0].instance_id]["passed"] == 1
    assert len(rows[insts(small_dataset)[0].instance_id]["response"]) == len(preds[0])
    assert rows[insts(small_dataset)[1].instance_id]["response"] == ""


def test_a_one_line_json_dump_longer_than_the_line_limit_is_read_as_a_document(store, small_dataset, tmp_path):
    """pandas and json.dump write a JSON document on one line: detection must not read it as a JSON line (a
    41 MB VLMEvalKit dump was refused as 'line longer than 33,554,432 bytes: not a run file line')."""
    f = tmp_path / "M_ROSE.json"
    pd.DataFrame(vlm_rows(small_dataset, [i.protocol_answer for i in insts(small_dataset)])).to_json(f, orient="records")
    assert f.read_bytes().count(b"\n") == 0 and f.stat().st_size > 2000
    res = import_run(store, small_dataset, f, "one-line", limits=Limits(max_line_bytes=1000))
    assert res.format == "vlmevalkit" and res.responses == 12
    g = tmp_path / "garbage.json"
    g.write_bytes(b"[\n" + bytes(range(128, 256)) * 8)
    with pytest.raises(RunImportError, match=r"garbage.json:2: not UTF-8 text"):
        import_run(store, small_dataset, g, "g")


def test_lmms_eval_request_failure_texts_are_errored_not_the_model_s_invalid_answers(store, small_dataset, tmp_path):
    """lmms-eval's API wrappers log '[LMMS_EVAL_REQUEST_FAILED after N retries] …' (and
    '[LMMS_EVAL_BUDGET_EXCEEDED]') in place of an answer: they were scored as the model's invalid answers."""
    dev = small_dataset.select(split="dev")
    fails = {3: "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Error code: 429 - rate limit", 4: "[LMMS_EVAL_BUDGET_EXCEEDED]"}
    f = write_jsonl(tmp_path / "m_samples_rose_dev.jsonl",
                    lmms_07_lines(small_dataset, dev, lambda k, i: fails.get(k, i.protocol_answer)))
    res = import_run(store, small_dataset, f, "m")
    assert res.counts == {"errored": 2} and res.responses == len(dev) - 2
    assert any("2 errored samples" in n and "LMMS_EVAL_REQUEST_FAILED" in n for n in res.notes), res.notes
    assert all(r["passed"] for r in stored(store, "model:m").values())
    res = import_run(store, small_dataset, f, "m2", errored="invalid")
    rows = stored(store, "model:m2")
    assert res.responses == len(dev) and {rows[dev[k].instance_id]["valid"] for k in fails} == {0}


def _ambiguous_position(ds):
    """A doc_id at which two export orders hold different instances with the same prompt and gold answer."""
    from rose_core.runs.resolve import export_orders

    orders = [o for _, o in export_orders(ds, None)]
    for a, oa in enumerate(orders):
        for ob in orders[a + 1:]:
            for k in range(min(len(oa), len(ob))):
                ia, ib = ds.instances[oa[k]], ds.instances[ob[k]]
                if oa[k] != ob[k] and (ia.prompt, ia.protocol_answer) == (ib.prompt, ib.protocol_answer):
                    return k, ib
    return None


def test_lmms_eval_lines_that_fit_two_export_orders_are_refused(store, small_dataset, tmp_path):
    """A few lines (an `--limit 1` smoke test) can fit several export orders: T1 prompts are all alike and a
    count answer is shared by many scenes. The first fitting order was taken, silently putting a dev answer
    on a test instance; now it is refused unless the manifest says which export it was."""
    found = _ambiguous_position(small_dataset)
    assert found is not None  # the small build has such positions (it has many)
    k, inst = found
    line = dict(lmms_07_lines(small_dataset, [inst], lambda _, i: i.protocol_answer)[0], doc_id=k)
    f = write_jsonl(tmp_path / "one_samples_rose.jsonl", [line])
    with pytest.raises(RunImportError, match=rf"one_samples_rose.jsonl:1: doc_id cannot be placed with certainty.*"
                                             rf"{inst.instance_id}.*--export-manifest"):
        import_run(store, small_dataset, f, "one")
    assert nothing_stored(store)


def test_a_manifest_that_does_not_fit_the_lines_is_refused(store, small_dataset, tmp_path):
    dev = small_dataset.select(split="dev")
    f = write_jsonl(tmp_path / "m_samples.jsonl", lmms_07_lines(small_dataset, dev, lambda k, i: i.protocol_answer))
    export_dataset(small_dataset, "hf", tmp_path / "hf_test", split="test")
    with pytest.raises(RunImportError, match="the export manifest's order does not fit this file"):
        import_run(store, small_dataset, f, "m", manifest=manifest_path(tmp_path / "hf_test", "hf"))
    export_dataset(small_dataset, "hf", tmp_path / "hf_dev", split="dev")
    res = import_run(store, small_dataset, f, "m", manifest=manifest_path(tmp_path / "hf_dev", "hf"))
    assert res.responses == len(dev) and any("manifest" in n for n in res.notes)


@pytest.mark.parametrize("name", ["Human", "human", "Human (pilot)", "oracle (agent)", "GPT-5.5 (published)",
                                  "x (Model)"])
def test_solver_names_that_read_as_another_solver_s_label_are_refused(store, small_dataset, tmp_path, name):
    """A model named 'oracle (agent)' beside the agent 'oracle' was pooled with it into one row (Avg 53.6 from a
    100.0 oracle and a 7.1 random run); a model named 'Human' would be pooled with the participants."""
    f = write_jsonl(tmp_path / "run.jsonl", [{"instance_id": i.instance_id, "response": i.protocol_answer,
                                              "dataset_hash": small_dataset.dataset_hash} for i in insts(small_dataset)])
    with pytest.raises(RunImportError, match="reads as another solver's label"):
        import_run(store, small_dataset, f, name)
    assert nothing_stored(store)


def test_binary_garbage_in_a_tsv_names_its_line(store, small_dataset, tmp_path):
    f = tmp_path / "M_ROSE.tsv"
    f.write_bytes(b"index\tprediction\n0\tDONE\n1\t\xff\xfe\x00garbage\n")
    with pytest.raises(RunImportError, match=r"M_ROSE.tsv:3: not UTF-8 text"):
        import_run(store, small_dataset, f, "g")


def xlsx_with_sheet(path: Path, rows_xml: bytes, repeat: int, head: bytes = b"") -> None:
    """A real workbook (pandas) whose first sheet's rows are replaced by `head`, then `rows_xml` written `repeat`
    times."""
    base = path.with_suffix(".base.xlsx")
    pd.DataFrame([{"index": 0, "prediction": "DONE"}]).to_excel(base, index=False)
    with zipfile.ZipFile(base) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for i in zin.infolist():
            if i.filename != "xl/worksheets/sheet1.xml":
                z.writestr(i, zin.read(i))
                continue
            with z.open(i.filename, "w") as w:
                w.write(b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/'
                        b'spreadsheetml/2006/main"><sheetData><row><c t="inlineStr"><is><t>index</t></is></c>'
                        b'<c t="inlineStr"><is><t>prediction</t></is></c></row>' + head)
                for _ in range(repeat):
                    w.write(rows_xml)
                w.write(b"</sheetData></worksheet>")


def test_xlsx_bombs_are_refused_before_openpyxl_reads_them(store, small_dataset, tmp_path):
    """Within the expansion limit an .xlsx could still hold millions of cells: openpyxl took 55 s for a 118 KB
    workbook of 32 MiB of rows (about 15 minutes at the 512 MiB limit). Rows, cells and tags are counted on the
    decompressed XML first, against what a run on this dataset can hold; so is a cell's text length."""
    row = b'<row><c t="inlineStr"><is><t>1</t></is></c><c t="inlineStr"><is><t>DONE</t></is></c></row>'
    f = tmp_path / "rows.xlsx"
    xlsx_with_sheet(f, row * 10_000, 36)
    assert f.stat().st_size < 200_000
    with pytest.raises(RunImportError, match=r"rows.xlsx:xl/worksheets/sheet1.xml: more than [\d,]+ (rows|XML tags)"
                                             r".*refused before reading the workbook"):
        import_run(store, small_dataset, f, "rows")
    g = tmp_path / "text.xlsx"
    xlsx_with_sheet(g, b"x" * 2**20, 8, head=b'<row><c t="inlineStr"><is><t>')
    with pytest.raises(RunImportError, match=r"text.xlsx:xl/worksheets/sheet1.xml: a text of more than 6,004,096 "
                                             r"bytes without a tag"):
        import_run(store, small_dataset, g, "text")
    assert nothing_stored(store)


def test_lmms_eval_s_results_json_is_named_for_what_it_is(store, small_dataset):
    """The file lmms-eval writes beside the samples (the fixture's results.json) holds no answers."""
    f = FIXTURES / "results.json"
    with pytest.raises(RunImportError, match="lmms-eval's aggregated results, not its samples.*--log_samples"):
        import_run(store, small_dataset, f, "r")


def test_an_inspect_message_part_whose_text_is_not_a_string_is_refused_not_a_crash(store, small_dataset, tmp_path):
    """Found by mutating real logs: a content part {"type": "text", "text": 1.5} raised a raw TypeError."""
    i = insts(small_dataset)[0]
    j = tmp_path / "log.json"
    j.write_text(json.dumps({"eval": {}, "status": "success", "samples": [{
        "id": i.instance_id, "epoch": 1, "metadata": {"dataset_hash": small_dataset.dataset_hash},
        "input": [{"role": "user", "content": [{"type": "text", "text": 1.5}]}], "target": i.protocol_answer,
        "output": {"completion": i.protocol_answer}}]}))
    with pytest.raises(RunImportError, match=r"log.json:samples\[0\]: the prompt sent is not"):
        import_run(store, small_dataset, j, "m")



@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from([b"<", b"x", b"xxxxxxxx"]), max_size=120).map(b"".join),
       st.integers(0, 40), st.integers(1, 25))
def test_the_xlsx_scan_finds_every_text_longer_than_two_windows(piece, gap, window):
    """`longest_text` tries a few positions per piece instead of splitting it: it must still measure exactly
    every run without a tag longer than two windows (and never report more than the truth)."""
    from rose_core.runs.formats.vlmevalkit import longest_text

    runs = (b"x" * gap + piece).split(b"<")
    closed = runs[:-1] if len(runs) > 1 else runs
    longest, carried = longest_text(piece, gap, window)
    assert carried == len(runs[-1])
    truth = max(map(len, closed))
    assert longest <= truth and (truth <= 2 * window or longest == truth)


# --------------------------------------------------------------------------- names from the file's author

@pytest.mark.parametrize("solver, says", [("gpt\nHuman", "line break or an invisible control character (U+000A)"),
                                          ("a\u202eb", "(U+202E)"), ("x" * 100_000, "100,000 characters, at most 120")])
def test_a_solver_name_with_a_line_break_or_of_100000_characters_is_refused(store, small_dataset, tmp_path, solver,
                                                                            says):
    f = write_jsonl(tmp_path / "m.jsonl", [{"instance_id": i.instance_id, "response": "DONE",
                                            "dataset_hash": small_dataset.dataset_hash} for i in insts(small_dataset)])
    with pytest.raises(RunImportError) as e:
        import_run(store, small_dataset, f, solver)
    assert says in e.value.problems[0] and len(e.value.problems[0]) < 300
    assert nothing_stored(store)


def test_a_long_non_ascii_upload_name_is_imported_under_a_shortened_name(store, small_dataset):
    from rose_core.runs.importer import MAX_FILE_NAME_BYTES, import_upload

    name = "模型输出结果" * 40 + "_samples_rose.jsonl"                    # 240 letters, 739 bytes in UTF-8
    data = "".join(json.dumps({"instance_id": i.instance_id, "response": "DONE",
                               "dataset_hash": small_dataset.dataset_hash}) + "\n" for i in insts(small_dataset))
    res = import_upload(store, small_dataset, name, data.encode(), "long-name")
    assert res.responses == len(insts(small_dataset))
    from rose_core.runs.importer import _file_name
    short = _file_name(name)
    assert short.endswith(".jsonl")                                    # the format is still told by it
    assert len(short.encode()) <= MAX_FILE_NAME_BYTES
    # the name alone (no solver typed): the shortened stem is the solver name, within the limit
    assert import_upload(store, small_dataset, name, data.encode()).solver == Path(short).stem
