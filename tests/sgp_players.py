"""Drive an EpisodeSession the way the board component does (the messages of its CONTRACT); the helpers use the
engine's own A* to know a shortest solution, and send only what the component sends (command strings)."""
from __future__ import annotations

from rose_core.benchmarks.sgp import astar_path, board_from_state
from rose_core.instrument.episode_session import EpisodeFeedback, EpisodeScreen, EpisodeSession, create_sgp_study
from rose_core.instrument.ids import SequentialIds
from rose_core.instrument.study_kind import open_participant_session
from rose_core.instrument.joining import join
from rose_core.instrument.screens import End
from rose_core.instrument.session import ParticipantSession


def open_sgp_session(store, ds, study, participant_id, clock=None) -> ParticipantSession:
    """The participant session of an SGP study, as the participant page opens every study (its kind: episodes)."""
    s = open_participant_session(store, ds, study.study_id, participant_id, **({"clock": clock} if clock else {}))
    assert s is not None and s.kind.benchmark == "sgp"
    return s


def create_sgp(store, ds, cfg, ids, clock):
    return create_sgp_study(store, ds, cfg, ids=ids, clock=clock)


def solution(screen: EpisodeScreen) -> list[str]:
    """A shortest sequence of commands from the board on screen to the goal."""
    item = screen.item
    path = astar_path(board_from_state(screen.state), board_from_state(item.goal_state))
    return [f"move {m.geom.color} {m.geom.shape} {m.direction}" for m in path]


def payload(screen: EpisodeScreen, texts: list[str], start: int | None = None, how: str = "click",
            give_up: int | None = None) -> dict:
    s = screen.ack_seq if start is None else start
    return {"view_id": screen.view_id, "give_up": give_up,
            "moves": [{"seq": s + i, "text": t, "input": how, "t": 1000.0 * (s + i + 1),
                       "active_ms": 900.0 * (s + i + 1)} for i, t in enumerate(texts)]}


def play(session: EpisodeSession, screen: EpisodeScreen, texts: list[str], how: str = "click", clock=None):
    """One move per message, as the component sends them (it waits for each board)."""
    rep = None
    for text in texts:
        if clock is not None:
            clock.advance(2.0)
        rep = session.record_moves(screen, payload(screen, [text], how=how))
        if rep.ended:
            return rep
        screen = session.screen()
    return rep


def solve(session: EpisodeSession, screen: EpisodeScreen, how: str = "click", clock=None):
    return play(session, screen, solution(screen), how, clock)


_BACK = {"up": "down", "down": "up", "left": "right", "right": "left"}


def detour(session: EpisodeSession, screen: EpisodeScreen, how: str = "click", clock=None):
    """A first move of a shortest solution, its way back, and a word no engine reads: then the board is the start
    again, three moves spent (effective, ineffective, illegal)."""
    first = solution(screen)[0]
    back = first.rsplit(" ", 1)[0] + " " + _BACK[first.rsplit(" ", 1)[1]]
    return play(session, screen, [first, back, "jump"], how, clock)


def run_to_end(session: EpisodeSession, solved=lambda screen: True, how: str = "click", max_screens: int = 200,
               clock=None, first=None):
    """Play every episode (solving it, or spending the cap on illegal moves), acknowledging feedback; `first`
    plays the opening moves of each episode before that."""
    kinds = []
    for _ in range(max_screens):
        screen = session.screen()
        if isinstance(screen, End):
            return kinds, screen
        if isinstance(screen, EpisodeFeedback):
            session.acknowledge_feedback(screen.view_id)
            continue
        assert isinstance(screen, EpisodeScreen), screen
        if first is not None and screen.ack_seq == 0:
            first(session, screen, how, clock)
            screen = session.screen()
        if solved(screen):
            solve(session, screen, how, clock)
        else:
            play(session, screen, ["hello"] * (screen.item.step_cap - screen.ack_seq), how, clock)
        kinds.append(screen.kind)
    raise AssertionError("no end reached")


def participant(store, ds, study, ext: str, clock) -> EpisodeSession:
    """A Prolific participant `ext` of `study`, past consent and instructions, on `clock`."""
    p = join(store, study, ext, "prolific", None, None, ids=SequentialIds(ext), clock=clock)
    s = EpisodeSession(store, ds, study, p.participant_id, clock=clock)
    s.consent()
    s.finish_instructions()
    return s
