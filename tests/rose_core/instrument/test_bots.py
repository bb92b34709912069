"""Bots against the participant session (issue 23): anonymous visitors and the pool, a tab left open after its
study closed, picture attention checks, the behaviour check, per-participant completion codes, and a scripted
human-paced bot that reads every text it receives."""
from __future__ import annotations

from dataclasses import replace

import pytest

from rose_core.instrument import manage
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.items import (
    BAND_PX, BODY_TEXT_PX, MIN_CONTRAST, PICTURE_PHRASINGS, PictureStyle, _contrast, attention_item,
    attention_item_id, drawn_image, drawn_png, item_png, picture_key, picture_style, picture_text)
from rose_core.instrument.page_data import identity_from_query, needs_prolific_id
from rose_core.instrument.joining import NeedsProlificId, join
from rose_core.instrument.screens import Closed, ItemScreen
from rose_core.instrument.session import ParticipantSession
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.study import set_active
from rose_core.storage import participants
from tests.participants import LAB_INFO, answer, run_to_end

# One fixed drawing (font size, place, dark text on light grey, no noise): what a script that renders every
# candidate answer itself and compares pixels assumes, and what a keyed drawing must defeat.
FIXED_STYLE = PictureStyle(0, 18, (20, 20, 20), (246, 246, 246), 0.0, 0, 0, 8, "centre", 6, 0, 0)

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
    study = make(store, small_dataset, anonymous_counts=False)   # anonymous visitors allowed (no completion URL)
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
    # and the monitor's coverage says the same: the anonymous answers are not progress towards the targets
    from rose_core.instrument.monitor import coverage

    cov = coverage(store, small_dataset, study)
    assert sum(k * v for k, v in cov["histogram"].items()) == len(mine) < cov["answers"]
    # with anonymous_counts the same bots fill the pool (target 1): the old behaviour, chosen explicitly
    counted = make(store, small_dataset, anonymous_counts=True)
    for i in range(60):
        if run_to_end(session(store, small_dataset, counted, f"anon2-{i}", "anonymous"))[1].reason != "completed":
            break
    assert run_to_end(session(store, small_dataset, counted, "REAL2"))[1].reason == "pool_exhausted"


# --------------------------------------------------------------------------- 5. a tab left open

@pytest.mark.parametrize("how", ["closed", "deleted", "excluded"])
def test_a_tab_left_open_stores_nothing_more(store, small_dataset, how):
    from rose_core.instrument.tabs import Client

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

    from rose_core.instrument.items import PICTURE_INSTRUCTION

    study = make(store, small_dataset, attention_every=1, items_per_participant=2)
    assert study.config.attention_kind == "picture"          # the default
    s = session(store, small_dataset, study, "PIC1")
    assert answer(s, s.screen()).result.passed
    check = s.screen()
    assert check.kind == "attention" and check.item.instruction == PICTURE_INSTRUCTION
    data = check.component_data(b"png")
    assert not re.search(r"R\d+\s*,?\s*(column\s*)?C\d+", json.dumps(data))   # no cell named anywhere it reads
    (r, c), = check.item.key.gold_cells
    assert check.drawing and "drawing" not in repr(check) and check.drawing.hex() not in json.dumps(data)
    png = item_png(small_dataset, check.item, check.drawing)
    assert png == item_png(small_dataset, check.item, check.drawing)        # same participant and slot, same bytes
    assert s.screen().drawing == check.drawing                              # and the same key on every rerun
    with pytest.raises(ValueError, match="no drawing key"):
        item_png(small_dataset, check.item)
    worded = attention_item(small_dataset, check.item.item_id, "worded")
    base = small_dataset.read_image(worded.image)
    assert png != base and worded.key == check.item.key     # the same gold either way (rescoring keeps working)
    from PIL import Image
    import io
    im = Image.open(io.BytesIO(png))
    assert (im.width, im.height) == (check.item.layout.width, check.item.layout.height)
    assert im.height == worded.layout.height + BAND_PX and check.item.layout.cell_boxes() == worded.layout.cell_boxes()
    # another check on the same scene draws another cell: the picture, not the scene, carries the answer
    other = attention_item(small_dataset, attention_item_id(check.item.scene_id, "other-seed"), "picture")
    if other.key.gold_cells != check.item.key.gold_cells:
        assert item_png(small_dataset, other, check.drawing) != png


def _band(png: bytes) -> bytes:
    """The bottom BAND_PX rows of a PNG: a picture check's instruction band (its layout's height includes the band)."""
    from PIL import Image
    import io
    return _image_band(Image.open(io.BytesIO(png)).convert("RGB"))


def _image_band(im) -> bytes:
    return im.crop((0, im.height - BAND_PX, im.width, im.height)).tobytes()


def test_a_drawn_png_is_its_drawn_image_encoded():
    """`drawn_png` is exactly `drawn_image` saved as a PNG, whose pixels read back the same (what the attack below
    relies on to compare bands without encoding each candidate)."""
    import io

    from PIL import Image

    blank = io.BytesIO()
    Image.new("RGB", (310, 300), (255, 255, 255)).save(blank, "PNG")
    for n, style in enumerate([FIXED_STYLE] + [picture_style(picture_key("k", f"D{n}", 2)) for n in range(4)]):
        text = PICTURE_PHRASINGS[n % len(PICTURE_PHRASINGS)].format(r=n + 1, c=2)
        im = drawn_image(blank.getvalue(), text, 310, 300 + BAND_PX, style)
        png = drawn_png(blank.getvalue(), text, 310, 300 + BAND_PX, style)
        encoded = io.BytesIO()
        im.save(encoded, format="PNG")
        assert png == encoded.getvalue()
        assert _band(png) == _image_band(im) and Image.open(io.BytesIO(png)).convert("RGB").tobytes() == im.tobytes()


def test_drawing_every_candidate_with_the_public_code_does_not_read_a_picture_check(store, small_dataset):
    """The attack: draw every possible instruction (each cell, each wording) with the public code and fixed
    parameters under a blank image of the same size, and compare the band byte for byte. It reads a check drawn
    in a fixed style; it reads none of the checks the session draws (each keyed by the study's secret), nor does
    a guessed key, nor the nearest candidate within a small tolerance."""
    import io

    from PIL import Image

    study = make(store, small_dataset, attention_every=1, items_per_participant=2)
    checks = []
    for n in range(3):
        s = session(store, small_dataset, study, f"ATK{n}")
        answer(s, s.screen())
        checks.append(s.screen())
    assert all(ch.kind == "attention" and ch.drawing for ch in checks)
    assert len({ch.drawing for ch in checks}) == 3                # varied per participant by the study's secret

    # Every candidate's band, drawn once per image size and style and kept by its bytes (the fixed style is
    # tried on each check twice, on the fixed drawing and on the keyed one). The band is drawn relative to its own top, so the attack draws
    # it under a one-pixel blank strip of the image's width, and reads its pixels before they are encoded as a PNG
    # (`drawn_image`, which `drawn_png` encodes; PNG is lossless): the same band bytes at a fraction of the work
    # (the first assertion below, the attack reading the fixed drawing's PNG, fails if that ever stops being so).
    candidates: dict[tuple, dict[bytes, set]] = {}

    def bands(item, style) -> dict[bytes, set]:
        size = (item.layout.width, item.key.rows, item.key.cols, style)
        if size not in candidates:
            blank = io.BytesIO()
            Image.new("RGB", (item.layout.width, 1), (255, 255, 255)).save(blank, "PNG")
            by_band = candidates[size] = {}
            for r in range(1, item.key.rows + 1):
                for c in range(1, item.key.cols + 1):
                    for phr in range(len(PICTURE_PHRASINGS)):
                        cand = replace(style, phrasing=phr)
                        text = PICTURE_PHRASINGS[phr].format(r=r, c=c)
                        drawn = drawn_image(blank.getvalue(), text, item.layout.width, 1 + BAND_PX, cand)
                        by_band.setdefault(_image_band(drawn), set()).add((r, c))
        return candidates[size]

    def attack(png: bytes, item, styles) -> set:
        seen = _band(png)
        return set().union(*(bands(item, style).get(seen, set()) for style in styles))

    for ch in checks:
        gold = set(ch.item.key.gold_cells)
        text = picture_text(ch.item, FIXED_STYLE)
        before = drawn_png(small_dataset.read_image(ch.item.image), text, ch.item.layout.width,
                           ch.item.layout.height, FIXED_STYLE)
        assert attack(before, ch.item, [FIXED_STYLE]) == gold          # the attack works on a fixed drawing
        now = item_png(small_dataset, ch.item, ch.drawing)
        assert attack(now, ch.item, [FIXED_STYLE, picture_style(b"guess")]) == set()   # and fails on the keyed one
        # nor does a near-exact comparison: the nearest fixed-style candidate differs in many band pixels
        seen = _band(now)
        assert sum(a != b for a, b in zip(seen, _band(before))) > len(seen) // 4


def test_a_picture_check_stays_readable_in_every_style(small_dataset):
    """Whatever the key picks: text at least the page's body size (the image is shown at least at its natural
    width on the wide page) and AAA contrast against the noisy background, and it is really drawn in that colour."""
    import io

    from PIL import Image

    item = attention_item(small_dataset, attention_item_id(next(iter(small_dataset.scenes)), "s"), "picture")
    seen = set()
    for n in range(200):
        st = picture_style(picture_key("secret", f"P{n}", n % 5))
        seen.add((st.phrasing, st.size, st.align, st.x))
        assert BODY_TEXT_PX <= st.size <= 22 and 0 <= st.noise <= 7
        worst = tuple(v - st.noise for v in st.background)
        assert _contrast(st.text, worst) >= MIN_CONTRAST
    assert len(seen) > 100                                    # the styles really vary
    for n in range(12):
        key = picture_key("secret", f"P{n}", 1)
        st = picture_style(key)
        im = Image.open(io.BytesIO(item_png(small_dataset, item, key))).convert("RGB")
        band = im.crop((0, item.layout.height - BAND_PX, im.width, im.height))
        assert st.text in {px for _, px in band.getcolors(band.width * band.height)}    # the text is drawn
        assert _contrast(st.text, (255, 255, 255)) >= MIN_CONTRAST
    # the narrowest scene (4 columns: 310 px) takes the longest wording in every style, never below body size
    blank = io.BytesIO()
    Image.new("RGB", (310, 300), (255, 255, 255)).save(blank, "PNG")
    longest = max(PICTURE_PHRASINGS, key=len).format(r=10, c=10)
    for n in range(60):
        png = drawn_png(blank.getvalue(), longest, 310, 300 + BAND_PX, picture_style(picture_key("k", f"N{n}", 2)))
        assert Image.open(io.BytesIO(png)).size == (310, 300 + BAND_PX)
    with pytest.raises(ValueError, match="does not fit"):
        drawn_png(blank.getvalue(), longest * 3, 310, 300 + BAND_PX, picture_style(b"k"))


def test_a_drawing_key_needs_the_study_secret():
    assert picture_key("s1", "P1", 3) == picture_key("s1", "P1", 3)
    assert len({picture_key("s1", "P1", 3), picture_key("s2", "P1", 3), picture_key("s1", "P2", 3),
                picture_key("s1", "P1", 4)}) == 4



# --------------------------------------------------------------------------- 2. the behaviour check

def test_the_behaviour_check_judges_traces_and_clockwork():
    from rose_core.instrument.behaviour import MIN_TIMED, Answered, judge

    person = [Answered("main", True, 3, ms) for ms in (2400, 6100, 3900, 12800, 4500, 2900, 8700, 5200, 3300)]
    assert not judge(person).flagged and judge(person).timing_cv > 0.3
    empty = [Answered("main", False, 0, 3000.0 + 700 * (i % 3)) for i in range(MIN_TIMED)]  # DONE alone: no trace needed
    assert judge(empty).traceless == 0
    script = [Answered("main", True, 0, 1600.0 + i) for i in range(10)]
    v = judge(script)
    assert v.traceless == 10 and v.timing_cv < 0.01 and len(v.reasons) == 2
    assert "10 of 10 answers" in v.reasons[0] and "coefficient of variation 0.002" in v.reasons[1]
    few = [Answered("main", True, 2, 1600.0)] * (MIN_TIMED - 1)
    assert judge(few).timing_cv is None and not judge(few).flagged   # too few items to judge timing: no number
    assert judge([Answered("main", True, 1, 0.0)] * MIN_TIMED).timing_cv is None   # mean 0: undefined, not 0


def test_a_flagged_participant_is_excluded_when_the_study_says_so(store, small_dataset):
    from rose_core.analysis.approvals import review
    from rose_core.storage import exclusions

    for mode in ("flag", "exclude", "off"):
        study = make(store, small_dataset, behaviour_check=mode, completion_code="DONE1", split="all",
                     subsets=["PixelContent", "PixelEdit"], items_per_participant=8)
        clock = FakeClock()
        s = session(store, small_dataset, study, f"B-{mode}", clock=clock)
        _, end = run_to_end(s, on_item=lambda screen: clock.advance(1.6))   # the helper's events, clockwork pace
        assert end.reason == "completed"
        with store.connect() as c:
            flags = [f for f in participants.flags(c, study.study_id) if f["kind"] == "behaviour"]
            standing = exclusions.standing(c, s.participant_id)
        assert len(flags) == (0 if mode == "off" else 1)
        assert (standing is not None) == (mode == "exclude")
        row = review(store, study).rows.set_index("participant_id").loc[f"B-{mode}"]
        if mode == "exclude":
            assert flags[0]["detail"].startswith("answer times vary too little")
            assert standing.excluded_by == "behaviour check" and row["status"] == "reject"
            assert row["rejection_category"] == "LOW_EFFORT" and row["reason"].startswith("behaviour check: answer")
        else:
            assert row["status"] == "approve"


# --------------------------------------------------------------------------- 3. per-participant completion codes

def test_each_participant_gets_a_code_no_other_participant_can_use(store, small_dataset, tmp_path):
    from rose_core.analysis.approvals import read_reported_codes, review
    from rose_core.instrument.completion import participant_code, with_code

    url = "https://app.prolific.com/submissions/complete?cc=STATIC1"
    study = make(store, small_dataset, completion_code="STATIC1", completion_url=url,
                 completion_code_kind="participant", target_per_instance=3)
    ends = {}
    for ext in ("5f00000000000000000000a1", "5f00000000000000000000a2", "5f00000000000000000000a3"):
        clock = FakeClock()
        _, ends[ext] = run_to_end(session(store, small_dataset, study, ext, clock=clock),
                                  on_item=lambda screen: clock.advance(4.0))   # not "too fast"
    codes = {e: end.code for e, end in ends.items()}
    assert len(set(codes.values())) == 3 and "STATIC1" not in codes.values()
    for e, end in ends.items():
        assert end.url == with_code(url, codes[e]) and end.url.endswith(f"cc={codes[e]}")
        assert end.url == ends[e].url   # the same code on every reload of the end page
    a, b, c = codes
    assert participant_code("secret", study.study_id, a) != participant_code("other", study.study_id, a)
    # the approvals check what each submission reported: a code of another participant never validates
    sheet = tmp_path / "prolific_export.csv"
    sheet.write_text(f"Participant id,Completion code\n{a},{codes[a].lower()}\n{b},{codes[a]}\n")
    rows = review(store, study, reported=read_reported_codes(sheet)).rows.set_index("participant_id")
    assert dict(rows["code_check"]) == {a: "ok", b: "wrong", c: "missing"}
    assert rows.loc[b, "status"] == "reject" and rows.loc[b, "rejection_category"] == "BAD_CODE"
    assert rows.loc[a, "status"] == "approve" and rows.loc[a, "completion_code"] == codes[a]
    # without reported codes the file lists the code each participant should have
    assert dict(review(store, study).rows.set_index("participant_id")["completion_code"]) == codes
    bad = tmp_path / "bad.csv"
    bad.write_text("who,what\nx,y\n")
    with pytest.raises(ValueError, match="bad.csv: expected a participant id column"):
        read_reported_codes(bad)
    # a study code stays one code for everyone
    same = make(store, small_dataset, completion_code="STATIC2", target_per_instance=2)
    assert {run_to_end(session(store, small_dataset, same, f"S{i}"))[1].code for i in range(2)} == {"STATIC2"}


# --------------------------------------------------------------------------- 6. the bot of the adversarial run

class HumanPacedBot:
    """The script of issue 23's adversarial run, driving the real participant session: it reads every text it
    receives (consent, instructions, each item's component data: what a browser gets), waits 1.6 s per item on
    the server's clock (the FakeClock; no sleeps), and answers:

    - an instruction that names a cell ("Click the cell in row R…, column C…") by clicking that cell: the
      worded attention check, read from its wording;
    - anything else as a capable model would answer the ROSE task: the right cells or number of a real item,
      and on a picture that asks something it cannot read, the picture's odd cells (the task it knows).

    `events`: post each click as the grid's event messages (a careful script) instead of the answer alone."""

    NAMED_CELL = __import__("re").compile(r"row R(\d+), column C(\d+)")

    def __init__(self, store, ds, study, ext: str, events: bool, source: str = "prolific"):
        self.ds, self.clock, self.events = ds, FakeClock(), events
        self.read: list[str] = []
        p = join(store, study, ext, source, "PS" if source == "prolific" else None, f"SS-{ext}", ids=SequentialIds(ext),
                 clock=self.clock)
        self.s = ParticipantSession(store, ds, study, p.participant_id, clock=self.clock)

    def _answer(self, screen: ItemScreen) -> tuple[list, int | None]:
        data = screen.component_data(b"")        # exactly what the page sends the browser
        self.read.append(data["instruction"])
        m = self.NAMED_CELL.search(data["instruction"])
        if m:
            return [(int(m[1]), int(m[2]))], None
        item = screen.item
        if item.template == "ATT":               # "follow the instruction in the picture": it cannot read it
            return sorted(self.ds.scenes[item.scene_id].targets), None
        k = item.key
        return (sorted(k.gold_cells) if item.mode != "count" else []), (k.gold_count if item.mode != "click" else None)

    def run(self):
        from rose_core.instrument.screens import Consent, End, Instructions, PracticeFeedback
        from tests.participants import events_for

        for _ in range(500):
            screen = self.s.screen()
            if isinstance(screen, (End, Closed)):
                return screen
            if isinstance(screen, (Consent, Instructions)):
                self.read.append(screen.text)
                self.s.consent() if isinstance(screen, Consent) else self.s.finish_instructions()
                continue
            if isinstance(screen, PracticeFeedback):
                self.s.acknowledge_feedback(screen.view_id)
                continue
            assert isinstance(screen, ItemScreen), screen
            cells, count = self._answer(screen)
            evs = events_for(cells, count, screen.ack_seq)
            if self.events and evs:
                self.s.record_events(screen, {"view_id": screen.view_id, "events": evs,
                                              "selection": [list(x) for x in cells], "count": None,
                                              "active_ms": 1500.0, "first_action_ms": 400.0})
            self.clock.advance(1.6)
            self.s.submit(screen, {"view_id": screen.view_id, "selection": [list(x) for x in cells],
                                   "count": None if count is None else str(count), "events": evs if self.events else [],
                                   "first_action_ms": 400.0, "active_ms": 1500.0, "client_total_ms": 1600.0,
                                   "viewport": [1440, 900], "dpr": 2.0, "focus_lost": False})
        raise AssertionError("the bot never reached an end")


def _prolific_study(store, ds, **kw):
    """A Prolific study left at the defaults, as an experimenter sets one up (a completion URL with its code)."""
    return make(store, ds, split="all", subsets=["PixelContent", "PixelEdit", "EmojiStyle"], templates=["T1", "T3"],
                items_per_participant=12, attention_every=4, practice_items=4, target_per_instance=3,
                completion_code="C0DE", completion_url="https://app.prolific.com/submissions/complete?cc=C0DE", **kw)


@pytest.mark.parametrize("events", [False, True])
def test_the_human_paced_bot_is_refused_or_excluded_under_the_defaults(store, small_dataset, events):
    from rose_core.analysis.approvals import review
    from rose_core.analysis.selection import ExclusionRules, participant_table

    study = _prolific_study(store, small_dataset)
    # anonymous, it never reaches consent
    with pytest.raises(NeedsProlificId):
        HumanPacedBot(store, small_dataset, study, "bot-anon", events, source="anonymous")
    # with a made-up Prolific id it runs to the end, and is excluded and rejected
    bot = HumanPacedBot(store, small_dataset, study, "5f0000000000000000000b07", events)
    end = bot.run()
    assert end.reason == "completed"                      # it is not stopped: it is found out
    assert not any(HumanPacedBot.NAMED_CELL.search(t) for t in bot.read)   # no text it got named the check's cell
    table = participant_table(store, ExclusionRules()).set_index("external_id").loc["5f0000000000000000000b07"]
    assert table["attention_checks"] >= 2 and table["attention_passed"] == 0
    assert "attention" in table["excluded"]
    row = review(store, study).rows.set_index("participant_id").loc["5f0000000000000000000b07"]
    assert row["status"] == "reject" and row["rejection_category"] == "FAILED_CHECK"
    with store.connect() as c:
        flags = {f["kind"]: f["detail"] for f in participants.flags(c, study.study_id)}
    assert "coefficient of variation 0.000" in flags["behaviour"]     # flagged too, on the Participants page
    assert ("answers clicked or counted with no click or typing" in flags["behaviour"]) is (not events)


def test_the_same_bot_passed_everything_with_the_worded_check(store, small_dataset):
    """The finding as filed: with the check's answer in its wording (and no behaviour check) the bot is approved."""
    from rose_core.analysis.approvals import review

    study = _prolific_study(store, small_dataset, attention_kind="worded", behaviour_check="off")
    bot = HumanPacedBot(store, small_dataset, study, "5f0000000000000000000b08", events=True)
    assert bot.run().code == "C0DE"
    assert review(store, study).rows.set_index("participant_id").loc["5f0000000000000000000b08", "status"] == "approve"


def test_the_approvals_command_checks_reported_codes(store, small_dataset, tmp_path):
    import csv

    from tests.command_line import run_cli

    if store.path is None:
        return  # the command opens the store itself: once, on SQLite, is enough
    study = make(store, small_dataset, completion_code="C1", completion_code_kind="participant", target_per_instance=2)
    clock = FakeClock()
    ids = ["5f00000000000000000000c1", "5f00000000000000000000c2"]
    codes = [run_to_end(session(store, small_dataset, study, e, clock=clock),
                        on_item=lambda screen: clock.advance(4.0))[1].code for e in ids]
    store.checkpoint()
    sheet, out = tmp_path / "export.csv", tmp_path / "approvals.csv"
    sheet.write_text(f"participant_id,completion_code\n{ids[0]},{codes[1]}\n{ids[1]},{codes[1]}\n")
    cmd = ["study", "approvals", study.study_id, "--out", str(out), "--db", str(store.path)]
    run = run_cli(*cmd, "--codes", str(sheet))
    assert run.returncode == 0, run.stderr
    assert "completion codes: ok: 1, wrong: 1, missing: 0" in run.stdout
    with out.open(newline="") as f:
        rows = {r["participant_id"]: r for r in csv.DictReader(f)}
    assert rows[ids[0]]["status"] == "reject" and rows[ids[0]]["rejection_category"] == "BAD_CODE"
    assert rows[ids[1]]["status"] == "approve" and rows[ids[1]]["code_check"] == "ok"
    (tmp_path / "no.csv").write_text("a,b\n1,2\n")
    bad = run_cli(*cmd, "--codes", str(tmp_path / "no.csv"))
    assert bad.returncode == 2 and "no.csv: expected a participant id column" in bad.stderr


def test_the_flags_export_names_each_flagged_participant_by_their_prolific_id(store, small_dataset):
    """Review of issue 23: the behaviour, closed and excluded flags were stored without the external id, so the
    Participants page and the `participant_flags` export showed them with an empty `external_id`, and the
    experimenter could not match them with the approvals CSV (Prolific ids)."""
    from rose_core.instrument.exports import table_frame

    study = make(store, small_dataset, split="all", subsets=["PixelContent", "PixelEdit"], items_per_participant=8,
                 completion_code="C1")
    clock = FakeClock()
    s = session(store, small_dataset, study, "5f00000000000000000000f1", clock=clock)
    assert run_to_end(s, on_item=lambda screen: clock.advance(1.6))[1].reason == "completed"
    rows = table_frame(store, "participant_flags", study.study_id)
    assert list(rows["kind"]) == ["behaviour"]
    assert list(rows["external_id"]) == ["5f00000000000000000000f1"]
    assert list(rows["participant_id"]) == [s.participant_id]


def test_the_studies_page_coverage_counts_what_fills_the_targets(store, small_dataset):
    """Review of issue 23: anonymous answers do not fill the targets (anonymous_counts off), but the Studies page's
    coverage (and `study status`) counted them: after three `?pid=` bots every instance read as complete, progress
    100 %, while the assignment still gave a real participant the whole pool."""
    from rose_core.instrument.monitor import coverage

    study = make(store, small_dataset, anonymous_counts=False)   # anonymous visitors allowed
    for i in range(3):
        assert run_to_end(session(store, small_dataset, study, f"cov-anon-{i}", "anonymous"))[1].reason == "completed"
    cov = coverage(store, small_dataset, study)
    bots = cov["answers"]
    assert bots > 0 and cov["complete_instances"] == 0 and cov["progress"] == 0.0   # answered, not filling
    run_to_end(real := session(store, small_dataset, study, "COVREAL"))
    with store.connect() as c:
        mine = sum(a.kind == "main" for a in participants.participant_assignments(c, real.participant_id))
    cov = coverage(store, small_dataset, study)
    assert cov["complete_instances"] == mine > 0 and cov["answers"] == bots + mine
    counted = make(store, small_dataset, anonymous_counts=True)
    run_to_end(session(store, small_dataset, counted, "cov-anon-x", "anonymous"))
    assert coverage(store, small_dataset, counted)["complete_instances"] > 0   # counted when the study says so


def test_the_sgp_coverage_counts_what_fills_the_targets(store, sgp_small):
    from rose_core.instrument.episode_session import EpisodeSession, create_sgp_study, sgp_coverage
    from tests.sgp_players import run_to_end as play_to_end

    study = create_sgp_study(store, sgp_small, StudyConfig(
        name="sgp anon", benchmark="sgp", items_per_participant=2, target_per_instance=1, practice_items=0,
        attention_every=0, seed=3, anonymous_counts=False), ids=_IDS, clock=FakeClock())
    clock = FakeClock()
    p = join(store, study, "sgp-anon-1", "anonymous", ids=SequentialIds("sgpa"), clock=clock)
    s = EpisodeSession(store, sgp_small, study, p.participant_id, clock=clock)
    s.consent()
    s.finish_instructions()
    assert play_to_end(s, clock=clock)[1].reason == "completed"
    cov = sgp_coverage(store, sgp_small, study)
    assert cov["answers"] == 2 and cov["complete_instances"] == 0 and cov["progress"] == 0.0


@pytest.mark.parametrize("how", ["closed", "excluded"])
def test_an_sgp_tab_left_open_is_refused_on_record(store, sgp_small, how):
    """Review of issue 23: on an SGP study the moves of a tab left open after its study closed (or its participant
    was excluded) were refused without a trace: no `closed_answer` / `excluded_answer` flag, as a ROSE answer gets."""
    from rose_core.instrument.episode_session import EpisodeScreen, EpisodeSession, create_sgp_study
    from rose_core.instrument.tabs import Client
    from tests.sgp_players import payload, solution

    study = create_sgp_study(store, sgp_small, StudyConfig(
        name="sgp tab", benchmark="sgp", items_per_participant=3, target_per_instance=2, practice_items=0,
        attention_every=0, seed=3, completion_code="C1"), ids=_IDS, clock=FakeClock())
    clock = FakeClock()
    p = join(store, study, f"5f00000000000000000sgp{how[:2]}", "prolific", "S", "X", ids=SequentialIds(how),
             clock=clock)
    s = EpisodeSession(store, sgp_small, study, p.participant_id, clock=clock, client=Client("tab-1"))
    s.consent()
    s.finish_instructions()
    screen = s.screen()
    assert isinstance(screen, EpisodeScreen)
    if how == "closed":
        set_active(store, study.study_id, False)
    else:
        manage.exclude(store, s.participant_id, "bot-like moves", "JD", clock=clock)
    for _ in range(3):   # a bot sending again: one flag, the held episode back to the pool
        rep = s.record_moves(screen, payload(screen, solution(screen)))
        assert rep.stored == 0 and not rep.ended
    assert s.screen() == Closed(how)
    with store.connect() as c:
        flags = participants.flags(c, study.study_id)
        mine = participants.participant_assignments(c, s.participant_id)
    assert [f["kind"] for f in flags] == [f"{how}_answer"]
    assert all(a.answered_at is None and a.released_at is not None for a in mine if a.kind == "main")


def test_a_study_code_given_only_in_the_completion_url_is_checked(store, small_dataset):
    """Review of issue 23: a Prolific study set up with its completion URL alone (`…/complete?cc=ABC123`, no
    `completion_code`) sends every completed participant back with ABC123, but the approvals listed no code and
    `--codes` checked nothing: a wrong reported code was neither `wrong` nor `missing`."""
    from rose_core.analysis.approvals import review

    study = make(store, small_dataset, target_per_instance=2,
                 completion_url="https://app.prolific.com/submissions/complete?cc=ABC123")
    clock = FakeClock()
    ids = ["5f00000000000000000000d1", "5f00000000000000000000d2"]
    for ext in ids:
        end = run_to_end(session(store, small_dataset, study, ext, clock=clock), on_item=lambda s: clock.advance(4))[1]
        assert end.reason == "completed" and end.url.endswith("cc=ABC123")
    rows = review(store, study, reported={ids[0]: "abc123", ids[1]: "WRONG"}).rows.set_index("participant_id")
    assert list(rows["completion_code"]) == ["ABC123", "ABC123"]
    assert dict(rows["code_check"]) == {ids[0]: "ok", ids[1]: "wrong"}
    assert rows.loc[ids[1], "rejection_category"] == "BAD_CODE"


def test_the_approvals_show_each_participants_flags(store, small_dataset):
    """Review of issue 23: under the default `behaviour_check = "flag"`, a participant whose answers had no trace
    and clockwork times (a script that passes the checks) stood in the approvals CSV as a plain `approve` row:
    the file the experimenter acts on said nothing of the flag."""
    from rose_core.analysis.approvals import review

    study = make(store, small_dataset, completion_code="DONE1", split="all", subsets=["PixelContent", "PixelEdit"],
                 items_per_participant=8, target_per_instance=2)
    clock = FakeClock()
    run_to_end(session(store, small_dataset, study, "5f00000000000000000000e7", clock=clock),
               on_item=lambda screen: clock.advance(1.6))           # clockwork: flagged
    steps = iter([2.4, 6.1, 3.9, 12.8, 4.5, 2.9, 8.7, 5.2, 3.3, 7.0])
    run_to_end(session(store, small_dataset, study, "5f00000000000000000000e8", clock=clock),
               on_item=lambda screen: clock.advance(next(steps)))   # a person's pace: not flagged
    rows = review(store, study).rows.set_index("participant_id")
    assert dict(rows["status"]) == {"5f00000000000000000000e7": "approve", "5f00000000000000000000e8": "approve"}
    assert dict(rows["flags"]) == {"5f00000000000000000000e7": "behaviour", "5f00000000000000000000e8": ""}


def test_a_lab_study_of_anonymous_links_fills_its_targets_by_default(store, small_dataset):
    # Review of issue 23: with anonymous answers never filling the targets, a lab study (no Prolific id required)
    # gave every participant the same least-answered items, whatever raters_per_item said. By default a study that
    # admits anonymous visitors counts them; a Prolific study does not.
    def second_after_first(study) -> str:
        ends = []
        for who in ("lab-1", "lab-2"):
            ends.append(run_to_end(session(store, small_dataset, study, f"{study.study_id}-{who}", "anonymous"))[1])
        assert ends[0].reason == "completed"
        return ends[1].reason

    lab = make(store, small_dataset)
    assert not lab.config.prolific_id_required and lab.config.counts_anonymous
    assert second_after_first(lab) == "pool_exhausted"      # the first lab participant used the targets up
    assert second_after_first(make(store, small_dataset, anonymous_counts=False)) == "completed"
    prolific = _prolific_study(store, small_dataset)
    assert prolific.config.prolific_id_required and not prolific.config.counts_anonymous
