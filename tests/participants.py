"""Drive a ParticipantSession the way the browser would (the messages of the click-grid CONTRACT).

The helpers read the gold answer from the server-side item to know what a right answer is; what they send is
only what the component sends."""
from __future__ import annotations

import tomllib
from pathlib import Path

from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.joining import join
from rose_core.instrument.screens import End, ItemScreen, PracticeFeedback, Questionnaire, Recorded, Wait
from rose_core.instrument.session import ParticipantSession


# A fictional lab's facts (docs/examples/texts/info.toml): a study with them has no template marker left, so it
# is created open, as the participant page requires.
LAB_INFO: dict[str, str] = tomllib.loads(
    (Path(__file__).resolve().parents[1] / "docs/examples/texts/info.toml").read_text(encoding="utf-8"))["info"]


def events_for(cells, count=None, start_seq: int = 0) -> list[dict]:
    ev = [{"seq": start_seq + i, "type": "click", "r": r, "c": c, "t": 1000.0 * (i + 1), "active_ms": 1000.0 * (i + 1)}
          for i, (r, c) in enumerate(cells)]
    if count is not None:
        ev.append({"seq": start_seq + len(ev), "type": "count_input", "value": str(count),
                   "t": 1000.0 * (len(ev) + 1), "active_ms": 1000.0 * (len(ev) + 1)})
    return ev


def submit_payload(screen: ItemScreen, cells, count, events=None) -> dict:
    cells = [list(c) for c in cells]
    return {"view_id": screen.view_id, "selection": cells, "count": None if count is None else str(count),
            "events": events_for(cells, count, screen.ack_seq) if events is None else events,
            "first_action_ms": 400.0, "active_ms": 2000.0, "client_total_ms": 2500.0, "viewport": [1280, 800],
            "dpr": 2.0, "focus_lost": False}


def right_answer(screen: ItemScreen):
    k = screen.item.key
    cells = sorted(k.gold_cells) if screen.item.mode != "count" else []
    return cells, (k.gold_count if screen.item.mode != "click" else None)


def wrong_answer(screen: ItemScreen):
    k = screen.item.key
    cells = [(r, c) for r in range(1, k.rows + 1) for c in range(1, k.cols + 1) if (r, c) not in k.gold_cells][:1]
    return (cells if screen.item.mode != "count" else []), (k.gold_count + 1 if screen.item.mode != "click" else None)


def answer(session: ParticipantSession, screen: ItemScreen, right: bool = True) -> Recorded:
    cells, count = right_answer(screen) if right else wrong_answer(screen)
    return session.submit(screen, submit_payload(screen, cells, count))


def new_session(store, ds, study, ext: str, ids=None, clock=None, intro: bool = True) -> ParticipantSession:
    clock = clock or FakeClock()
    p = join(store, study, ext, "prolific", "S", "X", ids=ids or SequentialIds(ext), clock=clock)
    s = ParticipantSession(store, ds, study, p.participant_id, clock=clock)
    if intro:
        s.consent()
        s.finish_instructions()
    return s


def run_to_end(session: ParticipantSession, right=lambda screen: True, on_item=None, max_steps: int = 500,
               max_waits: int = 20_000):
    """Answer every item (acknowledging feedback) until the end; returns (kinds answered, End), or the
    Questionnaire of a study that asks one. A `Wait` (every remaining item held by someone else, as with
    participants answering in other threads) is waited out."""
    import time

    kinds = []
    steps = 0
    while steps < max_steps:
        screen = session.screen()
        if isinstance(screen, (End, Questionnaire)):
            return kinds, screen
        if isinstance(screen, Wait):
            max_waits -= 1
            assert max_waits > 0, "waited too long for a held item"
            time.sleep(0.002)
            continue
        steps += 1
        if isinstance(screen, PracticeFeedback):
            session.acknowledge_feedback(screen.view_id)
            continue
        assert isinstance(screen, ItemScreen), screen
        if on_item:
            on_item(screen)
        rec = answer(session, screen, right(screen))
        assert not rec.duplicate
        kinds.append(screen.kind)
    raise AssertionError("no end reached")


def fail_to_the_end(session: ParticipantSession, before=None) -> End:
    """Answer every item wrong (acknowledging feedback) until the end: a failed practice screens out. `before`:
    called before each answer (e.g. to move a fake clock)."""
    while not isinstance(screen := session.screen(), End):
        if isinstance(screen, PracticeFeedback):
            session.acknowledge_feedback(screen.view_id)
            continue
        if before:
            before(screen)
        answer(session, screen, right=False)
    return screen
