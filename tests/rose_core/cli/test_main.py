"""The command line on good and bad input, in-process (tests/command_line.py); one real `python -m rose_core`
process checks the entry point's exit code on bad input (tests/test_project.py checks it and the console script
on --help)."""
import json

import pytest

from tests.command_line import run_cli as run
from tests.command_line import run_process


def test_check_prints_one_json_object(small_dataset):
    iid = next(i for i in small_dataset.instances.values() if i.template == "T3").instance_id
    r = run("check", "--dataset", str(small_dataset.root), "--instance", iid,
            "--response", "hmm " + small_dataset.instances[iid].protocol_answer)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"instance_id", "template", "valid", "pass", "parsed", "failure"} <= out.keys()
    assert out["pass"] is True and out["failure"] is None


def test_check_unknown_instance(small_dataset):
    """The smoke test of the process boundary: `python -m rose_core` exits 2 with the error on stderr."""
    r = run_process("check", "--dataset", str(small_dataset.root), "--instance", "nope", "--response", "DONE")
    assert r.returncode == 2 and "unknown instance 'nope'" in r.stderr


def test_check_not_a_dataset(tmp_path):
    r = run("check", "--dataset", str(tmp_path), "--instance", "x", "--response", "DONE")
    assert r.returncode == 2 and "no manifest.json" in r.stderr


def test_score_reports_bad_lines_with_numbers(small_dataset, tmp_path):
    good = next(iter(small_dataset.instances))
    f = tmp_path / "run.jsonl"
    f.write_text("\n".join([
        json.dumps({"instance_id": good, "response": "COUNT(1)"}),
        "{not json",
        json.dumps({"instance_id": "missing-T1", "response": "COUNT(1)"}),
        json.dumps({"response": "COUNT(1)"}),
        json.dumps({"instance_id": good, "response": 3}),
        json.dumps({"instance_id": good, "response": "COUNT(2)"}),
    ]) + "\n")
    r = run("score", "--dataset", str(small_dataset.root), "--responses", str(f))
    assert r.returncode == 2
    assert f"{f}:2: not valid JSON" in r.stderr
    assert f"{f}:3: unknown instance_id 'missing-T1'" in r.stderr
    assert f"{f}:4: field 'instance_id' missing" in r.stderr
    assert f"{f}:5: field 'response' must be a string" in r.stderr
    assert f"{f}:6: duplicate response" in r.stderr and "first at line 1" in r.stderr


def test_score_binary_garbage(small_dataset, tmp_path):
    f = tmp_path / "junk.jsonl"
    f.write_bytes(b'{"a":1}\n\xff\xfe\x00garbage')
    r = run("score", "--dataset", str(small_dataset.root), "--responses", str(f))
    assert r.returncode == 2 and f"{f}:2: not UTF-8" in r.stderr


def test_score_oracle_json_per_solver(small_dataset, tmp_path):
    f = tmp_path / "runs.jsonl"
    lines = []
    for inst in small_dataset.instances.values():
        lines.append({"instance_id": inst.instance_id, "response": inst.protocol_answer, "solver": "oracle"})
        lines.append({"instance_id": inst.instance_id, "response": "COUNT(0)", "solver": "zero"})
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = run("score", "--dataset", str(small_dataset.root), "--responses", str(f), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["oracle"]["avg"] == 100.0 and out["oracle"]["valid"] == 100.0
    assert out["zero"]["pass_rate"]["L-Clk"] == 0.0 and out["zero"]["valid_rate"]["L-Clk"] == 0.0
    assert out["zero"]["pass_rate"]["G-Cnt"] == 0.0  # every scene has at least two targets
    text = run("score", "--dataset", str(small_dataset.root), "--responses", str(f))
    assert "solver: oracle" in text.stdout and "Counting Avg" in text.stdout


def test_build_refuses_existing_and_bad_scale(tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "keep.txt").write_text("mine")
    r = run("build", "--out", str(tmp_path / "ds"), "--scale", "0.01")
    assert r.returncode == 2 and "exists and is not empty" in r.stderr
    assert (tmp_path / "ds" / "keep.txt").read_text() == "mine"
    r = run("build", "--out", str(tmp_path / "x"), "--scale", "1.5")
    assert r.returncode == 2 and "--scale must be in (0, 1]" in r.stderr


def test_build_prints_composition(tmp_path):
    r = run("build", "--out", str(tmp_path / "ds"), "--scale", "0.01", "--seed", "3")
    assert r.returncode == 0, r.stderr
    assert "Total" in r.stdout and "instances T1-T5" in r.stdout
    assert json.loads((tmp_path / "ds" / "manifest.json").read_text())["seed"] == 3


def test_failed_build_leaves_nothing(tmp_path, monkeypatch):
    from rose_core import build_dataset
    from rose_core.benchmarks.rose import dataset as dsmod

    calls = {"n": 0}
    real = dsmod._build_one

    def flaky(args):
        calls["n"] += 1
        if calls["n"] == 5:
            raise OSError("disk full (simulated)")
        return real(args)

    monkeypatch.setattr(dsmod, "_build_one", flaky)
    with pytest.raises(OSError):
        build_dataset(tmp_path / "ds", scale=0.02, workers=1)
    assert list(tmp_path.iterdir()) == []  # no dataset, no temporary folder


def test_dataset_load_detects_tampering(small_dataset, tmp_path):
    import shutil

    from rose_core import Dataset, DatasetError

    copy = tmp_path / "copy"
    shutil.copytree(small_dataset.root, copy)
    with open(copy / "instances.jsonl", "a") as f:
        f.write("\n")
    with pytest.raises(DatasetError, match="does not match manifest"):
        Dataset.load(copy)


@pytest.mark.slow  # seven CLI processes, each ~1.2 s of imports
def test_every_database_command_works_on_the_database_rose_db_names(store, small_dataset, tmp_path):
    """ROSE_DB (a SQLite file, or a postgresql:// URL) is the default database of every command that reads or
    writes one: import-run, runs, export-table, report, plan, rescore."""
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study
    from tests.participants import new_session, run_to_end

    study = create_study(store, small_dataset, StudyConfig(
        name="cli", split="dev", templates=["T1"], items_per_participant=3, practice_items=0, attention_every=0,
        seed=2), ids=SequentialIds("cli"), clock=FakeClock())
    run_to_end(new_session(store, small_dataset, study, "C1"))
    rows = [{"instance_id": i.instance_id, "response": i.protocol_answer, "dataset_hash": small_dataset.dataset_hash}
            for i in small_dataset.select(split="dev")]
    f = tmp_path / "run.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    def cli(*args: str):
        r = run(*args, env={"ROSE_DB": store.location})
        assert r.returncode == 0, (args, r.stderr[-2000:])
        return r

    ds = ["--dataset", str(small_dataset.root)]
    assert f"imported {len(rows)} responses" in cli("import-run", str(f), "--solver", "m", *ds).stdout
    assert "model:m" in cli("runs").stdout and "human" in cli("runs").stdout
    out = tmp_path / "responses.csv"
    assert "wrote 3 responses rows" in cli("export-table", "--table", "responses", "--format", "csv",
                                           "--study", study.study_id, "--out", str(out)).stdout
    report = json.loads(cli("report", "--json", "--boot", "20", "--no-exclusions", *ds).stdout)
    by_solver = {r["solver"]: r for r in report["rows"]}
    assert by_solver["m"]["G-Cnt"] == 100.0 and by_solver["Human"]["G-Cnt"] == 100.0  # T1, answered right
    plan = json.loads(cli("plan", "--study", "cli", "--accuracy", "0.9", "--json", *ds).stdout)
    assert plan["participants"] > 0
    assert "0 verdicts changed" in cli("rescore", "--dry-run", *ds).stdout
    assert store.query("SELECT count(*) AS n FROM responses")[0]["n"] == len(rows) + 3
