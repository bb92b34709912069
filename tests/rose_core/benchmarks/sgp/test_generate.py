import json
from collections import Counter

import pytest

from rose_core.benchmarks.sgp import (
    BuildParams, GenerationError, SgpDataset, SgpDatasetError, astar_distance, bfs_distance, build_sgp_dataset,
    generate_episodes, interference, manhattan,
)

from tests.rose_core.conftest import SMALL


def test_default_composition_is_the_papers_300_episodes():
    p = BuildParams()
    assert (p.board_size, p.geoms, p.c1, p.per_cell, p.c2) == (4, tuple(range(2, 12)), tuple(range(2, 12)), 3, 0)


def test_composition_distances_and_uniqueness():
    eps = generate_episodes(BuildParams(seed=1, geoms=(2, 5, 9), c1=(2, 5, 8), per_cell=3))
    assert Counter((e.n_geoms, e.c1) for e in eps) == {(n, c): 3 for n in (2, 5, 9) for c in (2, 5, 8)}
    pairs = set()
    for e in eps:
        start, goal = e.start_board(), e.goal_board()
        assert astar_distance(start, goal) == e.c1
        assert interference(start, goal) == e.c2 == 0
        assert manhattan(start, goal) == e.c1            # c2 = 0: the shortest path is the Manhattan sum
        if e.n_geoms <= 2:
            assert bfs_distance(start, goal) == e.c1
        names = [(g.color, g.shape) for g in e.geoms]
        assert len(set(names)) == len(names)            # no duplicate colour-shape pair
        pairs.add(json.dumps([e.start_state(), e.goal_state()]))
    assert len(pairs) == len(eps)                       # deduplicated


def test_generation_is_seeded_and_one_cell_does_not_shift_another():
    a = generate_episodes(BuildParams(seed=4, geoms=(3,), c1=(3, 4), per_cell=2))
    b = generate_episodes(BuildParams(seed=4, geoms=(3,), c1=(3, 4), per_cell=2))
    c = generate_episodes(BuildParams(seed=5, geoms=(3,), c1=(3, 4), per_cell=2))
    only4 = generate_episodes(BuildParams(seed=4, geoms=(3,), c1=(4,), per_cell=2))
    assert a == b and a != c
    assert [e for e in a if e.c1 == 4] == only4


def test_interference_can_be_asked_for():
    eps = generate_episodes(BuildParams(seed=2, board_size=3, geoms=(4,), c1=(6,), per_cell=2, c2=1))
    assert all(interference(e.start_board(), e.goal_board()) == 1 and e.c2 == 1 for e in eps)


def test_impossible_parameters_are_refused():
    with pytest.raises(GenerationError, match="geoms"):
        generate_episodes(BuildParams(geoms=(15,)))
    with pytest.raises(GenerationError, match="no new episode"):   # 1 geom on 2x2: at most 2 moves from its goal
        generate_episodes(BuildParams(board_size=2, geoms=(1,), c1=(3,), per_cell=1, max_attempts=20))


def test_build_writes_episodes_images_and_manifest_deterministically(sgp_dataset, tmp_path):
    ds = sgp_dataset
    assert ds.manifest["composition"]["episodes"] == len(ds.episodes) == 12
    assert ds.manifest["params"]["seed"] == SMALL.seed
    line = json.loads((ds.root / "episodes.jsonl").read_text().splitlines()[0])
    assert set(line) >= {"episode_id", "board_size", "c1", "c2", "geoms", "images", "image_sha256"}
    assert set(line["geoms"][0]) == {"shape", "color", "start", "goal"}
    assert set(line["images"]) == {"start_2d", "start_3d", "goal_2d", "goal_3d"}
    again = tmp_path / "again"
    m = build_sgp_dataset(again, SMALL, workers=2)
    assert m["dataset_hash"] == ds.dataset_hash
    assert (again / "episodes.jsonl").read_bytes() == (ds.root / "episodes.jsonl").read_bytes()
    first = ds.episodes[next(iter(ds.episodes))]
    assert (again / first.images["goal_3d"]).read_bytes() == ds.image_path(first.episode_id, "goal_3d").read_bytes()


def test_build_refuses_to_overwrite_what_is_not_an_sgp_dataset(sgp_dataset, tmp_path):
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(SgpDatasetError, match="not an SGP dataset"):
        build_sgp_dataset(other, SMALL, workers=1, replace=True)
    assert (other / "notes.txt").read_text() == "keep me"
    ds_dir = tmp_path / "ds"
    build_sgp_dataset(ds_dir, BuildParams(seed=1, geoms=(2,), c1=(2,), per_cell=1), workers=1)
    with pytest.raises(SgpDatasetError, match="already holds"):
        build_sgp_dataset(ds_dir, BuildParams(seed=2, geoms=(2,), c1=(2,), per_cell=1), workers=1)
    m = build_sgp_dataset(ds_dir, BuildParams(seed=2, geoms=(2,), c1=(2,), per_cell=1), workers=1, replace=True)
    assert SgpDataset.load(ds_dir).dataset_hash == m["dataset_hash"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []   # no temporary folders left


def test_a_changed_episode_file_is_refused(sgp_dataset, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(sgp_dataset.root, copy)
    p = copy / "episodes.jsonl"
    p.write_text(p.read_text().replace('"c1": 2', '"c1": 3', 1))
    with pytest.raises(SgpDatasetError, match="does not match manifest"):
        SgpDataset.load(copy)


def test_a_broken_or_foreign_manifest_is_refused_by_name(sgp_dataset, small_dataset, tmp_path):
    """The same manifest checks as ROSE's loader (`rose.dataset.read_build`): each refusal names the file."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(sgp_dataset.root, copy)
    man = copy / "manifest.json"
    man.write_text("{ not json")
    with pytest.raises(SgpDatasetError, match=f"{man}: not a readable dataset manifest"):
        SgpDataset.load(copy)
    man.write_text('{"benchmark": "sgp", "dataset_hash": "x"}')
    with pytest.raises(SgpDatasetError, match="missing files"):
        SgpDataset.load(copy)
    with pytest.raises(SgpDatasetError, match="not an SGP dataset"):
        SgpDataset.load(small_dataset.root)                      # a ROSE build
    shutil.copy(sgp_dataset.root / "manifest.json", man)
    (copy / "episodes.jsonl").unlink()
    with pytest.raises(SgpDatasetError, match="episodes.jsonl is missing"):
        SgpDataset.load(copy)
