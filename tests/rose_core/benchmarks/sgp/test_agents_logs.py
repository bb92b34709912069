"""Reference agents, and episode logs written elsewhere: replayed, checked, refused with file:line."""
import json

import pytest

from rose_core.benchmarks.sgp import SgpLogError, episodes_frame, read_logs, run_agent


def _strip_ms(lines):
    out = []
    for ln in lines:
        obj = json.loads(ln)
        for s in obj["steps"]:
            s.pop("ms")
        out.append(obj)
    return out


def test_optimal_agent_solves_everything_in_c1_steps(sgp_dataset, tmp_path):
    out = tmp_path / "opt.jsonl"
    assert run_agent("optimal", sgp_dataset, out) == len(sgp_dataset.episodes)
    logs = read_logs(out, sgp_dataset)
    ep = episodes_frame(logs)
    assert ep["solved"].all() and (ep["steps"] == ep["c1"]).all() and (ep["d_at_c1"] == 0).all()
    assert (ep["effective"] == ep["c1"]).all()


def test_random_agent_is_seeded_per_sample_and_only_makes_legal_moves(sgp_dataset, tmp_path):
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    run_agent("random", sgp_dataset, a, samples=3, seed=1)
    run_agent("random", sgp_dataset, b, samples=3, seed=1)
    run_agent("random", sgp_dataset, c, samples=3, seed=2)
    la, lb, lc = (_strip_ms(p.read_text().splitlines()) for p in (a, b, c))
    assert la == lb and la != lc
    logs = read_logs(a, sgp_dataset)
    assert len(logs) == 3 * len(sgp_dataset.episodes)
    assert {s.outcome for lg in logs for s in lg.steps} <= {"effective", "ineffective"}
    assert len({tuple(s.command for s in lg.steps) for lg in logs if lg.episode_id == logs[0].episode_id}) > 1
    assert all(lg.solved or len(lg.steps) == 20 for lg in logs)


def _write(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


def test_logs_written_elsewhere_are_replayed_and_their_claims_checked(sgp_dataset, tmp_path):
    ep = next(e for e in sgp_dataset.episodes.values() if e.c1 == 2)
    from rose_core.benchmarks.sgp import astar_path

    path = astar_path(ep.start_board(), ep.goal_board())
    cmds = [f"move {m.geom.color} {m.geom.shape} {m.direction}" for m in path]
    good = tmp_path / "good.jsonl"
    _write(good, [{"episode_id": ep.episode_id, "steps": cmds},
                  {"episode_id": ep.episode_id, "sample": 1, "solved": True,
                   "steps": [{"action": f"I think so.\naction: {c}", "outcome": "effective", "d": 2 - k - 1}
                             for k, c in enumerate(cmds)]}])
    logs = read_logs(good, sgp_dataset, default_solver="elsewhere")
    assert [lg.solved for lg in logs] == [True, True]
    assert logs[1].steps[0].command == cmds[0]


def test_bad_logs_are_refused_naming_file_and_line(sgp_dataset, tmp_path):
    ep = next(e for e in sgp_dataset.episodes.values() if e.c1 == 2)
    bad = tmp_path / "bad.jsonl"
    _write(bad, [
        "{not json",
        {"episode_id": "nope", "solver": "x", "steps": []},
        {"episode_id": ep.episode_id, "solver": "x", "steps": ["move red cube up"]},              # incomplete
        {"episode_id": ep.episode_id, "solver": "x", "step_cap": 1, "steps": [{"action": "hi", "outcome": "effective"}]},
        {"episode_id": ep.episode_id, "solver": "x", "dataset_hash": "0" * 16, "steps": []},
        {"episode_id": ep.episode_id, "solver": "y", "step_cap": 1, "steps": ["hi"]},
        {"episode_id": ep.episode_id, "solver": "y", "step_cap": 1, "steps": ["hi"]},              # duplicate
        {"episode_id": ep.episode_id, "solver": "z", "step_cap": 1, "steps": ["hi", "again"]},     # past the cap
        {"episode_id": ep.episode_id, "steps": []},                                                # no solver
    ])
    with pytest.raises(SgpLogError) as e:
        read_logs(bad, sgp_dataset)
    msg = str(e.value)
    for line, text in [(1, "not valid JSON"), (2, "not in this dataset"), (3, "incomplete episode"),
                       (4, "steps[0].outcome: the file says 'effective', replaying the actions gives 'illegal'"),
                       (5, "dataset_hash"), (7, "already on line 6"), (8, "already over"), (9, "solver")]:
        assert f"{bad}:{line}: " in msg and text in msg, (line, text)
    assert f"{bad}:6:" not in msg
