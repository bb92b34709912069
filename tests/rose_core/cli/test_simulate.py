"""`study simulate` and `report --include-simulated` on good and bad input, in-process (tests/command_line.py)."""
import json

from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store

from tests.command_line import ROOT
from tests.command_line import run_cli as run

EXAMPLE = str(ROOT / "docs" / "examples" / "truth.toml")


def study_db(small_dataset, tmp_path) -> tuple[str, str]:
    db = str(tmp_path / "rose.db")
    store = open_store(db)
    study = create_study(store, small_dataset, StudyConfig(
        name="dry", split="all", items_per_participant=10, practice_items=4, attention_every=5, seed=2),
        ids=SequentialIds("cli"), clock=FakeClock())
    store.close()
    return db, study.study_id


def test_simulate_report_and_clear(small_dataset, tmp_path):
    db, sid = study_db(small_dataset, tmp_path)
    common = ("--db", db, "--dataset", str(small_dataset.root))
    r = run("study", "simulate", sid, "--participants", "10", "--truth", EXAMPLE, "--seed", "3", "--json", *common)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["participants"] == 10 and out["roles"] == {"attentive": 7, "too_fast": 1, "attention_failure": 1,
                                                          "drop_out": 1}
    assert len(out["participants_truth"]) == 10 and out["main_answers"] > 50
    plain = run("report", "--db", db, "--boot", "20", "--json")
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["simulated_warning"] is None and "simulated" not in plain.stderr
    dry = run("report", "--db", db, "--boot", "20", "--include-simulated")
    assert dry.returncode == 0, dry.stderr
    assert "WARNING: 10 simulated participants (a dry run" in dry.stderr and "Human" in dry.stdout
    bundle = run("report", "--db", db, "--include-simulated", "--out", str(tmp_path / "b"))
    assert bundle.returncode == 2 and "never counts simulated participants" in bundle.stderr
    assert not (tmp_path / "b").exists()
    again = run("study", "simulate", sid, "--participants", "2", "--truth", EXAMPLE, "--seed", "3", *common)
    assert again.returncode == 2 and "already has simulated participants of seed 3" in again.stderr
    gone = run("study", "simulate", sid, "--clear", *common)
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.startswith("deleted 10 simulated participants of study s-cli-0001")
    text = run("study", "simulate", sid, "--participants", "3", "--truth", EXAMPLE, "--seed", "3", *common)
    assert text.returncode == 0 and "simulated 3 participants in study s-cli-0001 (seed 3;" in text.stdout
    assert "study simulate s-cli-0001 --clear" in text.stdout


def test_simulate_refuses_bad_input_naming_it(small_dataset, tmp_path):
    db, sid = study_db(small_dataset, tmp_path)
    common = ("--db", db, "--dataset", str(small_dataset.root))
    bad = tmp_path / "truth.toml"
    bad.write_text("accuracy = 0.9\n[templates.T2]\nacuracy = 0.5\n")
    for args, needle in (
        (("--participants", "3", "--truth", str(bad)), f"{bad}: templates.T2.acuracy: unknown key"),
        (("--participants", "3"), "needs --participants N and --truth TRUTH.toml"),
        (("--clear", "--participants", "3"), "--clear deletes a dry run"),
        (("--participants", "0", "--truth", EXAMPLE), "participants: expected a whole number 1..100000, got 0"),
    ):
        r = run("study", "simulate", sid, *args, *common)
        assert r.returncode == 2 and needle in r.stderr, (args, r.stderr)
    r = run("study", "simulate", "nope", "--clear", *common)
    assert r.returncode == 2 and "no study 'nope'" in r.stderr
    r = run("study", "simulate", sid, "--clear", "--db", str(tmp_path / "none.db"))
    assert r.returncode == 2 and "no database at" in r.stderr
    with open_store(db).connect() as c:
        assert c.execute("SELECT count(*) FROM participants").fetchone()[0] == 0   # nothing half-written
