"""Test-only Streamlit page: the participant click grid on a real dataset instance, and what it sends.

A component harness, not a stand-in for the study server: it keeps the events it received by sequence
number (idempotently, like the server's store) and sends back `ack_seq` = how many of this view's
events it holds contiguously from `restore.next_seq`'s base, so the browser's delta protocol runs for real;
`restore` is the query parameter's plus the stored events replayed, so a reload restores what was done.

With `?redirect=URL` it is the end page's automatic redirect instead (ui/redirect.py, 300 ms delay).

Query parameters: rows, cols (grid size), mode (count|click|click_submit), view (view_id),
restore (JSON, the `restore` object), progress (text), hl=1 (prefer a T4 item: highlight image),
next=VIEW2 (a "Next view" button switches this mount point to view VIEW2: same component key, new view_id).
Environment: ROSE_DATASET_DIR (a built dataset), ROSE_GRID_LOG (JSONL file: one line per value received).
"""
import json
import os
from pathlib import Path

import streamlit as st

from rose_core import TEMPLATE_OUTPUT, Dataset
from ui.click_grid import click_grid, grid_data
from ui.redirect import redirect

st.set_page_config(page_title="grid harness", layout="wide")
ss = st.session_state
LOG = Path(os.environ["ROSE_GRID_LOG"])
COUNT_LABEL = {"count": "Number of odd cells:", "click_submit": "Number of odd cells outside the excluded area:"}


@st.cache_resource
def dataset(root: str) -> Dataset:
    return Dataset.load(Path(root))


def pick(ds: Dataset, rows: int, cols: int, mode: str, highlight: bool):
    """The first instance (by id) of that grid size and output kind; a T4 one when asked."""
    fits = sorted((i for i in ds.instances.values() if TEMPLATE_OUTPUT[i.template] == mode
                   and (ds.scenes[i.scene_id].rows, ds.scenes[i.scene_id].cols) == (rows, cols)),
                  key=lambda i: (not (highlight and i.template == "T4"), i.instance_id))
    if not fits:
        st.error(f"no {mode} instance with a {rows}x{cols} grid in this dataset")
        st.stop()
    return fits[0]


def stored(view: str) -> tuple[dict[int, dict], dict | None]:
    """This view's events by seq (a resend overwrites, like the store) and the last state received."""
    events: dict[int, dict] = {}
    last = None
    if LOG.exists():
        for line in LOG.read_text().splitlines():
            rec = json.loads(line)
            if rec["value"].get("view_id") == view:
                events.update({e["seq"]: e for e in rec["value"].get("events") or []})
                last = rec["value"]
    return events, last


def replay(restore: dict, events: dict[int, dict], upto: int, last: dict | None) -> dict:
    """What a reload restores: the given restore, then the stored events in seq order (the documented
    event semantics: undo carries the action it undid, clear empties the selection)."""
    sel = [tuple(x) for x in restore.get("selection", [])]
    count = restore.get("count")
    for seq in range(restore.get("next_seq", 0), upto):
        e = events[seq]
        rc = (e.get("r"), e.get("c"))
        if e["type"] == "click" or (e["type"] == "undo" and e["value"] == "unclick"):
            sel = [x for x in sel if x != rc] + [rc]
        elif e["type"] == "unclick" or (e["type"] == "undo" and e["value"] == "click"):
            sel = [x for x in sel if x != rc]
        elif e["type"] == "clear":
            sel = []
        elif e["type"] == "count_input":
            count = e["value"]
    return {"selection": [list(x) for x in sel], "count": count, "next_seq": upto,
            "active_ms": max([restore.get("active_ms", 0.0)] + [events[s]["active_ms"] for s in range(
                restore.get("next_seq", 0), upto)]),
            "first_action_ms": (last or {}).get("first_action_ms", restore.get("first_action_ms"))}


def record(kind: str) -> None:
    """Callback: runs before the rerun, so the rerun's data already carries the new ack."""
    value = getattr(ss[ss["grid_key"]], kind, None)
    if value:
        with LOG.open("a") as f:
            f.write(json.dumps({"kind": kind, "ack_before": ss.get("grid_ack", 0), "value": value}) + "\n")


q = st.query_params
if "redirect" in q:
    st.caption("You will be redirected in a few seconds.")
    redirect(q["redirect"], delay_ms=300)
    st.stop()
ds = dataset(os.environ["ROSE_DATASET_DIR"])
mode = q.get("mode", "click")
inst = pick(ds, int(q.get("rows", 6)), int(q.get("cols", 6)), mode, q.get("hl") == "1")
view = ss.get("grid_view", q.get("view", "V1"))
restore = json.loads(q["restore"]) if "restore" in q and view == q.get("view", "V1") else None
base = (restore or {}).get("next_seq", 0)
if "next" in q and st.button("Next view", key="grid_next"):
    ss["grid_view"] = view = q["next"]
    restore, base = None, 0


@st.fragment
def item() -> None:
    have, last = stored(view)
    ack = base
    while ack in have:
        ack += 1
    key = "grid_fixed" if "next" in q else f"grid_{view}"
    ss["grid_ack"], ss["grid_key"] = ack, key
    data = grid_data(view, (ds.root / inst.image).read_bytes(), ds.scenes[inst.scene_id].layout, mode,
                     COUNT_LABEL.get(mode, ""), instruction=inst.instruction, progress=q.get("progress", ""),
                     ack_seq=ack, restore=replay(restore or {}, have, ack, last))
    res = click_grid(key, data, on_grid=lambda: record("grid"), on_submit=lambda: record("submit"))
    if res.submit:
        st.success("submitted")


item()
