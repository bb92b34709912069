"""Dashboard page load with 100,000 human responses and ten model runs, next to a floor page.

Each page is run through Streamlit's AppTest (the real page script, no browser). Per page:

- restart: the page opened at the moment of sign-in in a NEW process (empty memory caches, nothing imported but
  what signing in imports), without the files a previous server process leaves beside the database (the
  persisted analyses, the one on-disk cache: removed before each start, as at a new database's first start), and
  with them. Target: at most 1.5 s, on the database as populated (the humans and the model runs, ten by default:
  the target's condition); measured first, then again without the files after the in-process half below has
  imported four small runs (every solver adds its own share to a cold page). The sign-in's own rerun (which reads
  the response frame and starts the warm-up) is printed beside it: it comes before the page and is not in the
  page's time.
- first, caches emptied: the same in this process after emptying every in-memory cache (Results, the first
  page measured, also meets a database with no analyses on disk at all: the one-time cost of a new database).
- first after the sign-in warm-up; rerun (any widget interaction on unchanged data); after 50 new responses.
  Target: well under 2 s.

The floor is the one-button app's first load and rerun in this process. The machine's load average is printed
at the start and the end (a shared machine: compare ratios to the floor of the same run).

    python bench/bench_dashboards.py [--humans 100000] [--models 10] [--scale 1.0] [--restarts 3] [--typing 0]
                                     [--db postgresql://…]   (an empty database; default: SQLite in a temp folder)
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from synthetic import populate  # noqa: E402

from rose_core import Dataset, build_dataset  # noqa: E402

PAGES = ["app_pages/results.py", "app_pages/agreement.py", "app_pages/participants_overview.py", "app_pages/drilldown.py"]


def add_responses(n: int, tag: str) -> None:
    """New data arrives (a small run is imported): the data version changes."""
    import json

    from rose_core.runs.importer import import_run
    from rose_core.storage import open_store

    ds = Dataset.load(os.environ["ROSE_DATASET_DIR"])
    f = Path(os.environ["ROSE_DATASET_DIR"]).with_name(f"{tag}.jsonl")
    f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": i.protocol_answer,
                                     "dataset_hash": ds.dataset_hash}) + "\n"
                         for i in list(ds.instances.values())[:n]))
    import_run(open_store(os.environ["ROSE_DB"]), ds, f, tag)


def warmed_first_load(page: str) -> float:
    """First load of `page` after an experimenter signed in and the warm-up finished (empty caches before)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ui.dash import warm_up

    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    at.text_input(key="auth_given").input("bench")
    at.button[0].click()
    at.run()                                  # the Studies page: starts the warm-up
    warm_up().wait(300)
    t0 = time.perf_counter()
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return time.perf_counter() - t0


def tree_cpu() -> float:
    """CPU seconds of this process (every thread) and of its live child processes (the SQLite reader): on a
    shared machine a steadier figure than wall time."""
    total = time.process_time()
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():            # ppid; utime and stime are fields 14 and 15 of stat
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def restarted_page(page: str) -> tuple[float, float, float]:
    """In a child process (a restarted server): sign in, open `page` at once; (seconds of the sign-in's rerun,
    which lands on the Studies page and starts the warm-up, whose thread reads the rows in the background from
    then on; seconds of the page; CPU seconds of the app and its reader from the sign-in to the page shown)."""
    from streamlit.testing.v1 import AppTest

    from ui.dash import warm_up

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    time.sleep(float(os.environ.get("BENCH_TYPING_S", "0")))   # the experimenter typing the password (--typing)
    at.text_input(key="auth_given").input("bench")
    at.button[0].click()
    cpu = tree_cpu()
    t0 = time.perf_counter()
    at.run()                                  # the Studies page: starts the warm-up
    sign_in = time.perf_counter() - t0
    t0 = time.perf_counter()
    at.switch_page(page)
    at.run()
    took = time.perf_counter() - t0
    cpu = tree_cpu() - cpu
    assert not at.exception, at.exception
    warm_up().wait(300)                       # what the next start finds on disk is complete
    return sign_in, took, cpu


def server_files(db: str) -> list[Path]:
    """What a server process leaves for the next one (beside a SQLite file, in the cache folder for PostgreSQL):
    the analyses on disk, the one on-disk cache."""
    from rose_core.analysis.persist import local_prefix
    from rose_core.storage import open_store

    prefix = local_prefix(open_store(db))
    return [Path(f"{prefix}.analyses")]


def restart(page: str, files: bool) -> tuple[float, float, float]:
    """(sign-in, page, CPU) seconds in a new process; without `files`, the analyses on disk are removed
    first (a restart with truly empty caches: a new database's first start)."""
    if not files:
        for f in server_files(os.environ["ROSE_DB"]):
            if f.is_dir():
                shutil.rmtree(f)
            else:
                f.unlink(missing_ok=True)
    out = subprocess.run([sys.executable, __file__, "--child", page], capture_output=True, text=True, timeout=900,
                         env=os.environ.copy(), cwd=ROOT)
    if out.returncode:
        raise RuntimeError(f"restarted {page}: {out.stderr[-2000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return float(res["sign_in"]), float(res["seconds"]), float(res["cpu"])


def kept(a: argparse.Namespace, tmp: Path) -> tuple[str, Dataset]:
    """(the database this run works on, the dataset) from the `--keep` folder, populated there on first use. The
    in-process half imports small runs, so a run works on a copy and the kept database stays as populated."""
    a.keep.mkdir(parents=True, exist_ok=True)
    if not (a.keep / "ds" / "manifest.json").exists():
        build_dataset(a.keep / "ds", scale=a.scale)
    ds = Dataset.load(a.keep / "ds")
    done = a.keep / (f"populated-{a.humans}-{a.models}" + ("-pg" if a.db else ""))
    if a.db:
        import psycopg

        base = a.db.rsplit("/", 1)[0]
        with psycopg.connect(a.db, autocommit=True) as c:
            if not done.exists():
                c.execute("DROP DATABASE IF EXISTS rose_bench_kept")
                c.execute("CREATE DATABASE rose_bench_kept")
        if not done.exists():
            populate(f"{base}/rose_bench_kept", ds, a.humans, models=a.models)
            done.touch()
        if a.populate_only:
            return f"{base}/rose_bench_kept", ds
        with psycopg.connect(a.db, autocommit=True) as c:
            c.execute("DROP DATABASE IF EXISTS rose_bench_run")
            c.execute("CREATE DATABASE rose_bench_run TEMPLATE rose_bench_kept")
        return f"{base}/rose_bench_run", ds
    kept_db = a.keep / f"bench-{a.humans}-{a.models}.db"
    if not done.exists():
        kept_db.unlink(missing_ok=True)
        populate(str(kept_db), ds, a.humans, models=a.models).close()
        import sqlite3

        with sqlite3.connect(kept_db) as c:   # everything in the main file: the copy below is the whole database
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        done.touch()
    if a.populate_only:
        return str(kept_db), ds
    shutil.copyfile(kept_db, tmp / "bench.db")
    return str(tmp / "bench.db"), ds


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


CPU: dict[str, list[float]] = {}   # CPU seconds of the in-process reruns, by kind (`tree_cpu`)


def timed_page(page: str | None, runs: int) -> tuple[float, list[float], float]:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    st.cache_resource.clear()
    if page is None:
        at = AppTest.from_file(str(ROOT / "bench" / "floor_app.py"), default_timeout=600)
        t0 = time.perf_counter()
        at.run()
        cold = time.perf_counter() - t0
    else:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
        at.text_input(key="auth_given").input("bench")
        at.button[0].click()
        at.run()
        t0 = time.perf_counter()
        at.switch_page(page)
        at.run()
        cold = time.perf_counter() - t0
        assert not at.exception, at.exception
        from ui.dash import warm_up

        warm_up().wait(300)  # reruns are measured on a quiet server, not against the sign-in warm-up
    warm = []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), tree_cpu()
        at.run()
        warm.append(time.perf_counter() - t0)
        if page is not None:
            CPU.setdefault("rerun", []).append(tree_cpu() - c0)
    fresh = 0.0
    if page is not None:
        add_responses(50, f"late-{Path(page).stem}")
        t0, c0 = time.perf_counter(), tree_cpu()
        at.run()
        fresh = time.perf_counter() - t0
        CPU.setdefault("after new responses", []).append(tree_cpu() - c0)
    return cold, warm, fresh


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--humans", type=int, default=100_000)
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--warm-runs", type=int, default=3)
    ap.add_argument("--restarts", type=int, default=3,
                    help="restarts per page (the median is the figure); 0: no restarts, the in-process half only")
    ap.add_argument("--pages", nargs="+", choices=[Path(p).stem for p in PAGES],
                    help="only these pages (e.g. results); default: all four")
    ap.add_argument("--db", help="an empty PostgreSQL database's URL (default: a SQLite file in a temp folder)")
    ap.add_argument("--keep", type=Path, help="a folder that keeps the dataset and the populated database between "
                    "runs (populated on first use; each run works on a copy: SQLite's file copied, PostgreSQL's "
                    "database cloned as a template), so a bench run does not spend minutes populating")
    ap.add_argument("--populate-only", action="store_true", help="with --keep: populate it and stop")
    ap.add_argument("--typing", type=float, default=0.0, help="seconds between the sign-in form shown and the "
                    "password sent, in each restart (a person typing; what the form starts meanwhile, the statistics "
                    "imports and the SQLite reader, gets under way); default 0: at once")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.restarts < 0:
        ap.error("--restarts must be 0 or more")
    if a.pages:
        PAGES[:] = [p for p in PAGES if Path(p).stem in a.pages]
    if a.child:
        os.chdir(ROOT)
        sign_in, took, cpu = restarted_page(a.child)
        print(json.dumps({"sign_in": sign_in, "seconds": took, "cpu": cpu}))
        return
    os.environ["BENCH_TYPING_S"] = str(a.typing)   # read by each restart's child
    print(f"dashboards: start, {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        if a.keep:
            db, ds = kept(a, tmp)
            from rose_core.storage import open_store

            store = open_store(db)
        else:
            build_dataset(tmp / "ds", scale=a.scale)
            ds = Dataset.load(tmp / "ds")
            db = a.db or str(tmp / "bench.db")
            store = populate(db, ds, a.humans, models=a.models)
        if a.populate_only:
            return
        if a.db:  # the cache folder of a temp folder's (the files a restart finds, or not)
            os.environ["ROSE_CACHE_DIR"] = str(tmp / "cache")
        n = store.query("SELECT count(*) AS n FROM responses")[0]["n"]
        print(f"dashboards: {store.dialect}, {n:,} responses ({a.humans:,} human, {a.models} model runs over {len(ds.instances):,} "
              f"instances), database built in {time.perf_counter() - t0:.1f} s")
        os.environ.update({"ROSE_DATASET_DIR": str(ds.root), "ROSE_DB": db,
                           "ROSE_EXPERIMENTER_PASSWORD": "bench"})
        os.chdir(ROOT)
        fcold, fwarm, _ = timed_page(None, a.warm_runs)
        print(f"  {'floor (1 button)':31s} first {fcold:6.2f} s   rerun {statistics.median(fwarm):6.3f} s")

        def solvers() -> int:
            return store.query("SELECT count(DISTINCT CASE WHEN solver_kind = 'human' THEN 'human' ELSE solver_kind || "
                               "':' || solver_name END) AS n FROM runs WHERE run_id IN "
                               "(SELECT DISTINCT run_id FROM responses WHERE kind = 'main')")[0]["n"]

        def restarts(orders: tuple[bool, ...]) -> dict[bool, float]:
            """Each page restarted --restarts times, without the files first (each restart's warm-up leaves them
            complete for the next start), then with them; the worst median per kind of restart."""
            worst = {}
            for files in orders:
                worst[files] = 0.0
                for page in PAGES:
                    runs = [restart(page, files) for _ in range(a.restarts)]
                    times, sign_ins, cpus = [t for _, t, _ in runs], [s for s, _, _ in runs], [c for *_, c in runs]
                    med = statistics.median(times)
                    worst[files] = max(worst[files], med)
                    print(f"  {page:31s} restart {'with' if files else 'WITHOUT'} the files the last process left: "
                          f"opened at sign-in {med:5.2f} s (median of {len(times)}: {', '.join(f'{t:.2f}' for t in times)}; "
                          f"{med / fcold:.2f}x the floor's first load); the sign-in before it "
                          f"{statistics.median(sign_ins):5.2f} s; CPU of the app and its reader from the sign-in to "
                          f"the page shown {statistics.median(cpus):5.2f} s", flush=True)
                print(f"  ({load()})")
            return worst

        # The target's condition first: the database as populated (the humans and the model runs: ten by default).
        print(f"  restarts on the database as populated: {solvers()} solvers")
        worst = restarts((False, True)) if a.restarts else {}
        for f in server_files(db):   # the in-process half starts as a new database's first start does
            shutil.rmtree(f) if f.is_dir() else f.unlink(missing_ok=True)
        worst_warm = worst_fresh = 0.0
        worst_signed_in = worst_cold = 0.0
        for page in PAGES:
            cold, warm, fresh = timed_page(page, a.warm_runs)
            signed_in = warmed_first_load(page)
            w = statistics.median(warm)
            worst_warm, worst_fresh = max(worst_warm, w), max(worst_fresh, fresh)
            worst_signed_in, worst_cold = max(worst_signed_in, signed_in), max(worst_cold, cold)
            print(f"  {page:31s} first, caches emptied {cold:5.2f} s   first after sign-in warm-up {signed_in:5.2f} s   "
                  f"rerun {w:6.3f} s   after 50 new responses {fresh:5.2f} s", flush=True)
        print(f"  ({load()}; CPU of the app and its reader: "
              + ", ".join(f"{k} median {statistics.median(v):.3f} s" for k, v in CPU.items()) + ")")
        # The in-process half imported a small run per page: every solver costs a cold page its own share.
        print(f"  restarts again after those imports: {solvers()} solvers")
        more = restarts((False,)) if a.restarts else {}
        print("  first = empty caches, page opened at once (Results: also no analyses on disk yet); restart = the "
              "same in a new process, with the analyses files the last one left or without them (removed before "
              "each start); the sign-in = its rerun (the Studies page; the warm-up started, its thread reading the rows "
              "in the background, also while the page is opened), not counted "
              "in the page's time; first after sign-in warm-up = the page opened "
              "once the warm-up started at sign-in finished; rerun = any widget interaction on unchanged data; after "
              "new responses = the frame is appended, the analyses of the changed solver recomputed")
        if a.restarts:
            print(f"  target <= 1.5 s for a page opened at the moment of sign-in after a restart: "
                  f"{'met' if worst[True] <= 1.5 else 'NOT met'} (worst median {worst[True]:.2f} s, "
                  f"{worst[True] / fcold:.2f}x the floor's first load); without the files: "
                  f"{'met' if worst[False] <= 1.5 else 'NOT met'} (worst median {worst[False]:.2f} s, "
                  f"{worst[False] / fcold:.2f}x); without the files after the four small runs: "
                  f"{'met' if more[False] <= 1.5 else 'NOT met'} (worst median {more[False]:.2f} s); first with caches "
                  f"emptied in-process: worst {worst_cold:.2f} s")
        ok = worst_warm < 2 and worst_fresh < 2 and worst_signed_in < 2
        print(f"  target < 2 s (reruns, after new data, first load after sign-in): {'met' if ok else 'NOT met'} "
              f"(worst {worst_warm:.2f} s, {worst_fresh:.2f} s, {worst_signed_in:.2f} s)")
        print(f"dashboards: end, {load()}")


if __name__ == "__main__":
    main()
