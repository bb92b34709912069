"""The study's own texts: template markers keep a study closed, texts are stored per version and reach the bundle,
the end questionnaire is validated, stored and summarised, and the instructions carry one worked example per kind."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.joining import join
from rose_core.instrument.screens import Consent, End, Instructions, ItemScreen, Questionnaire
from rose_core.instrument.session import ParticipantSession
from rose_core.instrument.config import StudyConfig, StudyError
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.study import get_study, set_active, update_texts
from rose_core.instrument.texts import (
    INFO_FIELDS, TEXT_KEYS, example_kinds, opening_problems, questionnaire_summary, stored_texts, structure_problems,
    texts_version, validate_answers,
)
from tests.participants import LAB_INFO, answer, new_session, wrong_answer, submit_payload

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "docs" / "examples" / "texts"


def make(store, ds, name="texts", **kw):
    base = dict(name=name, split="dev", practice_items=0, attention_every=0, items_per_participant=2,
                templates=["T1", "T3"])
    base.update(kw)
    return create_study(store, ds, StudyConfig(**base), ids=SequentialIds(name), clock=FakeClock())


def finish(session: ParticipantSession):
    screen = session.screen()
    while isinstance(screen, ItemScreen):
        answer(session, screen)
        screen = session.screen()
    return screen


# --------------------------------------------------------------------------- markers keep a study closed

def test_the_template_is_a_draft_that_cannot_open_naming_each_marker(store, small_dataset):
    study = make(store, small_dataset)
    assert not study.active and not get_study(store, study.study_id).active
    with pytest.raises(StudyError) as e:
        set_active(store, study.study_id, True)
    for k in INFO_FIELDS:
        assert f"info.{k}: still the template marker [[{k.upper()}]]" in str(e.value)
    assert not get_study(store, study.study_id).active
    update_texts(store, study.study_id, {}, LAB_INFO, [])
    set_active(store, study.study_id, True)
    assert get_study(store, study.study_id).active


def test_filled_facts_open_the_study_and_empty_or_marked_ones_do_not(store, small_dataset):
    assert make(store, small_dataset, "filled", info=LAB_INFO).active
    cfg = StudyConfig(name="x", info={**LAB_INFO, "contact": "  "},
                      texts={"consent": "Run by {researcher}. [[SAY WHAT YOU STUDY]]", "end": ""})
    assert opening_problems(cfg) == ["info.contact: required (how to reach them (e-mail)), empty",
                                     "texts.consent: marker [[SAY WHAT YOU STUDY]] left", "texts.end: required, empty"]
    no_debrief = StudyConfig(name="x", info=LAB_INFO, texts={"debrief": ""})
    assert opening_problems(no_debrief) == []   # the debrief is optional


def test_malformed_texts_are_refused_naming_the_key_and_nothing_is_stored(store, small_dataset):
    bad = dict(texts={"consnet": "x", "end": "Bye {reseacher}"}, info={**LAB_INFO, "fax": "1"},
               questionnaire=["age_band", "shoe_size"])
    with pytest.raises(StudyError) as e:
        make(store, small_dataset, "bad", **bad)
    msg = str(e.value)
    for part in ("texts.consnet: unknown text", "texts.end: unknown field(s) {reseacher}", "info.fax: unknown field",
                 "questionnaire: unknown question(s) ['shoe_size']"):
        assert part in msg, part
    assert store.query("SELECT count(*) AS n FROM studies")[0]["n"] == 0
    assert structure_problems(StudyConfig(name="x", texts={"end": 3})) == ["texts: expected a table of Markdown strings"]


def test_an_open_study_never_takes_a_marker(store, small_dataset):
    study = make(store, small_dataset, info=LAB_INFO)
    with pytest.raises(StudyError, match=r"texts.consent: marker \[\[TODO\]\] left"):
        update_texts(store, study.study_id, {"consent": "[[TODO]]"}, LAB_INFO, [])
    with pytest.raises(StudyError, match="info.payment: required"):
        update_texts(store, study.study_id, {}, {**LAB_INFO, "payment": ""}, [])
    assert texts_version(store, study.study_id) == 1
    assert get_study(store, study.study_id).config.info == LAB_INFO


def test_the_shipped_example_texts_pass_the_marker_check():
    texts = {k: (EXAMPLES / f"{k}.md").read_text(encoding="utf-8") for k in TEXT_KEYS}
    info = tomllib.loads((EXAMPLES / "info.toml").read_text(encoding="utf-8"))["info"]
    cfg = StudyConfig(name="example", texts=texts, info=info)
    assert structure_problems(cfg) == [] and opening_problems(cfg) == []
    assert set(info) == set(INFO_FIELDS)


# --------------------------------------------------------------------------- what participants read

def test_screens_carry_the_studys_texts_with_the_facts_filled_in(store, small_dataset):
    texts = {k: (EXAMPLES / f"{k}.md").read_text(encoding="utf-8") for k in TEXT_KEYS}
    study = make(store, small_dataset, info=LAB_INFO, texts=texts, time_limit_minutes=30)
    s = new_session(store, small_dataset, study, "P1", intro=False)
    consent = s.screen()
    assert isinstance(consent, Consent)
    assert "**Dr Ada Example** at the Vision and Cognition Lab" in consent.text
    assert "then 2 screens" in consent.text and "a time limit of 30 minutes" in consent.text
    assert "{" not in consent.text and "[[" not in consent.text
    s.consent()
    instr = s.screen()
    assert isinstance(instr, Instructions) and instr.templates == ("T1", "T3")
    assert instr.text.startswith("Each picture is a grid.")
    s.finish_instructions()
    end = finish(s)
    assert isinstance(end, End) and end.reason == "completed"
    assert end.text.startswith("Thank you for helping us.") and "ada.example@examplia.ac.uk" in end.text
    assert "published by the Vision and Cognition Lab" in end.debrief


def test_a_screened_out_participant_reads_the_screen_out_text(store, small_dataset):
    study = make(store, small_dataset, info=LAB_INFO, practice_items=2, practice_max_attempts=1,
                 texts={"screen_out": "Please return your submission, {researcher}.", "debrief": ""})
    s = new_session(store, small_dataset, study, "P1")
    screen = s.screen()
    while isinstance(screen, ItemScreen):
        cells, count = wrong_answer(screen)
        s.submit(screen, submit_payload(screen, cells, count))
        screen = s.screen()
        if not isinstance(screen, (ItemScreen, End)):   # practice feedback
            s.acknowledge_feedback(screen.view_id)
            screen = s.screen()
    assert isinstance(screen, End) and screen.reason == "screened_out"
    assert screen.text == "Please return your submission, Dr Ada Example." and screen.debrief == ""


def test_worked_examples_cover_each_kind_the_templates_use():
    from rose_core.instrument.page_data import worked_example_pictures

    assert example_kinds(["T1"]) == ["count"]
    assert example_kinds(["T2", "mL-Cnt"]) == ["count"]
    assert example_kinds(["T3"]) == ["named_region", "nothing"]
    assert example_kinds(["T5", "T4"]) == ["excluded_count", "highlighted", "nothing"]
    assert example_kinds(["T1", "T2", "T3", "T4", "T5"]) == ["count", "named_region", "highlighted",
                                                             "excluded_count", "nothing"]
    shown = worked_example_pictures(("T1", "T3", "T4", "T5"))
    assert [e.kind for e, _ in shown] == ["count", "named_region", "highlighted", "excluded_count", "nothing"]
    for e, png in shown:
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000, e.kind
    text = {e.kind: e.text for e, _ in shown}
    assert "press **DONE**" in text["named_region"] and "click R" in text["named_region"]
    assert "press **SUBMIT**" in text["excluded_count"] and "type " in text["excluded_count"]
    assert "press DONE without selecting anything" in text["nothing"]
    assert "the answer is **" in text["count"]


# --------------------------------------------------------------------------- stored per version, in the bundle

def test_texts_are_stored_per_version(store, small_dataset):
    study = make(store, small_dataset, info=LAB_INFO)
    v1 = {t.key: t.markdown for t in stored_texts(store, [study.study_id])}
    assert set(v1) == set(TEXT_KEYS) | {"worked_examples"}
    assert "Dr Ada Example" in v1["consent"] and "A named rectangle" in v1["worked_examples"]
    assert update_texts(store, study.study_id, {"consent": "Run by {researcher}."}, LAB_INFO, ["device"]) == 2
    assert update_texts(store, study.study_id, {"consent": "Run by {researcher}."}, LAB_INFO, ["device"]) == 2
    rows = stored_texts(store, [study.study_id])
    by = {(t.version, t.key): t.markdown for t in rows}
    assert by[(1, "consent")] == v1["consent"] and by[(2, "consent")] == "Run by Dr Ada Example."
    assert get_study(store, study.study_id).config.questionnaire == ["device"]


def test_the_bundle_holds_the_texts_and_the_checklist_uses_them(store, small_dataset, tmp_path):
    from rose_core.analysis.bundle import write_bundle

    study = make(store, small_dataset, info=LAB_INFO, questionnaire=["age_band", "vision"])
    update_texts(store, study.study_id, {"consent": "Run by {researcher}, paid {payment}"}, LAB_INFO,
                 ["age_band", "vision"])
    for ext in ("A", "B"):
        s = new_session(store, small_dataset, study, ext)
        assert isinstance(finish(s), Questionnaire)
        s.answer_questionnaire({"age_band": "25-34", "vision": "corrected" if ext == "A" else None})
    out = tmp_path / "bundle"
    write_bundle(store, small_dataset, out, figures=False, n_boot=20, seed=1)
    sid = study.study_id
    assert (out / "texts" / sid / "v1" / "consent.md").read_text().startswith("You are invited")
    assert (out / "texts" / sid / "v2" / "consent.md").read_text() == f"Run by Dr Ada Example, paid {LAB_INFO['payment']}\n"
    assert json.loads((out / "texts" / sid / "info.json").read_text()) == LAB_INFO
    manifest = json.loads((out / "manifest.json").read_text())
    assert f"texts/{sid}/v2/screen_out.md" in manifest["files"]
    by = {i["item"]: i for i in json.loads((out / "checklist.json").read_text())}
    assert by["Compensation (amount, basis, effective hourly rate)"]["answer"].startswith(LAB_INFO["payment"])
    assert not by["Compensation (amount, basis, effective hourly rate)"]["blank"]
    assert by["Ethics review (IRB) and approval number"]["answer"] == LAB_INFO["ethics_reference"]
    assert f"texts/{sid}/v1/consent.md, texts/{sid}/v2/consent.md" in by["Informed consent"]["answer"]
    demo = by["Demographics and expertise"]["answer"]
    assert "age_band (n = 2): 25–34 2" in demo and "vision (n = 2): Corrected to normal" in demo


# --------------------------------------------------------------------------- the end questionnaire

def test_answers_are_checked_on_the_server():
    asked = ["age_band", "colour_vision", "strategy"]
    assert validate_answers(asked, {"age_band": "18-24", "strategy": "  rows first  "}) == {
        "age_band": "18-24", "colour_vision": None, "strategy": "rows first"}
    for bad, why in (({"age_band": "17"}, "questionnaire.age_band: '17' is not one of"),
                     ({"strategy": "x" * 1001}, "questionnaire.strategy: at most 1000 characters"),
                     ({"device": "phone"}, r"questionnaire: \['device'\] not asked"),
                     ({"age_band": 25}, "questionnaire.age_band: expected text"),
                     ([1], "expected a mapping")):
        with pytest.raises(ValueError, match=why):
            validate_answers(asked, bad)


def test_the_questionnaire_comes_after_the_last_item_and_is_stored_once(store, small_dataset):
    study = make(store, small_dataset, info=LAB_INFO, questionnaire=["age_band", "device", "strategy"])
    s = new_session(store, small_dataset, study, "P1")
    q = finish(s)
    assert q == Questionnaire(("age_band", "device", "strategy"))
    assert s.screen() == q                       # a reload shows it again
    with pytest.raises(StudyError, match="questionnaire.device"):
        s.answer_questionnaire({"device": "<script>"})
    assert s.screen() == q
    assert s.answer_questionnaire({"age_band": "35-44", "device": "laptop", "strategy": "Scanned row by row."})
    assert not s.answer_questionnaire({"age_band": "18-24"})     # once only
    assert isinstance(s.screen(), End)
    rows = store.query("SELECT question, answer FROM questionnaire_answers ORDER BY question")
    assert [(r["question"], r["answer"]) for r in rows] == [("age_band", "35-44"), ("device", "laptop"),
                                                           ("strategy", "Scanned row by row.")]
    with pytest.raises(StudyError, match="questions are fixed"):
        update_texts(store, study.study_id, {}, LAB_INFO, ["age_band"])


def test_no_questionnaire_before_completion_nor_when_none_is_asked(store, small_dataset):
    study = make(store, small_dataset, info=LAB_INFO)
    s = new_session(store, small_dataset, study, "P1")
    assert isinstance(finish(s), End)
    asked = make(store, small_dataset, "asked", info=LAB_INFO, questionnaire=["vision"])
    s2 = new_session(store, small_dataset, asked, "P2")
    assert not s2.answer_questionnaire({"vision": "normal"})   # still answering items: nothing stored
    assert store.query("SELECT count(*) AS n FROM questionnaire_answers")[0]["n"] == 0


def test_the_summary_counts_real_participants_only(store, small_dataset):
    study = make(store, small_dataset, info=LAB_INFO, questionnaire=["colour_vision", "strategy"])
    clock = FakeClock()
    for ext, origin, cv, strat in (("A", "participant", "no", "edges first"), ("B", "participant", "no", ""),
                                   ("C", "participant", None, None), ("PREVIEW", "preview", "yes", "test")):
        p = join(store, study, ext, "prolific", "S", "X", ids=SequentialIds(ext), clock=clock, origin=origin)
        s = ParticipantSession(store, small_dataset, study, p.participant_id, clock=clock)
        s.consent()
        s.finish_instructions()
        finish(s)
        s.answer_questionnaire({} if cv is None else {"colour_vision": cv, "strategy": strat})
    counts, strategies = questionnaire_summary(store, [study.study_id])
    got = {(a.question, a.answer): (a.n, a.of) for a in counts}
    assert got[("colour_vision", "No")] == (2, 3) and got[("colour_vision", "Yes")] == (0, 3)
    assert got[("colour_vision", "(no answer)")] == (1, 3)
    assert got[("strategy", "answered")] == (1, 3) and got[("strategy", "(no answer)")] == (2, 3)
    assert [t for _, t in strategies] == ["edges first"]
    assert round(next(a for a in counts if a.answer == "No").percent, 1) == 66.7
