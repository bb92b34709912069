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
from rose_core.instrument.joining import join
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.screens import Consent, End, Instructions
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
    with pytest.raises(StudyError, match="move 3 arrived where move 1 was due"):
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


@pytest.mark.parametrize("click, needle", [
    ({"from": "A1", "to": "B1", "x": 1}, "expected an object with from, to, x and y"),
    ({"from": "A1", "to": "B1000", "x": 1, "y": 2}, "cell names such as B3"),
    ({"from": "A1", "to": "B1", "x": -4, "y": 2}, "image pixels"),
    ({"from": "A1", "to": "B1", "x": True, "y": 2}, "image pixels"),
])
def test_malformed_clicks_are_refused(click, needle):
    with pytest.raises(StudyError, match=needle):
        parse_board_message({"view_id": "v", "moves": [{"seq": 0, "text": "a", "input": "click", "click": click}]},
                            ("click", "keyboard"))
    with pytest.raises(StudyError, match="only a click move has a click"):
        parse_board_message({"view_id": "v", "moves": [{"seq": 0, "text": "a", "input": "keyboard",
                                                        "click": {"from": "A1", "to": "B1", "x": 1, "y": 2}}]},
                            ("click", "keyboard"))


def test_the_human_condition_options_are_checked():
    text = "; ".join(cfg(sgp_input="typed", sgp_modality="text", sgp_piece_coordinates=True).problems()
                     + cfg(sgp_several_moves=True).problems() + cfg(sgp_piece_coordinates="yes").problems())
    for needle in ("sgp_piece_coordinates: typed studies have no piece buttons",
                   "sgp_several_moves: only typed commands can hold several moves",
                   "sgp_piece_coordinates: expected true or false, got 'yes'"):
        assert needle in text
    c = cfg(sgp_input="typed", sgp_several_moves=True)
    assert c.problems() == [] and StudyConfig.from_json(c.to_json()).sgp_several_moves is True
    assert (cfg().sgp_piece_coordinates, cfg().sgp_several_moves) == (False, False)   # the models' condition


def test_the_move_help_says_what_the_page_does():
    from rose_core.instrument.config import sgp_move_help
    two = sgp_move_help(cfg(sgp_input="typed"))
    assert "move red square up" in two and "square, triangle, circle, hexagon" in two and "cube" not in two
    assert "comma" not in two
    several = sgp_move_help(cfg(sgp_input="typed", sgp_modality="3d", sgp_several_moves=True))
    assert "move red cube up, move red cube left" in several and "separated by commas" in several
    assert "highlighted cells" in sgp_move_help(cfg()) and "arrow key" in sgp_move_help(cfg(sgp_input="keyboard"))


def test_the_board_as_text_goes_to_the_browser_only_in_the_text_modality(store, sgp_small):
    from rose_core.instrument.episode_session import board_component_data
    for modality, coords, has_text in (("3d", False, False), ("2d", False, False), ("2d", True, True),
                                       ("text", False, True)):
        study = make(store, sgp_small, practice_items=0, sgp_modality=modality,
                     sgp_input="typed" if modality == "text" else "click", sgp_piece_coordinates=coords)
        screen = session(store, sgp_small, study, ext=f"B{modality}{coords}").screen()
        d = board_component_data(screen, "u", "g", (10, 10), study.config.sgp_input, "side_by_side",
                                 piece_coordinates=coords)
        assert (d["text"] is not None, d["goal_text"] is not None) == (has_text, has_text)
        assert d["piece_coordinates"] is coords
        assert d["words"]["shapes"][0] == ("square" if modality == "2d" else "cube")
        assert len(d["cells"]) == (0 if modality == "text" else screen.item.board_size ** 2)


def _click_at(screen, text: str, frm: str, to: str) -> dict:
    poly = next(c["points"] for c in screen.item.hit_cells(screen.state) if c["coord"] == to)
    xs, ys = zip(*poly)
    return {"from": frm, "to": to, "x": sum(xs) / len(xs), "y": sum(ys) / len(ys)}


@pytest.mark.parametrize("modality", ["2d", "3d"])
def test_board_clicks_are_checked_against_the_board_before_a_move_is_stored(store, sgp_small, modality):
    study = make(store, sgp_small, practice_items=0, sgp_modality=modality)
    s = session(store, sgp_small, study, ext=f"C{modality}")
    screen = s.screen()
    first = solution(screen)[0]
    _, color, shape, direction = first.split()
    geoms = {(g["color"], g["shape"]): g["coord"] for g in screen.item.geoms(screen.state)}
    frm = geoms[(color, shape)]
    dc, dr = {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}[direction]
    to = f"{chr(ord(frm[0]) + dc)}{int(frm[1:]) + dr}"
    text = next(f"move {g['command_name']} {direction}" for g in screen.item.geoms(screen.state)
                if (g["color"], g["shape"]) == (color, shape))
    msg = payload(screen, [text])
    other = next(c for c in geoms.values() if c != frm)
    for lie in ({**_click_at(screen, text, frm, to), "from": other},          # another piece's cell
                {**_click_at(screen, text, frm, to), "x": 1.0, "y": 1.0}):   # a click off the cell it names
        msg["moves"][0]["click"] = lie
        with pytest.raises(StudyError, match="move 0: "):
            s.record_moves(screen, msg)
    assert steps(store, screen.view_id) == []                                # nothing stored
    msg["moves"][0]["click"] = _click_at(screen, text, frm, to)
    assert s.record_moves(screen, msg).stored == 1
    row = steps(store, screen.view_id)[0]
    assert (row["command"], row["outcome"], row["input"]) == (text, "effective", "click")


def test_several_typed_moves_are_each_a_step_and_moves_after_the_goal_are_refused(store, sgp_small):
    study = make(store, sgp_small, practice_items=0, sgp_input="typed", sgp_several_moves=True, step_cap=20)
    s = session(store, sgp_small, study)
    screen = s.screen()
    path = solution(screen)
    assert len(path) >= 2
    # the first move and an unreadable one (a trailing comma is no move): two steps from one submission
    rep = s.record_moves(screen, payload(screen, [f"{path[0]}, move red nothing up,"], how="typed"))
    assert (rep.stored, rep.ended, rep.refused) == (2, False, ())
    rows = steps(store, screen.view_id)
    assert [(r["seq"], r["command"], r["outcome"]) for r in rows] == [(0, path[0], "effective"),
                                                                      (1, "move red nothing up", "illegal")]
    assert s.record_moves(screen, payload(screen, [f"{path[0]}, move red nothing up,"], how="typed", start=0)
                          ).stored == 0                                     # the same message again: nothing
    screen = s.screen()
    assert screen.ack_seq == 2
    # a crafted message whose next seq falls inside the line it just stored (2 moves at seq 2, then seq 3): refused
    # whole, nothing stored, never the second line silently dropped
    crafted = {"view_id": screen.view_id, "moves": [
        {"seq": 2, "text": "move red nothing up, move red nothing down", "input": "typed", "t": 1.0},
        {"seq": 3, "text": "move red nothing left", "input": "typed", "t": 2.0}]}
    with pytest.raises(StudyError, match="move 3 arrived where move 4 was due"):
        s.record_moves(screen, crafted)
    assert len(steps(store, screen.view_id)) == 2
    rest = path[1:] + ["move red cube up", "move blue sphere left"]
    rep = s.record_moves(screen, payload(screen, [", ".join(rest)], how="typed"))
    assert rep.ended and rep.end == "solved" and rep.refused == ("move red cube up", "move blue sphere left")
    assert "was solved before your last 2 typed moves" in rep.refused_note
    assert "move red cube up, move blue sphere left" in rep.refused_note
    r = store.query("SELECT passed, steps FROM episode_results")[0]
    assert (r["passed"], r["steps"]) == (1, len(path) + 1)
    assert [x["seq"] for x in steps(store, screen.view_id)] == list(range(len(path) + 1))


def test_several_typed_moves_stop_at_the_cap(store, sgp_small):
    study = make(store, sgp_small, practice_items=0, sgp_input="typed", sgp_several_moves=True, step_cap=3)
    s = session(store, sgp_small, study)
    screen = s.screen()
    rep = s.record_moves(screen, payload(screen, ["hello, hi, move red cube sideways, again, more"], how="typed"))
    assert (rep.stored, rep.ended, rep.end, rep.refused) == (3, True, "step_cap", ("again", "more"))
    assert "reached its move limit" in rep.refused_note
    big = make(store, sgp_small, practice_items=0, sgp_input="typed", sgp_several_moves=True, step_cap=None)
    sb = session(store, sgp_small, big, ext="P3")
    sc = sb.screen()
    with pytest.raises(StudyError, match="at most 50 moves in one message"):
        sb.record_moves(sc, payload(sc, [", ".join(["hi"] * 51)], how="typed"))
    assert steps(store, sc.view_id) == []
    r = store.query("SELECT passed, steps, ended FROM episode_results")[0]
    assert (r["passed"], r["steps"], r["ended"]) == (0, 3, "step_cap")
    one = make(store, sgp_small, practice_items=0, sgp_input="typed", step_cap=3)   # without the option: one move
    s1 = session(store, sgp_small, one, ext="P2")
    sc = s1.screen()
    assert s1.record_moves(sc, payload(sc, ["hello, hi"], how="typed")).stored == 1
    assert steps(store, sc.view_id)[0]["command"] == "hello, hi"
