"""Bots against the participant session (issue 23): anonymous visitors and the pool, a tab left open after its
study closed, picture attention checks, the behaviour check, per-participant completion codes, and a scripted
human-paced bot that reads every text it receives."""
from __future__ import annotations

import pytest

from rose_core.instrument import manage
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.page_data import identity_from_query, needs_prolific_id
from rose_core.instrument.session import Closed, ItemScreen, NeedsProlificId, ParticipantSession, join
from rose_core.instrument.study import create_study, set_active
from rose_core.storage import participants
from tests.participants import LAB_INFO, answer, run_to_end

_IDS = SequentialIds("bot")


def make(store, ds, **kw):
    base = dict(name="bots", split="dev", items_per_participant=4, target_per_instance=1, practice_items=0,
                attention_every=0, seed=3, templates=["T1"], subsets=["PixelContent"], info=dict(LAB_INFO))
    base.update(kw)
    return create_study(store, ds, StudyConfig(**base), ids=_IDS, clock=FakeClock())


def session(store, ds, study, ext, source="prolific", clock=None) -> ParticipantSession:
    clock = clock or FakeClock()
    p = join(store, study, ext, source, "PS" if source == "prolific" else None,
             f"SS-{ext}" if source == "prolific" else None, ids=SequentialIds(ext), clock=clock)
    s = ParticipantSession(store, ds, study, p.participant_id, clock=clock)
    s.consent()
    s.finish_instructions()
    return s


# --------------------------------------------------------------------------- 4. anonymous visitors

def test_a_prolific_study_turns_anonymous_visitors_away_before_anything_is_stored(store, small_dataset):
    study = make(store, small_dataset, completion_url="https://app.prolific.com/submissions/complete?cc=C1")
    assert study.config.prolific_id_required
    for query in ({"pid": "bot-1"}, {}, {"PROLIFIC_PID": "x y"}, {"PROLIFIC_PID": "a" * 65}):
        ident = identity_from_query({"study": study.study_id, **query})
        assert needs_prolific_id(study.config, ident), query
        with pytest.raises(NeedsProlificId):
            join(store, study, ident.external_id, ident.source, clock=FakeClock())
    assert not needs_prolific_id(study.config, identity_from_query(
        {"study": study.study_id, "PROLIFIC_PID": "5f3a9c0e1b2d4e6f7a8b9c0d"}))
    with store.connect() as c:
        assert participants.real_participant_count(c, study.study_id) == 0
    # a preview still opens it (the experimenter tries the study), and the setting can be switched off
    manage.open_preview(store, study, clock=FakeClock())
    assert not make(store, small_dataset, completion_code="C1", require_prolific_id=False).config.prolific_id_required
    assert not make(store, small_dataset).config.prolific_id_required   # no completion URL or code: not Prolific


def test_anonymous_answers_never_fill_the_targets_unless_the_study_says_so(store, small_dataset):
    study = make(store, small_dataset)   # anonymous visitors allowed (no completion URL), anonymous_counts off
    for i in range(3):   # anonymous bots answer everything they are given
        _, end = run_to_end(session(store, small_dataset, study, f"anon-{i}", "anonymous"))
        assert end.reason == "completed"
    # the next real participant still gets items, from an untouched pool
    _, end = run_to_end(real := session(store, small_dataset, study, "REAL1"))
    assert end.reason == "completed"
    with store.connect() as c:
        counts = participants.main_assignment_counts(c, study.study_id, count_anonymous=False)
        mine = [a for a in participants.participant_assignments(c, real.participant_id) if a.kind == "main"]
    assert sum(counts.values()) == len(mine) > 0      # only the real participant's items count
    # with anonymous_counts the same bots fill the pool (target 1): the old behaviour, chosen explicitly
    counted = make(store, small_dataset, anonymous_counts=True)
    for i in range(60):
        if run_to_end(session(store, small_dataset, counted, f"anon2-{i}", "anonymous"))[1].reason != "completed":
            break
    assert run_to_end(session(store, small_dataset, counted, "REAL2"))[1].reason == "pool_exhausted"


# --------------------------------------------------------------------------- 5. a tab left open

@pytest.mark.parametrize("how", ["closed", "deleted", "excluded"])
def test_a_tab_left_open_stores_nothing_more(store, small_dataset, how):
    from rose_core.instrument.session import Client

    study = make(store, small_dataset)
    clock = FakeClock()
    p = join(store, study, f"TAB-{how}", "prolific", "PS", "SS", ids=SequentialIds(how), clock=clock)
    s = ParticipantSession(store, small_dataset, study, p.participant_id, clock=clock, client=Client("tab-1"))
    s.consent()
    s.finish_instructions()
    first = s.screen()
    assert isinstance(first, ItemScreen)
    assert not answer(s, first).duplicate
    screen = s.screen()
    assert isinstance(screen, ItemScreen)
    if how == "closed":
        set_active(store, study.study_id, False)
    elif how == "deleted":
        manage.delete_study(store, study.study_id, study.name)
    else:
        manage.exclude(store, s.participant_id, "bot-like answers", "JD", clock=clock)
    rec = answer(s, screen)
    assert rec.duplicate and rec.refused == ("excluded" if how == "excluded" else "closed")
    assert s.record_events(screen, {"view_id": screen.view_id, "events": [
        {"seq": screen.ack_seq, "type": "click", "r": 1, "c": 1, "t": 1.0, "active_ms": 1.0}], "selection": [[1, 1]],
        "count": None, "active_ms": 1.0, "first_action_ms": 1.0}) == -1
    assert s.screen() == Closed("excluded" if how == "excluded" else "closed")
    with store.connect() as c:
        mine = participants.participant_assignments(c, s.participant_id)
        flags = participants.flags(c, study.study_id)
    assert sum(a.answered_at is not None for a in mine) == (0 if how == "deleted" else 1)
    assert all(a.answered_at is not None or a.released_at is not None for a in mine)   # the held item went back
    if how != "deleted":
        assert [f["kind"] for f in flags] == [f"{how}_answer"]


# --------------------------------------------------------------------------- 1. attention checks in the picture

def test_a_picture_check_keeps_its_answer_out_of_every_text_the_browser_gets(store, small_dataset):
    import json
    import re

    from rose_core.instrument.items import PICTURE_INSTRUCTION, attention_item, attention_item_id, item_png

    study = make(store, small_dataset, attention_every=1, items_per_participant=2)
    assert study.config.attention_kind == "picture"          # the default
    s = session(store, small_dataset, study, "PIC1")
    assert answer(s, s.screen()).result.passed
    check = s.screen()
    assert check.kind == "attention" and check.item.instruction == PICTURE_INSTRUCTION
    data = check.component_data(b"png")
    assert not re.search(r"R\d+\s*,?\s*(column\s*)?C\d+", json.dumps(data))   # no cell named anywhere it reads
    (r, c), = check.item.key.gold_cells
    png = item_png(small_dataset, check.item)
    assert png == item_png(small_dataset, check.item)        # same item, same bytes
    worded = attention_item(small_dataset, check.item.item_id, "worded")
    base = small_dataset.read_image(worded.image)
    assert png != base and worded.key == check.item.key     # the same gold either way (rescoring keeps working)
    from PIL import Image
    import io
    im = Image.open(io.BytesIO(png))
    assert (im.width, im.height) == (check.item.layout.width, check.item.layout.height)
    assert im.height == worded.layout.height + 60 and check.item.layout.cell_boxes() == worded.layout.cell_boxes()
    # another check on the same scene draws another cell: the picture, not the scene, carries the answer
    other = attention_item(small_dataset, attention_item_id(check.item.scene_id, "other-seed"), "picture")
    if other.key.gold_cells != check.item.key.gold_cells:
        assert item_png(small_dataset, other) != png
    # the old wording stays for studies stored before picture checks
    assert StudyConfig.from_json(json.dumps({"name": "old"})).attention_kind == "worded"
    assert StudyConfig(name="x", attention_kind="riddle").problems() == [
        "attention_kind: expected one of picture, worded, got 'riddle'"]
