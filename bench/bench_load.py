"""Protocol-level load: N simulated participants click the grid against one server process.

Each participant is a websocket client speaking Streamlit's own BackMsg/ForwardMsg protobufs, exactly what
the browser sends when the grid reports a click (the component's cumulative state, one fragment rerun).
Measured: ack latency (click sent -> the rerun's script_finished), clicks/s, server CPU per click, events
lost (sent vs rows in SQLite), "database is locked" in the server log. The same client, clicking the
button of a one-button Streamlit app, gives the floor. Targets at 100 participants: ack p95 <= 50 ms,
zero lost events, zero "database is locked".

    python bench/bench_load.py [--participants 100] [--clicks 20] [--interval 1.0]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import websockets  # noqa: E402
from setup_study import prepare  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ClientState_pb2 import ClientState  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates  # noqa: E402

from tools.serve import Server  # noqa: E402


async def until_finished(ws, found: dict) -> None:
    while True:
        m = ForwardMsg()
        m.ParseFromString(await ws.recv())
        kind = m.WhichOneof("type")
        if kind == "delta" and m.delta.WhichOneof("type") == "new_element":
            el = m.delta.new_element
            t = el.WhichOneof("type")
            if t == "bidi_component":
                found["grid"] = (el.bidi_component.id, m.delta.fragment_id, json.loads(el.bidi_component.json))
            elif t == "button":
                found["button"] = (el.button.id, m.delta.fragment_id)
        if kind == "script_finished":
            return


async def participant(url: str, query: str, clicks: int, interval: float, lat: list, sent: dict, ready: list,
                      go: asyncio.Event, rng: random.Random, name: str) -> None:
    async with websockets.connect(url, subprotocols=["streamlit"], max_size=None) as ws:
        found: dict = {}
        await ws.send(BackMsg(rerun_script=ClientState(query_string=query)).SerializeToString())
        await until_finished(ws, found)
        ready.append(name)
        await go.wait()
        await asyncio.sleep(rng.random() * interval)
        selected: list[list[int]] = []
        events: list[dict] = []
        for k in range(clicks):
            if "grid" in found:
                wid, frag, data = found["grid"]
                r, c = rng.randint(1, data["rows"]), rng.randint(1, data["cols"])
                if [r, c] in selected:
                    selected.remove([r, c])
                    events.append({"type": "unclick", "r": r, "c": c, "t": time.time() * 1000})
                else:
                    selected.append([r, c])
                    events.append({"type": "click", "r": r, "c": c, "t": time.time() * 1000})
                value = json.dumps({"grid": {"view_id": data["view_id"], "selected": selected, "events": events}})
                cs = ClientState(widget_states=WidgetStates(widgets=[WidgetState(id=wid, json_value=value)]),
                                 fragment_id=frag, query_string=query)
            else:
                wid, frag = found["button"]
                cs = ClientState(widget_states=WidgetStates(widgets=[WidgetState(id=wid, trigger_value=True)]),
                                 fragment_id=frag)
            t0 = time.perf_counter()
            await ws.send(BackMsg(rerun_script=cs).SerializeToString())
            await until_finished(ws, found)
            lat.append((time.perf_counter() - t0) * 1000)
            sent[name] = k + 1
            await asyncio.sleep(interval * (0.5 + rng.random()))


async def run_load(server: Server, queries: list[str], clicks: int, interval: float) -> dict:
    url = f"ws://127.0.0.1:{server.port}/_stcore/stream"
    lat: list[float] = []
    sent: dict[str, int] = {}
    ready: list[str] = []
    go = asyncio.Event()
    rng = random.Random(7)
    tasks = [asyncio.create_task(participant(url, q, clicks, interval, lat, sent, ready, go,
                                             random.Random(rng.random()), q)) for q in queries]
    while len(ready) < len(queries):
        done = [t for t in tasks if t.done() and t.exception()]
        if done:
            raise done[0].exception()
        await asyncio.sleep(0.05)
    cpu0 = server.cpu_seconds()
    t0 = time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    dt = time.perf_counter() - t0
    cpu = server.cpu_seconds() - cpu0
    s = sorted(lat)
    return {"clicks": len(lat), "clicks_per_s": len(lat) / dt, "median": statistics.median(s),
            "p95": s[int(0.95 * (len(s) - 1))], "max": s[-1], "cpu_util": cpu / dt,
            "cpu_ms_per_click": cpu * 1000 / len(lat), "sent": sent}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--participants", type=int, default=100)
    ap.add_argument("--clicks", type=int, default=20)
    ap.add_argument("--interval", type=float, default=1.0, help="mean seconds between a participant's clicks")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ds_root, db_file, sid, ids = prepare(tmp, a.participants)
        app = Server(tmp / "app.log", {"ROSE_DATASET_DIR": str(ds_root), "ROSE_DB": str(db_file)}).start()
        floor = Server(tmp / "floor.log", script="bench/floor_app.py").start()
        try:
            grid = asyncio.run(run_load(app, [f"study={sid}&PROLIFIC_PID={i}" for i in ids], a.clicks, a.interval))
            base = asyncio.run(run_load(floor, [f"floor={i}" for i in range(a.participants)], a.clicks, a.interval))
        finally:
            app.stop()
            floor.stop()
        con = sqlite3.connect(db_file)
        stored = dict(con.execute("SELECT p.external_id, count(*) FROM events e JOIN participants p "
                                  "USING (participant_id) GROUP BY p.external_id").fetchall())
        con.close()
        lost = sum(max(0, grid["sent"].get(f"study={sid}&PROLIFIC_PID={i}", 0) - stored.get(i, 0)) for i in ids)
        locked = (tmp / "app.log").read_text().count("database is locked")
        errors = (tmp / "app.log").read_text().count("Traceback")
    print(f"load: {a.participants} participants x {a.clicks} clicks, ~{a.interval:.1f} s apart, one server process")
    for name, r in (("participant grid", grid), ("floor (1 button)", base)):
        print(f"  {name:17s} ack median {r['median']:6.1f} ms  p95 {r['p95']:6.1f} ms  max {r['max']:7.1f} ms  "
              f"{r['clicks_per_s']:6.1f} clicks/s  server CPU {r['cpu_ms_per_click']:5.1f} ms/click "
              f"({100 * r['cpu_util']:.0f} % of a core)")
    print(f"  ratio grid/floor  ack median {grid['median'] / base['median']:5.2f}  p95 {grid['p95'] / base['p95']:5.2f}  "
          f"CPU/click {grid['cpu_ms_per_click'] / base['cpu_ms_per_click']:5.2f}")
    print(f"  events sent {grid['clicks']}, stored {sum(stored.values())}, lost {lost}; "
          f"'database is locked' {locked}; server tracebacks {errors}")
    ok = grid["p95"] <= 50 and lost == 0 and locked == 0
    print(f"  target ack p95 <= 50 ms, zero lost, zero locked: {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
