"""`study create / show / list / close / clone / export-config` and `plan` on a sample, in-process
(tests/command_line.py) on a SQLite file; one real process checks the `study` family's exit code on bad input."""
import json

from tests.command_line import ROOT, run_process
from tests.command_line import run_cli as run

EXAMPLE = ROOT / "docs" / "examples" / "study.toml"


def test_a_study_file_round_trips_through_the_command_line(small_dataset, tmp_path):
    db, ds = str(tmp_path / "rose.db"), ["--dataset", str(small_dataset.root)]
    r = run("study", "create", str(EXAMPLE), "--db", db, *ds, "--base-url", "https://rose.example.org/")
    assert r.returncode == 0, r.stderr
    sid = r.stdout.split()[2]
    assert f"participant link (plain): https://rose.example.org/?study={sid}" in r.stdout
    assert f"https://rose.example.org/?study={sid}&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in r.stdout

    r = run("study", "show", sid, "--db", db, *ds, "--json")
    assert r.returncode == 0, r.stderr
    shown = json.loads(r.stdout)
    assert shown["study"]["version"] == 1 and shown["settings"]["raters_per_item"] == 3
    assert shown["pool"]["instances"] == 100 and set(shown["pool"]["cells"].values()) == {4}
    assert shown["progress"]["answers"] == 0 and shown["progress"]["participants_needed"] == 8
    assert shown["plan"]["pool"] == 100 and shown["plan"]["participants"] == 8
    text = run("study", "show", sid, "--db", db, *ds).stdout
    assert "raters_per_item = 3" in text and "stratified random sample of 100 instances" in text
    assert "participants who finish" in text

    r = run("study", "export-config", sid, "--db", db)
    assert r.returncode == 0, r.stderr
    exported = tmp_path / "exported.toml"
    exported.write_text(r.stdout, encoding="utf-8")
    r = run("study", "create", str(exported), "--db", db, *ds)
    assert r.returncode == 0, r.stderr
    sid2 = r.stdout.split()[2]
    again = json.loads(run("study", "show", sid2, "--db", db, *ds, "--json").stdout)
    assert again["settings"] == shown["settings"]
    assert again["pool"]["instance_ids"] == shown["pool"]["instance_ids"]

    r = run("study", "clone", sid, "--name", "pilot 2", "--db", db, *ds)
    assert r.returncode == 0 and "with the settings of " + sid in r.stdout, r.stderr
    assert run("study", "close", sid, "--db", db).returncode == 0
    listed = run("study", "list", "--db", db).stdout.splitlines()
    assert len(listed) == 3 and any(sid in ln and "closed" in ln for ln in listed)
    assert sum("open" in ln for ln in listed) == 2 and any("pilot 2" in ln for ln in listed)


def test_a_bad_study_file_creates_nothing(small_dataset, tmp_path):
    db, ds = str(tmp_path / "rose.db"), ["--dataset", str(small_dataset.root)]
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nraters_per_item = 3\nparticipants = 2\nsample = {per_cell = 4}\n', encoding="utf-8")
    r = run_process("study", "create", str(bad), "--db", db, *ds)   # the smoke test of the process boundary
    assert r.returncode == 2
    assert f"{bad}: raters_per_item: 3 raters per item need at least as many participants, planned 2" in r.stderr
    big = tmp_path / "big.toml"
    big.write_text('name = "x"\nsample = {per_cell = 500}\n', encoding="utf-8")
    r = run("study", "create", str(big), "--db", db, *ds)
    assert r.returncode == 2 and f"{big}: sample.per_cell: 500 per cell" in r.stderr and "nothing was created" in r.stderr
    assert "no study yet" in run("study", "list", "--db", db).stdout
    r = run("study", "show", "nope", "--db", db, *ds)
    assert r.returncode == 2 and "no study 'nope'" in r.stderr


def test_plan_uses_the_sample(small_dataset, tmp_path):
    ds = ["--dataset", str(small_dataset.root), "--db", str(tmp_path / "none.db"), "--accuracy", "0.9", "--json"]
    r = run("plan", *ds, "--per-cell", "2", "--items-per-participant", "10")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["pool"] == 50 and set(plan["per_template"].values()) == {10} and plan["participants"] == 15
    r = run("plan", *ds, "--study-file", str(EXAMPLE))
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["pool"] == 100 and plan["participants"] == 8 and plan["items_per_participant"] == 38
    assert any("stratified random sample" in n for n in plan["notes"])
    r = run("plan", *ds, "--per-cell", "999")
    assert r.returncode == 2 and "sample.per_cell: 999 per cell is more than a cell holds" in r.stderr


def test_the_study_sub_commands_of_other_modules_are_registered_with_what_they_run():
    """`study simulate`, `approvals`, `delete`, `exclude`, `include`, `mark-test` live in their own modules, imported
    by `cli.study` (plain imports: the layer contract sees them); each parses to its module's function."""
    from rose_core.cli import approvals, build_parser, manage, simulate

    parser = build_parser()
    cases = {("simulate", "S1"): simulate.run, ("approvals", "S1", "--out", "a.csv"): approvals.run,
             ("delete", "S1", "--confirm", "x"): manage.run_delete,
             ("exclude", "S1", "P1", "--reason", "r"): manage.run_participant,
             ("include", "S1", "P1"): manage.run_participant, ("mark-test", "S1", "P1"): manage.run_participant}
    for argv, fn in cases.items():
        assert parser.parse_args(["study", *argv]).fn is fn, argv
