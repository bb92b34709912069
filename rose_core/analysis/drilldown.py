"""Drill-down: everything about one instance (every response, the human click heatmap, each model's clicks)
and the step-by-step replay of one participant's clicks on it, across page reloads."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..benchmarks.rose.dataset import Dataset
from ..instrument.grid_input import apply_event
from ..benchmarks.rose.records import Cell
from ..storage.connection import Store
from ..storage.events import instance_events
from .answers import as_int, decode_answer, decode_cell
from .frame import parsed_records


def drill_down(df: pd.DataFrame, ds: Dataset, instance_id: str, store: Store) -> dict:
    """Everything about one instance: every response (with its stored `parsed` record, read from `store` for these
    rows only: the response frame leaves them out), the human click heatmap, each model's clicks."""
    inst = ds.instances[instance_id]
    scene = ds.scenes[inst.scene_id]
    rows = df[df["instance_id"] == instance_id]
    rows = rows.assign(parsed=pd.Series(parsed_records(store, rows), index=rows.index,
                                        dtype=object))
    humans = rows[rows["solver_kind"] == "human"]
    heat = np.zeros((scene.rows, scene.cols))
    for p in humans["parsed"]:
        for r, c in decode_answer(p).cells:
            if 1 <= r <= scene.rows and 1 <= c <= scene.cols:
                heat[r - 1, c - 1] += 1
    others = rows[rows["solver_kind"] != "human"]
    models = {s: sorted(decode_answer(p).cells) for s, p in zip(others["solver"], others["parsed"])}
    return {"instance": inst, "scene": scene, "responses": rows, "heat": heat, "n_humans": len(humans),
            "model_clicks": models}


# Drill-down figure colours (Okabe & Ito's colour-blind-safe set): the human heatmap and the gold outline use
# two of them, the models' markers the others, so no model's clicks can be mistaken for humans' or for gold.
HEAT_RGB = (213, 94, 0)        # vermillion
GOLD_COLOUR = "#009E73"        # bluish green
MODEL_COLOURS = ("#0072B2", "#CC79A7", "#000000", "#56B4E9", "#F0E442", "#E69F00")


def model_colours(solvers: list[str]) -> dict[str, str]:
    """A marker colour per model or agent, in the given order, never the heatmap's or gold's."""
    return {s: MODEL_COLOURS[k % len(MODEL_COLOURS)] for k, s in enumerate(solvers)}


def instances_answered(df: pd.DataFrame, humans_only: bool = False) -> list[str]:
    """The instances the drill-down picker offers: every one with a response, or only those humans answered."""
    rows = df[df["solver_kind"] == "human"] if humans_only else df
    return sorted(rows["instance_id"].unique())


@dataclass(frozen=True)
class Event:
    """One stored event of the click grid, decoded once (row and column may come back as 3, 3.0 or "3")."""

    view_id: str
    seq: int
    type: str
    cell: Cell | None
    value: str | None
    client_ts: float | None
    server_ts: float


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(f) else f


def decode_event(row: Mapping[str, Any]) -> Event:
    seq = as_int(row["seq"])
    if seq is None:
        raise ValueError(f"event of view {row['view_id']!r}: sequence number {row['seq']!r} is not an integer")
    return Event(str(row["view_id"]), seq, str(row["type"]), decode_cell(row.get("row"), row.get("col")),
                 None if row.get("value") is None else str(row["value"]), _num(row.get("client_ts")),
                 float(row["server_ts"]))


def _decode_or_none(row: Mapping[str, Any]) -> Event | None:
    """A stored event, or None when it cannot be placed at all (no integer sequence number or no server time)."""
    try:
        return decode_event(row)
    except (TypeError, ValueError):
        return None


def step(selection: list[Cell], e: Event) -> list[Cell]:
    """The selection after one event, as the click grid computes it (one definition, in grid_input)."""
    return apply_event(selection, e.type, e.cell, e.value)


def fmt_cells(cells: list[Cell]) -> str:
    return "; ".join(f"R{r}C{c}" for r, c in cells)


def _in_grid(e: Event, grid: tuple[int, int] | None) -> Event:
    """An event whose cell lies outside the grid names no cell (stored by hand or by an older version): it changes
    no selection, and no chart is asked to draw a box that does not exist."""
    if grid is None or e.cell is None or (1 <= e.cell[0] <= grid[0] and 1 <= e.cell[1] <= grid[1]):
        return e
    return Event(e.view_id, e.seq, e.type, None, e.value, e.client_ts, e.server_ts)


def replay(store: Store, participant_id: str, instance_id: str, grid: tuple[int, int] | None = None) -> pd.DataFrame:
    """A participant's events on an instance in order, with the selection after each step.

    Order: page views by the server time of their first stored event, then the view id; within a view by
    sequence number. A view is one assignment: a reload keeps its view id and continues its numbering (the
    page restores the selection from these same events), so a replay runs straight across reloads.
    `grid` (rows, cols): cells outside it are dropped from the replay. Events no browser of ours sends (a click
    with no cell, an unknown type, an unreadable sequence number) are shown but change nothing."""
    with store.connect() as conn:
        stored = instance_events(conn, participant_id, instance_id)
    events = [_in_grid(e, grid) for e in (_decode_or_none(r) for r in stored) if e is not None]
    cols = ["view", "view_id", "seq", "type", "row", "col", "value", "t (s)", "server_ts", "selection after",
            "cells after"]
    if not events:
        return pd.DataFrame(columns=cols)
    first: dict[str, float] = {}
    for e in events:
        first[e.view_id] = min(first.get(e.view_id, e.server_ts), e.server_ts)
    views = sorted(first, key=lambda v: (first[v], v))
    number = {v: k + 1 for k, v in enumerate(views)}
    events.sort(key=lambda e: (first[e.view_id], e.view_id, e.seq))
    t0 = min((e.client_ts for e in events if e.client_ts is not None), default=None)
    rows, selection, view = [], [], None
    for e in events:
        if e.view_id != view:
            view, selection = e.view_id, []
        selection = step(selection, e)
        rows.append({"view": number[e.view_id], "view_id": e.view_id, "seq": e.seq, "type": e.type,
                     "row": None if e.cell is None else e.cell[0], "col": None if e.cell is None else e.cell[1],
                     "value": e.value,
                     "t (s)": None if e.client_ts is None or t0 is None else (e.client_ts - t0) / 1000,
                     "server_ts": e.server_ts, "selection after": fmt_cells(selection), "cells after": list(selection)})
    out = pd.DataFrame(rows, columns=cols)
    for c in ("row", "col"):
        out[c] = out[c].astype("Int64")
    out["t (s)"] = out["t (s)"].astype(float)
    return out


def replay_disagrees(ev: pd.DataFrame, parsed: str | None) -> str | None:
    """None when the replay ends at the cells of the stored answer (`parsed`); otherwise a sentence saying both
    (events lost, or a reload that restored a selection the events do not show)."""
    if ev.empty:
        return None
    end = frozenset(ev["cells after"].iloc[-1])
    said = decode_answer(parsed).cells
    if end == said:
        return None
    return (f"The replay ends at {fmt_cells(sorted(end)) or 'no cell'}; "
            f"the stored answer says {fmt_cells(sorted(said)) or 'no cell'}.")
