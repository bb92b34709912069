"""The device policy: the window a study needs, judged on the browser's claim (checked, stored, never trusted
beyond its ranges), and the claims as exported per participant."""
from __future__ import annotations

import pytest

from rose_core.instrument.config import StudyConfig
from rose_core.instrument.device import allowed, device_gate, read_claim, refusal_text, report_device
from rose_core.instrument.exports import table_frame
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.rose_study import create_study
from tests.participants import answer, new_session

PHONE = {"viewport": [390, 844], "dpr": 3, "touch_points": 5, "coarse_pointer": True}
LAPTOP = {"viewport": [1280, 720], "dpr": 1.25, "touch_points": 0, "coarse_pointer": False}


@pytest.mark.parametrize("payload, expected", [
    (PHONE, ((390, 844), 3.0, 5, True)),
    (LAPTOP, ((1280, 720), 1.25, 0, False)),
    ({"viewport": [1280.5, 720], "dpr": "2", "touch_points": -1, "coarse_pointer": "yes"}, (None, None, None, None)),
    ({"viewport": [0, 10], "dpr": float("inf"), "touch_points": True}, (None, None, None, None)),
    ({"viewport": [10**9, 10], "dpr": 100, "touch_points": 10**6}, (None, None, None, None)),
    ("not a dict", (None, None, None, None)),
    (None, (None, None, None, None)),
])
def test_a_claim_is_read_field_by_field_and_anything_malformed_is_unknown(payload, expected):
    c = read_claim(payload)
    assert (c.viewport, c.dpr, c.touch_points, c.coarse_pointer) == expected


def test_the_default_policy_needs_1024_by_640_and_allow_phones_lifts_it():
    cfg = StudyConfig(name="d")
    assert (cfg.min_viewport_width, cfg.min_viewport_height, cfg.allow_phones) == (1024, 640, False)
    assert allowed(cfg, (1024, 640)) and allowed(cfg, (1920, 1080))
    assert not allowed(cfg, (1023, 800)) and not allowed(cfg, (1280, 639)) and not allowed(cfg, (390, 844))
    assert not allowed(cfg, None)  # a window the browser did not report never meets a minimum
    phones = StudyConfig(name="p", allow_phones=True)
    assert allowed(phones, (390, 844)) and allowed(phones, None)


@pytest.mark.parametrize("field, value, message", [
    ("min_viewport_width", 0, "min_viewport_width: expected a whole number >= 1, got 0"),
    ("min_viewport_height", "640", "min_viewport_height: expected a whole number >= 1, got '640'"),
    ("allow_phones", "yes", "allow_phones: expected true or false, got 'yes'"),
])
def test_a_bad_device_setting_is_named(field, value, message):
    assert message in StudyConfig(name="d", **{field: value}).problems()


def test_the_gate_stops_a_small_window_before_consent_and_opens_after_a_resize(store, small_dataset):
    clock = FakeClock()
    study = create_study(store, small_dataset, StudyConfig(name="dev", practice_items=0), ids=SequentialIds("d"),
                         clock=clock)
    s = new_session(store, small_dataset, study, "P1", clock=clock, intro=False)
    gate = device_gate(store, study.config, s.participant_id)
    assert (gate.ok, gate.reported, gate.viewport, gate.min_viewport) == (False, False, None, (1024, 640))
    report_device(store, study.config, s.participant_id, PHONE, clock)
    gate = device_gate(store, study.config, s.participant_id)
    assert (gate.ok, gate.reported, gate.viewport) == (False, True, (390, 844))
    text = refusal_text(gate)
    assert "at least **1024 × 640 pixels**" in text and "390 × 844" in text and "computer" in text
    clock.advance(5)
    report_device(store, study.config, s.participant_id, LAPTOP, clock)  # rotated, or the window made larger
    assert device_gate(store, study.config, s.participant_id).ok
    row = store.query("SELECT * FROM devices WHERE participant_id = ?", (s.participant_id,))[0]
    assert (row["viewport_w"], row["viewport_h"], row["dpr"], row["touch_points"], row["coarse_pointer"],
            row["allowed"], row["reports"]) == (1280, 720, 1.25, 0, 0, 1, 2)
    assert row["reported_at"] - row["first_at"] == 5
    report_device(store, study.config, s.participant_id, {"viewport": "huge"}, clock)  # a forged claim
    assert not device_gate(store, study.config, s.participant_id).ok
    assert "did not say how large" in refusal_text(device_gate(store, study.config, s.participant_id))


def test_phones_allowed_open_at_once_and_the_claim_is_still_stored(store, small_dataset):
    clock = FakeClock()
    study = create_study(store, small_dataset, StudyConfig(name="ph", practice_items=0, allow_phones=True),
                         ids=SequentialIds("ph"), clock=clock)
    s = new_session(store, small_dataset, study, "P2", clock=clock, intro=False)
    gate = device_gate(store, study.config, s.participant_id)
    assert gate.ok and gate.min_viewport is None and not gate.reported
    report_device(store, study.config, s.participant_id, PHONE, clock)
    assert store.query("SELECT allowed, viewport_w FROM devices")[0] == {"allowed": 1, "viewport_w": 390}


def test_the_responses_export_carries_each_participants_device(store, small_dataset):
    clock = FakeClock()
    study = create_study(store, small_dataset, StudyConfig(
        name="ex", split="all", templates=["T1"], practice_items=0, attention_every=0, items_per_participant=1,
        seed=3, allow_phones=True), ids=SequentialIds("ex"), clock=clock)
    reported = new_session(store, small_dataset, study, "REP", clock=clock, intro=False)
    report_device(store, study.config, reported.participant_id, PHONE, clock)
    silent = new_session(store, small_dataset, study, "SIL", clock=clock, intro=False)
    for s in (reported, silent):
        s.consent()
        s.finish_instructions()
        answer(s, s.screen())
    df = table_frame(store, "responses", study.study_id).set_index("external_id")
    assert len(df) == 2
    rep = df.loc["REP"]
    assert (rep["device_viewport_w"], rep["device_viewport_h"], rep["device_dpr"], rep["device_touch_points"],
            rep["device_coarse_pointer"], rep["device_allowed"]) == (390, 844, 3.0, 5, 1, 1)
    assert df.loc["SIL"][["device_viewport_w", "device_dpr", "device_touch_points"]].isna().all()  # never 0
    assert (rep["viewport_w"], rep["device_pixel_ratio"]) == (1280, 2.0)  # the window at the answer stays


def test_a_study_stored_before_the_device_policy_keeps_admitting_every_window():
    import json

    old = json.loads(StudyConfig(name="old").to_json())
    for k in ("allow_phones", "min_viewport_width", "min_viewport_height"):
        old.pop(k)
    assert StudyConfig.from_json(json.dumps(old)).allow_phones is True   # its rules do not change mid-recruitment
    new = StudyConfig.from_json(StudyConfig(name="new").to_json())
    assert (new.allow_phones, new.min_viewport_width, new.min_viewport_height) == (False, 1024, 640)
