"""The format registry: every format module registered with the same interface, each real-shaped file detected as
its format, a file no format claims refused naming them all, and a new format added by registering one module:
everything that names the formats is derived from the registry, so nothing here lists them by hand."""
import csv
import json
import pkgutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from rose_core.runs import formats
from rose_core.runs.formats import FORMATS, Sniff, detect, expected, file_extensions, get, run_formats
from rose_core.runs.importer import RunImportError
from rose_core.storage import open_store
from rose_core.storage.runs import list_runs
from tests.command_line import run_cli

from . import csv_run_format

FIXTURES = Path(__file__).parents[2] / "fixtures" / "lmms-eval-0.7.3"
HELPERS = {"probe", "fields"}   # the modules of the package that are not formats


def test_every_format_module_is_registered_with_the_interface():
    modules = {m.name for m in pkgutil.iter_modules(formats.__path__)} - HELPERS
    assert {FORMATS[name].__name__.rsplit(".", 1)[1] for name in FORMATS} == modules
    assert run_formats() == tuple(FORMATS) == tuple(m.NAME for m in formats._MODULES)
    for name, fmt in FORMATS.items():
        assert fmt.NAME == name and isinstance(fmt.CLUE, str) and fmt.CLUE and fmt.CLUE in expected()
        assert callable(fmt.sniff) and callable(fmt.read)
        assert fmt.EXTENSIONS and all(e and "." not in e for e in fmt.EXTENSIONS)
        assert get(name) is fmt
    # the app's upload accepts what the formats are written under, and nothing else
    assert file_extensions() == tuple(sorted({e for f in FORMATS.values() for e in f.EXTENSIONS}))


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _files(tmp: Path) -> dict[str, tuple[Path, str]]:
    """One real-shaped file per way each format is told apart: name -> (path, the format it is)."""
    out = {
        "lmms-eval 0.7.3 samples": (FIXTURES / "samples_rose_dev.head.jsonl", "lmms-eval"),
        "plain run": (_jsonl(tmp / "run.jsonl", [{"instance_id": "A-0001-T1", "response": "DONE"}]), "jsonl"),
        "lmms-eval old style": (_jsonl(tmp / "old_samples.jsonl", [{"doc_id": 0, "doc": {"instance_id": "A"},
                                                                     "filtered_resps": ["x"]}]), "lmms-eval"),
        "VLMEvalKit JSON lines": (_jsonl(tmp / "pred.jsonl", [{"index": 0, "prediction": "x"}]), "vlmevalkit"),
    }
    df = pd.DataFrame([{"index": 0, "question": "q", "answer": "a", "prediction": "x"}])
    df.to_excel(tmp / "pred.xlsx", index=False)
    df.to_csv(tmp / "pred.tsv", sep="\t", index=False)
    (tmp / "pred.json").write_text(json.dumps(df.to_dict("records")))
    out |= {"VLMEvalKit workbook": (tmp / "pred.xlsx", "vlmevalkit"),
            "VLMEvalKit table": (tmp / "pred.tsv", "vlmevalkit"),
            "VLMEvalKit JSON dump": (tmp / "pred.json", "vlmevalkit")}
    sample = {"id": "A-0001-T1", "epoch": 1, "output": {"completion": "DONE"}}
    with zipfile.ZipFile(tmp / "log.eval", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps({"status": "success"}))
        z.writestr("samples/A-0001-T1_epoch_1.json", json.dumps(sample))
    (tmp / "log.json").write_text(json.dumps({"status": "success", "eval": {}, "samples": [sample]}))
    out |= {"inspect .eval": (tmp / "log.eval", "inspect"), "inspect JSON log": (tmp / "log.json", "inspect")}
    return out


def test_detect_picks_each_file_s_format(tmp_path):
    files = _files(tmp_path)
    assert {fmt for _, fmt in files.values()} <= set(FORMATS)
    for what, (path, fmt) in files.items():
        name, why = detect(path)
        assert name == fmt, (what, why)
        assert why


def test_a_file_no_format_claims_is_refused_naming_every_format(tmp_path):
    f = _jsonl(tmp_path / "other.jsonl", [{"question": "q", "answer": "a"}])
    with pytest.raises(RunImportError) as e:
        detect(f)
    [message] = e.value.problems
    assert message.startswith(f"{f}:1: cannot tell the format: expected ")
    for fmt in FORMATS.values():
        assert fmt.CLUE in message
    with pytest.raises(RunImportError) as e:
        get("nope")
    assert e.value.problems == [f"unknown format 'nope': expected auto or one of {', '.join(FORMATS)}"]


def _not_lines_refusal(f: Path) -> str:
    with pytest.raises(RunImportError) as e:
        detect(f)
    [message] = e.value.problems
    assert message.startswith(f"{f}:1: cannot tell the format: the first line is not usable JSON (")
    return message


def test_text_and_binary_no_format_claims_are_refused(tmp_path):
    """A first line that is not JSON: refused naming the endings the formats other than JSON lines are written
    under (from the registry); binary data: refused as binary."""
    notes = tmp_path / "notes.txt"
    notes.write_text("some notes\n")
    names = _not_lines_refusal(notes).split("the name does not end in ")[1]
    assert {n.strip(".") for n in names.replace(" or ", ", ").split(", ")} \
        == {e for f in FORMATS.values() for e in f.EXTENSIONS} - {"jsonl"}
    for name, data in (("nul.jsonl", b'{"a":\x00 1}\n'), ("latin.jsonl", b'{"a": "\xe9"}\n'),
                       ("nul.json", b"\x00\x00{}")):
        f = tmp_path / name
        f.write_bytes(data)
        with pytest.raises(RunImportError) as e:
            detect(f)
        assert e.value.problems == [f"{f}: not text, not a zip archive: binary data cannot be a run file"]


def test_lmms_eval_s_aggregated_results_are_claimed_and_refused():
    with pytest.raises(RunImportError, match="lmms-eval's aggregated results, not its samples"):
        detect(FIXTURES / "results.json")


def test_a_new_format_s_more_specific_claim_wins(tmp_path, monkeypatch):
    """A module with the interface, registered, claims the files it is most specific about; the rest stay as they
    were."""
    class Answers:
        NAME, CLUE, EXTENSIONS = "answers", "answer_for (an answer sheet)", ("jsonl",)

        @staticmethod
        def sniff(p):
            if p.shape == "lines" and isinstance(p.content, dict) and "answer_for" in p.content:
                return Sniff(5, "JSON lines with answer_for")
            return None

        @staticmethod
        def read(path, ds, limits, found):
            return iter(())

    monkeypatch.setitem(FORMATS, "answers", Answers)
    sheet = _jsonl(tmp_path / "sheet.jsonl", [{"answer_for": "A-0001-T1", "instance_id": "A-0001-T1"}])
    assert detect(sheet) == ("answers", "JSON lines with answer_for")
    plain = _jsonl(tmp_path / "run.jsonl", [{"instance_id": "A-0001-T1", "response": "x"}])
    assert detect(plain)[0] == "jsonl"
    with pytest.raises(RunImportError, match=r"or answer_for \(an answer sheet\)$"):
        detect(_jsonl(tmp_path / "other.jsonl", [{"q": 1}]))


def test_a_new_format_is_one_module_and_its_line_in_the_registry(small_dataset, tmp_path, monkeypatch):
    """A throwaway CSV format (`csv_run_format`, a module like those of `formats/`), registered and nothing else
    changed: its files are detected and imported through the CLI, by detection and by `--format`; it is offered and
    named everywhere the formats are; every other file is detected as before."""
    before = {what: detect(path) for what, (path, _) in _files(tmp_path).items()}
    monkeypatch.setitem(FORMATS, csv_run_format.NAME, csv_run_format)
    assert run_formats()[-1] == "csvtest" and "csv" in file_extensions() and csv_run_format.CLUE in expected()
    assert {what: detect(path) for what, (path, _) in _files(tmp_path).items()} == before

    instances = list(small_dataset.instances.values())[:12]
    sheet = tmp_path / "sheet.csv"
    with sheet.open("w", newline="") as f:
        csv.writer(f).writerows([("instance_id", "response"), *((i.instance_id, i.protocol_answer) for i in instances)])
    assert detect(sheet) == ("csvtest", "a .csv with an instance_id,response header (CSV answer sheet)")
    db = str(tmp_path / "rose.db")
    common = ["--trust-ids", "--dataset", str(small_dataset.root), "--db", db]
    r = run_cli("import-run", str(sheet), "--solver", "csvtest", *common)
    assert r.returncode == 0, r.stderr
    assert "format: csvtest (a .csv with an instance_id,response header" in r.stdout
    assert "imported 12 responses as run model:csvtest" in r.stdout
    r = run_cli("import-run", str(sheet), "--solver", "forced", "--format", "csvtest", *common)
    assert r.returncode == 0 and "format: csvtest (given with --format)" in r.stdout, r.stderr
    store = open_store(db)
    runs = {run["run_id"]: run for run in list_runs(store)}
    assert {k: (v["format"], v["responses"]) for k, v in runs.items()} == {"model:csvtest": ("csvtest", 12),
                                                                            "model:forced": ("csvtest", 12)}
    rows = store.query("SELECT instance_id, passed FROM responses WHERE run_id = ?", ("model:csvtest",))
    assert sorted((row["instance_id"], row["passed"]) for row in rows) \
        == sorted((i.instance_id, 1) for i in instances)   # the gold answers, scored by the one scorer

    # a file it does not claim is refused in words that name it too
    other = tmp_path / "other.csv"
    other.write_text("question,answer\nq,a\n")
    assert "csvtest" not in "".join(_not_lines_refusal(other))
    assert ".csv, " in _not_lines_refusal(other)
    with pytest.raises(RunImportError) as e:
        detect(_jsonl(tmp_path / "other.jsonl", [{"q": 1}]))
    assert e.value.problems[0].endswith(f" or {csv_run_format.CLUE}")
