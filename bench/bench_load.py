"""Protocol-level load: N simulated participants click the grid against one server process.

Each participant is a websocket client speaking Streamlit's own BackMsg/ForwardMsg protobufs, exactly what
the browser sends when the grid reports a click (the component's cumulative state, one fragment rerun).
Measured: ack latency (click sent -> the rerun's script_finished), clicks/s, server CPU per click, events
lost (sent vs rows in SQLite), "database is locked" in the server log. The same client, clicking the
button of a one-button Streamlit app, gives the floor. Targets at 100 participants: ack p95 <= 50 ms,
zero lost events, zero "database is locked".

`--flow` runs whole participant flows instead: consent → instructions → a practice round (every kind of
answer, with feedback) → main items, each with a few clicks and/or a typed number and a submit, at a human
pace. Measured: submit → next screen visible (the script_finished of the rerun that shows the next item,
feedback or end page; for an item whose image comes by URL, also the HTTP fetch of that image, as a browser
does before it can show it), 0 lost (every submit the client saw acknowledged is a row), 0 over target (no
instance answered more often than the target), server CPU per answered item. Target: p95 <= 300 ms at 100
participants (single-user figure before the session rebuild: 183 ms median, 305 ms p95).

Both modes first run one participant alone on the same server (the single-participant floor of that run),
then the crowd, then the one-button floor app; they print `uptime` and how late the client's own event loop
woke (a latency is only as good as the client that measures it). `--profile FILE` samples the app server with
py-spy during the crowd's run (collapsed stacks, GIL-holding threads only).

    python bench/bench_load.py [--participants 100] [--clicks 20] [--interval 1.0] [--profile FILE]
    python bench/bench_load.py --flow [--participants 100] [--items 8] [--interval 1.0] [--answer-every 0]
                                      [--profile FILE]
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import websockets  # noqa: E402
from setup_study import prepare  # noqa: E402
from ui.click_grid import element_data  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ClientState_pb2 import ClientState  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates  # noqa: E402

from rose_core.storage import audit, open_store  # noqa: E402
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
                found["grid"] = (el.bidi_component.id, m.delta.fragment_id, element_data(el.bidi_component))
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
                kind = "unclick" if [r, c] in selected else "click"
                if kind == "unclick":
                    selected.remove([r, c])
                else:
                    selected.append([r, c])
                # The component's message (docs/architecture.md, "One click"): numbered events, each sent until stored.
                t_ms = 1000.0 * (k + 1)
                events.append({"seq": data["restore"]["next_seq"] + len(events), "type": kind, "r": r, "c": c,
                               "t": t_ms, "active_ms": t_ms})
                value = json.dumps({"grid": {"view_id": data["view_id"], "selection": selected, "count": None,
                                             "events": events[-1:], "active_ms": t_ms,
                                             "first_action_ms": 1000.0}})
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


async def _loop_lag(stop: asyncio.Event, lags: list[float]) -> None:
    """How late this client's own event loop wakes (10 ms ticks): a latency is only as good as its client."""
    while not stop.is_set():
        t = time.perf_counter()
        await asyncio.sleep(0.01)
        lags.append((time.perf_counter() - t - 0.01) * 1000)


async def _run_together(server: Server, tasks: list, ready: list[str], go: asyncio.Event,
                        n: int, profile: str | None = None) -> tuple[float, float, float]:
    """Wait until all n simulated participants are connected, release them at once, and return the run's
    (wall seconds, server CPU seconds, p95 of the client's event-loop lag in ms); a participant that failed
    while connecting fails the run. `profile`: py-spy samples the server from the release to the end."""
    while len(ready) < n:
        failed = [t for t in tasks if t.done() and t.exception()]
        if failed:
            raise failed[0].exception()
        await asyncio.sleep(0.05)
    spy = profiler(server, profile)
    stop, lags = asyncio.Event(), []
    lag = asyncio.create_task(_loop_lag(stop, lags))
    cpu0 = server.cpu_seconds()
    t0 = time.perf_counter()
    go.set()
    try:
        await asyncio.gather(*tasks)
    finally:
        stop_profiler(spy)
        stop.set()
        await lag
    lags.sort()
    return time.perf_counter() - t0, server.cpu_seconds() - cpu0, lags[int(0.95 * (len(lags) - 1))] if lags else 0.0


async def run_load(server: Server, queries: list[str], clicks: int, interval: float,
                   profile: str | None = None) -> dict:
    url = f"ws://127.0.0.1:{server.port}/_stcore/stream"
    lat: list[float] = []
    sent: dict[str, int] = {}
    ready: list[str] = []
    go = asyncio.Event()
    rng = random.Random(7)
    tasks = [asyncio.create_task(participant(url, q, clicks, interval, lat, sent, ready, go,
                                             random.Random(rng.random()), q)) for q in queries]
    dt, cpu, lag = await _run_together(server, tasks, ready, go, len(queries), profile)
    s = sorted(lat)
    return {"clicks": len(lat), "clicks_per_s": len(lat) / dt, "median": statistics.median(s),
            "p95": s[int(0.95 * (len(s) - 1))], "max": s[-1], "cpu_util": cpu / dt,
            "cpu_ms_per_click": cpu * 1000 / len(lat), "sent": sent, "lag": lag}


# Every simulated participant connects from 127.0.0.1: the per-address hold cap (participant-side guard, default 5)
# would make all but five of them wait, so the bench switches it off, as a deployment behind a proxy must.
SERVER_ENV = {"ROSE_MAX_HOLDS_PER_ADDRESS": "0"}

def _trigger_id(base: str) -> str:
    from streamlit.components.v2.bidi_component.main import _make_trigger_id

    return _make_trigger_id(base, "events")


async def until_screen(ws, changed) -> dict:
    """Read ForwardMsgs until a script run finishes with `changed(found)` true; `found` holds the elements seen."""
    found: dict = {"buttons": {}, "headings": []}
    while True:
        m = ForwardMsg()
        m.ParseFromString(await ws.recv())
        kind = m.WhichOneof("type")
        if kind == "new_session":  # a full script run starts: forget the elements of the previous one
            found = {"buttons": {}, "headings": []}
        if kind == "delta" and m.delta.WhichOneof("type") == "new_element":
            el = m.delta.new_element
            t = el.WhichOneof("type")
            if t == "bidi_component":
                found["grid"] = (el.bidi_component.id, m.delta.fragment_id, element_data(el.bidi_component))
            elif t == "button":
                found["buttons"][el.button.label] = el.button.id
                found["fragment"] = m.delta.fragment_id  # a widget in a fragment reruns only that fragment
            elif t == "checkbox":
                found["checkbox"] = el.checkbox.id
                found["fragment"] = m.delta.fragment_id
            elif t == "heading":
                found["headings"].append(el.heading.body)
        if kind == "auto_rerun":  # st.fragment(run_every=…): the browser reruns that fragment on a timer
            found["auto_rerun"] = (m.auto_rerun.fragment_id, m.auto_rerun.interval)
        if kind == "script_finished" and m.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN and changed(found):
            return found


def _screen(found: dict) -> str:
    if "Thank you!" in found["headings"]:
        return "end"
    if "Please wait a moment" in found["headings"]:
        return "wait"
    if "checkbox" in found:
        return "consent"
    if "Continue" in found["buttons"]:
        return "feedback"
    return "item" if "grid" in found else "?"


def _get(url: str, headers: dict[str, str] | None = None) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
        return r.read()


def sticky_cookie(http: str) -> dict[str, str]:
    """What a browser does first behind the cluster's proxy: load the page, and keep the cookie that pins it to
    one app process (sent with its websocket and every image after). No cookie set: {} (one process)."""
    with urllib.request.urlopen(http + "/", timeout=30) as r:
        r.read()
        cookies = [c.split(";", 1)[0] for c in r.headers.get_all("Set-Cookie") or []]
    return {"Cookie": "; ".join(cookies)} if cookies else {}


async def fetch_image(http: str, data: dict, headers: dict[str, str] | None = None, stats: dict | None = None) -> str:
    """What the browser does once per item when the image comes by URL (an inline data URL needs nothing).
    Returns the item's view id. An HTTP error (a broken image in a browser) is counted in `stats["_http_errors"]`
    when `stats` is given, else raised."""
    src = data["image"]
    if not src.startswith("data:"):
        try:
            png = await asyncio.to_thread(_get, http + src, headers)
        except urllib.error.HTTPError as e:
            if stats is None:
                raise
            stats.setdefault("_http_errors", []).append(f"{e.code} {src}")
            return data["view_id"]
        if not png.startswith(b"\x89PNG"):
            raise RuntimeError(f"{src}: not a PNG")
    return data["view_id"]


async def flow_participant(url: str, query: str, interval: float, lat: list, stats: dict, ready: list,
                           go: asyncio.Event, rng: random.Random, name: str, answer_every: float = 0.0,
                           arrive_within: float = 0.0) -> None:
    """One participant's whole flow. `interval`: mean seconds between actions (clicks, buttons);
    `answer_every` (> 0): mean seconds from an item shown to its submit (the clicks fall inside it);
    `arrive_within`: participants start at random over this many seconds (default: within one interval).
    Behind a proxy with sticky sessions the participant first loads the page for its cookie, as a browser does.
    Besides submit latencies in `lat`, `stats` collects click acks (`_click_ms`), events sent (`_events`) and
    the cookie each participant was pinned with (`_pinned`)."""
    http = url.replace("ws://", "http://").removesuffix("/_stcore/stream")
    headers = await asyncio.to_thread(sticky_cookie, http)
    stats.setdefault("_pinned", {})[name] = headers.get("Cookie", "")
    async with websockets.connect(url, subprotocols=["streamlit"], max_size=None, additional_headers=headers) as ws:
        async def send(widgets, fragment=""):
            await ws.send(BackMsg(rerun_script=ClientState(
                widget_states=WidgetStates(widgets=widgets), fragment_id=fragment, query_string=query)
            ).SerializeToString())

        await ws.send(BackMsg(rerun_script=ClientState(query_string=query)).SerializeToString())
        found = await until_screen(ws, lambda f: _screen(f) != "?")
        loaded = None  # the view whose image this client has loaded
        ready.append(name)
        await go.wait()
        await asyncio.sleep(rng.random() * max(interval, arrive_within))
        while True:
            screen = _screen(found)
            if screen == "end":
                return
            if screen == "consent":  # tick the box (the button is enabled by that rerun), then press Continue
                box = WidgetState(id=found["checkbox"], bool_value=True)
                await send([box], found.get("fragment", ""))
                found = await until_screen(ws, lambda f: "Continue" in f["buttons"])
                await asyncio.sleep(interval * (0.5 + rng.random()))
                await send([box, WidgetState(id=found["buttons"]["Continue"], trigger_value=True)],
                           found.get("fragment", ""))
                found = await until_screen(ws, lambda f: _screen(f) not in ("?", "consent"))
                continue
            if screen == "wait":  # every remaining item is held by others: poll as the browser's timer does
                fragment, every = found["auto_rerun"]
                await asyncio.sleep(every)
                await ws.send(BackMsg(rerun_script=ClientState(fragment_id=fragment, query_string=query))
                              .SerializeToString())
                found = await until_screen(ws, lambda f: True)
                if _screen(found) == "?":  # the watcher found no change (a fragment run): the wait screen stays
                    found = {**found, "headings": ["Please wait a moment"], "auto_rerun": (fragment, every)}
                continue
            if screen == "feedback":  # the instructions too: both move on with Continue
                label = "Continue"
                await asyncio.sleep(interval * (0.5 + rng.random()))
                await send([WidgetState(id=found["buttons"][label], trigger_value=True)], found.get("fragment", ""))
                found = await until_screen(ws, lambda f, s=screen: _screen(f) not in ("?", s))
                continue
            wid, frag, data = found["grid"]
            if loaded != data["view_id"]:  # the first item after a non-item screen: its image loads now
                loaded = await fetch_image(http, data, headers, stats)
            view, seq, selection, count = data["view_id"], data["ack_seq"], [], None
            events: list[dict] = []
            t_item = time.perf_counter()

            def ev(**e):
                nonlocal seq
                e.update(seq=seq, t=(time.perf_counter() - t_item) * 1000, active_ms=(time.perf_counter() - t_item) * 1000)
                seq += 1
                events.append(e)

            def state():
                return WidgetState(id=wid, json_value=json.dumps({"grid": {
                    "view_id": view, "events": events, "selection": selection, "count": count,
                    "active_ms": (time.perf_counter() - t_item) * 1000, "first_action_ms": 500.0}}))

            steps = rng.randint(1, 3) if data["mode"] != "count" else 0
            for _ in range(steps):  # clicks at a human pace, each a fragment rerun
                await asyncio.sleep(interval * (0.5 + rng.random()))
                r, c = rng.randint(1, data["rows"]), rng.randint(1, data["cols"])
                if [r, c] in selection:
                    selection.remove([r, c])
                    ev(type="unclick", r=r, c=c)
                else:
                    selection.append([r, c])
                    ev(type="click", r=r, c=c)
                t_click = time.perf_counter()
                await send([state()], frag)
                stats["_events"] = stats.get("_events", 0) + len(events)
                events = []
                await until_screen(ws, lambda f: True)
                stats.setdefault("_click_ms", []).append((time.perf_counter() - t_click) * 1000)
            if data["mode"] != "click":
                count = str(rng.randint(0, 5))
                ev(type="count_input", value=count)
            await asyncio.sleep(interval * (0.5 + rng.random()))
            if answer_every > 0:  # a careful participant looks longer before answering
                await asyncio.sleep(max(0.0, answer_every * (0.5 + rng.random()) - (time.perf_counter() - t_item)))
            submit = {"view_id": view, "selection": selection, "count": count, "events": events,
                      "first_action_ms": 500.0, "active_ms": (time.perf_counter() - t_item) * 1000,
                      "client_total_ms": (time.perf_counter() - t_item) * 1000, "viewport": [1280, 800],
                      "dpr": 1.0, "focus_lost": False}
            t0 = time.perf_counter()
            await send([state(), WidgetState(id=_trigger_id(wid), json_trigger_value=json.dumps(
                [{"event": "submit", "value": submit}]))], frag)
            stats["_events"] = stats.get("_events", 0) + len(events)
            found = await until_screen(ws, lambda f: _screen(f) in ("end", "feedback", "wait") or (
                _screen(f) == "item" and f["grid"][2]["view_id"] != view))
            t_rerun = time.perf_counter()
            if _screen(found) == "item":  # visible once its image is loaded
                loaded = await fetch_image(http, found["grid"][2], headers, stats)
            lat.append((time.perf_counter() - t0) * 1000)
            stats.setdefault("_image_ms", []).append((time.perf_counter() - t_rerun) * 1000)
            stats[name] = stats.get(name, 0) + 1


async def run_flows(server: Server, queries: list[str], interval: float, profile: str | None = None,
                    answer_every: float = 0.0, arrive_within: float = 0.0, port: int | None = None) -> dict:
    """`port`: where participants connect (a proxy in front of `server`'s processes); default the server's."""
    url = f"ws://127.0.0.1:{port or server.port}/_stcore/stream"
    lat: list[float] = []
    stats: dict[str, int] = {}
    ready: list[str] = []
    go = asyncio.Event()
    rng = random.Random(11)
    tasks = [asyncio.create_task(flow_participant(url, q, interval, lat, stats, ready, go,
                                                  random.Random(rng.random()), q, answer_every, arrive_within))
             for q in queries]
    loop = asyncio.get_running_loop()  # image fetches block in threads: one per participant, as browsers do
    loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max(4, len(queries))))
    dt, cpu, lag = await _run_together(server, tasks, ready, go, len(queries), profile)
    s = sorted(lat)
    img = sorted(stats.pop("_image_ms", [0.0]))
    clicks = sorted(stats.pop("_click_ms", [0.0]))
    return {"submits": len(lat), "median": statistics.median(s), "p95": s[int(0.95 * (len(s) - 1))], "max": s[-1],
            "seconds": dt, "cpu": cpu, "lag": lag, "events": stats.pop("_events", 0), "pinned": stats.pop("_pinned"),
            "http_errors": stats.pop("_http_errors", []),
            "per_participant": stats,
            "image_median": statistics.median(img), "image_p95": img[int(0.95 * (len(img) - 1))],
            "clicks": len(clicks), "click_median": statistics.median(clicks),
            "click_p95": clicks[int(0.95 * (len(clicks) - 1))]}


def profiler(server: Server, out: str | None) -> subprocess.Popen | None:
    """`--profile FILE`: py-spy samples the app server (threads holding the GIL, collapsed stacks) for the run."""
    if not out:
        return None
    spy = Path(sys.executable).with_name("py-spy")
    return subprocess.Popen([str(spy), "record", "-p", str(server.pid), "-o", out, "-f", "raw", "-g", "-r", "200",
                             "--nonblocking"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_profiler(spy: subprocess.Popen | None) -> None:
    if spy is not None:
        spy.send_signal(2)  # SIGINT: py-spy writes its file and exits
        spy.wait(30)


def main_flow(a) -> None:
    target = 3  # 288 instances x 3 >= 101 participants x 8 items: the pool lasts the run
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ds_root, db_file, sid, ids = prepare(
            tmp, a.participants + 1, intro=False, templates=["T1", "T3", "T4", "T5"], items_per_participant=a.items,
            target_per_instance=target, practice_items=4, practice_max_attempts=1, practice_pass_fraction=0.0,
            attention_every=0, same_scene_multiple_templates=False)
        app = Server(tmp / "app.log", SERVER_ENV | {"ROSE_DATASET_DIR": str(ds_root), "ROSE_DB": str(db_file)}).start()
        floor = Server(tmp / "floor.log", script="bench/floor_app.py").start()
        try:
            # The single-participant floor first, alone on the same server, then the crowd.
            one = asyncio.run(run_flows(app, [f"study={sid}&PROLIFIC_PID={ids[0]}"], a.interval,
                                        answer_every=a.answer_every))
            flow = asyncio.run(run_flows(app, [f"study={sid}&PROLIFIC_PID={i}" for i in ids[1:]], a.interval,
                                         a.profile, a.answer_every))
            base = asyncio.run(run_load(floor, [f"floor={i}" for i in range(a.participants)],
                                        max(1, flow["submits"] // a.participants), a.interval))
        finally:
            app.stop()
            floor.stop()
        store = open_store(db_file)
        stored = audit.responses_per_participant(store)
        over = audit.main_instances_over(store, target)
        ends = audit.end_reasons(store)
        events = audit.event_count(store)
        store.close()
        log = (tmp / "app.log").read_text()
    answered = sum(stored.values())
    seen = {**one["per_participant"], **flow["per_participant"]}
    lost = sum(max(0, seen.get(f"study={sid}&PROLIFIC_PID={i}", 0) - stored.get(i, 0)) for i in ids)
    print(f"uptime: {_uptime()}")
    print(f"flow: {a.participants} participants, consent -> instructions -> 4 practice items with feedback -> "
          f"up to {a.items} main items; ~{a.interval:.1f} s between actions"
          + (f", an answer every ~{a.answer_every:.0f} s" if a.answer_every else "") + "; one server process")
    print(f"  submit -> next screen  median {flow['median']:6.1f} ms  p95 {flow['p95']:6.1f} ms  max {flow['max']:7.1f} ms"
          f"  ({flow['submits']} submits in {flow['seconds']:.0f} s; client loop lag p95 {flow['lag']:.1f} ms)")
    print(f"    of which the image fetch after the rerun: median {flow['image_median']:6.1f} ms  "
          f"p95 {flow['image_p95']:6.1f} ms")
    print(f"  1 participant alone (same server, just before)  median {one['median']:6.1f} ms  p95 {one['p95']:6.1f} ms"
          f"  server CPU {1000 * one['cpu'] / max(1, one['submits']):.1f} ms per answered item;"
          f"  ratio {a.participants}/1: median {flow['median'] / one['median']:.1f}  p95 {flow['p95'] / one['p95']:.1f}")
    print(f"  floor (1-button rerun, same pace) median {base['median']:6.1f} ms  p95 {base['p95']:6.1f} ms  "
          f"server CPU {base['cpu_ms_per_click']:.1f} ms per rerun")
    print(f"  server CPU {flow['cpu']:.1f} s = {1000 * flow['cpu'] / max(1, answered):.1f} ms per answered item "
          f"({answered} responses, {events} events; an item is ~4 reruns: clicks, submit, the next screen)")
    print(f"  machine load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  lost {lost}; instances over target ({target}) {over}; end reasons {ends}; "
          f"'database is locked' {log.count('database is locked')}; tracebacks {log.count('Traceback')}")
    ok = flow["p95"] <= 300 and lost == 0 and over == 0
    print(f"  target p95 <= 300 ms, 0 lost, 0 over target: {'met' if ok else 'NOT met'}")


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--participants", type=int, default=100)
    ap.add_argument("--clicks", type=int, default=20)
    ap.add_argument("--interval", type=float, default=1.0, help="mean seconds between a participant's clicks")
    ap.add_argument("--flow", action="store_true", help="whole participant flows instead of clicks")
    ap.add_argument("--answer-every", type=float, default=0.0,
                    help="--flow: mean seconds from an item shown to its submit (0: one interval after the last click)")
    ap.add_argument("--items", type=int, default=8, help="main items per participant (--flow)")
    ap.add_argument("--profile", metavar="FILE", help="sample the app server with py-spy (collapsed stacks) into FILE")
    a = ap.parse_args()
    if a.flow:
        main_flow(a)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ds_root, db_file, sid, ids = prepare(tmp, a.participants + 1)
        app = Server(tmp / "app.log", SERVER_ENV | {"ROSE_DATASET_DIR": str(ds_root), "ROSE_DB": str(db_file)}).start()
        floor = Server(tmp / "floor.log", script="bench/floor_app.py").start()
        try:
            # The single-participant floor first, alone on the same server, then the crowd.
            one = asyncio.run(run_load(app, [f"study={sid}&PROLIFIC_PID={ids[0]}"], a.clicks, a.interval))
            grid = asyncio.run(run_load(app, [f"study={sid}&PROLIFIC_PID={i}" for i in ids[1:]], a.clicks,
                                        a.interval, a.profile))
            base = asyncio.run(run_load(floor, [f"floor={i}" for i in range(a.participants)], a.clicks, a.interval))
        finally:
            app.stop()
            floor.stop()
        store = open_store(db_file)
        stored = audit.events_per_participant(store)
        store.close()
        seen = {**one["sent"], **grid["sent"]}
        lost = sum(max(0, seen.get(f"study={sid}&PROLIFIC_PID={i}", 0) - stored.get(i, 0)) for i in ids)
        locked = (tmp / "app.log").read_text().count("database is locked")
        errors = (tmp / "app.log").read_text().count("Traceback")
    print(f"uptime: {_uptime()}")
    print(f"load: {a.participants} participants x {a.clicks} clicks, ~{a.interval:.1f} s apart, one server process")
    for name, r in (("participant grid", grid), ("1 participant alone", one), ("floor (1 button)", base)):
        print(f"  {name:19s} ack median {r['median']:6.1f} ms  p95 {r['p95']:6.1f} ms  max {r['max']:7.1f} ms  "
              f"{r['clicks_per_s']:6.1f} clicks/s  server CPU {r['cpu_ms_per_click']:5.1f} ms/click "
              f"({100 * r['cpu_util']:.0f} % of a core)")
    print(f"  client loop lag p95 {grid['lag']:.1f} ms (grid run), {base['lag']:.1f} ms (floor run)")
    print(f"  ratio grid/1 alone  ack median {grid['median'] / one['median']:5.2f}  p95 {grid['p95'] / one['p95']:5.2f}")
    print(f"  ratio grid/floor  ack median {grid['median'] / base['median']:5.2f}  p95 {grid['p95'] / base['p95']:5.2f}  "
          f"CPU/click {grid['cpu_ms_per_click'] / base['cpu_ms_per_click']:5.2f}")
    print(f"  events sent {grid['clicks'] + one['clicks']}, stored {sum(stored.values())}, lost {lost}; "
          f"'database is locked' {locked}; server tracebacks {errors}")
    ok = grid["p95"] <= 50 and lost == 0 and locked == 0
    print(f"  target ack p95 <= 50 ms, zero lost, zero locked: {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
