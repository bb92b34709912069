"""Cluster benchmark: whole participant flows at a careful human pace against HAProxy and several app processes
sharing one database, and, in the same run, against one app process on SQLite at the loads it can carry.

The load client is bench_load.py's whole-flow client (Streamlit's websocket protobufs; consent → instructions →
practice with feedback → main items; it loads the page first for the proxy's sticky cookie, as a browser does, and
fetches each item's image from the process it is pinned to). Each simulated participant clicks every ~`--interval`
seconds and answers every ~`--answer-every` seconds; they arrive at random over `--arrive-within` seconds.

Figures per run: click ack p50/p95 (click sent → its rerun finished), submit → next screen p50/p95 (with the next
item's image loaded), answers/s, server CPU per answered item (app processes, HAProxy and the database server when
there is one), events lost (sent by the client vs stored), instances over target, errors ("database is locked",
tracebacks in the server logs), the client's own CPU, `uptime`. The floor, in the same run: one participant alone on
one process at a 1 s pace. Then one process on SQLite at each `--single` load, stopping at the first that misses
submit p95 <= 300 ms: the largest load that keeps it is that process's capacity at this pace.

    python bench/bench_cluster.py [--participants 300] [--apps 3] [--interval 3] [--answer-every 20] [--items 8]
                                  [--arrive-within 60] [--single 50,100,150,200,300] [--db URL]

The cluster's database: `--db` (a postgresql:// URL, with this checkout's PostgreSQL backend), else a PostgreSQL
server started here through scripts/_pg.sh when the backend is present, else one SQLite file shared by the
processes (printed, never passed off as PostgreSQL).
"""
from __future__ import annotations

import argparse
import asyncio
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_load import _uptime, run_flows  # noqa: E402
from setup_study import prepare  # noqa: E402

from rose_core import Dataset, build_dataset  # noqa: E402
from rose_core.analysis.plan import pool_by_template  # noqa: E402
from rose_core.instrument.config import StudyConfig  # noqa: E402
from rose_core.storage import audit, open_store  # noqa: E402
from tools.cluster import Cluster  # noqa: E402
from tools.serve import Server  # noqa: E402

TEMPLATES = ["T1", "T3", "T4", "T5"]
FLOW = dict(intro=False, templates=TEMPLATES, practice_items=4, practice_max_attempts=1, practice_pass_fraction=0.0,
            attention_every=0, same_scene_multiple_templates=False)
SERVER_ENV = {"ROSE_MAX_HOLDS_PER_ADDRESS": "0"}  # every simulated participant comes from this host's loopback


def proc_cpu(pid: int) -> float:
    """user + system CPU seconds of one process (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_pids(data_dir: Path) -> list[int]:
    """The PostgreSQL server's processes (the postmaster and its children) for a data folder."""
    try:
        master = int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return []
    kids = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
    return [master, *map(int, kids)]


@dataclass
class Meter:
    """CPU seconds of a set of processes, read as a sum (run_flows reads `cpu_seconds()` around the crowd)."""

    pids: Callable[[], list[int]]

    def cpu_seconds(self) -> float:
        return sum(proc_cpu(p) for p in self.pids())


def client_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def study_for(tmp: Path, db: str | Path, n: int, items: int) -> tuple[Path, str, list[str], int]:
    """A fresh study in `db` whose per-instance target lets `n` participants answer `items` each, with ~10 %
    to spare: the target binds near the end of the run (that is when 'over target' could happen)."""
    pool = sum(pool_by_template(Dataset.load(tmp / "ds"), StudyConfig(
        name="probe", split="all", templates=TEMPLATES, items_per_participant=items)).values())
    target = max(1, math.ceil(1.1 * n * items / pool))
    ds_root, _, sid, ids = prepare(tmp, n, db=db, items_per_participant=items, target_per_instance=target, **FLOW)
    return ds_root, sid, ids, target


def outcome(db: str | Path, sid: str, ids: list[str], flow: dict, target: int, logs: list[Path]) -> dict:
    """What the database holds after a run, against what the client saw acknowledged."""
    store = open_store(db)
    stored = audit.responses_per_participant(store, sid)
    over = audit.main_instances_over(store, target, sid)
    events = audit.event_count(store, sid)
    ends = audit.end_reasons(store, sid)
    seen = flow["per_participant"]
    lost = sum(max(0, seen.get(f"study={sid}&PROLIFIC_PID={i}", 0) - stored.get(i, 0)) for i in ids)
    text = "".join(p.read_text(errors="replace") for p in logs if p.exists())
    return {"answered": sum(stored.values()), "lost": lost, "events_stored": events,
            "events_lost": max(0, flow["events"] - events), "over": over, "ends": ends,
            "locked": text.count("database is locked"), "tracebacks": text.count("Traceback")}


def crowd(front_port: int, meters: dict[str, Meter], db: str | Path, tmp: Path, n: int, a, logs: list[Path],
          interval: float | None = None, answer_every: float | None = None) -> dict:
    """One crowd of `n` participants against whatever listens on `front_port`; every figure of the run."""
    _, sid, ids, target = study_for(tmp, db, n, a.items)
    queries = [f"study={sid}&PROLIFIC_PID={i}" for i in ids]
    cpu0 = {k: m.cpu_seconds() for k, m in meters.items()}
    c0, t0 = client_cpu(), time.perf_counter()
    flow = asyncio.run(run_flows(next(iter(meters.values())), queries, a.interval if interval is None else interval,
                                 None, a.answer_every if answer_every is None else answer_every,
                                 a.arrive_within if n > 1 else 0.0, port=front_port))
    wall = time.perf_counter() - t0
    cpu = {k: m.cpu_seconds() - cpu0[k] for k, m in meters.items()}
    res = {**flow, **outcome(db, sid, ids, flow, target, logs), "n": n, "wall": wall, "cpu_parts": cpu,
           "client_cpu": client_cpu() - c0, "target": target, "load": os.getloadavg()[0],
           "spread": Counter(v.split("SERVERID=")[-1].split(";")[0] if "SERVERID=" in v else "-"
                             for v in flow["pinned"].values())}
    res["cpu_per_item_ms"] = 1000 * sum(cpu.values()) / max(1, res["answered"])
    res["answers_per_s"] = res["answered"] / wall
    return res


def report(label: str, r: dict) -> None:
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in r["cpu_parts"].items())
    print(f"{label}: {r['n']} participants, {r['wall']:.0f} s, machine load {r['load']:.1f} on {os.cpu_count()} cores")
    print(f"  click ack            p50 {r['click_median']:7.1f} ms  p95 {r['click_p95']:7.1f} ms  ({r['clicks']} clicks)")
    print(f"  submit -> next item  p50 {r['median']:7.1f} ms  p95 {r['p95']:7.1f} ms  max {r['max']:7.1f} ms  "
          f"({r['submits']} submits; image fetch p95 {r['image_p95']:.1f} ms)")
    print(f"  {r['answers_per_s']:.2f} answers/s; server CPU {r['cpu_per_item_ms']:.1f} ms per answered item ({parts}); "
          f"client CPU {r['client_cpu']:.1f} s = {100 * r['client_cpu'] / r['wall']:.0f} % of a core, loop lag p95 "
          f"{r['lag']:.1f} ms")
    print(f"  lost {r['lost']} answers, {r['events_lost']} events ({r['events']} sent, {r['events_stored']} stored); "
          f"instances over target ({r['target']}) {r['over']}; 'database is locked' {r['locked']}; tracebacks "
          f"{r['tracebacks']}; image requests failed {len(r['http_errors'])}{' (' + ', '.join(r['http_errors'][:3]) + ')' if r['http_errors'] else ''}; "
          f"end reasons {r['ends']}; participants per process {dict(sorted(r['spread'].items()))}")


def start_postgres(folder: Path) -> str | None:
    """A PostgreSQL server through scripts/_pg.sh when this checkout has the backend; its URL, or None."""
    try:
        import rose_core.storage.pg  # noqa: F401
    except ImportError:
        return None
    if not (ROOT / "scripts" / "_pg.sh").exists():
        return None
    out = subprocess.run(["bash", "-c", 'source scripts/_pg.sh && pg_start "$1" "$(pg_free_port)" '
                          'max_connections=400 >/dev/null && echo "$ROSE_PG_URL"', "_", str(folder)],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"PostgreSQL did not start: {out.stderr}")
    return out.stdout.strip().splitlines()[-1]


def stop_postgres(folder: Path) -> None:
    subprocess.run(["bash", "-c", 'source scripts/_pg.sh && pg_stop "$1"', "_", str(folder)], cwd=ROOT)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--participants", type=int, default=300)
    ap.add_argument("--apps", type=int, default=3)
    ap.add_argument("--interval", type=float, default=3.0, help="mean seconds between a participant's clicks")
    ap.add_argument("--answer-every", type=float, default=20.0, help="mean seconds from an item shown to its answer")
    ap.add_argument("--items", type=int, default=8, help="main items per participant (after 4 practice items)")
    ap.add_argument("--arrive-within", type=float, default=60.0, help="participants arrive over this many seconds")
    ap.add_argument("--single", default="50,100,150,200,300",
                    help="loads for one process on SQLite, ascending ('' for none)")
    ap.add_argument("--db", help="the cluster's database (postgresql:// URL); default: PostgreSQL via _pg.sh, or SQLite")
    ap.add_argument("--skip-cluster", action="store_true", help="only the floor and the single-process loads")
    ap.add_argument("--keep", help="work in this folder and keep it (logs, haproxy.cfg, databases)")
    a = ap.parse_args()
    loads = [int(x) for x in a.single.split(",") if x.strip()]
    print(f"uptime at start: {_uptime()}")
    print(f"pace: a click every ~{a.interval:g} s, an answer every ~{a.answer_every:g} s; 4 practice items with "
          f"feedback + {a.items} main items each; arrivals over {a.arrive_within:g} s")
    with (nullcontext(a.keep) if a.keep else tempfile.TemporaryDirectory()) as tmp_name:
        tmp = Path(tmp_name)
        tmp.mkdir(parents=True, exist_ok=True)
        # The floor: one participant alone on one process (SQLite), at a 1 s pace, before anything else runs.
        ds_root = tmp / "ds"
        build_dataset(ds_root, scale=0.05)
        floor_db = tmp / "floor.db"
        env = SERVER_ENV | {"ROSE_DATASET_DIR": str(ds_root)}
        srv = Server(tmp / "floor.log", env | {"ROSE_DB": str(floor_db)}).start()
        try:
            floor = crowd(srv.port, {"app": Meter(lambda: [srv.pid])}, floor_db, tmp, 1, a, [srv.log],
                          interval=1.0, answer_every=0.0)
        finally:
            srv.stop()
        report("floor: 1 participant alone, one process, SQLite, ~1 s between actions", floor)

        results: dict[str, dict] = {}
        if not a.skip_cluster:
            pg_dir = Path(tempfile.mkdtemp(prefix="rose-bench-pg-", dir="/tmp"))
            os.chmod(pg_dir, 0o755)
            url = a.db or start_postgres(pg_dir)
            db, kind = (url, "PostgreSQL") if url else (tmp / "cluster.db", "SQLite (one file shared by the "
                                                        "processes; this checkout has no PostgreSQL backend)")
            cluster = Cluster(tmp / "cluster", env | {"ROSE_DB": str(db)}, apps=a.apps)
            try:
                cluster.start()
                meters = {"apps": Meter(lambda: [s.pid for s in cluster.servers]),
                          "haproxy": Meter(lambda: [cluster.proxy.pid])}
                if url and not a.db:
                    meters["postgres"] = Meter(lambda: postgres_pids(pg_dir / "data"))
                results["cluster"] = crowd(cluster.port, meters, db, tmp, a.participants, a,
                                           [s.log for s in cluster.servers])
            finally:
                cluster.stop()
                if url and not a.db:
                    stop_postgres(pg_dir)
            report(f"cluster: HAProxy + {a.apps} app processes, database {kind}", results["cluster"])

        capacity = None
        for n in loads:
            db = tmp / f"single-{n}.db"
            srv = Server(tmp / f"single-{n}.log", env | {"ROSE_DB": str(db)}).start()
            try:
                r = crowd(srv.port, {"app": Meter(lambda: [srv.pid])}, db, tmp, n, a, [srv.log])
            finally:
                srv.stop()
            results[f"single-{n}"] = r
            report("one process, SQLite", r)
            if r["p95"] > 300 or r["lost"] or r["over"] or r["http_errors"]:
                break
            capacity = n
    print(f"uptime at end: {_uptime()}")
    for key, f in (("floor", floor), *results.items()):
        print(f"  ratio to the floor, {key}: click ack p95 {f['click_p95'] / floor['click_p95']:.1f}x, submit p95 "
              f"{f['p95'] / floor['p95']:.1f}x")
    if "cluster" in results:
        r = results["cluster"]
        ok = (r["click_p95"] <= 50 and r["p95"] <= 300 and r["lost"] == 0 and r["events_lost"] == 0 and r["over"] == 0
              and not r["http_errors"] and not r["tracebacks"])
        print(f"cluster targets at {r['n']} participants (click ack p95 <= 50 ms, submit p95 <= 300 ms, 0 lost, "
              f"0 over target): {'met' if ok else 'NOT met'}")
    if loads:
        print("largest load one process on SQLite carried with submit p95 <= 300 ms (0 lost, 0 over target): "
              + (f"{capacity} participants" if capacity else f"none of {loads}")
              + ("" if capacity is None or capacity != loads[-1] else " (the largest tried)"))


if __name__ == "__main__":
    main()
