"""The compiled parser and scorer (rose_core/native.py): used only when current, and the same as the plain modules.

`scripts/test.sh` builds them and sets ROSE_REQUIRE_NATIVE=1, so the whole suite runs on the compiled modules
a user runs, and this file compares them, verdict by verdict, with the plain-Python modules loaded from the same
source files (the realistic corpus, the fast-path near misses, generated texts, the bench's mix).
"""
from __future__ import annotations

import copy
import importlib.util
import os
import pickle
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

from rose_core import native
from rose_core.benchmarks.rose import protocol, scoring

from .benchmarks.rose.test_protocol_fast_path import DERANDOMIZED, jumble, perturbed
from .benchmarks.rose.test_scoring import corpus, corpus_key

COMPILED = protocol.__file__.endswith(native._suffix())


def _plain_modules():
    """protocol.py and scoring.py executed as plain Python under other names (scoring bound to that protocol)."""
    pkg = ".".join(native.PACKAGE)
    mods = {}
    saved = sys.modules.get(f"{pkg}.protocol")
    try:
        for name in native.MODULES:
            spec = importlib.util.spec_from_file_location(f"{pkg}._plain_{name}", native.SOURCE_DIR / f"{name}.py")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = mod
            if name == "scoring":  # its `from .protocol import ...` must get the plain protocol
                sys.modules[f"{pkg}.protocol"] = mods["protocol"]
            spec.loader.exec_module(mod)
            mods[name] = mod
    finally:
        sys.modules[f"{pkg}.protocol"] = saved
    return mods["protocol"], mods["scoring"]


PLAIN_PROTOCOL, PLAIN_SCORING = _plain_modules()


def test_the_plain_modules_are_plain():
    assert PLAIN_PROTOCOL.__file__.endswith("protocol.py") and PLAIN_SCORING.parse is PLAIN_PROTOCOL.parse


@pytest.mark.skipif(os.environ.get("ROSE_REQUIRE_NATIVE") != "1",
                    reason=f"compiled scorer not required here ({native.STATUS.reason})")
def test_the_compiled_modules_are_in_use():
    assert COMPILED and scoring.__file__.endswith(native._suffix()), native.STATUS
    assert native.STATUS.compiled, native.STATUS


def _same_parse(text: object) -> None:
    got, want = protocol.parse(text), PLAIN_PROTOCOL.parse(text)
    assert got.to_json() == want.to_json(), (text, got, want)


def _key(module, rec: dict):
    k = corpus_key(rec)
    return module.ScoreKey(k.instance_id, k.template, k.output, k.rows, k.cols, k.gold_count, k.gold_cells,
                           k.global_count, k.outside_targets, k.terminal)


def test_compiled_and_plain_agree_on_every_corpus_verdict():
    for rec in corpus():
        got = scoring.score(_key(scoring, rec), rec["response"])
        want = PLAIN_SCORING.score(_key(PLAIN_SCORING, rec), rec["response"])
        assert got.to_json() == want.to_json(), rec["id"]
        _same_parse(rec["response"])


@given(perturbed())
@settings(DERANDOMIZED, max_examples=1500)
def test_compiled_and_plain_agree_on_near_misses(text):
    _same_parse(text)


@given(jumble())
@settings(DERANDOMIZED, max_examples=500)
def test_compiled_and_plain_agree_on_jumbled_answers(text):
    _same_parse(text)


def test_compiled_and_plain_agree_on_odd_inputs_and_the_bench_shapes():
    for text in (None, 5, 3.5, b"CLICK(R1,C1); DONE", "", "DONE", "\u25c1think\u25b7x\u25c1/think\u25b7DONE",
                 "<think>CLICK(R1,C1); DONE", "</think>" * 50 + "COUNT(2)", "**CLICK**(R1,C1); **DONE**",
                 "\\text{CLICK}(R1,C1); DONE", "CLICK(R" + "9" * 40 + ",C1); DONE", "COUNT(-3)", "x" * 5000):
        _same_parse(text)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from bench_score import HOSTILE, styled
    finally:
        sys.path.pop(0)
    for make in HOSTILE.values():
        _same_parse(make(20_000))
    rng = random.Random(7)
    answers = ["CLICK(R2,C3); DONE", "COUNT(4)", "CLICK(R1,C1); CLICK(R5,C2); SUBMIT(2)", "DONE", "SUBMIT(0)"]
    for _ in range(3000):
        _same_parse(styled(rng.choice(["", "Final answer: ", "Row 2 looks odd. "]) + rng.choice(answers), rng))


def test_records_pickle_and_copy_whichever_modules_run():
    k = scoring.ScoreKey("i", "T3", "click", 3, 3, 1, frozenset({(1, 2)}), 1, frozenset(), "DONE")
    s = scoring.score(k, "CLICK(R1,C2); DONE")
    for value in (k, s, s.parsed):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value
    assert hash(pickle.loads(pickle.dumps(k))) == hash(k)


def test_a_build_is_used_only_while_its_sources_are_unchanged(tmp_path, monkeypatch):
    if not native.STATUS.compiled:
        pytest.skip(f"no current build to copy ({native.STATUS.reason})")
    build = tmp_path / "build"
    shutil.copytree(native.BUILD_DIR, build)
    src = tmp_path / "src"
    src.mkdir()
    for name in native.MODULES:
        shutil.copy(native.SOURCE_DIR / f"{name}.py", src / f"{name}.py")
    assert native.check(build, src).compiled
    with (src / "scoring.py").open("a") as f:
        f.write("\n# edited after the build\n")
    stale = native.check(build, src)
    assert not stale.compiled and "scoring.py changed" in stale.reason
    shutil.copy(native.SOURCE_DIR / "scoring.py", src / "scoring.py")
    monkeypatch.setenv("ROSE_NATIVE", "0")
    assert not native.check(build, src).compiled
    monkeypatch.delenv("ROSE_NATIVE")
    (build.joinpath(*native.PACKAGE) / f"protocol{native._suffix()}").unlink()
    assert "protocol missing" in native.check(build, src).reason
    assert "not built" in native.check(tmp_path / "nothing", src).reason


def test_a_build_that_does_not_load_falls_back_to_the_plain_modules(tmp_path):
    """A library the loader refuses (here: not a shared object at all) must not break the package: the plain
    modules run, and it is said. (A truncated ELF file crashes the process inside the system loader, before
    Python can catch anything: the build is therefore written whole into a temporary folder and renamed.)"""
    if not native.STATUS.compiled:
        pytest.skip(f"no current build to copy ({native.STATUS.reason})")
    root = Path(__file__).resolve().parents[2]
    copy_root = tmp_path / "repo"
    shutil.copytree(root / "rose_core", copy_root / "rose_core", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(native.BUILD_DIR, copy_root / native.BUILD_DIR.relative_to(root))
    lib = (copy_root / native.BUILD_DIR.relative_to(root)).joinpath(*native.PACKAGE) / f"protocol{native._suffix()}"
    lib.write_bytes(b"not a shared object\n" * 100)
    code = ("import rose_core.benchmarks.rose as r, rose_core.benchmarks.rose.protocol as p;"
            "print(r.NATIVE.compiled, p.__file__.endswith('.py'), p.parse('CLICK(R1,C1); DONE').clicks);"
            "print(r.NATIVE.reason)")
    env = {k: v for k, v in os.environ.items() if k != "ROSE_NATIVE"}
    out = subprocess.run([sys.executable, "-c", code], cwd=copy_root, env=env, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "False True ((1, 1),)", out
    assert "does not load" in out[1]


def test_a_compiled_module_beside_the_sources_is_refused_not_run(tmp_path):
    """A compiled protocol/scoring left beside the sources (a hand-run `mypyc rose_core/benchmarks/rose/protocol.py`
    or `setup.py build_ext --inplace` writes it there) would be imported instead of the edited source whenever the
    build is not first on the path (ROSE_NATIVE=0, a stale or missing build): old verdicts while STATUS says plain.
    It must stop the import with a message naming the file."""
    if not native.STATUS.compiled:
        pytest.skip(f"no current build to copy ({native.STATUS.reason})")
    root = Path(__file__).resolve().parents[2]
    copy_root = tmp_path / "repo"
    shutil.copytree(root / "rose_core", copy_root / "rose_core", ignore=shutil.ignore_patterns("__pycache__"))
    src = copy_root.joinpath(*native.PACKAGE)
    for lib in native.BUILD_DIR.joinpath(*native.PACKAGE).glob(f"*{native._suffix()}"):
        shutil.copy(lib, src / lib.name)  # the compiled modules of the unedited source, beside the sources
    text = (src / "protocol.py").read_text()
    edit = "def parse(text: object) -> Parsed:\n"
    assert edit in text
    (src / "protocol.py").write_text(text.replace(edit, edit + "    return _NO_ANSWER\n", 1))  # edited after
    code = ("import rose_core.benchmarks.rose as r, rose_core.benchmarks.rose.protocol as p;"
            "print(r.NATIVE.compiled, p.__file__, p.parse('DONE').action)")
    for value in ("0", "1"):
        env = {**{k: v for k, v in os.environ.items() if k != "ROSE_NATIVE"}, "ROSE_NATIVE": value}
        done = subprocess.run([sys.executable, "-c", code], cwd=copy_root, env=env, capture_output=True, text=True)
        assert done.returncode != 0, (value, done.stdout)  # never the stale compiled verdict ('DONE')
        assert f"protocol{native._suffix()}" in done.stderr and "beside the sources" in done.stderr, done.stderr


def test_rose_native_takes_0_or_1_and_refuses_anything_else(monkeypatch):
    """`ROSE_NATIVE=false` or `off` must not quietly mean "compiled" to someone asking for the plain modules."""
    for value in ("false", "off", "no", "plain", " 0"):
        monkeypatch.setenv("ROSE_NATIVE", value)
        with pytest.raises(ValueError, match="ROSE_NATIVE"):
            native.check()
    monkeypatch.setenv("ROSE_NATIVE", "0")
    assert not native.check().compiled
    for value in ("1", ""):
        monkeypatch.setenv("ROSE_NATIVE", value)
        assert "ROSE_NATIVE" not in native.check().reason
