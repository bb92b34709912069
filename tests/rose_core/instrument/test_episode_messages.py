"""Crafted messages to the SGP board (issue 23): every shape a browser could send instead of the component's own
is refused through the participant session with a StudyError naming the field, nothing stored and the board as
the server holds it; replays of stored moves and other views' messages store nothing and are no error."""
import copy

import pytest

from rose_core.instrument.config import StudyConfig, StudyError
from rose_core.instrument.episode_kind import EpisodeScreen
from rose_core.instrument.episode_messages import MAX_MOVES_PER_MESSAGE, parse_board_message
from rose_core.instrument.episode_study import create_sgp_study
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.joining import join
from rose_core.instrument.screens import OtherTabError
from tests.sgp_players import open_sgp_session, payload, solution


def started(store, ds, ext="C1", **kw):
    cfg = dict(name="crafted", benchmark="sgp", practice_items=0, items_per_participant=2, target_per_instance=2,
               attention_every=0, seed=4)
    cfg.update(kw)
    study = create_sgp_study(store, ds, StudyConfig(**cfg), ids=SequentialIds(f"cr{ext}"), clock=FakeClock())
    clock = FakeClock()
    p = join(store, study, ext, "prolific", "S", "X", ids=SequentialIds(ext), clock=clock)
    s = open_sgp_session(store, ds, study, p.participant_id, clock)
    s.consent()
    s.finish_instructions()
    screen = s.screen()
    assert isinstance(screen, EpisodeScreen)
    return study, s, screen


def stored(store):
    return [(r["view_id"], r["seq"], r["command"]) for r in
            store.query("SELECT view_id, seq, command FROM episode_steps ORDER BY view_id, seq")]


def good(screen):
    return payload(screen, [solution(screen)[0]])


def crafted(screen, change):
    msg = copy.deepcopy(good(screen))
    change(msg)
    return msg


def _set(path, value):
    def change(msg):
        target = msg
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value
    return change


SHAPES = {
    # wrong types
    "seq as text": (_set(("moves", 0, "seq"), "0"), "moves[0].seq"),
    "seq as a boolean": (_set(("moves", 0, "seq"), True), "moves[0].seq"),
    "seq as a float": (_set(("moves", 0, "seq"), 0.5), "moves[0].seq"),
    "text as a number": (_set(("moves", 0, "text"), 42), "moves[0].text"),
    "moves as an object": (_set(("moves",), {"0": "move"}), "moves: expected a list"),
    "a move as a list": (_set(("moves", 0), ["move red cube up"]), "moves[0]: expected an object"),
    "view_id as a number": (_set(("view_id",), 7), None),           # not this view: nothing, no error
    "give_up as text": (_set(("give_up",), "now"), "give_up"),
    "active_ms as text": (_set(("active_ms",), "fast"), "active_ms"),
    # huge
    "a huge seq": (_set(("moves", 0, "seq"), 10 ** 12), "moves[0].seq"),
    "a seq far ahead": (_set(("moves", 0, "seq"), 99_999), "arrived where move 0 was due"),
    "a huge command": (_set(("moves", 0, "text"), "move " * 1000), "moves[0].text"),
    "too many moves": (lambda m: m.__setitem__("moves", [dict(m["moves"][0], seq=k)
                                                         for k in range(MAX_MOVES_PER_MESSAGE + 1)]), "moves"),
    "an endless time": (_set(("moves", 0, "t"), float("inf")), "moves[0].t"),
    # negative times
    "a negative time": (_set(("moves", 0, "t"), -5.0), "moves[0].t"),
    "a negative active time": (_set(("moves", 0, "active_ms"), -1), "moves[0].active_ms"),
    "a negative first action": (_set(("first_action_ms",), -3), "first_action_ms"),
    "a negative give_up": (_set(("give_up",), -1), "give_up"),
    # unknown commands
    "an unknown input": (_set(("moves", 0, "input"), "telepathy"), "moves[0].input"),
    "an unknown field": (_set(("command",), "solve"), "unknown field"),
    "an unknown move field": (_set(("moves", 0, "board"), {"red cube": "A1"}), r"moves\[0\]: unknown field"),
    "typed into a click study": (_set(("moves", 0, "input"), "typed"), "moves[0].input"),
    "give_up in a capped study": (_set(("give_up",), 1), "give_up: this study has a step cap"),
    "seqs out of order": (lambda m: m.__setitem__("moves", [dict(m["moves"][0], seq=1), dict(m["moves"][0], seq=0)]),
                          "increasing sequence numbers"),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_crafted_message_is_refused_whole_and_stores_nothing(store, sgp_small, shape):
    change, needle = SHAPES[shape]
    study, s, screen = started(store, sgp_small)
    before = stored(store)
    msg = crafted(screen, change)
    if needle is None:
        assert s.record_moves(screen, msg).stored == 0
    else:
        with pytest.raises(StudyError) as e:
            s.record_moves(screen, msg)
        assert needle.replace("\\", "") in str(e.value) or needle in str(e.value), str(e.value)
        assert "malformed message from the browser" in str(e.value)
    assert stored(store) == before
    again = s.screen()
    assert isinstance(again, EpisodeScreen) and again.view_id == screen.view_id and again.state == screen.state
    assert s.record_moves(again, good(again)).stored == 1          # the board still takes the real next move


def test_replays_of_old_seqs_store_nothing_and_are_no_error(store, sgp_small):
    study, s, screen = started(store, sgp_small)
    first = good(screen)
    assert s.record_moves(screen, first).stored == 1
    now = stored(store)
    for _ in range(3):                                              # the same message again, and again
        assert s.record_moves(screen, first).stored == 0
    forged = copy.deepcopy(first)                                   # seq 0 again, another command: the first stays
    forged["moves"][0]["text"] = "move nothing nowhere"
    assert s.record_moves(screen, forged).stored == 0
    assert stored(store) == now


def test_another_views_id_stores_nothing(store, sgp_small):
    study, s, screen = started(store, sgp_small)
    _, other, other_screen = started(store, sgp_small, ext="C2")
    before = stored(store)
    # another participant's view, sent to this participant's session: not theirs
    assert s.record_moves(other_screen, good(other_screen)).stored == 0
    # this screen, but the message names the other view
    assert s.record_moves(screen, dict(good(screen), view_id=other_screen.view_id)).stored == 0
    assert stored(store) == before


def test_a_message_from_a_tab_that_lost_the_participant_is_refused(store, sgp_small):
    from rose_core.instrument.study_kind import open_participant_session
    from rose_core.instrument.tabs import Client

    study, s, screen = started(store, sgp_small)
    mine = open_participant_session(store, sgp_small, study.study_id, s.participant_id, client=Client("tab-A"))
    theirs = open_participant_session(store, sgp_small, study.study_id, s.participant_id, client=Client("tab-B"))
    screen = mine.screen()
    assert isinstance(screen, EpisodeScreen)
    with pytest.raises(OtherTabError):
        theirs.record_moves(screen, good(screen))
    assert stored(store) == []


def test_the_parser_names_the_field_on_non_objects():
    for junk in (None, "move red cube up", 3, [1, 2], True):
        with pytest.raises(StudyError, match="expected an object"):
            parse_board_message(junk, ("click",))
