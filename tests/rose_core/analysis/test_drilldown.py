"""Drill-down: the heatmap and model clicks of one instance; the replay of a participant's clicks, with events
stored through the participant functions, decoded once and ordered across a reload."""
import json

import pandas as pd
import pytest

from rose_core.analysis import decode_answer, decode_event, drill_down, replay, replay_disagrees, responses_frame
from rose_core.instrument.ids import SequentialIds
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from tests.participants import new_session, submit_payload


def test_drill_down(populated_db, small_dataset):
    df = responses_frame(populated_db)
    iid = df[(df["solver_kind"] == "human") & (df["template"] == "G-Clk")]["instance_id"].iloc[0]
    dd = drill_down(df, small_dataset, iid, populated_db)
    humans = df[(df["instance_id"] == iid) & (df["solver_kind"] == "human")]
    stored = {r["response_id"]: r["parsed"] for r in populated_db.query(
        "SELECT response_id, parsed FROM responses WHERE instance_id = ?", (iid,))}
    # the frame leaves the parsed records out; the drill-down reads its instance's, each beside its own response
    assert "parsed" not in df and dd["responses"]["parsed"].tolist() == [
        stored[r] for r in dd["responses"]["response_id"]]
    clicked = sum(len({tuple(c) for c in json.loads(stored[r])["clicks"]}) for r in humans["response_id"])
    assert dd["n_humans"] == len(humans) >= 1 and dd["heat"].sum() == clicked
    assert sorted(dd["model_clicks"]["oracle (agent)"]) == sorted(small_dataset.instances[iid].gold.cells)
    from rose_core.analysis.frame import parsed_records

    with pytest.raises(LookupError, match="no longer stored"):
        parsed_records(populated_db, df.tail(1).assign(response_id=int(df["response_id"].max()) + 1000))


def test_events_decode_whatever_their_storage():
    row = {"view_id": "v", "seq": 2.0, "type": "click", "row": 1.0, "col": "3.0", "value": None,
           "client_ts": float("nan"), "server_ts": 5}
    e = decode_event(row)
    assert (e.seq, e.cell, e.client_ts, e.server_ts) == (2, (1, 3), None, 5.0)
    assert decode_event({**row, "type": "blur", "row": None, "col": float("nan")}).cell is None
    with pytest.raises(ValueError, match="sequence number"):
        decode_event({**row, "seq": "x"})


def ev(seq, kind, r=None, c=None, t=0.0, **kw):
    return {"seq": seq, "type": kind, "r": r, "c": c, "t": t, "active_ms": t, **kw}


def test_replay_across_a_reload_in_order(small_dataset, store):
    """Events reach the server as deltas (re-sent until acknowledged); a reload keeps the view and its numbering."""
    study = create_study(store, small_dataset, StudyConfig(
        name="replay", split="all", templates=["G-Clk"], items_per_participant=1, target_per_instance=1,
        practice_items=0, attention_every=0, seed=1), ids=SequentialIds("s"))
    session = new_session(store, small_dataset, study, "R1")
    screen = session.screen()
    # First page load: click two cells, focus leaves the page (no cell: NULL row and col), take one back.
    first = [ev(0, "click", 1, 1, 1000), ev(1, "click", 2, 2, 1500), ev(2, "blur", t=1600),
             ev(3, "unclick", 1, 1, 1700)]
    grid = {"view_id": screen.view_id, "selection": [[2, 2]], "count": None, "active_ms": 1700.0,
            "first_action_ms": 1000.0}
    session.record_events(screen, {**grid, "events": first[:2]})
    session.record_events(screen, {**grid, "events": first[1:]})   # seq 1 again: not stored twice
    # A reload: the same view continues from the stored events; click, undo, clear, click and submit.
    screen = session.screen()
    assert screen.ack_seq == 4 and screen.restore.selection == [[2, 2]]
    second = [ev(4, "click", 3, 3, 5000), ev(5, "click", 1, 2, 5100), ev(6, "undo", 1, 2, 5200, value="click"),
              ev(7, "clear", t=5300, value="2"), ev(8, "click", 2, 3, 5400)]
    session.record_events(screen, {**grid, "events": second[:3]})
    session.submit(screen, {**submit_payload(screen, [(2, 3)], None, events=second[3:])})
    r = replay(store, session.participant_id, screen.item.item_id)
    assert list(r["view"]) == [1] * 9
    assert list(r["type"]) == ["click", "click", "blur", "unclick", "click", "click", "undo", "clear", "click"]
    assert list(r["selection after"]) == ["R1C1", "R1C1; R2C2", "R1C1; R2C2", "R2C2", "R2C2; R3C3",
                                          "R2C2; R3C3; R1C2", "R2C2; R3C3", "", "R2C3"]
    assert str(r["row"].dtype) == "Int64" and r["row"].iloc[0] == 1 and pd.isna(r["row"].iloc[2])
    assert r["t (s)"].iloc[0] == 0.0 and r["t (s)"].iloc[-1] == pytest.approx(4.4)
    stored = store.query("SELECT parsed FROM responses WHERE participant_id = ?",
                         (session.participant_id,))[0]["parsed"]
    assert decode_answer(stored).cells == {(2, 3)} and replay_disagrees(r, stored) is None
    assert "R1C1" in replay_disagrees(r, json.dumps({"clicks": [[1, 1]], "count": None}))


def test_replay_of_a_stored_study(populated_db):
    row = populated_db.query("SELECT r.instance_id, r.participant_id, r.parsed FROM responses r JOIN events e ON "
                             "e.participant_id = r.participant_id AND e.instance_id = r.instance_id "
                             "WHERE r.kind = 'main' AND r.template = 'G-Clk' AND e.type = 'click' LIMIT 1")[0]
    r = replay(populated_db, row["participant_id"], row["instance_id"])
    assert len(r) and (r["type"] == "click").all() and not r["selection after"].str.contains(r"\.").any()
    assert replay_disagrees(r, row["parsed"]) is None


def _click_run(path, ds, right: bool):
    """A run answering the first G-Clk instances: the gold cells, or one wrong cell."""
    insts = [i for i in ds.instances.values() if i.template == "G-Clk"][:6]
    path.write_text("".join(json.dumps({
        "instance_id": i.instance_id, "dataset_hash": ds.dataset_hash,
        "response": i.protocol_answer if right else "CLICK(R1,C1)\nDONE"}) + "\n" for i in insts))
    return path, insts[0].instance_id


def test_a_response_replaced_after_the_frame_was_read_is_refused_not_shown_beside_another_verdict(
        populated_db, small_dataset, tmp_path, fresh_location):
    """The drill-down reads each response's parsed record by its id, after the frame was read. A run replaced in
    between (SQLite reuses the freed ids) or a verdict rewritten in place must not put another answer's record
    beside the frame's verdict: the record read must belong to the frame's row (same run, instance, participant,
    verdict), else it is refused like a response that is gone."""
    from rose_core.runs.importer import import_run
    from tests.backends import clone

    store = clone(populated_db, fresh_location())
    path, iid = _click_run(tmp_path / "m.jsonl", small_dataset, right=True)
    import_run(store, small_dataset, path, "late", kind="model")
    df = responses_frame(store)                       # the page's frame: 'late' right on every instance
    row = df[(df["solver"] == "late") & (df["instance_id"] == iid)].iloc[0]
    assert row["passed"] == 1
    # replaced by a run of the same size before the drill-down reads its records
    import_run(store, small_dataset, _click_run(tmp_path / "w.jsonl", small_dataset, right=False)[0], "late",
               kind="model", replace=True)
    with pytest.raises(LookupError, match="no longer stored|changed"):
        dd = drill_down(df, small_dataset, iid, store)
        # what would be shown otherwise: the frame's PASS beside the replacement's wrong click
        shown = dd["responses"].set_index("response_id").loc[int(row["response_id"])]
        raise AssertionError(f"frame passed={shown['passed']} shown beside parsed={shown['parsed']}")


def test_a_verdict_rewritten_in_place_after_the_frame_was_read_is_refused(populated_db, small_dataset,
                                                                          fresh_location):
    """As a rescore does (same response id, new parsed record and verdict): the frame's verdict and the record read
    after it would disagree."""
    from tests.backends import clone

    store = clone(populated_db, fresh_location())
    df = responses_frame(store)
    row = df[(df["solver"] == "oracle (agent)") & (df["template"] == "G-Clk")].iloc[0]
    with store.write() as c:
        c.execute("UPDATE responses SET passed = 0, failure = 'wrong_cells', parsed = ? WHERE response_id = ?",
                  (json.dumps({"clicks": [[1, 1]], "count": None}), int(row["response_id"])))
    with pytest.raises(LookupError, match="changed"):
        drill_down(df, small_dataset, row["instance_id"], store)
