"""The device mix: every counted participant in one window class, DPR and touch value, "not reported" apart and
never a size; previews never counted; shares over those that reported, undefined when none did."""
from __future__ import annotations

import math

from rose_core.analysis.devices import NOT_REPORTED, device_mix, device_sentence, window_class
from rose_core.instrument.device import report_device
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.joining import join
from rose_core.instrument.rose_study import create_study


def test_window_classes():
    assert [window_class(w) for w in (390, 767, 768, 1023, 1024, 2560, None, float("nan"))] == [
        "phone-sized (< 768 px wide)", "phone-sized (< 768 px wide)", "tablet-sized (768–1023 px)",
        "tablet-sized (768–1023 px)", "desktop-sized (≥ 1024 px)", "desktop-sized (≥ 1024 px)", NOT_REPORTED,
        NOT_REPORTED]


def test_the_mix_counts_reported_devices_and_names_the_unreported(store, small_dataset):
    clock = FakeClock()
    study = create_study(store, small_dataset, StudyConfig(name="mix", practice_items=0, allow_phones=True),
                         ids=SequentialIds("m"), clock=clock)
    claims = {"A": {"viewport": [1280, 720], "dpr": 1, "touch_points": 0, "coarse_pointer": False},
              "B": {"viewport": [1920, 1080], "dpr": 2, "touch_points": 10, "coarse_pointer": False},
              "C": {"viewport": [390, 844], "dpr": 3, "touch_points": 5, "coarse_pointer": True},
              "D": None}
    for ext, claim in claims.items():
        p = join(store, study, ext, "prolific", ids=SequentialIds(ext), clock=clock)
        if claim:
            report_device(store, study.config, p.participant_id, claim, clock)
    prev = join(store, study, "PREVIEW", "prolific", ids=SequentialIds("pv"), clock=clock, origin="preview")
    report_device(store, study.config, prev.participant_id, claims["C"], clock)  # never counted

    mix = device_mix(store, [study.study_id])
    assert (mix.total, mix.reported) == (4, 3)
    got = {(r.aspect, r.value): (r.participants, r._4) for r in mix.summary.itertuples()}
    assert got[("window", "desktop-sized (≥ 1024 px)")] == (2, 100 * 2 / 3)
    assert got[("window", "phone-sized (< 768 px wide)")] == (1, 100 / 3)
    assert got[("window", NOT_REPORTED)][0] == 1 and math.isnan(got[("window", NOT_REPORTED)][1])
    assert [v for a, v in got if a == "device pixel ratio"] == ["1", "2", "3", NOT_REPORTED]
    assert got[("touch", "no touch")][0] == 1 and got[("touch", "touch, finger as main pointer")][0] == 1
    assert got[("touch", "touch screen, mouse or pad as main pointer")][0] == 1
    per = mix.participants.set_index("external_id")
    assert per.loc["C", "window"] == "390 × 844" and per.loc["D", "window"] == NOT_REPORTED
    assert "PREVIEW" not in per.index
    line = device_sentence(mix)
    assert line.startswith("3 of 4 participants' browsers reported their device") and "not reported 1" in line
    only = device_mix(store, [study.study_id], [per.loc["A", "participant_id"]])
    assert (only.total, only.reported) == (1, 1)


def test_no_report_at_all_gives_undefined_shares_not_zero(store, small_dataset):
    clock = FakeClock()
    study = create_study(store, small_dataset, StudyConfig(name="none", practice_items=0), ids=SequentialIds("n"),
                         clock=clock)
    join(store, study, "X", "prolific", ids=SequentialIds("x"), clock=clock)
    mix = device_mix(store, [study.study_id])
    assert (mix.total, mix.reported) == (1, 0)
    assert mix.summary["share %"].isna().all() and set(mix.summary["value"]) == {NOT_REPORTED}
    assert device_sentence(device_mix(store, [])) == "no participant"
