"""The regret formula and the headline metrics on hand-worked episodes."""
import math

import pytest

from rose_core.benchmarks.sgp import (
    Episode, MetricsInputError, Replay, d_at, episodes_frame, heatmap, outcome_counts, regret, regret_curve,
    solved_rate, step_deviation, steps_frame, summary_table,
)

from .helpers import board

# red cube A1 -> C1 (blue sphere stays on D4): c1 = 2
EP = Episode.of("hand", board(red_cube="A1", blue_sphere="D4"), board(red_cube="C1", blue_sphere="D4"), 2, 0)


def play(texts, cap=5, solver="s", sample=0):
    r = Replay(EP, cap)
    for t in texts:
        r.send(t)
    return r.log(solver, sample)


# unsolved at the cap: out of bounds, effective, ineffective, illegal, effective
A = ["move red cube left", "move red cube right", "move red cube up", "hello", "move red cube down"]
# solved at step 4 after a detour: ineffective, effective, effective, effective
B = ["move red cube up", "move red cube right", "move red cube right", "move red cube down"]


def test_distances_and_outcomes_of_the_hand_worked_plays():
    a, b = play(A), play(B)
    assert [s.outcome for s in a.steps] == ["out_of_bounds", "effective", "ineffective", "illegal", "effective"]
    assert a.distances() == [2, 2, 1, 2, 2, 1] and not a.solved and a.end == "step_cap"
    assert b.distances() == [2, 3, 2, 1, 0] and b.solved and b.end == "solved"


def test_regret_is_d_minus_remaining_optimal_steps_unclamped_and_frozen_once_solved():
    a, b = play(A), play(B)
    # regret_t = d_t - (c1 - t)
    assert [regret(a, t) for t in range(6)] == [0, 1, 1, 3, 4, 4]
    assert [regret(b, t) for t in range(6)] == [0, 2, 2, 2, 2, 2]      # solved at 4: frozen at 4 - c1 = 2
    assert [d_at(b, t) for t in range(6)] == [2, 3, 2, 1, 0, 0]
    with pytest.raises(MetricsInputError):
        d_at(a, 6)
    opt = play(["move red cube right", "move red cube right"])
    assert [regret(opt, t) for t in range(6)] == [0] * 6


def test_headline_metrics_over_the_two_plays():
    a, b = play(A, sample=0), play(B, sample=1)
    ep = episodes_frame([a, b])
    assert list(ep["d_at_c1"]) == [1, 2]                 # iVISPAR's deviation: d at t = c1
    assert list(ep["min_d"]) == [1, 0]
    s = solved_rate(ep).iloc[0]
    assert (s["plays"], s["solved"], s["solved_pct"]) == (2, 1, 50.0)
    assert 0 < s["lo"] < 50 < s["hi"] < 100               # Wilson
    d = step_deviation(ep, n_boot=200).iloc[0]
    assert d["deviation"] == 1.5 and d["episodes"] == 1
    assert math.isnan(d["lo"])                           # one episode: no interval, not a fake one
    oc = outcome_counts(ep).iloc[0]
    assert (oc["effective"], oc["ineffective"], oc["out_of_bounds"], oc["illegal"], oc["occupied"]) == (2.5, 1, 0.5, 0.5, 0)   # A: 2 1 1 1 0, B: 3 1 0 0 0
    curve = regret_curve(steps_frame([a, b]))
    assert list(curve["regret"]) == [0, 1.5, 1.5, 2.5, 3, 3]
    assert list(curve["plays"]) == [2] * 6
    hm = heatmap(ep, "solved")
    assert hm.loc[2, 2] == 50.0
    t = summary_table([a, b], n_boot=200).iloc[0]
    assert t["solved_pct"] == 50.0 and t["deviation"] == 1.5


def test_bootstrap_interval_over_episodes_is_seeded_and_brackets_the_mean():
    import pandas as pd

    ep = pd.DataFrame({"solver": "s", "modality": "-", "episode_id": [f"e{i}" for i in range(40)],
                       "d_at_c1": [i % 5 for i in range(40)]})
    x = step_deviation(ep, n_boot=500, seed=1).iloc[0]
    y = step_deviation(ep, n_boot=500, seed=1).iloc[0]
    assert (x["lo"], x["hi"]) == (y["lo"], y["hi"])
    assert x["lo"] < x["deviation"] == 2.0 < x["hi"]


def test_incomplete_plays_and_mixed_caps_are_refused():
    with pytest.raises(MetricsInputError, match="incomplete"):
        episodes_frame([play(["move red cube up"])])
    with pytest.raises(MetricsInputError, match="step caps"):
        regret_curve(steps_frame([play(A), play(A[:3] + ["x"] * 3, cap=6, sample=1)]))
    with pytest.raises(MetricsInputError, match="twice"):
        episodes_frame([play(A), play(A)])


def test_a_solver_whose_plays_have_different_step_caps_is_refused_by_every_headline_figure():
    """Plays of one solver under caps 3 and 4 are not one solved rate: B solves at step 4, so the cap-3 play fails
    and the cap-4 play succeeds; pooled they would read as a plausible 50 %."""
    short, long_ = play(B[:3], cap=3), play(B, cap=4, sample=1)
    assert not short.solved and long_.solved
    with pytest.raises(MetricsInputError, match="step caps"):
        summary_table([short, long_], n_boot=50)
    with pytest.raises(MetricsInputError, match="step caps"):
        episodes_frame([short, long_])
    # other solvers may each have their own cap
    assert len(summary_table([short, play(B, cap=4, solver="t")], n_boot=50)) == 2


def test_under_the_ivispar_reader_outcomes_count_per_engine_move_and_unclassified_steps_apart():
    from rose_core.benchmarks.sgp.metrics import reader_figures

    r = Replay(EP, 4, reader="ivispar")
    for text in ("action: move red cube right to C1",      # a repeat of 1 (the digit): effective
                 "action: move yellow cube up",            # no such geom: unclassified
                 "move red cube right",                    # no 'action: move ': illegal
                 "action: move red cube up 2"):            # two moves, both away from the goal
        r.send(text)
    lg = r.log("m", meta={"protocol": {"reader": "ivispar"}})      # a model's replies, as run-model marks them
    assert [s.outcome for s in lg.steps] == ["effective", "unclassified", "illegal", "ineffective"]
    assert lg.steps[3].moves == ("ineffective", "ineffective") and lg.steps[3].d == 3
    row = episodes_frame([lg]).iloc[0]
    assert (row["effective"], row["ineffective"], row["illegal"], row["unclassified"]) == (1, 2, 1, 1)
    assert row["steps"] == 4            # every reply is one step, whatever it moved
    side = reader_figures([lg], {"hand": EP.start_board()}).iloc[0]
    # strict: "… right to C1", "yellow cube" (not on the board), "… up 2" are illegal; the bare command is not
    assert (side["illegal_strict"], side["illegal_ivispar"], side["unclassified_ivispar"]) == (3, 1, 1)
    # strict plays are unchanged: one class per step, nothing unclassified
    assert episodes_frame([play(A)]).iloc[0]["unclassified"] == 0
    # commands (no protocol object) go to the original's engine as they are: "hello" has no verb it knows
    side = reader_figures([play(A)], {"hand": EP.start_board()}).iloc[0]
    assert (side["illegal_strict"], side["illegal_ivispar"], side["unclassified_ivispar"]) == (1, 1, 0)
