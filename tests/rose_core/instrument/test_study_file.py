"""A study as a TOML file: loading (keys mapped by StudyConfig's annotations, every problem named), writing back
(round trip), the shipped example, and the item sample it draws (seeded, stored, checked against the dataset)."""
import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from rose_core.instrument.config import ItemSample, StudyConfig, StudyError
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.policy import main_pool
from rose_core.instrument.sample import describe, draw, without_sample
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.study import get_study, list_studies
from rose_core.instrument.study_file import dump_study, load_study_file, load_study_text, settings

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "study.toml"


def load(text: str, base: Path | None = None, cls=StudyConfig) -> StudyConfig:
    return load_study_text(text, "study.toml", base, cls)


def refused(text: str, base: Path | None = None, cls=StudyConfig) -> str:
    with pytest.raises(StudyError) as e:
        load(text, base, cls)
    return str(e.value)


def test_keys_map_onto_the_config_by_its_annotations():
    cfg = load('name = "p"\nraters_per_item = 2\npractice_pass_fraction = 1\nstep_cap = "none"\n'
               'templates = ["T1", "T3"]\nsample = {per_cell = 3, by = ["template"], seed = 9}\n')
    assert cfg.target_per_instance == 2 and cfg.templates == ["T1", "T3"]
    assert cfg.practice_pass_fraction == 1.0 and isinstance(cfg.practice_pass_fraction, float)
    assert cfg.step_cap is None
    assert cfg.sample == ItemSample(per_cell=3, by=["template"], seed=9)
    assert load('name = "p"').sample is None and load('name = "p"').target_per_instance == 3   # defaults


def test_every_bad_key_is_named_in_one_error_with_the_file():
    msg = refused('name = 3\nraters_per_items = 3\ntarget_per_instance = 2\nitems_per_participant = "20"\n'
                  'ordering = "sorted"\npractice_rounds = []\nsame_scene_multiple_templates = 1\n')
    assert msg.startswith("study.toml: ")
    for needle in ("name: expected a string, got a whole number 3",
                   "raters_per_items: unknown key (did you mean raters_per_item?)",
                   "target_per_instance: this is raters_per_item in a study file",
                   "items_per_participant: expected a whole number, got a string '20'",
                   "ordering: expected one of random, counterbalanced, got a string 'sorted'",
                   "practice_rounds: is computed when the study is created",
                   "same_scene_multiple_templates: expected true or false, got a whole number 1"):
        assert needle in msg
    assert "sample.sead: unknown key (did you mean seed?)" in refused('name = "p"\nsample = {per_cell = 1, sead = 2}')
    assert "name: required" in refused("seed = 2")
    assert "not valid TOML" in refused("name = ")


def test_config_problems_are_named_as_the_file_names_them():
    msg = refused('name = "p"\nraters_per_item = 0\nsample = {per_cell = 0, by = ["colour"]}\n')
    assert "raters_per_item: expected a whole number >= 1" in msg
    assert "sample.per_cell: expected a whole number >= 1" in msg and "sample.by: expected distinct names" in msg
    assert "raters_per_item: 3 raters per item need at least as many participants, planned 2" in refused(
        'name = "p"\nparticipants = 2\n')
    assert "not both" in refused('name = "p"\nitems = ["a"]\nsample = {per_cell = 1}\n')


def test_items_file_is_read_relative_to_the_study_file(tmp_path):
    (tmp_path / "lists").mkdir()
    (tmp_path / "lists" / "ids.txt").write_text("# pilot items\nA-T1\n\nB-T2  \n", encoding="utf-8")
    cfg = load('name = "p"\nitems_file = "lists/ids.txt"\n', tmp_path)
    assert cfg.items == ["A-T1", "B-T2"]
    assert f"items_file: no such file {tmp_path / 'missing.txt'}" in refused('name = "p"\nitems_file = "missing.txt"',
                                                                              tmp_path)
    assert "an uploaded study file cannot bring" in refused('name = "p"\nitems_file = "lists/ids.txt"')
    assert "give either items or items_file" in refused('name = "p"\nitems = []\nitems_file = "lists/ids.txt"',
                                                        tmp_path)


@dataclasses.dataclass
class WithTexts(StudyConfig):
    """StudyConfig with a texts field, as the texts engineer adds it: the loader handles it without changes."""
    texts: dict[str, str] = dataclasses.field(default_factory=dict)


def test_texts_ending_in_md_are_files_next_to_the_study_file(tmp_path):
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "consent.md").write_text("# Consent\n\nÉthique: réf. 42\n", encoding="utf-8")
    cfg = load('name = "p"\n[texts]\nconsent = "texts/consent.md"\nend = "Thank you — **done**."\n', tmp_path,
               WithTexts)
    assert cfg.texts == {"consent": "# Consent\n\nÉthique: réf. 42\n", "end": "Thank you — **done**."}
    msg = refused('name = "p"\n[texts]\ndebrief = "texts/debrief.md"\n', tmp_path, WithTexts)
    assert f"texts.debrief: no such file {tmp_path / 'texts' / 'debrief.md'}" in msg
    assert "texts.end: expected Markdown" in refused('name = "p"\n[texts]\nend = 3\n', tmp_path, WithTexts)
    # and back: a written file carries the texts inline and loads to the same settings
    again = load(dump_study(cfg), None, WithTexts)
    assert again.texts == cfg.texts


def test_a_written_file_loads_to_the_same_settings():
    cfg = load('name = "quote \\" and ünïcode"\nsample = {per_cell = 2, seed = 4}\nstep_cap = 7\n'
               'completion_url = "https://example.org/?a=1&b=2"\nparticipants = 12\n')
    text = dump_study(cfg, "header line\nsecond")
    assert text.startswith("# header line\n# second\n")
    assert load(text) == cfg
    none_cap = dataclasses.replace(cfg, step_cap=None, sample=None, items=["x", "y"])
    assert load(dump_study(none_cap)) == none_cap
    assert "sample_ids" not in text and "practice_rounds" not in text and "raters_per_item = 3" in text


def test_the_shipped_example_loads_and_creates_its_sample(store, small_dataset):
    cfg = load_study_file(EXAMPLE)
    assert cfg.sample == ItemSample(per_cell=4, by=["template", "subset"], seed=2026, scenes="shared")
    assert cfg.target_per_instance == 3 and cfg.participants == 8
    study = create_study(store, small_dataset, cfg, ids=SequentialIds("ex"), clock=FakeClock())
    pool = main_pool(small_dataset, study.config)
    cells = Counter((i.template, i.subset) for i in pool)
    assert len(cells) == len(cfg.templates) * len(cfg.subsets) and set(cells.values()) == {4}
    assert {i.split for i in pool} == {"test"}
    assert not {i.scene_id for i in pool} & set(study.config.practice_scene_ids)
    stored = get_study(store, study.study_id)
    assert stored.config.sample_ids == sorted(i.instance_id for i in pool) and stored.version == 1
    assert describe(stored.config).startswith(
        "The main items were a stratified random sample of 100 instances: 4 per template × subset cell, following "
        "one random order of scenes in every cell, so templates share scenes, drawn with seed 2026")
    # shared: a scene's templates are drawn together (fewer scenes than items; T1's scenes carry the others)
    by_scene = Counter(i.scene_id for i in pool)
    assert len(by_scene) < len(pool) and max(by_scene.values()) == len(cfg.templates)
    t1_scenes = {i.scene_id for i in pool if i.template == "T1"}
    assert sum(i.scene_id in t1_scenes for i in pool if i.template != "T1") >= len(pool) // 2


def test_export_then_create_gives_the_same_study(store, small_dataset, tmp_path):
    study = create_study(store, small_dataset, load_study_file(EXAMPLE), ids=SequentialIds("a"), clock=FakeClock())
    f = tmp_path / "again.toml"
    f.write_text(dump_study(get_study(store, study.study_id).config), encoding="utf-8")
    again = create_study(store, small_dataset, load_study_file(f), ids=SequentialIds("b"), clock=FakeClock())
    assert settings(again.config) == settings(study.config)
    assert again.config.sample_ids == study.config.sample_ids
    assert again.config.practice_rounds == study.config.practice_rounds


def test_the_draw_is_seeded_and_the_stored_ids_are_the_pool(store, small_dataset):
    def cfg(seed, **kw):
        return StudyConfig(name="s", split="test", templates=["T1", "T2"], practice_items=0, attention_every=0,
                           items_per_participant=4, sample=ItemSample(per_cell=2, seed=seed), **kw)

    base = main_pool(small_dataset, without_sample(cfg(1)))
    assert draw(base, cfg(1)) == draw(list(reversed(base)), cfg(1))           # the order handed in does not matter
    assert draw(base, cfg(1)) != draw(base, cfg(2))
    drawn = draw(base, cfg(1))
    scenes = [small_dataset.instances[i].scene_id for i in drawn]
    assert len(set(scenes)) == len(scenes)                                    # fresh scenes first
    study = create_study(store, small_dataset, cfg(1), ids=SequentialIds("d"), clock=FakeClock())
    assert study.config.sample_ids == drawn
    # the stored ids are the pool, whatever the draw would give now
    frozen = dataclasses.replace(study.config, sample=ItemSample(per_cell=2, seed=99))
    assert [i.instance_id for i in main_pool(small_dataset, frozen)] == drawn


def test_shared_scenes_under_the_same_scene_rule_need_enough_participants(store, small_dataset):
    base = dict(name="x", split="test", practice_items=0, attention_every=0, items_per_participant=10,
                sample=ItemSample(per_cell=1, scenes="shared"))
    with pytest.raises(StudyError, match=r"sample.scenes: shared scenes carry up to 5 sampled items each.* 5 × 3 "
                                         r"raters need 15 participants, planned 8"):
        create_study(store, small_dataset, StudyConfig(**base, participants=8))
    ok = create_study(store, small_dataset, StudyConfig(**base, participants=15), ids=SequentialIds("sh"),
                      clock=FakeClock())
    assert len(ok.config.sample_ids) == 25
    distinct = create_study(store, small_dataset, StudyConfig(**{**base, "sample": ItemSample(per_cell=1)},
                                                              participants=8), ids=SequentialIds("di"), clock=FakeClock())
    scenes = [small_dataset.instances[i].scene_id for i in distinct.config.sample_ids]
    assert len(set(scenes)) == len(scenes)


def test_impossible_designs_are_refused_and_nothing_is_created(store, small_dataset):
    def refuse(match, **kw):
        base = dict(name="x", split="test", practice_items=0, attention_every=0, items_per_participant=4)
        base.update(kw)
        with pytest.raises(StudyError, match=match):
            create_study(store, small_dataset, StudyConfig(**base))

    refuse(r"sample.per_cell: 50 per cell is more than a cell holds: G-Cnt × ChineseGlyph has \d+",
           sample=ItemSample(per_cell=50))
    refuse(r"items: 2 unknown instance ids in dataset \w+: nope-1, nope-2", items=["nope-1", "nope-2"])
    dev = next(i for i in small_dataset.instances.values() if i.split == "dev" and i.template == "T1").instance_id
    refuse(f"items: 1 listed instance outside the study's split.*{dev}", items=[dev])
    refuse("participants: 3 participants × 4 items give 12 answers; 50 items × 3 raters need 150",
           sample=ItemSample(per_cell=2), participants=3)
    refuse("sample: the sample holds 5 items, fewer than items_per_participant", templates=["T1"],
           sample=ItemSample(per_cell=1), items_per_participant=6)
    assert list_studies(store) == []


def test_an_empty_cell_is_named():
    pool_cfg = StudyConfig(name="x", templates=["T1", "T3"], subsets=["EmojiStyle", "PixelEdit"],
                           sample=ItemSample(per_cell=1))

    class Inst:
        def __init__(self, n, template, subset):
            self.instance_id, self.template, self.subset, self.scene_id, self.split = f"i{n}", template, subset, f"s{n}", "test"

    base = [Inst(1, "T1", "EmojiStyle"), Inst(2, "T1", "PixelEdit"), Inst(3, "T3", "EmojiStyle")]
    with pytest.raises(StudyError, match="sample.by: 1 empty cell .*: L-Clk × PixelEdit"):
        draw(base, pool_cfg)
