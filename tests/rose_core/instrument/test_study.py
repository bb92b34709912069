"""Studies, the participant session, assignment and recording, on a real database (a SQLite file and a PostgreSQL
database: the `store` fixture) and a real dataset."""
import random
import threading
from collections import Counter

import pytest

from rose_core.instrument.grid_input import parse_state, parse_submit, replay, restore
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.policy import default_tiebreak, progress_text, rank_main
from rose_core.instrument.practice import PRACTICE_KIND, plan_practice, practice_kinds
from rose_core.instrument.config import StudyConfig, StudyError
from rose_core.instrument.joining import join
from rose_core.instrument.policy import main_pool
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.screens import Consent, End, Instructions, ItemScreen, PracticeFeedback
from rose_core.instrument.session import ParticipantSession
from rose_core.instrument.study import get_participant
from tests.participants import answer, new_session, run_to_end, submit_payload


def cfg(**kw):
    base = dict(name="pilot", split="dev", items_per_participant=6, target_per_instance=2, practice_items=4,
                attention_every=3, seed=5)
    base.update(kw)
    return StudyConfig(**base)


_STUDY_IDS = SequentialIds("st")


def make(store, ds, **kw):
    return create_study(store, ds, cfg(**kw), ids=_STUDY_IDS, clock=FakeClock())


def test_config_problems_are_specific():
    c = StudyConfig(name="", split="nope", subsets=["Bad"], items_per_participant=0, completion_url="ftp://x")
    text = "; ".join(c.problems())
    for needle in ("name: must not be empty", "split: expected dev, test or all", "unknown: ['Bad']",
                   "items_per_participant: expected a whole number >= 1", "completion_url"):
        assert needle in text


def test_practice_rounds_cover_every_kind_on_fresh_scenes_outside_the_pool(store, small_dataset):
    for split in ("dev", "all"):
        study = make(store, small_dataset, split=split, practice_items=5, practice_max_attempts=3,
                     templates=["T1", "T2", "T3", "T4", "T5", "G-Clk"])
        c = study.config
        pool = {i.scene_id for i in main_pool(small_dataset, c)}
        assert len(c.practice_rounds) == 3 and all(len(r) == 5 for r in c.practice_rounds)
        scenes = [small_dataset.instances[i].scene_id for r in c.practice_rounds for i in r]
        assert len(set(scenes)) == 15 and not set(scenes) & pool  # fresh per round, never a main scene
        for r in c.practice_rounds:
            kinds = {PRACTICE_KIND[small_dataset.instances[i].template] for i in r}
            assert kinds == {"count", "click_region", "click_highlight", "click_outside_count"}


def test_practice_that_cannot_cover_the_kinds_or_the_pool_is_refused(store, small_dataset):
    with pytest.raises(StudyError, match="ask for 4 kinds of answer.*at least 4 items"):
        make(store, small_dataset, practice_items=2)
    assert practice_kinds(["T3", "G-Clk", "T1"]) == ["click_region", "count"]
    with pytest.raises(StudyError, match="distinct practice scenes"):  # split all: too few scenes to reserve
        make(store, small_dataset, split="all", subsets=["PixelContent"], practice_items=4, practice_max_attempts=5)
    c = cfg(split="dev", subsets=["PixelContent"], templates=["T4"], practice_items=4, practice_max_attempts=5)
    with pytest.raises(StudyError, match="need 20 distinct practice scenes.*outside the main pool there are"):
        plan_practice(small_dataset, c, random.Random(1))
    assert store.query("SELECT count(*) AS n FROM studies")[0]["n"] == 0  # nothing half-stored


def test_screens_from_consent_to_the_end(store, small_dataset):
    study = make(store, small_dataset, practice_items=4)
    ids, clock = SequentialIds("f"), FakeClock()
    p = join(store, study, "P1", "prolific", "S", "X", ids=ids, clock=clock)
    assert p.participant_id == "p-f-0001"
    s = ParticipantSession(store, small_dataset, study, p.participant_id, clock=clock)
    assert s.screen() == Consent(0)
    s.consent()
    assert s.screen() == Instructions(True)
    s.finish_instructions()
    seen_feedback = []
    kinds = []
    for _ in range(40):
        screen = s.screen()
        if isinstance(screen, End):
            break
        if isinstance(screen, PracticeFeedback):
            # A reload (a new session object, a new thread) shows the same feedback until Continue.
            again = ParticipantSession(store, small_dataset, study, p.participant_id, clock=clock).screen()
            assert again == screen and screen.passed and screen.instruction == screen.item.instruction
            assert screen.item.mode == "count" or all(line.clicked for line in screen.lines if line.correct)
            seen_feedback.append(screen.outcome)
            s.acknowledge_feedback(screen.view_id)
            continue
        assert isinstance(screen, ItemScreen)
        kinds.append(screen.kind)
        assert answer(s, screen).result.passed
    assert seen_feedback == ["next", "next", "next", "passed"]
    assert kinds == ["practice"] * 4 + ["main"] * 3 + ["attention"] + ["main"] * 3
    assert screen == End("completed", "", "")
    rows = store.query("SELECT kind, passed, valid FROM responses ORDER BY response_id")
    assert Counter(r["kind"] for r in rows) == {"practice": 4, "main": 6, "attention": 1}
    assert all(r["passed"] and r["valid"] for r in rows)


def test_failed_practice_retries_on_fresh_items_then_screens_out(store, small_dataset):
    study = make(store, small_dataset, practice_items=4, practice_max_attempts=2)
    s = new_session(store, small_dataset, study, "F1")
    rounds, outcomes = [[], []], []
    for _ in range(20):
        screen = s.screen()
        if isinstance(screen, End):
            break
        if isinstance(screen, PracticeFeedback):
            assert not screen.passed and any(not line.clicked for line in screen.lines if line.correct) or \
                screen.item.mode == "count" or not screen.gold_cells
            outcomes.append(screen.outcome)
            s.acknowledge_feedback(screen.view_id)
            continue
        rounds[len([o for o in outcomes if o in ("retry", "screened_out")])].append(screen.item.item_id)
        answer(s, screen, right=False)
    assert outcomes == ["next"] * 3 + ["retry"] + ["next"] * 3 + ["screened_out"]
    assert rounds == study.config.practice_rounds
    first_scenes = {small_dataset.instances[i].scene_id for i in rounds[0]}
    assert not first_scenes & {small_dataset.instances[i].scene_id for i in rounds[1]}
    assert screen.reason == "screened_out"
    p = get_participant(store, s.participant_id)
    assert p.practice_passed is False and p.practice_attempts == 2


def test_answered_item_is_never_shown_or_stored_twice(store, small_dataset):
    study = make(store, small_dataset, practice_items=0)
    s = new_session(store, small_dataset, study, "D1")
    screen = s.screen()
    assert s.screen() == screen                                      # reload: same item, same view
    assert not answer(s, screen).duplicate
    assert answer(s, screen).duplicate                               # double submit
    assert s.screen().item.item_id != screen.item.item_id
    assert store.query("SELECT count(*) AS n FROM responses WHERE instance_id = ?",
                       (screen.item.item_id,))[0]["n"] == 1


def test_server_timing_is_assigned_to_answered_on_the_server_clock(store, small_dataset):
    study = make(store, small_dataset, practice_items=0)
    s = new_session(store, small_dataset, study, "T1")
    screen = s.screen()
    s.clock.advance(7.25)
    payload = submit_payload(screen, [], 0)
    payload["client_total_ms"] = 1.0  # the page's own clock is kept beside it, never used for total_ms
    s.submit(screen, payload)
    row = store.query("SELECT total_ms, client_total_ms, active_ms, first_action_ms FROM responses")[0]
    assert row == {"total_ms": 7250.0, "client_total_ms": 1.0, "active_ms": 2000.0, "first_action_ms": 400.0}


def test_events_are_idempotent_by_seq_and_restore_after_reload(store, small_dataset):
    study = make(store, small_dataset, practice_items=0, templates=["T5"])
    s = new_session(store, small_dataset, study, "E1")
    screen = s.screen()
    assert screen.ack_seq == 0 and screen.restore.next_seq == 0 and screen.restore.selection == []
    ev = [{"seq": 0, "type": "click", "r": 1, "c": 1, "t": 900.0, "active_ms": 800.0},
          {"seq": 1, "type": "click", "r": 2, "c": 2, "t": 1500.0, "active_ms": 1400.0},
          {"seq": 2, "type": "blur", "t": 1600.0, "active_ms": 1500.0},
          {"seq": 3, "type": "click", "r": 1, "c": 2, "t": 3000.0, "active_ms": 1900.0},
          {"seq": 4, "type": "undo", "r": 1, "c": 2, "value": "click", "t": 3100.0, "active_ms": 2000.0},
          {"seq": 5, "type": "count_input", "value": "3", "t": 3500.0, "active_ms": 2400.0}]
    state = {"view_id": screen.view_id, "selection": [], "count": None}
    assert s.record_events(screen, {**state, "events": ev[:2]}) == 1
    assert s.record_events(screen, {**state, "events": ev[1:]}) == 5     # seq 1 sent twice: stored once
    assert s.record_events(screen, {**state, "events": ev}, known_max_seq=5) == 5
    rows = store.query("SELECT seq, type FROM events ORDER BY seq")
    assert [(r["seq"], r["type"]) for r in rows] == [(0, "click"), (1, "click"), (2, "blur"), (3, "click"),
                                                     (4, "undo"), (5, "count_input")]
    again = ParticipantSession(store, small_dataset, study, s.participant_id, clock=s.clock).screen()
    assert again.view_id == screen.view_id and again.ack_seq == 6
    assert again.restore.to_json() == {"selection": [[1, 1], [2, 2]], "count": "3", "next_seq": 6,
                                       "active_ms": 2400.0, "first_action_ms": 900.0}
    data = again.component_data(b"png")
    assert data["restore"]["selection"] == [[1, 1], [2, 2]] and data["ack_seq"] == 6
    assert (data["refusals"], data["pending"]) == (0, False)
    # While the item stays on screen the page acknowledges what it stored since (never less than the screen's own).
    assert again.component_data(b"png", stored_seq=8)["ack_seq"] == 9
    assert again.component_data(b"png", stored_seq=2)["ack_seq"] == 6
    later = again.component_data(b"png", stored_seq=8, refusals=2, pending=True)
    assert (later["refusals"], later["pending"], later["restore"]["next_seq"]) == (2, True, 6)


def test_replay_follows_the_component(small_dataset):
    from rose_core.instrument.grid_input import GridEvent as E

    # The component's undo names the cell and the action it undid (ui/click_grid.js): no history needed.
    evs = [E(0, "click", 1, 1), E(1, "click", 2, 2), E(2, "unclick", 1, 1), E(3, "undo", 1, 1, "unclick"),
           E(4, "clear", value="2"), E(5, "click", 3, 3), E(6, "count_input", value="4")]
    assert replay(evs) == ([(3, 3)], "4")
    assert replay(evs[:4]) == ([(2, 2), (1, 1)], None)
    assert restore([]).to_json()["next_seq"] == 0


@pytest.mark.parametrize("payload, needle", [
    ({"view_id": "v", "selection": [["x", 1]]}, "row: expected a whole number"),
    ({"view_id": "v", "selection": [[9, 1]]}, "row: expected 1..4"),
    ({"view_id": "v", "selection": [[1, 1], [1, 1]]}, "listed twice"),
    ({"view_id": "v", "count": "3.5"}, "count: expected a whole number"),
    ({"view_id": "v", "count": "-1"}, "count: expected a whole number"),
    ({"view_id": "v", "selection": [[1.0, 1]]}, "row: expected a whole number"),
    ({"view_id": "v", "events": [{"seq": -1, "type": "click", "r": 1, "c": 1}]}, "seq: expected 0.."),
    ({"view_id": "v", "events": [{"seq": 0, "type": "hack"}]}, "type: expected one of"),
    ({"view_id": "v", "events": [{"seq": 0, "type": "click"}]}, "needs r and c"),
    ({"view_id": "v", "events": [{"seq": 0, "type": "count_input", "value": "x" * 65}]}, "at most 64"),
    ({"view_id": "v", "events": [{"seq": i, "type": "blur"} for i in range(2001)]}, "at most 2000"),
    ({"selection": []}, "view_id: expected"),
    ({"view_id": "v", "focus_lost": "yes"}, "focus_lost: expected true or false"),
    ({"view_id": "v", "events": [{"seq": 0, "type": "blur", "r": 1, "c": 1}]}, "a blur names no cell"),
])
def test_malformed_browser_messages_are_refused(payload, needle):
    with pytest.raises(StudyError, match=needle):
        parse_submit(payload, 4, 4)


def test_a_refused_submit_stores_nothing(store, small_dataset):
    study = make(store, small_dataset, practice_items=0)
    s = new_session(store, small_dataset, study, "M1")
    screen = s.screen()
    with pytest.raises(StudyError):
        s.submit(screen, {**submit_payload(screen, [], 1), "selection": [[99, 1]]})
    assert store.query("SELECT count(*) AS n FROM responses")[0]["n"] == 0
    assert s.screen() == screen
    with pytest.raises(StudyError, match="seq"):  # every event is numbered: nothing is stored by position
        parse_state({"view_id": "v", "selection": [[1, 2]], "events": [{"type": "count_input", "value": "2"}]}, 4, 4)
    with pytest.raises(StudyError, match="undo names the action"):
        parse_state({"view_id": "v", "events": [{"seq": 0, "type": "undo", "r": 1, "c": 1}]}, 4, 4)


def test_least_annotated_first_and_target_never_exceeded(store, small_dataset):
    study = make(store, small_dataset, practice_items=0, attention_every=0, items_per_participant=50,
                 target_per_instance=1, templates=["T1"], subsets=["PixelContent"])
    pool = main_pool(small_dataset, study.config)
    seen = []
    for i in range(3):
        run_to_end(new_session(store, small_dataset, study, f"P{i}"),
                   on_item=lambda screen: seen.append(screen.item.item_id))
    assert sorted(seen) == sorted(i.instance_id for i in pool)  # each exactly once, then exhausted
    ends = store.query("SELECT end_reason FROM participants ORDER BY created_at, participant_id")
    assert [e["end_reason"] for e in ends][-1] in ("completed", "pool_exhausted")


def test_two_participants_at_once_never_exceed_target(store, small_dataset):
    study = make(store, small_dataset, practice_items=0, attention_every=0, items_per_participant=100,
                 target_per_instance=2, templates=["T2"], subsets=["EmojiStyle"])
    pool_size = len(main_pool(small_dataset, study.config))
    errors = []

    def run(ext):
        try:
            run_to_end(new_session(store, small_dataset, study, ext))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(f"T{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    counts = Counter(r["instance_id"] for r in store.query("SELECT instance_id FROM responses"))
    assert max(counts.values()) == 2 and sum(counts.values()) == 2 * pool_size


def test_stale_holds_are_released(store, small_dataset):
    study = make(store, small_dataset, practice_items=0, attention_every=0, target_per_instance=1, templates=["T1"],
                 subsets=["PixelContent"], release_after_minutes=1)
    pool = main_pool(small_dataset, study.config)
    clock = FakeClock()
    a = new_session(store, small_dataset, study, "A", clock=clock)
    held = a.screen()
    clock.advance(120)  # A goes silent for two minutes
    got = []
    run_to_end(new_session(store, small_dataset, study, "B", clock=clock),
               on_item=lambda screen: got.append(screen.item.item_id))
    assert held.item.item_id in got and len(got) == len(pool)


def test_counterbalanced_template_order_rotates(store, small_dataset):
    study = make(store, small_dataset, practice_items=0, attention_every=0, items_per_participant=5,
                 target_per_instance=10, same_scene_multiple_templates=True)
    orders = []
    for i in range(3):
        seq = []
        run_to_end(new_session(store, small_dataset, study, f"C{i}"), on_item=lambda sc: seq.append(sc.item.template))
        orders.append(seq)
    assert orders[0] == ["T1", "T2", "T3", "T4", "T5"]
    assert orders[1] == ["T2", "T3", "T4", "T5", "T1"]
    assert orders[2][0] == "T3"


def test_assignment_is_deterministic_with_injected_ids_and_clock(make_store, small_dataset):
    def run(store):
        study = create_study(store, small_dataset, cfg(practice_items=0, items_per_participant=8),
                             ids=SequentialIds("d"), clock=FakeClock())
        out = []
        for i in range(3):
            s = new_session(store, small_dataset, study, f"D{i}", ids=SequentialIds(f"d{i}"))
            run_to_end(s, on_item=lambda sc: out.append((s.participant_id, sc.view_id, sc.item.item_id)))
        return study.study_id, out

    assert run(make_store()) == run(make_store())


def test_rank_main_is_pure_and_seeded(small_dataset):
    def pick_main(*args):
        return next(rank_main(*args), None)

    c = cfg(ordering="random", target_per_instance=2)
    pool = small_dataset.select("dev", None, ["T1"])
    counts = {i.instance_id: 1 for i in pool[1:]}
    tb = default_tiebreak("p1")
    assert pick_main(pool, c, counts, set(), set(), 0, 0, tb) == pool[0]          # the least annotated
    full = {i.instance_id: 2 for i in pool}
    assert pick_main(pool, c, full, set(), set(), 0, 0, tb) is None               # never past the target
    ordered = sorted(pool, key=lambda i: tb(i.instance_id))
    assert pick_main(pool, c, {}, set(), set(), 0, 0, tb) == ordered[0]           # ties: the injected stream
    assert pick_main(pool, c, {}, {ordered[0].instance_id}, set(), 0, 0, tb) == ordered[1]


def test_attention_check_is_not_announced_and_counts_as_an_item(store, small_dataset):
    study = make(store, small_dataset, practice_items=0, attention_every=2, items_per_participant=4)
    assert progress_text(study.config, 0, 0) == "Item 1 of 5"
    progress = []
    s = new_session(store, small_dataset, study, "AT")

    def look(screen):
        progress.append((screen.kind, screen.progress))
        data = screen.component_data(b"x")
        assert "attention" not in str(data).lower() and "ATT" not in screen.view_id

    run_to_end(s, on_item=look)
    assert progress == [("main", "Item 1 of 5"), ("main", "Item 2 of 5"), ("attention", "Item 3 of 5"),
                        ("main", "Item 4 of 5"), ("main", "Item 5 of 5")]


def test_same_scene_rule(store, small_dataset):
    study = make(store, small_dataset, practice_items=0, attention_every=0, items_per_participant=30,
                 target_per_instance=5, subsets=["PixelContent"])
    scenes = []
    run_to_end(new_session(store, small_dataset, study, "S"), on_item=lambda sc: scenes.append(sc.item.scene_id))
    assert len(scenes) == len(set(scenes))


def test_protocol_strings_match_what_a_model_would_write(store, small_dataset):
    study = make(store, small_dataset, practice_items=0, attention_every=0, items_per_participant=5,
                 same_scene_multiple_templates=True)
    s = new_session(store, small_dataset, study, "PR")
    run_to_end(s)
    for r in store.query("SELECT instance_id, protocol FROM responses"):
        assert r["protocol"] == small_dataset.instances[r["instance_id"]].protocol_answer


def test_time_limit_ends_with_the_right_reason(store, small_dataset):
    study = make(store, small_dataset, time_limit_minutes=1)
    s = new_session(store, small_dataset, study, "TL")
    assert isinstance(s.screen(), ItemScreen)
    s.clock.advance(61)
    assert s.screen() == End("timed_out", "", "")
    assert get_participant(store, s.participant_id).end_reason == "timed_out"
    assert s.screen().reason == "timed_out"


def test_bad_participant_id(store, small_dataset):
    study = make(store, small_dataset)
    with pytest.raises(StudyError):
        join(store, study, " ", "anonymous")


def test_a_rerun_after_an_answer_uses_one_connection(store, small_dataset):
    study = make(store, small_dataset, practice_items=0)
    s = new_session(store, small_dataset, study, "C1")
    screen = s.screen()

    def rerun():  # what Streamlit does: a new thread per rerun
        rec = answer(s, screen)
        assert not rec.duplicate
        assert isinstance(s.screen(), ItemScreen)

    before = store.opened
    t = threading.Thread(target=rerun)
    t.start()
    t.join()
    assert store.opened - before <= 1
    t = threading.Thread(target=lambda: s.screen())  # the next rerun reuses the pooled connection
    t.start()
    t.join()
    assert store.opened - before <= 1


def test_export_responses_and_events_csv_and_parquet(store, small_dataset, tmp_path):
    import pandas as pd

    from tests.command_line import run_cli

    study = make(store, small_dataset, practice_items=0, items_per_participant=3)
    run_to_end(new_session(store, small_dataset, study, "X1"))
    for table, fmt in (("responses", "csv"), ("responses", "parquet"), ("events", "parquet"), ("events", "csv")):
        out = tmp_path / f"{table}.{fmt}"
        r = run_cli("export-table", "--db", store.location, "--table", table, "--format", fmt, "--study",
                    study.study_id, "--out", str(out))
        assert r.returncode == 0, r.stderr
        df = pd.read_csv(out) if fmt == "csv" else pd.read_parquet(out)
        if table == "responses":
            assert len(df) == 3 and set(df["solver_kind"]) == {"human"} and df["passed"].all()
            assert {"protocol", "first_action_ms", "total_ms", "viewport_w", "device_pixel_ratio",
                    "focus_lost", "external_id"} <= set(df.columns)
        else:
            assert len(df) > 0 and {"client_ms_since_shown", "server_at_utc", "type", "row", "col"} <= set(df.columns)


def test_component_data_is_the_contract_and_holds_no_gold(store, small_dataset):
    import json

    study = make(store, small_dataset, practice_items=0, attention_every=0, items_per_participant=5,
                 same_scene_multiple_templates=True)
    s = new_session(store, small_dataset, study, "G1")

    def check(screen):
        data = screen.component_data(b"\x89PNG")
        assert set(data) == {"view_id", "mode", "image", "width", "height", "rows", "cols", "cells", "submit_label",
                             "count_label", "instruction", "progress", "ack_seq", "restore", "refusals", "pending"}
        assert data["view_id"] == screen.view_id and data["instruction"] == screen.item.instruction
        inst = small_dataset.instances[screen.item.item_id]
        blob = json.dumps(data)
        assert "gold" not in blob and "targets" not in blob
        if inst.protocol_answer != "DONE":
            assert inst.protocol_answer not in blob

    run_to_end(s, on_item=check)


def test_practice_items_are_timed_from_when_each_was_shown(store, small_dataset):
    """A practice round is assigned at once; each item's server time starts when it is shown (after the
    previous item's feedback was acknowledged), not at the round's start."""
    study = make(store, small_dataset, practice_items=4)
    clock = FakeClock()
    s = new_session(store, small_dataset, study, "T1", clock=clock)
    for _ in range(4):
        screen = s.screen()
        assert isinstance(screen, ItemScreen) and screen.kind == "practice"
        clock.advance(5.0)                           # five seconds on each item
        answer(s, screen)
        clock.advance(30.0)                          # reading the feedback
        fb = s.screen()
        assert isinstance(fb, PracticeFeedback)
        s.acknowledge_feedback(fb.view_id)
    rows = store.query("SELECT total_ms FROM responses WHERE kind = 'practice' ORDER BY response_id")
    assert [r["total_ms"] for r in rows] == [5000.0] * 4


def test_origin_is_stored_and_previews_never_shift_counterbalancing(store, small_dataset):
    study = make(store, small_dataset, practice_items=0, attention_every=0)
    preview = join(store, study, "me", "link", origin="preview")
    first = join(store, study, "P1", "link")
    assert (preview.origin, preview.counterbalance) == ("preview", 0)
    assert (first.origin, first.counterbalance) == ("participant", 0)   # the preview took no arrival rank
    again = join(store, study, "me", "link")                              # an existing participant keeps its origin
    assert again.origin == "preview"


def test_the_default_practice_counts_locally_abstains_once_and_starts_easy(store, small_dataset):
    """T1–T5 with the default 4 items per round: L-Cnt (T2) is the count practised, one item per round has
    nothing to click or count (the right answer is DONE with no click, or 0), and the first item's scene is among
    the easiest quarter of its candidates by the dataset's visibility figure."""
    from rose_core.instrument.practice import is_abstention, visibility

    study = make(store, small_dataset, split="test")
    c = study.config
    assert (c.practice_items, c.practice_max_attempts) == (4, 2)
    for r in c.practice_rounds:
        inst = [small_dataset.instances[i] for i in r]
        assert [i.template for i in inst] == ["T2", "T3", "T4", "T5"]
        abstain = [i for i in inst if is_abstention(i)]
        assert len(abstain) == 1 and abstain[0].template in ("T3", "T4")  # "nothing to click: press DONE"
        assert abstain[0].protocol_answer == "DONE"
        first = inst[0]
        assert not is_abstention(first)
        used = {small_dataset.instances[i].scene_id for rr in c.practice_rounds for i in rr}
        cands = sorted((visibility(small_dataset, i) for i in small_dataset.instances.values()
                        if i.template == "T2" and i.split == "dev" and not is_abstention(i)), reverse=True)
        assert visibility(small_dataset, first) >= cands[len(cands) // 4], (visibility(small_dataset, first), cands)
        assert used  # every round on its own scenes is checked above


def test_a_count_only_study_abstains_with_a_zero(store, small_dataset):
    from rose_core.instrument.practice import is_abstention

    study = make(store, small_dataset, split="test", templates=["T1", "T2"], practice_items=3)
    for r in study.config.practice_rounds:
        inst = [small_dataset.instances[i] for i in r]
        assert [i.template for i in inst] == ["T2", "T1", "T2"]
        assert [i.gold.count == 0 for i in inst].count(True) == 1 and inst[0].gold.count > 0
        assert sum(is_abstention(i) for i in inst) == 1
