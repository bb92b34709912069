"""The simulated pilot: the truth file's checks, the session path it drives (the same rows a browser leaves),
determinism, realistic wrong answers, and clearing exactly the simulated participants (on each backend)."""
import dataclasses
import json
import math
import random
from pathlib import Path

import pytest

from rose_core.benchmarks.items import OneShotAnswer
from rose_core.benchmarks.rose.item import rose_item
from rose_core.benchmarks.rose.records import TEMPLATE_OUTPUT
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.simulate import (
    ROLES, TruthError, apportion, clear_simulated, load_truth, parse_truth, right_answer, simulate, wrong_answer,
)
from rose_core.instrument.config import StudyConfig, StudyError
from rose_core.instrument.joining import join
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store
from tests.participants import new_session, run_to_end

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "truth.toml"
TRUTH = parse_truth({"accuracy": 0.8, "too_fast": 0.2, "attention_failure": 0.2, "drop_out": 0.2,
                     "templates": {"T5": {"accuracy": 0.5, "subsets": {"PixelEdit": {"median_s": 12.0}}}}})
TABLES = {"participants": "participant_id", "assignments": "participant_id, kind, attempt, position",
          "responses": "response_id", "events": "participant_id, view_id, seq",
          "participant_flags": "participant_id, at, kind"}


def make_study(store, ds, prefix="sim", **kw):
    cfg = dict(name="dry run", split="all", items_per_participant=12, target_per_instance=3, practice_items=4,
               attention_every=4, seed=3)
    cfg.update(kw)
    return create_study(store, ds, StudyConfig(**cfg), ids=SequentialIds(prefix), clock=FakeClock())


def dump(store) -> dict[str, list[tuple]]:
    with store.connect() as c:
        return {t: [tuple(r) for r in c.execute(f"SELECT * FROM {t} ORDER BY {order}")] for t, order in TABLES.items()}


# --------------------------------------------------------------------------- the truth file

@pytest.mark.parametrize("data, needle", [
    ({"acuracy": 0.9}, "acuracy: unknown key"),
    ({"accuracy": "high"}, "accuracy: expected a number, got 'high'"),
    ({"accuracy": True}, "accuracy: expected a number, got True"),
    ({"accuracy": 1.2}, "accuracy: expected a share or probability in 0..1, got 1.2"),
    ({"median_s": 0}, "median_s: expected seconds > 0"),
    ({"templates": {"T9": {}}}, "templates.T9: unknown template"),
    ({"templates": {"T1": {"speed": 3}}}, "templates.T1.speed: unknown key"),
    ({"templates": {"T1": {"subsets": {"Glyphs": {}}}}}, "templates.T1.subsets.Glyphs: unknown subset"),
    ({"templates": {"T1": {"subsets": {"PixelEdit": {"too_fast": 0.1}}}}},
     "templates.T1.subsets.PixelEdit.too_fast: unknown key"),
    ({"templates": {"T1": 3}}, "templates.T1: expected a table, got 3"),
    ({"too_fast": 0.5, "drop_out": 0.4, "attention_failure": 0.2}, "the shares add up to 1.1"),
])
def test_a_bad_truth_is_one_error_naming_the_key(data, needle):
    with pytest.raises(TruthError) as e:
        parse_truth(data, "t.toml")
    assert str(e.value).startswith("t.toml: ") and needle in str(e.value)


def test_the_truth_file_reads_and_names_a_syntax_error(tmp_path):
    t = load_truth(EXAMPLE)
    assert t.cell("T5", "PixelEdit").accuracy == 0.4 and t.cell("T5", "PixelEdit").median_s == 12.0
    assert t.cell("T5", "EmojiStyle").accuracy == 0.6 and t.cell("T2", "EmojiStyle").accuracy == 0.85
    assert t.cell("T1", "ChineseGlyph").sigma == 0.4
    bad = tmp_path / "truth.toml"
    bad.write_text("accuracy = 0.9\nmedian_s = = 3\n")
    with pytest.raises(TruthError, match=r"truth.toml: not valid TOML: .*line 2"):
        load_truth(bad)
    with pytest.raises(TruthError, match="cannot read it"):
        load_truth(tmp_path / "missing.toml")


def test_the_truth_must_fit_the_study(store, small_dataset):
    study = make_study(store, small_dataset, templates=["T1", "T3"], subsets=["PixelEdit", "EmojiStyle"])
    for data, needle in (({"templates": {"T5": {}}}, "templates.T5: study s-sim-0001 does not use this template"),
                         ({"templates": {"T1": {"subsets": {"ChineseGlyph": {}}}}},
                          "templates.T1.subsets.ChineseGlyph: study s-sim-0001 does not use this subset")):
        with pytest.raises(TruthError, match=needle):
            simulate(store, small_dataset, study, parse_truth(data), 2, 0)
    no_checks = make_study(store, small_dataset, "nochk", attention_every=0)
    with pytest.raises(TruthError, match="attention_failure: study s-nochk-0001 has no attention checks"):
        simulate(store, small_dataset, no_checks, parse_truth({"attention_failure": 0.1}), 2, 0)
    assert dump(store)["participants"] == []    # nothing stored


def test_an_sgp_study_is_refused(store, sgp_dataset):
    from rose_core.instrument.episode_session import create_sgp_study

    study = create_sgp_study(store, sgp_dataset, StudyConfig(name="sgp", benchmark="sgp", attention_every=0,
                                                             practice_items=0), ids=SequentialIds("sgp"))
    with pytest.raises(TruthError, match="is an SGP study: `study simulate` drives ROSE studies"):
        simulate(store, None, study, TRUTH, 2, 0)


def test_roles_are_apportioned_exactly():
    t = parse_truth({"too_fast": 0.1, "attention_failure": 0.1, "drop_out": 0.05})
    roles = apportion(30, t)
    assert len(roles) == 30 and [roles.count(r) for r in ROLES] == [23, 3, 3, 1]   # 22.5 / 1.5: the tie to attentive
    assert [apportion(3, parse_truth({"too_fast": 0.5, "drop_out": 0.5})).count(r) for r in ROLES] == [0, 2, 0, 1]


# --------------------------------------------------------------------------- answers

def test_wrong_answers_are_one_realistic_slip_and_scored_wrong(small_dataset):
    rng = random.Random(0)
    seen = set()
    for iid in sorted(small_dataset.instances)[:400]:
        item = rose_item(small_dataset, iid)
        cells, count = right_answer(item)
        assert item.result(OneShotAnswer(tuple(cells), count)).passed
        wcells, wcount = wrong_answer(item, rng)
        assert not item.result(OneShotAnswer(tuple(wcells), wcount)).passed
        if item.mode == "count":
            assert wcells == [] and abs(wcount - count) == 1
            seen.add("count off by one")
        else:
            diff = set(wcells) ^ set(cells)
            assert len(diff) <= 1, (iid, cells, wcells)   # one missed or one extra click, or the number off
            if not diff:
                assert item.mode == "click_submit" and abs(wcount - count) == 1
                seen.add("number off by one")
            else:
                seen.add("missed click" if diff <= set(cells) else "extra click")
    assert seen == {"count off by one", "number off by one", "missed click", "extra click"}


# --------------------------------------------------------------------------- the session path

def test_simulated_participants_go_through_the_real_session(store, small_dataset):
    study = make_study(store, small_dataset)
    sim = simulate(store, small_dataset, study, TRUTH, 10, 7)
    rows = dump(store)
    parts = {p.participant_id: p for p in sim.participants}
    with store.connect() as c:
        stored = {r["participant_id"]: dict(r) for r in c.execute("SELECT * FROM participants")}
        resp = [dict(r) for r in c.execute("SELECT * FROM responses ORDER BY response_id")]
    assert set(stored) == set(parts) and {p["origin"] for p in stored.values()} == {"simulated"}
    assert all(p["consent_at"] and p["instructions_at"] and p["practice_passed"] == 1 for p in stored.values())
    for pid, p in parts.items():
        mine = [r for r in resp if r["participant_id"] == pid]
        main = [r for r in mine if r["kind"] == "main"]
        assert len(main) == p.main_answered and sum(r["passed"] for r in main) == p.main_right
        assert sum(1 - r["passed"] for r in mine if r["kind"] == "attention") == p.attention_failed
        assert len([r for r in mine if r["kind"] == "practice"]) == p.practice_answered == 4
        # the server's clock timed them: exactly the simulated durations
        assert [r["total_ms"] / 1000 for r in main] == pytest.approx(p.item_seconds)
        assert stored[pid]["end_reason"] == p.end_reason
        if p.role == "drop_out":
            assert p.end_reason is None and p.main_answered == p.drop_after
        if p.role == "too_fast":
            assert p.median_item_s < 1.5
        if p.role == "attention_failure":
            assert p.attention_failed == p.attention_answered > 0
        if p.role == "attentive":
            assert p.attention_failed == 0 and p.median_item_s > 3
    # every answer left the grid's events: one click per cell and the number typed (DONE on nothing: none)
    per_view = {}
    for e in rows["events"]:
        per_view.setdefault(e[2], []).append(e[4])
    for r in resp:
        parsed = json.loads(r["parsed"])
        typed = TEMPLATE_OUTPUT.get(r["template"], "click") != "click"     # ATT: an attention check, clicks
        said = len(parsed.get("clicks") or []) + (typed and parsed.get("count") is not None)
        assert len(per_view.get(r["view_id"], [])) == said, r
    assert set(per_view) <= {r["view_id"] for r in resp}
    summary = sim.summary()
    assert summary["roles"] == {"attentive": 4, "too_fast": 2, "attention_failure": 2, "drop_out": 2}
    assert summary["main_answers"] == sum(1 for r in resp if r["kind"] == "main")


def test_the_same_seed_stores_the_same_rows(make_store, small_dataset):
    a, b, c = make_store(), make_store(), make_store()
    for s in (a, b, c):
        study = make_study(s, small_dataset)
        simulate(s, small_dataset, study, TRUTH, 6, 11 if s is not c else 12)
    da, db, dc = dump(a), dump(b), dump(c)
    assert da == db and da["responses"]
    assert da["responses"] != dc["responses"]


def test_a_simulation_refuses_a_live_study_a_repeated_seed_and_another_build(store, small_dataset, tmp_path):
    study = make_study(store, small_dataset)
    simulate(store, small_dataset, study, TRUTH, 2, 1)
    with pytest.raises(StudyError, match="already has simulated participants of seed 1 .*--clear"):
        simulate(store, small_dataset, study, TRUTH, 2, 1)
    simulate(store, small_dataset, study, TRUTH, 2, 2)        # another seed: another cohort
    with pytest.raises(StudyError, match="participants: expected a whole number"):
        simulate(store, small_dataset, study, TRUTH, 0, 3)
    live = make_study(store, small_dataset, "live")
    join(store, live, "P1", "prolific", "S", "X", ids=SequentialIds("p"), clock=FakeClock())
    with pytest.raises(StudyError, match="has 1 real participants.*clone"):
        simulate(store, small_dataset, live, TRUTH, 2, 1)
    with pytest.raises(StudyError, match="made on dataset build 0000000000000000, not on"):
        simulate(store, small_dataset, dataclasses.replace(study, dataset_hash="0" * 16), TRUTH, 2, 9)


def test_a_study_with_an_end_questionnaire_is_simulated_to_its_end(store, small_dataset):
    """The example study file asks the end questionnaire: a simulated participant skips it, as the page's
    "Skip the questions" does, and reaches the end page (it used to stop the dry run with an AssertionError)."""
    study = make_study(store, small_dataset, questionnaire=["age_band", "device"])
    sim = simulate(store, small_dataset, study, parse_truth({}), 3, 0)
    assert {p.end_reason for p in sim.participants} == {"completed"}
    with store.connect() as c:
        rows = [dict(r) for r in c.execute("SELECT participant_id, answer FROM questionnaire_answers")]
    assert {r["participant_id"] for r in rows} == {p.participant_id for p in sim.participants}
    assert {r["answer"] for r in rows} == {None}
    assert clear_simulated(store, study)["questionnaire_answers"] == len(rows) == 6


def test_simulated_browsers_report_their_device_before_consent(store, small_dataset):
    """The page asks the browser for its window before consent (the device mix of the paper's checklist): a
    simulated participant reports the window its answers carry, 1440 x 900 at DPR 2, and clearing deletes it."""
    study = make_study(store, small_dataset)
    sim = simulate(store, small_dataset, study, parse_truth({}), 3, 0)
    with store.connect() as c:
        rows = {r["participant_id"]: dict(r) for r in c.execute("SELECT * FROM devices")}
        consent = {r["participant_id"]: r["consent_at"] for r in c.execute("SELECT * FROM participants")}
    assert set(rows) == {p.participant_id for p in sim.participants}
    for pid, r in rows.items():
        assert (r["viewport_w"], r["viewport_h"], r["dpr"], r["allowed"], r["reports"]) == (1440, 900, 2.0, 1, 1)
        assert r["reported_at"] <= consent[pid]
    assert clear_simulated(store, study)["devices"] == 3


def test_a_time_limit_ends_slow_simulated_participants_as_it_ends_anyone(store, small_dataset):
    study = make_study(store, small_dataset, time_limit_minutes=4)   # ~2.5 min of intro and practice, 20 s an item
    sim = simulate(store, small_dataset, study, parse_truth({"median_s": 20.0, "sigma": 0.1, "reading_s": 10.0}), 3, 0)
    assert {p.end_reason for p in sim.participants} == {"timed_out"}
    assert all(0 < p.main_answered < 12 for p in sim.participants)
    with store.connect() as c:
        flags = [r["kind"] for r in c.execute("SELECT kind FROM participant_flags")]
    # the item they were on: refused as late, or as released (holds past the time limit are released early)
    refused = flags.count("late_answer") + flags.count("released_answer")
    assert refused == sum(p.refused for p in sim.participants) > 0


# --------------------------------------------------------------------------- clearing

def test_clear_deletes_exactly_the_simulated_rows(store, small_dataset):
    study, kept = make_study(store, small_dataset), make_study(store, small_dataset, "kept")
    simulate(store, small_dataset, kept, TRUTH, 3, 1)
    before_other = dump(store)
    simulate(store, small_dataset, study, TRUTH, 4, 1)
    clock = FakeClock(study.created_at + 90_000)
    real = new_session(store, small_dataset, study, "REAL", ids=SequentialIds("real"), clock=clock)
    run_to_end(real)
    preview = join(store, study, "PREVIEW", "anonymous", ids=SequentialIds("prev"), clock=clock, origin="preview")
    full = dump(store)
    deleted = clear_simulated(store, study)
    after = dump(store)
    simulated = {r[0] for r in full["participants"] if r[0].startswith("sim")} - {
        r[0] for r in before_other["participants"]}
    assert deleted["participants"] == len(simulated) == 4
    for table, rows in full.items():
        gone = [r for r in rows if r not in after[table]]
        assert deleted[table] == len(gone), table
        pid_col = 0 if table != "responses" else 2
        assert all(r[pid_col] in simulated for r in gone), table     # only theirs
        assert all(r[pid_col] not in simulated for r in after[table]), table   # all of theirs
    assert real.participant_id in {r[0] for r in after["participants"]}
    assert preview.participant_id in {r[0] for r in after["participants"]}
    assert set(before_other["participants"]) <= set(after["participants"])   # the other study's dry run stays
    assert clear_simulated(store, study)["participants"] == 0


@pytest.mark.slow  # ~5 s of CPU; what it simulates is checked on smaller studies above, only the time bound is its own
def test_a_dry_run_of_thirty_by_forty_takes_seconds(small_dataset, tmp_path):
    """A realistic pilot (30 participants x 40 items) on the default backend, SQLite: seconds, and well under a
    minute even on a busy machine (measured figures, PostgreSQL's too: docs/running-a-study.md, "Dry run")."""
    import time

    store = open_store(tmp_path / "rose.db")
    study = make_study(store, small_dataset, items_per_participant=40, attention_every=10)
    t = time.perf_counter()
    sim = simulate(store, small_dataset, study, load_truth(EXAMPLE), 30, 0)
    took = time.perf_counter() - t
    assert sum(p.main_answered for p in sim.participants) > 900
    store.close()
    assert math.isfinite(took) and took < 60, took
