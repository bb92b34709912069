"""Crafted websocket messages no browser of ours sends, against the real server: Streamlit's own BackMsg protobufs
carrying a grid state or a submit with Infinity, 1e30, float cells, 300,000 cells, or 13 MB. Each gets the page's
friendly message or Streamlit's size refusal: no traceback, nothing stored, and the participant carries on."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store
from ui.click_grid import element_data
from tests.participants import LAB_INFO


def _trigger_id(base: str) -> str:
    from streamlit.components.v2.bidi_component.main import _make_trigger_id

    return _make_trigger_id(base, "events")


async def _run(ws) -> dict:
    """Read ForwardMsgs to the end of one script run: the elements it showed."""
    found: dict = {"buttons": {}, "errors": [], "exceptions": []}
    while True:
        m = ForwardMsg()
        m.ParseFromString(await asyncio.wait_for(ws.recv(), 60))
        kind = m.WhichOneof("type")
        if kind == "delta" and m.delta.WhichOneof("type") == "new_element":
            el = m.delta.new_element
            t = el.WhichOneof("type")
            if t == "bidi_component":
                found["grid"] = (el.bidi_component.id, m.delta.fragment_id, element_data(el.bidi_component))
            elif t == "button":
                found["buttons"][el.button.label] = el.button.id
            elif t == "checkbox":
                found["checkbox"] = el.checkbox.id
            elif t == "alert":
                found["errors"].append(el.alert.body)
            elif t == "exception":
                found["exceptions"].append(el.exception.message)
        if kind == "script_finished":
            return found


CRAFTED = {  # read by the page: its friendly message
    "infinity in a cell": {"selection": [[float("inf"), 1]]},
    "1e30 in a cell": {"selection": [[1e30, 1]]},
    "a float cell": {"selection": [[1.5, 2]]},
    "65 cells on a grid of at most 64": {"selection": [[1, 1]] * 65},
    "an event with infinity": {"events": [{"seq": float("inf"), "type": "click", "r": 1, "c": 1}]},
}
# Shapes no browser of ours sends (issue 23: tracebacks to the sender): a submit that is not an object, a grid
# state that is not one. Each: no traceback, nothing stored (the page may say it could not read the answer).
SHAPES = {
    "a submit that is a string": ('[{"event": "submit", "value": "DONE"}]', None),
    "a submit that is a list": ('[{"event": "submit", "value": [1, 2]}]', None),
    "a submit with a view id that is a list": ('[{"event": "submit", "value": {"view_id": [1]}}]', None),
    "a grid state that is a string": (None, '{"grid": "x"}'),
    "a grid state with a list for events": (None, '{"grid": {"view_id": "V", "events": {"a": 1}}}'),
    "a component value that is a list": (None, '[1, 2, 3]'),
}
OVERSIZED = {  # refused by Streamlit before the page sees them (server.maxWidgetStateSize)
    "300,000 cells": {"selection": [[1, 1]] * 300_000},
    "13 MB of text": {"count": "9" * 13_000_000},
}


def test_crafted_messages_get_a_friendly_refusal_and_nothing_is_stored(live, small_dataset):
    study = create_study(open_store(live.db), small_dataset, StudyConfig(info=LAB_INFO,
        name="crafted", split="test", practice_items=0, attention_every=0, items_per_participant=2, seed=6,
        templates=["T3"], allow_phones=True))  # a protocol-level client runs no JS: no window claim
    store = open_store(live.db)
    query = f"study={study.study_id}&PROLIFIC_PID=CRAFT&STUDY_ID=PS&SESSION_ID=SS"
    url = f"ws://127.0.0.1:{live.port}/_stcore/stream"
    async def session(ws):
        async def send(widgets, fragment=""):
            await ws.send(BackMsg(rerun_script=ClientState(
                widget_states=WidgetStates(widgets=widgets), fragment_id=fragment, query_string=query)
            ).SerializeToString())
            return await _run(ws)
        return send

    def good(view: str) -> str:
        return json.dumps([{"event": "submit", "value": {
            "view_id": view, "selection": [[1, 1]], "count": None, "events": [
                {"seq": 0, "type": "click", "r": 1, "c": 1, "t": 900.0, "active_ms": 900.0}],
            "first_action_ms": 900.0, "active_ms": 1500.0, "client_total_ms": 1500.0, "viewport": [1280, 800],
            "dpr": 1.0, "focus_lost": False}}])

    def state(wid: str, view: str) -> WidgetState:
        """The grid's live state, sent with every submit as the browser does."""
        return WidgetState(id=wid, json_value=json.dumps({"grid": {
            "view_id": view, "events": [], "selection": [[1, 1]], "count": None, "active_ms": 1500.0,
            "first_action_ms": 900.0}}))

    async def item(send) -> tuple[str, str, dict]:
        """A reconnect shows the held item, once the server has seen the old socket go ("another tab" till then)."""
        found = await send([])
        for _ in range(20):
            if "grid" in found:
                break
            await asyncio.sleep(0.5)
            found = await send([])
        return found["grid"]

    async def submit(send, wid, frag, view, change) -> dict | str:
        text = json.dumps([{"event": "submit", "value": {**json.loads(good(view))[0]["value"], **change}}])
        try:  # Infinity goes as JSON's non-standard token, as Python writes it
            return await send([state(wid, view), WidgetState(id=_trigger_id(wid), json_trigger_value=text)], frag)
        except websockets.ConnectionClosed:  # refused by size: the server closed this socket
            return "closed"

    async def main() -> dict:
        outcomes = {}
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None) as ws:
            send = await session(ws)
            found = await send([])
            box = WidgetState(id=found["checkbox"], bool_value=True)
            found = await send([box])
            found = await send([box, WidgetState(id=found["buttons"]["Continue"], trigger_value=True)])
            found = await send([WidgetState(id=found["buttons"]["Continue"], trigger_value=True)])
            wid, frag, data = found["grid"]
            for name, change in CRAFTED.items():
                outcomes[name] = await submit(send, wid, frag, data["view_id"], change)
            for name, (trigger, grid) in SHAPES.items():
                widgets = [WidgetState(id=wid, json_value=grid.replace('"V"', json.dumps(data["view_id"])))
                           if grid else state(wid, data["view_id"])]
                if trigger:
                    widgets.append(WidgetState(id=_trigger_id(wid), json_trigger_value=trigger))
                outcomes[name] = await send(widgets, frag)
        for name, change in OVERSIZED.items():  # each on its own socket: a refusal may close it
            async with websockets.connect(url, subprotocols=["streamlit"], max_size=None) as ws:
                send = await session(ws)
                wid, frag, data = await item(send)
                outcomes[name] = await submit(send, wid, frag, data["view_id"], change)
        # the participant carries on (a reload: a new socket, the same item): a well-formed answer is stored once
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None) as ws:
            send = await session(ws)
            wid, frag, data = await item(send)
            await submit(send, wid, frag, data["view_id"], {})
        return outcomes

    # on a thread of its own: Playwright's sync API may already run an event loop on this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        outcomes = pool.submit(asyncio.run, main()).result(timeout=600)
    for name in SHAPES:
        assert outcomes[name]["exceptions"] == [], (name, outcomes[name]["exceptions"])
    for name in CRAFTED:
        run = outcomes[name]
        assert run["exceptions"] == [], (name, run["exceptions"])
        assert any("Your answer could not be read" in e for e in run["errors"]), (name, run)
    for name in OVERSIZED:
        run = outcomes[name]
        assert isinstance(run, str) or all("exceeds the widget state size limit" in e for e in run["exceptions"]), (
            name, run)
    rows = store.query("SELECT parsed, total_ms, viewport_w FROM responses")
    assert len(rows) == 1 and '"clicks": [[1, 1]]' in rows[0]["parsed"]
