"""What the parser's fast path (`protocol._read_fast`) buys end to end, on two real workloads, on SQLite.

(1) `python -m rose_core import-run` of a real inspect_ai `.eval` log of all 7,560 instances of v0.1, written
    here by inspect_ai itself (the task `export --format inspect-task` ships, run with a loopback model
    provider that answers from the export, as tests/rose_core/test_harness_inspect.py does) with the scoring
    bench's mix: bench/responses.py's answers (protocol answers, wrong answers, prose, missing terminals),
    30 % of them re-written in a model's style (bench_score.styled: bold, lists, lower case, full width,
    think blocks, fences). A new database per run.
(2) `python -m rose_core rescore` of 200,000 stored responses (bench/synthetic.py: 124,400 human responses,
    the protocol strings participants' clicks make, plus 10 model runs of all 7,560 instances with the same
    mix as (1)), stored by scorer "1", so every row is re-written as after a scorer bump; a fresh copy of the
    database per run. `rescore --dry-run` (everything read and scored, nothing written) is timed beside.

Each command runs in a new process, timed end to end (wall clock, and the CPU time of the child), --runs
times per variant, the variants interleaved; the figure is the median. Floor: a fixed pure-Python loop in a
new process, timed in the same rounds (it says how fast the machine was then). `uptime` is printed beside.

The variants: "fast path" (`parse` tried `_read_fast` first, a second reader for the common shapes, until
issue 20 measured it with this script and removed it) and "full reader" (`_read` reads every text, as `parse`
does now). "fast path" runs `rose_core` as of the last commit that had it (found with `git log -S`, or
--fast-path-rev REV; `git archive` into a temporary folder), "full reader" this checkout. (In a checkout that
has `_read_fast`, "full reader" is that checkout with `_read_fast` replaced by a function that declines.) Both
variants' stored verdicts (protocol, parsed, valid, passed, failure, errors of every response) are compared:
they must be equal.

    python bench/bench_parser.py [--runs 3] [--work bench/out/parser] [--dataset DIR] [--fast-path-rev REV]

The dataset (the full v0.1 build: 1 min), the log (inspect_ai: 6 min at load 8 on 2 cores; 180 MB) and the rescore
database are made once into --work and reused.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_score import styled  # noqa: E402
from responses import make_responses  # noqa: E402

import synthetic  # noqa: E402
from rose_core import Dataset, build_dataset  # noqa: E402
from rose_core.benchmarks.rose import protocol  # noqa: E402
from rose_core.benchmarks.rose.records import MAIN_TEMPLATES  # noqa: E402
from rose_core.storage import audit  # noqa: E402

STYLED = 0.3  # bench_score.py's default mix
RESCORE_N = 200_000
HUMAN_N = 124_400  # + 10 model runs x 7,560 = 200,000 (humans answer every template, models the main ones)
MODELS = 10
SOLVER = "bench-parser"
FLOOR = "s = 0\nfor i in range(6_000_000):\n    s += i * i % 7\n"
CLI = ("import sys\nimport rose_core\nassert rose_core.__file__.startswith({root!r}), rose_core.__file__\n"
       "{switch}from rose_core.cli import main\nraise SystemExit(main(sys.argv[1:]))\n")
DECLINE = ("import rose_core.benchmarks.rose.protocol as p\n"
           "p._read_fast = lambda text, cut: None  # parse declines the fast path: the full reader reads every text\n")


def _mix(ds: Dataset, seed: int) -> list[tuple[str, str]]:
    """One response to each of v0.1's 7,560 instances (its main templates), in the scoring bench's mix."""
    rng = random.Random(seed)
    return [(i, styled(r, rng) if rng.random() < STYLED else r) for i, r in make_responses(ds, len(ds.instances), seed)
            if ds.instances[i].template in MAIN_TEMPLATES]


def _dataset(path: Path) -> Dataset:
    if not (path / "manifest.json").exists():
        print(f"building the full v0.1 dataset into {path} ...", flush=True)
        build_dataset(path)
    return Dataset.load(path)


def _eval_log(ds: Dataset, work: Path) -> Path:
    """A real inspect_ai .eval log of every instance, answered with the mix (made once, then reused)."""
    done = work / f"inspect-{ds.dataset_hash[:12]}.eval"
    if done.exists():
        return done
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ContentImage, ContentText, GenerateConfig, ModelAPI, ModelOutput, modelapi

    from rose_core.benchmarks.rose.harness_export import export_dataset

    task_dir = work / "inspect-task"
    if task_dir.exists():
        shutil.rmtree(task_dir)
    n = export_dataset(ds, "inspect-task", task_dir, templates=list(MAIN_TEMPLATES))
    rows = [json.loads(x) for x in (task_dir / "rose.jsonl").read_text().splitlines()]
    answer = dict(_mix(ds, seed=0))
    answers = {}
    for r in rows:
        sha = hashlib.sha256((task_dir / r["image"]).read_bytes()).hexdigest()
        answers[(sha, r["prompt"])] = answer[r["instance_id"]]

    class FromExport(ModelAPI):
        """Answers like a model would: by the image and the prompt it was sent."""

        def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                     config: GenerateConfig = GenerateConfig(), **model_args):
            super().__init__(model_name, base_url, api_key, [], config)

        async def generate(self, input, tools, tool_choice, config) -> ModelOutput:
            parts = [c for m in input if isinstance(m.content, list) for c in m.content]
            image = next(c.image for c in parts if isinstance(c, ContentImage))
            prompt = next(c.text for c in parts if isinstance(c, ContentText))
            data = base64.b64decode(image.split(",", 1)[1]) if image.startswith("data:") else Path(image).read_bytes()
            return ModelOutput.from_content(model=self.model_name,
                                            content=answers[(hashlib.sha256(data).hexdigest(), prompt)])

    @modelapi(name="rose_bench_parser")
    def rose_bench_parser():
        return FromExport

    print(f"writing a real inspect_ai .eval log of {n} samples ...", flush=True)
    t0 = time.perf_counter()
    cwd = os.getcwd()
    os.chdir(task_dir)  # as a user runs it: `inspect eval rose_inspect.py` in the exported folder
    try:
        logs = inspect_eval("rose_inspect.py", model="rose_bench_parser/mix", log_dir=str(work / "logs"),
                            log_format="eval", display="none", max_connections=64)
    finally:
        os.chdir(cwd)
    shutil.move(logs[0].location, done)
    print(f"  {done} ({done.stat().st_size / 2**20:.0f} MB) in {time.perf_counter() - t0:.0f} s", flush=True)
    return done


def _rescore_db(ds: Dataset, work: Path) -> Path:
    """200,000 stored responses: humans' protocol strings + 10 model runs of the mix (made once)."""
    done = work / f"rescore-{ds.dataset_hash[:12]}.db"
    if done.exists():
        return done
    print(f"writing {RESCORE_N:,} stored responses ...", flush=True)
    tmp = work / "rescore-tmp.db"
    for p in work.glob("rescore-tmp.db*"):
        p.unlink()
    store = synthetic.populate(tmp, ds, human_responses=HUMAN_N, items_each=50, models=0)
    insts = ds.instances
    rng = random.Random(1)
    t = synthetic.now()
    for m in range(MODELS):
        run_id = f"model:mix-{m}"
        rows = [synthetic._row(run_id, "", insts[iid], text, t, rng, False) for iid, text in _mix(ds, m + 1)]
        synthetic.store_model_run(store, ds, run_id, f"mix-{m}", rows, t)
    got = audit.scorer_versions(store)
    store.checkpoint()
    store.close()
    assert got == (RESCORE_N, 1, "1"), got
    tmp.rename(done)
    for p in work.glob("rescore-tmp.db-*"):
        p.unlink()
    return done


def _last_with_fast_path() -> str:
    """The parent of the last commit that changed how often `def _read_fast` occurs in protocol.py (its removal)."""
    found = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%H", "-Sdef _read_fast", "--",
                            "rose_core/benchmarks/rose/protocol.py"], capture_output=True, text=True, check=True)
    if not found.stdout.strip():
        raise SystemExit("no commit with the fast path found in this repository's history: use --fast-path-rev")
    return found.stdout.strip() + "^"


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _timed(args: list[str], cwd: Path, env: dict) -> tuple[float, float, str]:
    """Wall and CPU seconds of one child process (and its stdout); fails loudly if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} ... failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def _verdicts(db: Path) -> str:
    with sqlite3.connect(db) as c:
        h = hashlib.sha256()
        for row in audit.verdicts(c):
            h.update(repr(row).encode())
        return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default=str(ROOT / "bench" / "out" / "parser"))
    ap.add_argument("--dataset", default=None, help="the full v0.1 build (default: <work>/rose-v0.1, built if missing)")
    ap.add_argument("--fast-path-rev", default=None,
                    help="a commit whose protocol.py has the fast path (default: the parent of the commit that removed it)")
    a = ap.parse_args()
    work = Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    ds_dir = Path(a.dataset).resolve() if a.dataset else work / "rose-v0.1"
    ds = _dataset(ds_dir)
    main_n = sum(i.template in MAIN_TEMPLATES for i in ds.instances.values())
    assert main_n == 7560, f"{ds_dir}: {main_n} instances of the main templates, not v0.1's 7,560"
    log = _eval_log(ds, work)
    rescore_db = _rescore_db(ds, work)

    here = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    tmp = Path(tempfile.mkdtemp(prefix="bench-parser-", dir=work))
    try:
        if hasattr(protocol, "_read_fast") and a.fast_path_rev is None:
            fast = ("fast path", ROOT, here, "")
            full = ("full reader", ROOT, here, DECLINE)
            how = "this checkout; full reader = the same with _read_fast declining"
        else:
            rev = a.fast_path_rev or _last_with_fast_path()
            other = tmp / "rev"
            other.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "rose_core"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(other)], input=archive, check=True)
            fast = ("fast path", other, {**here, "PYTHONPATH": str(other)}, "")
            full = ("full reader", ROOT, here, "")
            how = f"fast path = rose_core at {rev}; full reader = this checkout"
            if hasattr(protocol, "_read_fast"):
                full = ("full reader", ROOT, here, DECLINE)
        variants = (fast, full)
        work_db = tmp / "run.db"
        workloads = {
            "import-run .eval (7,560 samples)": lambda: ["import-run", str(log), "--solver", SOLVER, "--db",
                                                         str(work_db), "--dataset", str(ds_dir)],
            f"rescore ({RESCORE_N:,} stored)": lambda: ["rescore", "--db", str(work_db), "--dataset", str(ds_dir)],
            f"rescore --dry-run ({RESCORE_N:,})": lambda: ["rescore", "--db", str(work_db), "--dataset", str(ds_dir),
                                                           "--dry-run"],
        }
        print(f"variants: {how}")
        print(f"start: {_uptime()}", flush=True)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        digests: dict[tuple[str, str], set[str]] = {}
        floors: list[tuple[float, float]] = []
        for k in range(a.runs):
            floors.append(_timed([sys.executable, "-c", FLOOR], ROOT, here)[:2])
            print(f"round {k + 1}: floor {floors[-1][0]:.2f} s wall, {floors[-1][1]:.2f} s CPU; {_uptime()}", flush=True)
            for name, args in workloads.items():
                for label, cwd, env, switch in (variants if k % 2 == 0 else variants[::-1]):
                    for p in tmp.glob("run.db*"):
                        p.unlink()
                    if not name.startswith("import"):
                        shutil.copy(rescore_db, work_db)
                    code = CLI.format(root=str(cwd) + os.sep, switch=switch)
                    wall, cpu, out = _timed([sys.executable, "-c", code, *args()], cwd, env)
                    times.setdefault((name, label), []).append((wall, cpu))
                    digests.setdefault((name, label), set()).add(_verdicts(work_db))
                    print(f"  {name:34s} {label:12s} {wall:7.2f} s wall {cpu:7.2f} s CPU   "
                          f"{out.strip().splitlines()[0][:70]}", flush=True)
        print(f"end: {_uptime()}")
        print(f"\nmedian of {a.runs} runs (floor: {statistics.median(f[0] for f in floors):.2f} s wall, "
              f"{statistics.median(f[1] for f in floors):.2f} s CPU)")
        print(f"{'workload':34s} {'fast path':>19s} {'full reader':>19s} {'ratio full/fast':>17s}  same verdicts")
        for name in workloads:
            f = times[(name, fast[0])]
            s = times[(name, full[0])]
            fw, fc = statistics.median(x[0] for x in f), statistics.median(x[1] for x in f)
            sw, sc = statistics.median(x[0] for x in s), statistics.median(x[1] for x in s)
            same = len(digests[(name, fast[0])] | digests[(name, full[0])]) == 1
            print(f"{name:34s} {fw:6.2f} s ({fc:5.2f} CPU) {sw:6.2f} s ({sc:5.2f} CPU) "
                  f"{sw / fw:7.2f}x ({sc / fc:4.2f}x CPU)  {'yes' if same else 'NO'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
