"""Drill-down: the heatmap and model clicks of one instance; the replay of a participant's clicks, with events
stored through the participant functions, decoded once and ordered across a reload."""
import json

import pandas as pd
import pytest

from rose_core.analysis import decode_answer, decode_event, drill_down, replay, replay_disagrees, responses_frame
from rose_core.store import Store
from rose_core.study import (
    StudyConfig, Submission, create_study, current_item, finish_instructions, get_participant, give_consent, join,
    log_events, record_response,
)


def test_drill_down(populated_db, small_dataset):
    df = responses_frame(populated_db)
    iid = df[(df["solver_kind"] == "human") & (df["template"] == "G-Clk")]["instance_id"].iloc[0]
    dd = drill_down(df, small_dataset, iid)
    humans = df[(df["instance_id"] == iid) & (df["solver_kind"] == "human")]
    clicked = sum(len({tuple(c) for c in json.loads(p)["clicks"]}) for p in humans["parsed"])
    assert dd["n_humans"] == len(humans) >= 1 and dd["heat"].sum() == clicked
    assert sorted(dd["model_clicks"]["oracle (agent)"]) == sorted(small_dataset.instances[iid].gold.cells)


def test_events_decode_whatever_their_storage():
    row = {"view_id": "v", "seq": 2.0, "type": "click", "row": 1.0, "col": "3.0", "value": None,
           "client_ts": float("nan"), "server_ts": 5}
    e = decode_event(row)
    assert (e.seq, e.cell, e.client_ts, e.server_ts) == (2, (1, 3), None, 5.0)
    assert decode_event({**row, "type": "blur", "row": None, "col": float("nan")}).cell is None
    with pytest.raises(ValueError, match="sequence number"):
        decode_event({**row, "seq": "x"})


def ev(kind, r=None, c=None, t=0.0, **kw):
    return {"type": kind, "r": r, "c": c, "t": t, **kw}


def test_replay_across_a_reload_in_order(small_dataset, tmp_path):
    store = Store(tmp_path / "rose.db")
    study = create_study(store, small_dataset, StudyConfig(
        name="replay", split="all", templates=["G-Clk"], items_per_participant=1, target_per_instance=1,
        practice_items=0, attention_every=0, seed=1))
    p = join(store, study, "R1", "prolific")
    give_consent(store, p)
    finish_instructions(store, get_participant(store, p.participant_id))
    p = get_participant(store, p.participant_id)
    item = current_item(store, small_dataset, study, p)
    # First page view: click two cells, take one back, focus leaves the page (no cell: NULL row and col).
    first = [ev("click", 1, 1, 1000), ev("click", 2, 2, 1500), ev("blur", t=1600), ev("unclick", 1, 1, 1700)]
    log_events(store, p, item, "view-1", first[:2])     # sent as they happen: the browser's cumulative log
    log_events(store, p, item, "view-1", first)
    # A reload: a new view starts empty; the participant clicks again, undoes, clears, clicks and submits.
    second = [ev("click", 3, 3, 5000), ev("click", 1, 2, 5100), ev("undo", 1, 2, 5200), ev("clear", t=5300,
              value="1"), ev("click", 2, 3, 5400), ev("submit", t=5500)]
    log_events(store, p, item, "view-0-later", second[:3])  # a view id that sorts first: order is by time
    record_response(store, study, p, item, Submission("view-0-later", [(2, 3)], None, second, 300.0, 4500.0,
                                                      (1280, 800), 1.0, False))
    r = replay(store, p.participant_id, item.instance_id)
    assert list(r["view"]) == [1] * 4 + [2] * 6
    assert list(r["type"]) == ["click", "click", "blur", "unclick", "click", "click", "undo", "clear", "click",
                               "submit"]
    assert list(r["selection after"]) == ["R1C1", "R1C1; R2C2", "R1C1; R2C2", "R2C2", "R3C3", "R3C3; R1C2",
                                          "R3C3", "", "R2C3", "R2C3"]
    assert str(r["row"].dtype) == "Int64" and r["row"].iloc[0] == 1 and pd.isna(r["row"].iloc[2])
    assert r["t (s)"].iloc[0] == 0.0 and r["t (s)"].iloc[-1] == pytest.approx(4.5)
    stored = store.query("SELECT parsed FROM responses WHERE participant_id = ?", (p.participant_id,))[0]["parsed"]
    assert decode_answer(stored).cells == {(2, 3)} and replay_disagrees(r, stored) is None
    assert "R1C1" in replay_disagrees(r, json.dumps({"clicks": [[1, 1]], "count": None}))


def test_replay_of_a_stored_study(populated_db):
    row = populated_db.query("SELECT r.instance_id, r.participant_id, r.parsed FROM responses r JOIN events e ON "
                             "e.participant_id = r.participant_id AND e.instance_id = r.instance_id "
                             "WHERE r.kind = 'main' AND r.template = 'G-Clk' AND e.type = 'click' LIMIT 1")[0]
    r = replay(populated_db, row["participant_id"], row["instance_id"])
    assert len(r) and (r["type"] == "click").all() and not r["selection after"].str.contains(r"\.").any()
    assert replay_disagrees(r, row["parsed"]) is None
