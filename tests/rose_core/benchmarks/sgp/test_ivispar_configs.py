"""iVISPAR's config files in and out: the three shipped configs imported and replayed, round trips, refusals."""
import json
import shutil
from pathlib import Path

import pytest

from rose_core.benchmarks.sgp import SgpDataset, build_sgp_dataset
from rose_core.benchmarks.sgp.generate import BuildParams
from rose_core.benchmarks.sgp.ivispar_configs import (
    ConfigError, export_configs, import_configs, read_config, read_configs,
)
from rose_core.benchmarks.sgp.play import Replay
from rose_core.benchmarks.sgp.search import astar_distance, interference

CONFIGS = Path(__file__).resolve().parents[3] / "fixtures" / "ivispar-configs"
FIRST = "config_SGP_ID_20241212_024852_b_4_g_4_c1_6_c2_0_i_1.json"


def _raw(name: str = FIRST) -> dict:
    return json.loads((CONFIGS / name).read_text())


def _write(folder: Path, cfg: dict, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / (name or f"config_{cfg['config_instance_id']}.json")
    f.write_text(json.dumps(cfg, indent=4))
    return f


def test_the_three_shipped_configs_import_and_replay(tmp_path):
    m = import_configs(CONFIGS, tmp_path / "ds", workers=1)
    assert m["composition"]["episodes"] == 3 and sorted(m["params"]["configs"]) == sorted(
        p.name for p in CONFIGS.glob("config_*.json"))
    ds = SgpDataset.load(tmp_path / "ds", verify_images=True)
    for ep in ds.episodes.values():
        raw = _raw(f"config_{ep.episode_id}.json")
        start, goal = ep.start_board(), ep.goal_board()
        assert (ep.c1, ep.c2) == (raw["complexity_c1"], raw["complexity_c2"])
        assert (astar_distance(start, goal), interference(start, goal)) == (ep.c1, ep.c2)
        # the file's own shortest sequence, played through the engine every solver uses
        r = Replay(ep)
        moves = [m for m in raw["shortest_move_sequence"] if m not in ("start", "done")]
        outcomes = [r.send(m).outcome for m in moves]
        assert outcomes == ["effective"] * ep.c1 and r.d == 0
        assert len(ep.images) == 4
    # [x, z] is (column, row), 0-based: the first file's yellow pyramid starts on [3, 0] = D1, ends on [3, 1] = D2
    first = ds.episodes["SGP_ID_20241212_024852_b_4_g_4_c1_6_c2_0_i_1"]
    yp = next(g for g in first.geoms if (g.color, g.shape) == ("yellow", "pyramid"))
    assert (yp.start, yp.goal) == ("D1", "D2")
    assert {(g.color, g.shape) for g in first.geoms} == {("yellow", "pyramid"), ("blue", "pyramid"),
                                                           ("orange", "cone"), ("green", "prism")}


def test_import_export_import_gives_the_same_episodes(tmp_path):
    import_configs(CONFIGS, tmp_path / "a", workers=1)
    files = export_configs(SgpDataset.load(tmp_path / "a"), tmp_path / "configs")
    assert [f.name for f in files] == sorted(p.name for p in CONFIGS.glob("config_*.json"))
    import_configs(tmp_path / "configs", tmp_path / "b", workers=1)
    assert (tmp_path / "a" / "episodes.jsonl").read_bytes() == (tmp_path / "b" / "episodes.jsonl").read_bytes()
    # the written file holds what the original wrote, plus use_rendering (without it the engine hides the geoms)
    again, orig = json.loads(files[0].read_text()), _raw(files[0].name)
    assert again.pop("use_rendering") is True and "use_rendering" not in orig
    assert again == orig


def test_a_generated_dataset_exports_to_configs_that_import_back(tmp_path):
    build_sgp_dataset(tmp_path / "gen", BuildParams(seed=4, geoms=(2, 5), c1=(3, 6), per_cell=1), workers=1)
    gen = SgpDataset.load(tmp_path / "gen")
    files = export_configs(gen, tmp_path / "configs")
    assert [f.name for f in files][0] == f"config_ROSE_{gen.dataset_hash}_b_4_g_2_c1_3_c2_0_i_1.json"
    cfg = json.loads(files[0].read_text())
    assert list(cfg)[:7] == ["config_instance_id", "experiment_type", "complexity_c1", "complexity_c2", "grid_size",
                             "landmarks", "use_rendering"]
    assert len(cfg["random_valid_move_sequence"]) == len(cfg["random_invalid_move_sequence"]) == 101
    episodes, _ = read_configs(tmp_path / "configs")     # c1, c2 recomputed, our A* path replayed, random legal
    by_board = {(e.start_state()["geoms"].__repr__(), e.c1) for e in gen.episodes.values()}
    assert {(e.start_state()["geoms"].__repr__(), e.c1) for e in episodes} == by_board
    # seeded: the same dataset gives the same files
    again = export_configs(gen, tmp_path / "configs2")
    assert [f.read_bytes() for f in files] == [f.read_bytes() for f in again]


def test_export_refuses_a_folder_that_is_not_empty(tmp_path):
    import_configs(CONFIGS, tmp_path / "ds", workers=1)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not empty"):
        export_configs(SgpDataset.load(tmp_path / "ds"), tmp_path / "configs")
    assert [p.name for p in (tmp_path / "configs").iterdir()] == ["notes.txt"]


def _moved(cfg: dict, k: int, text: str) -> dict:
    cfg["shortest_move_sequence"][k] = text
    return cfg


def _set(cfg: dict, path: tuple, value) -> dict:
    obj = cfg
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value
    return cfg


@pytest.mark.parametrize("change, expected", [
    (lambda c: _set(c, ("complexity_c1",), 7), "complexity_c1: expected 6 (recomputed: A* distance 6, Manhattan sum 6), found 7"),
    (lambda c: _set(c, ("complexity_c2",), 1), "complexity_c2: expected 0"),
    (lambda c: _moved(c, 2, "move blue pyramid right"), "shortest_move_sequence[2]: expected a legal move, found "
                                                        "'move blue pyramid right' (onto yellow pyramid)"),
    (lambda c: _moved(c, 1, "move yellow pyramid right"), "shortest_move_sequence[1]: expected a legal move, found "
                                                          "'move yellow pyramid right' (off the board)"),
    (lambda c: _moved(c, 6, "move yellow pyramid down"), "shortest_move_sequence: expected 6 legal moves reaching "
                                                         "the goal, found 6 moves ending off the goal"),
    (lambda c: _moved(c, 1, "move red cube down"), "shortest_move_sequence[1]: 'move red cube down' names no geom"),
    (lambda c: _set(c, ("shortest_move_sequence",), c["shortest_move_sequence"][:-2] + ["done"]),
     "shortest_move_sequence: expected 6 legal moves reaching the goal, found 5 moves ending off the goal"),
    (lambda c: _set(c, ("random_valid_move_sequence", 1), "move yellow pyramid right"),
     "random_valid_move_sequence[1]: expected a legal move"),
    (lambda c: _set(c, ("landmarks", 2, "body"), "tile"), "landmarks[2].body: expected one of cube, pyramid, sphere, "
                                                        "cylinder, cone, prism, found 'tile' ('tile' is the original's"),
    (lambda c: _set(c, ("landmarks", 2, "color"), "#ff8800"), "(hex colours are not names a command can say)"),
    (lambda c: _set(c, ("landmarks", 0, "start_coordinate"), [4, 0]), "landmarks[0].start_coordinate: expected x and "
                                                                     "z in 0..3 (grid_size 4), found [4, 0]"),
    (lambda c: _set(c, ("landmarks", 0, "goal_coordinate"), [3, 0]), "landmarks[1].goal_coordinate: expected a free "
                                                                    "cell, found [3, 0]"),
    (lambda c: _set(c, ("landmarks", 1, "color"), "yellow"), "landmarks[1]: expected a colour-body pair no other geom "
                                                            "has, found yellow pyramid twice"),
    (lambda c: _set(c, ("landmarks", 1, "geom_nr"), 1), "landmarks[1].geom_nr: expected a positive integer"),
    (lambda c: _set(c, ("experiment_type",), "SlidingTilePuzzle"), "experiment_type: expected 'SlidingGeomPuzzle'"),
    (lambda c: _set(c, ("grid_size",), 3), "landmarks[0].start_coordinate: expected x and z in 0..2 (grid_size 3)"),
])
def test_any_mismatch_refuses_the_file_naming_field_expected_and_found(tmp_path, change, expected):
    f = _write(tmp_path / "in", change(_raw()))
    with pytest.raises(ConfigError) as e:
        read_config(f)
    assert str(e.value).startswith(f"{f}: ") and expected in str(e.value), str(e.value)


def test_the_id_must_agree_with_the_file_and_with_what_it_spells(tmp_path):
    cfg = _raw()
    f = _write(tmp_path / "in", cfg, "config_renamed.json")
    with pytest.raises(ConfigError, match="expected the file's name to be config_SGP_ID_20241212_024852_b_4_g_4_c1_6"):
        read_config(f)
    cfg["config_instance_id"] = cfg["config_instance_id"].replace("_c1_6_", "_c1_7_")
    with pytest.raises(ConfigError, match=r"its complexity_c1 \(_c1_\) says 7, the config has 6"):
        read_config(_write(tmp_path / "in", cfg))


def test_aqua_and_cyan_twins_are_refused_they_look_the_same(tmp_path):
    cfg = _raw()
    cfg["landmarks"][0]["color"], cfg["landmarks"][1]["color"] = "aqua", "cyan"
    with pytest.raises(ConfigError, match="cyan pyramid looks exactly like another geom"):
        read_config(_write(tmp_path / "in", cfg))


def test_one_bad_file_means_no_dataset_and_every_bad_file_is_named(tmp_path):
    src = tmp_path / "in"
    shutil.copytree(CONFIGS, src)
    bad = _raw("config_SGP_ID_20241212_024852_b_4_g_5_c1_8_c2_0_i_1.json")
    bad["complexity_c1"] = 9
    _write(src, bad)
    (src / FIRST).write_text("{ not json")
    out = tmp_path / "ds"
    with pytest.raises(ConfigError) as e:
        import_configs(src, out, workers=1)
    assert len(e.value.problems) == 2 and FIRST in e.value.problems[0] and "expected JSON" in e.value.problems[0]
    assert "complexity_c1: expected 8" in e.value.problems[1]
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["in"]   # nothing half-written


def test_a_folder_without_configs_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="no config_"):
        read_configs(tmp_path)
    (tmp_path / "config_x.json").mkdir()
    with pytest.raises(ConfigError, match="config_x.json: the file: expected a readable file"):
        read_configs(tmp_path)
