"""The format registry: every format module registered with the same interface, each real-shaped file detected as
its format, a file no format claims refused naming them all, and a new format added by registering one module."""
import json
import pkgutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from rose_core.runs import formats
from rose_core.runs.formats import FILE_EXTENSIONS, FORMATS, RUN_FORMATS, Sniff, detect, get
from rose_core.runs.importer import RunImportError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "lmms-eval-0.7.3"
HELPERS = {"probe", "fields"}   # the modules of the package that are not formats


def test_every_format_module_is_registered_with_the_interface():
    modules = {m.name for m in pkgutil.iter_modules(formats.__path__)} - HELPERS
    assert {FORMATS[name].__name__.rsplit(".", 1)[1] for name in FORMATS} == modules
    assert RUN_FORMATS == tuple(FORMATS) == ("jsonl", "lmms-eval", "vlmevalkit", "inspect")
    for name, fmt in FORMATS.items():
        assert fmt.NAME == name and isinstance(fmt.CLUE, str) and fmt.CLUE
        assert callable(fmt.sniff) and callable(fmt.read)
        assert fmt.EXTENSIONS and all(e and "." not in e for e in fmt.EXTENSIONS)
        assert get(name) is fmt
    # the app's upload accepts what the formats are written under, and nothing else
    assert FILE_EXTENSIONS == tuple(sorted({e for f in FORMATS.values() for e in f.EXTENSIONS})) \
        == ("eval", "json", "jsonl", "tsv", "xlsx")


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
    assert {fmt for _, fmt in files.values()} == set(FORMATS)   # every format has a file here
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
    with pytest.raises(RunImportError, match="unknown format 'nope': expected auto or one of "
                                             "jsonl, lmms-eval, vlmevalkit, inspect"):
        get("nope")


def test_lmms_eval_s_aggregated_results_are_claimed_and_refused():
    with pytest.raises(RunImportError, match="lmms-eval's aggregated results, not its samples"):
        detect(FIXTURES / "results.json")


def test_a_new_format_is_one_registered_module(tmp_path, monkeypatch):
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
