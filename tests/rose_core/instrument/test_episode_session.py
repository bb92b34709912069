"""SGP studies: the episode session against a real SQLite file and a real (small) SGP build."""
import json

import pytest

from rose_core.instrument.config import StudyConfig, StudyError
from rose_core.instrument.episode_session import (
    EpisodeFeedback, EpisodeScreen, EpisodeSession, create_sgp_study, parse_board_message, pick_episode,
    plan_sgp_practice, sgp_coverage, sgp_pool,
)
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.policy import default_tiebreak
from rose_core.instrument.session import Consent, End, Instructions, create_study, join
from tests.sgp_players import payload, play, run_to_end, solution, solve


def cfg(**kw) -> StudyConfig:
    base = dict(name="sgp pilot", benchmark="sgp", items_per_participant=3, target_per_instance=2, practice_items=2,
                practice_max_attempts=2, practice_pass_fraction=0.5, attention_every=0, seed=3)
    base.update(kw)
    return StudyConfig(**base)


_IDS = SequentialIds("sgp")


def make(store, ds, **kw):
    return create_sgp_study(store, ds, cfg(**kw), ids=_IDS, clock=FakeClock())


def session(store, ds, study, ext="P1", clock=None, intro=True) -> EpisodeSession:
    clock = clock or FakeClock()
    p = join(store, study, ext, "prolific", "S", "X", ids=SequentialIds(ext), clock=clock)
    s = EpisodeSession(store, ds, study, p.participant_id, clock=clock)
    if intro:
        s.consent()
        s.finish_instructions()
    return s


def steps(store, view_id=None):
    sql = "SELECT * FROM episode_steps" + (" WHERE view_id = ?" if view_id else "") + " ORDER BY view_id, seq"
    return store.query(sql, (view_id,) if view_id else ())


def test_sgp_options_are_checked_and_refused_with_reasons():
    text = "; ".join(cfg(attention_every=10, sgp_modality="text", sgp_input="click", step_cap=0,
                         sgp_goal_view="popup", sgp_c1=["x"]).problems())
    for needle in ("attention_every: SGP studies have no attention checks",
                   "sgp_input: a text-only board has nothing to click", "step_cap: expected a whole number >= 1",
                   "sgp_goal_view: expected one of side_by_side, toggle", "sgp_c1: expected a list of whole numbers"):
        assert needle in text
    assert cfg(step_cap=None).problems() == []                 # no cap is a choice, recorded
    assert StudyConfig.from_json(cfg(step_cap=None).to_json()).step_cap is None
    assert StudyConfig(name="x").benchmark == "rose"           # studies stored before SGP read as ROSE


def test_create_refuses_the_wrong_kind_and_stores_nothing(store, sgp_small, small_dataset):
    with pytest.raises(StudyError, match="create_study makes ROSE studies"):
        create_study(store, small_dataset, cfg())
    with pytest.raises(StudyError, match="create_sgp_study makes SGP studies"):
        create_sgp_study(store, sgp_small, StudyConfig(name="rose one"))
    with pytest.raises(StudyError, match="select no episode"):
        make(store, sgp_small, sgp_c1=[99])
    assert store.query("SELECT count(*) AS n FROM studies")[0]["n"] == 0


def test_practice_is_the_easiest_episodes_fresh_per_attempt_and_outside_the_pool(store, sgp_small):
    study = make(store, sgp_small, practice_items=2, practice_max_attempts=3)
    rounds = study.config.practice_rounds
    flat = [e for r in rounds for e in r]
    assert len(rounds) == 3 and all(len(r) == 2 for r in rounds) and len(set(flat)) == 6
    assert not set(flat) & set(sgp_pool(sgp_small, study.config))
    easiest = sorted((len(e.geoms), e.c1) for e in sgp_small.episodes.values())[:6]
    assert sorted((len(sgp_small.episodes[e].geoms), sgp_small.episodes[e].c1) for e in flat) == easiest
    assert study.dataset_hash == sgp_small.dataset_hash
    assert plan_sgp_practice(sgp_small, cfg(practice_items=0)) == []


def test_a_whole_study_from_consent_to_the_end(store, sgp_small):
    study = make(store, sgp_small, completion_code="C-1")
    clock = FakeClock()
    s = session(store, sgp_small, study, clock=clock, intro=False)
    assert s.screen() == Consent(0)
    s.consent()
    assert s.screen() == Instructions(True)
    s.finish_instructions()
    first = s.screen()
    assert isinstance(first, EpisodeScreen) and first.kind == "practice" and first.progress == "Practice puzzle 1 of 2"
    assert first.state == first.item.start() and first.ack_seq == 0
    rep = solve(s, first, clock=clock)
    assert rep.ended
    fb = s.screen()
    assert isinstance(fb, EpisodeFeedback) and fb.solved and fb.moves == fb.shortest == first.item.c1
    assert fb.outcomes == {"effective": first.item.c1} and fb.outcome == "next"
    assert s.screen() == fb                                   # shown until Continue, also after a reload
    s.acknowledge_feedback(fb.view_id)
    kinds, end = run_to_end(s)
    assert kinds == ["practice", "main", "main", "main"]
    assert isinstance(end, End) and end.reason == "completed" and end.completion_code == "C-1"
    res = store.query("SELECT kind, passed, ended, steps, modality, step_cap FROM episode_results ORDER BY result_id")
    assert [(r["kind"], r["passed"], r["ended"]) for r in res] == [("practice", 1, "solved")] * 2 + [("main", 1, "solved")] * 3
    assert all(r["modality"] == "2d" and r["step_cap"] == 20 for r in res)
    # every move stored once, numbered 0..n-1 per episode, d_t falling by one to 0
    by_view = {}
    for r in steps(store):
        by_view.setdefault(r["view_id"], []).append(r)
    assert len(by_view) == 5
    for rows in by_view.values():
        assert [r["seq"] for r in rows] == list(range(len(rows)))
        assert [r["distance"] for r in rows] == list(range(len(rows) - 1, -1, -1))
        assert rows[-1]["ended"] == "solved" and all(r["ended"] is None for r in rows[:-1])
        assert all(r["command"].startswith("move ") and r["outcome"] == "effective" for r in rows)


def test_moves_are_stored_once_by_seq_and_a_gap_is_refused(store, sgp_small):
    study = make(store, sgp_small, practice_items=0)
    s = session(store, sgp_small, study)
    screen = s.screen()
    first = solution(screen)[0]
    assert s.record_moves(screen, payload(screen, [first])).stored == 1
    assert s.record_moves(screen, payload(screen, [first], start=0)).stored == 0          # the same message again
    with pytest.raises(StudyError, match="move 3 arrived before move 1"):
        s.record_moves(screen, payload(screen, ["move red cube up"], start=3))
    assert [r["seq"] for r in steps(store)] == [0]                                       # nothing half-stored
    with pytest.raises(StudyError, match="input: expected one of click, keyboard"):
        s.record_moves(screen, payload(screen, ["move red cube up"], start=1, how="typed"))
    assert s.record_moves(screen, {"view_id": "other", "moves": []}).stored == 0


def test_reload_resumes_at_the_current_board(store, sgp_small):
    study = make(store, sgp_small, practice_items=0)
    clock = FakeClock()
    s = session(store, sgp_small, study, clock=clock)
    screen = s.screen()
    path = solution(screen)
    play(s, screen, path[:1] + ["move nothing up"], clock=clock)
    again = EpisodeSession(store, sgp_small, study, s.participant_id, clock=clock).screen()   # a new page load
    assert isinstance(again, EpisodeScreen) and again.view_id == screen.view_id
    assert again.ack_seq == 2 and again.last_command == "move nothing up"
    want = json.loads(steps(store)[-1]["state"])
    assert again.state == want != screen.item.start()
    assert again.active_ms == 1800.0 and again.first_action_ms == 1000.0
    assert [st.outcome for st in again.steps] == ["effective", "illegal"]
    solve(s, again, clock=clock)
    assert store.query("SELECT passed, steps FROM episode_results")[0] == {"passed": 1, "steps": 2 + len(path) - 1}


def test_the_step_cap_ends_an_episode_and_invalid_moves_count(store, sgp_small):
    study = make(store, sgp_small, practice_items=0, step_cap=3)
    clock = FakeClock()
    s = session(store, sgp_small, study, clock=clock)
    screen = s.screen()
    clock.advance(5)
    rep = play(s, screen, ["move red cube sideways", "jump", "move red cube sideways", "never sent"], clock=clock)
    assert rep.ended and rep.stored == 1
    r = store.query("SELECT * FROM episode_results")[0]
    assert (r["passed"], r["ended"], r["steps"], r["failure"], r["valid"]) == (0, "step_cap", 3, "step_cap", 0)
    assert r["total_ms"] == pytest.approx(11_000.0)     # server clock: shown -> the move that ended it
    assert len(steps(store)) == 3
    # a late duplicate of the episode's moves stores nothing
    assert s.record_moves(screen, payload(screen, ["move red cube up"], start=3)).stored == 0
    assert isinstance(s.screen(), EpisodeScreen) and s.screen().view_id != screen.view_id


def test_no_cap_allows_giving_up_and_records_it(store, sgp_small):
    study = make(store, sgp_small, practice_items=0, step_cap=None)
    s = session(store, sgp_small, study)
    screen = s.screen()
    assert screen.can_give_up
    play(s, screen, ["move red cube sideways"] * 25)
    screen = s.screen()
    assert screen.ack_seq == 25                        # never ended by a count
    rep = s.record_moves(screen, payload(screen, [], give_up=25))
    assert rep.ended
    r = store.query("SELECT ended, failure, step_cap, steps, parsed FROM episode_results")[0]
    assert (r["ended"], r["failure"], r["step_cap"], r["steps"]) == ("failed", "given_up", None, 25)
    assert json.loads(r["parsed"])["given_up"] is True
    capped = make(store, sgp_small, practice_items=0, name="capped")
    s2 = session(store, sgp_small, capped, ext="P2")
    sc = s2.screen()
    assert not sc.can_give_up
    with pytest.raises(StudyError, match="give_up: this study has a step cap"):
        s2.record_moves(sc, payload(sc, [], give_up=0))


def test_failed_practice_retries_on_fresh_episodes_then_screens_out(store, sgp_small):
    study = make(store, sgp_small, practice_items=2, practice_max_attempts=2, practice_pass_fraction=1.0,
                 step_cap=2)
    s = session(store, sgp_small, study)
    seen, outcomes = [], []
    end = None
    for _ in range(20):
        screen = s.screen()
        if isinstance(screen, End):
            end = screen
            break
        if isinstance(screen, EpisodeFeedback):
            outcomes.append(screen.outcome)
            s.acknowledge_feedback(screen.view_id)
            continue
        seen.append(screen.item.item_id)
        play(s, screen, ["hello", "hello"])
    assert end is not None and end.reason == "screened_out"
    assert outcomes == ["next", "retry", "next", "screened_out"]
    assert len(seen) == 4 and len(set(seen)) == 4


def test_typed_studies_take_typed_commands_scored_as_a_models(store, sgp_small):
    study = make(store, sgp_small, practice_items=0, sgp_input="typed", sgp_modality="text")
    s = session(store, sgp_small, study)
    screen = s.screen()
    texts = [f"I will do this: action: {t.upper()}" for t in solution(screen)]
    rep = play(s, screen, texts, how="typed")
    assert rep.ended
    r = store.query("SELECT passed, response, protocol, modality FROM episode_results")[0]
    assert r["passed"] == 1 and r["modality"] == "text" and r["response"] == "\n".join(texts)
    assert r["protocol"] == "; ".join(solution(screen))


def test_least_assigned_first_target_never_exceeded_and_counterbalanced(store, sgp_small):
    study = make(store, sgp_small, practice_items=0, items_per_participant=2, target_per_instance=1)
    pool = sgp_pool(sgp_small, study.config)
    for k in range(len(pool) // 2):
        run_to_end(session(store, sgp_small, study, ext=f"P{k}"))
    counts = {r["episode_id"]: r["n"] for r in store.query(
        "SELECT episode_id, count(*) AS n FROM episode_results WHERE kind = 'main' GROUP BY episode_id")}
    assert set(counts.values()) == {1} and len(counts) == 2 * (len(pool) // 2)
    cov = sgp_coverage(store, sgp_small, study)
    assert cov["pool"] == len(pool) and cov["answers"] == len(counts) and cov["target"] == 1
    c = study.config
    levels = sorted({sgp_small.episodes[e].c1 for e in pool})
    firsts = [sgp_small.episodes[pick_episode(pool, sgp_small, c, {}, set(), rank, 0, default_tiebreak("x"))].c1
              for rank in range(len(levels))]
    assert firsts == levels                                  # the first episode's c1 rotates with arrival rank
    assert pick_episode(pool, sgp_small, c, {e: 1 for e in pool}, set(), 0, 0, default_tiebreak("x")) is None


@pytest.mark.parametrize("bad, needle", [
    ("nope", "expected an object"),
    ({"view_id": "v", "moves": [{"seq": 0, "text": "x" * 201, "input": "click"}]}, "at most 200 characters"),
    ({"view_id": "v", "moves": [{"seq": 1, "text": "a", "input": "click"}, {"seq": 0, "text": "b", "input": "click"}]},
     "increasing sequence numbers"),
    ({"view_id": "v", "moves": [{"seq": -1, "text": "a", "input": "click"}]}, "moves[0].seq"),
    ({"view_id": "v", "moves": [{"seq": 0, "text": "a", "input": "click", "t": float("nan")}]}, "moves[0].t"),
])
def test_malformed_board_messages_are_refused(bad, needle):
    with pytest.raises(StudyError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        parse_board_message(bad, ("click", "keyboard"))
