"""Studies, assignment rules and recording, against a real SQLite file and a real dataset."""
import threading
from collections import Counter

import pytest

from rose_core.store import Store
from rose_core.study import (
    StudyConfig, StudyError, Submission, create_study, current_item, finish_instructions, get_participant, give_consent,
    join, log_events, main_pool, record_response, stage,
)


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "rose.db")


def cfg(**kw):
    base = dict(name="pilot", split="dev", items_per_participant=6, target_per_instance=2, practice_items=2,
                attention_every=3, seed=5)
    base.update(kw)
    return StudyConfig(**base)


def answer(item, right=True):
    """A submission the browser would send; right=True answers the gold."""
    k = item.gold_key
    cells = sorted(k.gold_cells) if right else [(1, 1)] if (1, 1) not in k.gold_cells else [(1, 2)]
    count = k.gold_count if right else k.gold_count + 1
    return Submission(view_id=f"v-{item.instance_id}", selected=cells if item.output != "count" else [],
                      count=count if item.output != "click" else None,
                      events=[{"type": "click", "r": r, "c": c, "t": 1.0 + i} for i, (r, c) in enumerate(cells)],
                      first_action_ms=500.0, total_ms=2000.0, viewport=(1280, 800), device_pixel_ratio=2.0,
                      focus_lost=False)


def through_intro(store, study, ext="P1"):
    p = join(store, study, ext, "prolific", "S", "X")
    give_consent(store, p)
    finish_instructions(store, get_participant(store, p.participant_id))
    return get_participant(store, p.participant_id)


def test_config_problems_are_specific():
    c = StudyConfig(name="", split="nope", subsets=["Bad"], items_per_participant=0, completion_url="ftp://x")
    text = "; ".join(c.problems())
    for needle in ("name: must not be empty", "split: expected dev, test or all", "unknown: ['Bad']",
                   "items_per_participant: expected a whole number >= 1", "completion_url"):
        assert needle in text


def test_practice_items_are_outside_the_main_pool(store, small_dataset):
    study = create_study(store, small_dataset, cfg())
    pool = {i.scene_id for i in main_pool(small_dataset, study.config)}
    assert len(study.config.practice_instance_ids) == 2
    assert all(small_dataset.instances[i].scene_id not in pool for i in study.config.practice_instance_ids)
    all_study = create_study(store, small_dataset, cfg(split="all"))
    pool = {i.scene_id for i in main_pool(small_dataset, all_study.config)}
    assert all_study.config.practice_scene_ids and not set(all_study.config.practice_scene_ids) & pool


def test_full_flow_practice_attention_main_done(store, small_dataset):
    study = create_study(store, small_dataset, cfg())
    p = join(store, study, "P1", "prolific", "S", "X")
    assert stage(store, study, p) == "consent"
    give_consent(store, p)
    assert stage(store, study, get_participant(store, p.participant_id)) == "instructions"
    p = through_intro(store, study)
    assert stage(store, study, p) == "practice"
    kinds = []
    while (item := current_item(store, small_dataset, study, p)) is not None:
        rec = record_response(store, study, p, item, answer(item))
        assert rec.score.passed and not rec.duplicate
        kinds.append(item.kind)
        p = get_participant(store, p.participant_id)
        if len(kinds) == 2:
            assert p.practice_passed and stage(store, study, p) == "main"
    assert kinds == ["practice"] * 2 + ["main"] * 3 + ["attention"] + ["main"] * 3
    p = get_participant(store, p.participant_id)
    assert p.end_reason == "completed" and stage(store, study, p) == "done"
    rows = store.query("SELECT kind, passed, valid, protocol, template FROM responses ORDER BY response_id")
    assert Counter(r["kind"] for r in rows) == {"practice": 2, "main": 6, "attention": 1}
    assert all(r["passed"] and r["valid"] for r in rows)
    assert store.query("SELECT count(*) AS n FROM events")[0]["n"] > 0


def test_failing_practice_twice_screens_out(store, small_dataset):
    study = create_study(store, small_dataset, cfg(practice_max_attempts=2))
    p = through_intro(store, study)
    for _ in range(2):
        while (item := current_item(store, small_dataset, study, p)) is not None:
            record_response(store, study, p, item, answer(item, right=False))
            p = get_participant(store, p.participant_id)
    assert p.end_reason == "screened_out" and p.practice_passed is False


def test_answered_item_is_never_shown_or_stored_twice(store, small_dataset):
    study = create_study(store, small_dataset, cfg(practice_items=0))
    p = through_intro(store, study)
    item = current_item(store, small_dataset, study, p)
    assert current_item(store, small_dataset, study, p).instance_id == item.instance_id  # reload: same item
    assert not record_response(store, study, p, item, answer(item)).duplicate
    assert record_response(store, study, p, item, answer(item)).duplicate          # double submit
    nxt = current_item(store, small_dataset, study, p)
    assert nxt.instance_id != item.instance_id
    assert store.query("SELECT count(*) AS n FROM responses WHERE instance_id = ?", (item.instance_id,))[0]["n"] == 1


def test_least_annotated_first_and_target_never_exceeded(store, small_dataset):
    c = cfg(practice_items=0, attention_every=0, items_per_participant=50, target_per_instance=1,
            templates=["T1"], subsets=["PixelContent"])
    study = create_study(store, small_dataset, c)
    pool = main_pool(small_dataset, study.config)
    participants = [through_intro(store, study, f"P{i}") for i in range(3)]
    seen = []
    for p in participants:
        while (item := current_item(store, small_dataset, study, p)) is not None:
            record_response(store, study, p, item, answer(item))
            seen.append(item.instance_id)
            p = get_participant(store, p.participant_id)
    assert sorted(seen) == sorted(i.instance_id for i in pool)  # each exactly once, then exhausted


def test_two_participants_at_once_never_exceed_target(store, small_dataset):
    c = cfg(practice_items=0, attention_every=0, items_per_participant=100, target_per_instance=2,
            templates=["T2"], subsets=["EmojiStyle"])
    study = create_study(store, small_dataset, c)
    pool_size = len(main_pool(small_dataset, study.config))
    errors = []

    def run(ext):
        try:
            p = through_intro(store, study, ext)
            while (item := current_item(store, small_dataset, study, p)) is not None:
                record_response(store, study, p, item, answer(item))
                p = get_participant(store, p.participant_id)
        except Exception as e:  # pragma: no cover
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
    c = cfg(practice_items=0, attention_every=0, target_per_instance=1, templates=["T1"], subsets=["PixelContent"],
            release_after_minutes=1)
    study = create_study(store, small_dataset, c)
    pool = main_pool(small_dataset, study.config)
    a = through_intro(store, study, "A")
    held = current_item(store, small_dataset, study, a)
    with store.write() as conn:  # A went silent two minutes ago
        conn.execute("UPDATE participants SET last_seen_at = last_seen_at - 120 WHERE participant_id = ?",
                     (a.participant_id,))
    b = through_intro(store, study, "B")
    got = []
    while (item := current_item(store, small_dataset, study, b)) is not None:
        record_response(store, study, b, item, answer(item))
        got.append(item.instance_id)
        b = get_participant(store, b.participant_id)
    assert held.instance_id in got and len(got) == len(pool)


def test_counterbalanced_template_order_rotates(store, small_dataset):
    c = cfg(practice_items=0, attention_every=0, items_per_participant=5, target_per_instance=10,
            same_scene_multiple_templates=True)
    study = create_study(store, small_dataset, c)
    orders = []
    for i in range(3):
        p = through_intro(store, study, f"C{i}")
        seq = []
        while (item := current_item(store, small_dataset, study, p)) is not None:
            record_response(store, study, p, item, answer(item))
            seq.append(item.template)
            p = get_participant(store, p.participant_id)
        orders.append(seq)
    assert orders[0] == ["T1", "T2", "T3", "T4", "T5"]
    assert orders[1] == ["T2", "T3", "T4", "T5", "T1"]
    assert orders[2][0] == "T3"


def test_same_scene_rule(store, small_dataset):
    study = create_study(store, small_dataset, cfg(practice_items=0, attention_every=0, items_per_participant=30,
                                                   target_per_instance=5, subsets=["PixelContent"]))
    p = through_intro(store, study)
    scenes = []
    while (item := current_item(store, small_dataset, study, p)) is not None:
        record_response(store, study, p, item, answer(item))
        scenes.append(item.scene_id)
        p = get_participant(store, p.participant_id)
    assert len(scenes) == len(set(scenes))


def test_protocol_strings_match_what_a_model_would_write(store, small_dataset):
    study = create_study(store, small_dataset, cfg(practice_items=0, attention_every=0))
    p = through_intro(store, study)
    item = current_item(store, small_dataset, study, p)
    sub = answer(item)
    rec = record_response(store, study, p, item, sub)
    inst = small_dataset.instances[item.instance_id]
    assert rec.protocol == inst.protocol_answer


def test_log_events_is_idempotent(store, small_dataset):
    study = create_study(store, small_dataset, cfg(practice_items=0))
    p = through_intro(store, study)
    item = current_item(store, small_dataset, study, p)
    ev = [{"type": "click", "r": 1, "c": 1, "t": 1}, {"type": "unclick", "r": 1, "c": 1, "t": 2}]
    log_events(store, p, item, "view1", ev[:1])
    log_events(store, p, item, "view1", ev)   # cumulative: the first is sent again
    rows = store.query("SELECT seq, type FROM events ORDER BY seq")
    assert [(r["seq"], r["type"]) for r in rows] == [(0, "click"), (1, "unclick")]


def test_time_limit_ends_the_study(store, small_dataset):
    study = create_study(store, small_dataset, cfg(time_limit_minutes=1))
    p = through_intro(store, study)
    with store.write() as conn:
        conn.execute("UPDATE participants SET consent_at = consent_at - 120 WHERE participant_id = ?",
                     (p.participant_id,))
    p = get_participant(store, p.participant_id)
    assert stage(store, study, p) == "done"
    assert get_participant(store, p.participant_id).end_reason == "timed_out"


def test_malformed_submission_is_rejected():
    with pytest.raises(StudyError, match="malformed submission"):
        Submission.from_client({"selected": [["x", 1]], "view_id": "v"})
    with pytest.raises(StudyError):
        Submission.from_client({"selected": []})


def test_bad_participant_id(store, small_dataset):
    study = create_study(store, small_dataset, cfg())
    with pytest.raises(StudyError):
        join(store, study, " ", "anonymous")


def test_export_responses_and_events_csv_and_parquet(store, small_dataset, tmp_path):
    import subprocess
    import sys

    import pandas as pd

    study = create_study(store, small_dataset, cfg(practice_items=0))
    p = through_intro(store, study)
    for _ in range(3):
        item = current_item(store, small_dataset, study, p)
        record_response(store, study, p, item, answer(item))
        p = get_participant(store, p.participant_id)
    for table, fmt in (("responses", "csv"), ("responses", "parquet"), ("events", "parquet"), ("events", "csv")):
        out = tmp_path / f"{table}.{fmt}"
        r = subprocess.run([sys.executable, "-m", "rose_core", "export-table", "--db", str(store.path), "--table", table,
                            "--format", fmt, "--study", study.study_id, "--out", str(out)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        df = pd.read_csv(out) if fmt == "csv" else pd.read_parquet(out)
        if table == "responses":
            assert len(df) == 3 and set(df["solver_kind"]) == {"human"} and df["passed"].all()
            assert {"protocol", "first_action_ms", "total_ms", "viewport_w", "device_pixel_ratio",
                    "focus_lost", "external_id"} <= set(df.columns)
        else:
            assert len(df) > 0 and {"client_ts", "server_ts", "type", "row", "col"} <= set(df.columns)
    r = subprocess.run([sys.executable, "-m", "rose_core", "export-table", "--db", str(tmp_path / "none.db"),
                        "--out", str(tmp_path / "x.csv")], capture_output=True, text=True)
    assert r.returncode == 2 and "no database" in r.stderr
