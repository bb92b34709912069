"""iVISPAR's episode logs imported: folders written as the original writes them (any object order, both float
styles) replay into episode logs `sgp score` reads; a log the replay does not reproduce is refused by step."""
import json
from pathlib import Path

import pytest

from rose_core.benchmarks.sgp import SgpDataset
from rose_core.benchmarks.sgp.ivispar_configs import import_configs
from rose_core.benchmarks.sgp.ivispar_logs import IvisparLogError, import_logs, read_episode_folder
from rose_core.benchmarks.sgp.logs import read_logs
from rose_core.benchmarks.sgp.metrics import episodes_frame

from .ivispar_episode_writer import write_episode

CONFIGS = Path(__file__).resolve().parents[3] / "fixtures" / "ivispar-configs"
FIRST = "SGP_ID_20241212_024852_b_4_g_4_c1_6_c2_0_i_1"


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    out = tmp_path_factory.mktemp("ivl") / "ds"
    import_configs(CONFIGS, out, workers=1)
    return SgpDataset.load(out)


def _cfg(cid: str = FIRST) -> dict:
    return json.loads((CONFIGS / f"config_{cid}.json").read_text())


def _strip(line: dict) -> dict:
    return {k: v for k, v in line.items() if k != "meta"}


@pytest.mark.parametrize("order,whole,reorder", [([0, 1, 2, 3], True, None), ([2, 0, 3, 1], True, None),
                                                ([3, 2, 1, 0], False, None), ([0, 1, 2, 3], True, 7)])
def test_the_shortest_sequence_replays_in_any_object_order(ds, tmp_path, order, whole, reorder):
    cfg = _cfg()
    folder = write_episode(tmp_path / "ep", cfg, cfg["shortest_move_sequence"], order=order, whole_floats=whole,
                           reorder_seed=reorder)
    orders = {tuple(o["color"] for o in rep["board_data"])
              for rep in json.loads((folder / "sim_message_log.json").read_text()).values()}
    assert (len(orders) == 1) == (reorder is None)       # reorder: Unity lists the objects anew at each step
    lg = read_episode_folder(folder, ds)
    assert (lg.episode_id, lg.solver, lg.solved, lg.step_cap, lg.modality) == (FIRST, "AIAgent", True, 20, "text")
    assert [s.outcome for s in lg.steps] == ["effective"] * 6 and lg.distances() == [6, 5, 4, 3, 2, 1, 0]
    assert lg.steps[0].action == f"action: {cfg['shortest_move_sequence'][1]}"
    assert lg.steps[-1].state == ds.episodes[FIRST].goal_board().to_state()


def test_orders_and_float_styles_import_to_the_same_lines(ds, tmp_path):
    cfg = _cfg()
    lines = []
    for k, (order, whole) in enumerate([([0, 1, 2, 3], True), ([1, 3, 0, 2], False)]):
        write_episode(tmp_path / f"run{k}" / "Episodes" / "episode_a", cfg, cfg["random_invalid_move_sequence"],
                      order=order, whole_floats=whole)
        import_logs([tmp_path / f"run{k}"], ds, tmp_path / f"out{k}.jsonl")
        lines.append([_strip(json.loads(x)) for x in (tmp_path / f"out{k}.jsonl").read_text().splitlines()])
    assert lines[0] == lines[1] and len(lines[0]) == 1


def test_an_experiment_folder_scores_beside_our_runs(ds, tmp_path):
    exp = tmp_path / "exp" / "Episodes"
    for k, name in enumerate(sorted(p.name for p in CONFIGS.glob("config_*.json"))):
        cfg = json.loads((CONFIGS / name).read_text())
        seq = cfg["shortest_move_sequence"] if k != 1 else cfg["random_invalid_move_sequence"]
        write_episode(exp / f"episode_{name}", cfg, seq, order=list(reversed(range(len(cfg["landmarks"])))))
    out = tmp_path / "imported.jsonl"
    logs = import_logs([tmp_path / "exp"], ds, out)
    assert len(logs) == 3
    again = read_logs(out, ds, reader="ivispar")
    assert [_strip(lg.to_json()) for lg in again] == [_strip(lg.to_json()) for lg in logs]
    assert again[0].meta == {"source": "iVISPAR episode log", "folder": logs[0].meta["folder"],
                             "protocol": {"reader": "ivispar"}}
    assert all(json.loads(x)["protocol"] == {"reader": "ivispar"} for x in out.read_text().splitlines())
    # two solved by their shortest sequences, one not: its random invalid sequence runs to the step cap of 20
    capped = [lg for lg in logs if not lg.solved]
    assert len(capped) == 1 and len(capped[0].steps) == 20
    frame = episodes_frame(logs)
    assert int(frame["solved"].sum()) == 2
    row = frame[~frame["solved"]].iloc[0]
    assert row["occupied"] + row["out_of_bounds"] > 0 and row["illegal"] == 0


def test_repeat_counts_and_unknown_commands_replay_as_the_engine_did(ds, tmp_path):
    cfg = _cfg()
    msgs = ["start", "move blue pyramid down 3", "move pink cube up", "No valid action found", "move green prism left two",
            "move orange cone up", "move yellow pyramid up"]
    lg = read_episode_folder(write_episode(tmp_path / "ep", cfg, msgs, max_game_length=6), ds)
    assert [s.outcome for s in lg.steps] == ["effective", "unclassified", "illegal", "effective", "effective",
                                             "effective"]
    assert lg.steps[0].moves == ("effective", "out_of_bounds", "out_of_bounds") and len(lg.steps) == 6


def _edit(folder: Path, fn) -> None:
    p = folder / "sim_message_log.json"
    log = json.loads(p.read_text())
    fn(log)
    p.write_text(json.dumps(log, indent=4))


def test_a_board_the_replay_does_not_reproduce_refuses_the_folder_by_step(ds, tmp_path):
    cfg = _cfg()
    folder = write_episode(tmp_path / "exp" / "ep", cfg, cfg["shortest_move_sequence"])
    _edit(folder, lambda log: log["step 3"]["board_data"][0].update(current_coordinate=[0.0, 0.0]))
    with pytest.raises(IvisparLogError, match=r"step 3"):
        import_logs([tmp_path / "exp"], ds, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists() and not list(tmp_path.glob(".out.jsonl*"))


@pytest.mark.parametrize("tamper,match", [
    (lambda f: _edit(f, lambda log: log["step 4"].update(game_done=True)), r"step 4: game_done True"),
    (lambda f: _edit(f, lambda log: log["step 2"]["board_state"].reverse()), r"step 2\.board_state\[0\]"),
    (lambda f: _edit(f, lambda log: log["step 2"]["Actions"][0]["valididy"].__setitem__(0, "Destination occupied")),
     r"step 2: the engine's verdicts"),
    (lambda f: _edit(f, lambda log: log.pop("step 7")), r"agent_message_log.txt: 7 lines"),
    (lambda f: (f / "agent_message_log.txt").write_text(
        (f / "agent_message_log.txt").read_text().replace("down", "up", 1)), r"step 2: Actions' prompts"),
    (lambda f: _edit(f, lambda log: log["step 0"]["board_data"][1].update(color="pink")), r"step 0\.board_data\[1\]"),
])
def test_refusals_name_the_file_and_step(ds, tmp_path, tamper, match):
    cfg = _cfg()
    folder = write_episode(tmp_path / "ep", cfg, cfg["shortest_move_sequence"])
    tamper(folder)
    with pytest.raises(IvisparLogError, match=match):
        read_episode_folder(folder, ds)


def test_a_message_of_several_commands_or_an_unreadable_log_is_refused(ds, tmp_path):
    cfg = _cfg()
    folder = write_episode(tmp_path / "ep", cfg, ["start", "move blue pyramid down, move green prism left"],
                           max_game_length=1)
    with pytest.raises(IvisparLogError, match=r"step 2: message 1 sends 2 commands"):
        read_episode_folder(folder, ds)
    (folder / "agent_message_log.txt").write_bytes(b"start\n\xff")
    with pytest.raises(IvisparLogError, match=r"agent_message_log.txt: not UTF-8"):
        read_episode_folder(folder, ds)


def test_an_unknown_config_id_or_a_short_run_is_refused(ds, tmp_path):
    cfg = {**_cfg(), "config_instance_id": "SGP_ID_other_b_4_g_4_c1_6_c2_0_i_9"}
    folder = write_episode(tmp_path / "ep", cfg, _cfg()["shortest_move_sequence"])
    with pytest.raises(IvisparLogError, match="is not an episode of"):
        read_episode_folder(folder, ds)
    cfg = _cfg()
    folder = write_episode(tmp_path / "short", cfg, cfg["shortest_move_sequence"][:4], max_game_length=3)
    lg = read_episode_folder(folder, ds)              # metadata.json: max_game_length 3, so complete at 3
    assert (lg.step_cap, len(lg.steps), lg.solved) == (3, 3, False)
    with pytest.raises(IvisparLogError, match="max_game_length is 3, --step-cap says 20"):
        read_episode_folder(folder, ds, step_cap=20)
    (folder / "metadata.json").unlink()
    with pytest.raises(IvisparLogError, match=r"ends after 3 moves, neither solved nor at the step cap \(20\)"):
        read_episode_folder(folder, ds, solver="gpt")
