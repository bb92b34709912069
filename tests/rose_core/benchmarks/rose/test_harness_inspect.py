"""Round trip through real inspect_ai: the task file `export --format inspect-task` ships, run by inspect
with a tiny model provider that answers from the export (oracle answers, some wrong, one API failure),
logs written by inspect itself (.eval with Zstandard members, and .json), imported back."""
import base64
import functools
import hashlib
import json
import os
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rose_core.benchmarks.rose.harness_export import export_dataset
from rose_core.runs.importer import RunImportError, import_run
from rose_core.storage.runs import list_runs
from rose_core.storage import open_store

ANSWERS: dict[tuple[str, str], tuple[str, str]] = {}  # (image sha256, prompt) -> (instance id, answer)
FAIL: set[str] = set()


def _image_bytes(image: str) -> bytes:
    if image.startswith("data:"):
        return base64.b64decode(image.split(",", 1)[1])
    return Path(image).read_bytes()


@functools.cache
def _provider() -> None:
    """Register the model provider `rose_from_export` with inspect_ai, imported here when a test first runs it:
    imported at the module's top, inspect_ai (~2 s of CPU) was loaded by every pytest worker that collected this
    module, also those that ran none of its tests."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import ContentImage, ContentText, GenerateConfig, ModelAPI, ModelOutput, modelapi

    class FromExport(ModelAPI):
        """Answers from the export like a model would see it: by the image and the prompt it was sent."""

        def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                     config: GenerateConfig = GenerateConfig(), **model_args):
            super().__init__(model_name, base_url, api_key, [], config)

        async def generate(self, input, tools, tool_choice, config) -> ModelOutput:
            parts = [c for m in input if isinstance(m.content, list) for c in m.content]
            image = next(c.image for c in parts if isinstance(c, ContentImage))
            prompt = next(c.text for c in parts if isinstance(c, ContentText))
            iid, answer = ANSWERS[(hashlib.sha256(_image_bytes(image)).hexdigest(), prompt)]
            if iid in FAIL:
                raise RuntimeError(f"simulated API failure for {iid}")
            return ModelOutput.from_content(model=self.model_name, content=f"Let me look.\n{answer}")

    @modelapi(name="rose_from_export")
    def rose_from_export():
        return FromExport


@pytest.fixture(scope="module")
def inspect_logs(small_dataset, tmp_path_factory):
    """Run the shipped task in inspect_ai (2 epochs) and keep the .eval log and a .json copy of it."""
    _provider()
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log

    root = tmp_path_factory.mktemp("inspect")
    task_dir = root / "task"
    export_dataset(small_dataset, "inspect-task", task_dir, split="dev", templates=["T1", "T3", "T4"])
    rows = [json.loads(x) for x in (task_dir / "rose.jsonl").read_text().splitlines()]
    wrong = set()
    for k, r in enumerate(rows):
        sha = hashlib.sha256((task_dir / r["image"]).read_bytes()).hexdigest()
        answer = r["answer"] if k % 4 else "COUNT(77)"
        if k % 4 == 0:
            wrong.add(r["instance_id"])
        ANSWERS[(sha, r["prompt"])] = (r["instance_id"], answer)
    FAIL.clear()
    FAIL.add(rows[1]["instance_id"])
    def run():
        return inspect_eval("rose_inspect.py", model="rose_from_export/oracle", epochs=2,
                            log_dir=str(root / "logs"), log_format="eval", display="none", fail_on_error=False)

    cwd = os.getcwd()
    os.chdir(task_dir)  # the way a user runs it: `inspect eval rose_inspect.py` in the exported folder
    try:  # in a thread of its own: the e2e tests' Playwright keeps an event loop running in this one
        with ThreadPoolExecutor(1) as pool:
            logs = pool.submit(run).result()
    finally:
        os.chdir(cwd)
    eval_path = Path(logs[0].location)
    json_path = root / "logs" / (eval_path.stem + ".json")
    write_eval_log(read_eval_log(str(eval_path)), str(json_path), format="json")
    return {"eval": eval_path, "json": json_path, "rows": rows, "wrong": wrong, "failed": rows[1]["instance_id"]}


def test_the_eval_log_is_zstandard(inspect_logs):
    with zipfile.ZipFile(inspect_logs["eval"]) as z:
        methods = {i.compress_type for i in z.infolist() if i.filename.startswith("samples/")}
    assert methods == {93}  # what made the old importer crash with NotImplementedError


@pytest.mark.parametrize("kind", ["eval", "json"])
def test_inspect_logs_import_right_with_errors_and_epochs_counted(inspect_logs, small_dataset, tmp_path, kind):
    store = open_store(tmp_path / "rose.db")
    rows, failed = inspect_logs["rows"], inspect_logs["failed"]
    res = import_run(store, small_dataset, inspect_logs[kind], "insp")
    assert res.format == "inspect" and res.responses == len(rows) - 1
    assert res.counts == {"later_epochs": len(rows), "errored": 1}
    assert any(f"{len(rows)} samples of epochs after the first were left out" in n for n in res.notes)
    assert any("1 errored samples (harness/API failures): not stored (--errored skip)" in n
               and "simulated API failure" in n for n in res.notes)
    got = {r["instance_id"]: r for r in store.query("SELECT * FROM responses WHERE run_id = 'model:insp'")}
    assert set(got) == {r["instance_id"] for r in rows} - {failed}
    assert all(bool(got[i]["passed"]) == (i not in inspect_logs["wrong"]) for i in got)
    res = import_run(store, small_dataset, inspect_logs[kind], "insp-inv", errored="invalid")
    got = {r["instance_id"]: r for r in store.query("SELECT * FROM responses WHERE run_id = 'model:insp-inv'")}
    assert res.responses == len(rows) and got[failed]["valid"] == 0
    meta = json.loads(next(r for r in list_runs(store) if r["run_id"] == "model:insp-inv")["meta"])
    assert meta["counts"]["errored"] == 1 and meta["errored_policy"] == "invalid"
    assert meta["failures"][0]["instance_id"] == failed


def test_report_says_which_runs_left_errored_samples_out(inspect_logs, small_dataset, tmp_path):
    """With --errored skip a run's rates are over the samples it answered: the report says so, loudly, next to
    the numbers (the import message alone was the only place it was said); with --errored invalid it is silent."""
    from rose_core.analysis import report_data
    from rose_core.runs.importer import skipped_samples

    store = open_store(tmp_path / "rose.db")
    import_run(store, small_dataset, inspect_logs["eval"], "insp")
    report, _ = report_data(store, n_boot=50)
    assert skipped_samples(store, {"model:insp"}) == {"model:insp": {"errored": 1, "not_run": 0, "truncated": 0}}
    assert "model:insp: 1 errored" in report["runs_warning"] and "--errored invalid" in report["runs_warning"]
    with store.write() as c:   # a run stored before the import recorded its switch: it was skipped (the default)
        meta = json.loads(c.execute("SELECT meta FROM runs WHERE run_id = 'model:insp'").fetchone()[0])
        meta.pop("errored_policy")
        c.execute("UPDATE runs SET meta = ? WHERE run_id = 'model:insp'", (json.dumps(meta),))
    assert skipped_samples(store, {"model:insp"}) == {"model:insp": {"errored": 1, "not_run": 0, "truncated": 0}}
    import_run(store, small_dataset, inspect_logs["eval"], "insp", errored="invalid", replace=True)
    assert report_data(store, n_boot=50)[0]["runs_warning"] is None
    assert skipped_samples(store, {"model:insp"}) == {}


def test_inspect_samples_without_ids_are_counted_and_refused(inspect_logs, small_dataset, tmp_path):
    doc = json.loads(inspect_logs["json"].read_text())
    for s in doc["samples"][:3]:
        del s["id"]
        s["metadata"].pop("instance_id")
    f = tmp_path / "noid.json"
    f.write_text(json.dumps(doc))
    store = open_store(tmp_path / "rose.db")
    with pytest.raises(RunImportError) as e:
        import_run(store, small_dataset, f, "noid")
    assert str(e.value).startswith("3 samples have no id")
    assert f"{f}:samples[0]: sample has no 'id'" in str(e.value)
    assert list_runs(store) == []


def test_inspect_log_of_another_build_is_refused(inspect_logs, small_dataset, tmp_path):
    doc = json.loads(inspect_logs["json"].read_text())
    doc["samples"][2]["metadata"]["dataset_hash"] = "0123456789abcdef"
    f = tmp_path / "other.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(RunImportError, match=r"other.json:samples\[2\]: dataset_hash '0123456789abcdef' is not"):
        import_run(open_store(tmp_path / "rose.db"), small_dataset, f, "other")


def _run_task(task_dir: Path, log_dir: Path, **kw):
    _provider()
    from inspect_ai import eval as inspect_eval

    cwd = os.getcwd()
    os.chdir(task_dir)
    try:
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(lambda: inspect_eval("rose_inspect.py", model="rose_from_export/oracle",
                                                    log_dir=str(log_dir), log_format="eval", display="none",
                                                    **kw)).result()
    finally:
        os.chdir(cwd)


def test_a_log_of_an_eval_that_stopped_counts_the_samples_it_never_ran(small_dataset, tmp_path):
    """`inspect eval` stops at the first sample error unless told otherwise, leaving a log (status 'error') of
    the samples done so far. It was imported as a complete run of those few samples without a word."""
    task_dir = tmp_path / "task"
    export_dataset(small_dataset, "inspect-task", task_dir, split="dev", templates=["T1", "T2"])
    rows = [json.loads(x) for x in (task_dir / "rose.jsonl").read_text().splitlines()]
    for r in rows:
        sha = hashlib.sha256((task_dir / r["image"]).read_bytes()).hexdigest()
        ANSWERS[(sha, r["prompt"])] = (r["instance_id"], r["answer"])
    FAIL.clear()
    FAIL.add(rows[len(rows) // 2]["instance_id"])
    try:
        log = _run_task(task_dir, tmp_path / "logs", max_samples=1)[0]  # one at a time: it stops halfway
    finally:
        FAIL.clear()
    assert log.status == "error"
    store = open_store(tmp_path / "rose.db")
    res = import_run(store, small_dataset, Path(log.location), "stopped")
    in_log = res.responses + res.counts["errored"]
    assert 0 < res.responses < len(rows) and res.counts["not_run"] == len(rows) - in_log
    assert any("the eval did not finish (status 'error'" in n and "simulated API failure" in n for n in res.notes)
    assert any(f"{len(rows) - in_log} samples the eval never ran" in n and "not stored" in n for n in res.notes)
    res = import_run(store, small_dataset, Path(log.location), "stopped-inv", errored="invalid")
    got = store.query("SELECT valid FROM responses WHERE run_id = 'model:stopped-inv'")
    assert res.responses == len(rows) and sum(not r["valid"] for r in got) == len(rows) - (in_log - res.counts["errored"])


def test_later_epochs_are_not_expanded(inspect_logs, small_dataset, tmp_path):
    """A two-epoch log of a full run is twice the size of what is read (the first epoch): later epochs are
    left out by their member names, before anything is expanded, so they do not count against the limit."""
    import io
    import struct

    import zstandard

    from rose_core.runs.importer import Limits

    src = inspect_logs["eval"]
    f = tmp_path / "epochs.eval"
    first = 0
    with zipfile.ZipFile(src) as z, src.open("rb") as raw, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as out:
        for i in z.infolist():
            raw.seek(i.header_offset)
            n, m = struct.unpack("<HH", raw.read(30)[26:30])
            raw.seek(i.header_offset + 30 + n + m)
            data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw.read(i.compress_size)),
                                                              read_across_frames=True).read()
            out.writestr(i.filename, data)
            first += len(data) if i.filename.startswith("samples/") and i.filename.endswith("_epoch_1.json") else 0
        with out.open("samples/X_epoch_2.json", "w") as w:  # a later epoch far above the limit
            for _ in range(4):
                w.write(b"\0" * 2**24)
    rows = inspect_logs["rows"]
    res = import_run(open_store(tmp_path / "rose.db"), small_dataset, f, "epochs",
                     limits=Limits(max_expanded_bytes=first + 2**20))
    assert res.responses == len(rows) - 1 and res.counts["later_epochs"] == len(rows) + 1
