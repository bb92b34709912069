"""A sampled study fills level by level (every item reaches k raters before any reaches k + 1), and a created study
is edited in versions: every setting until its first real participant, then only its texts; cloned; closed."""
import dataclasses

import pytest

from rose_core.instrument import study_edit
from rose_core.instrument.config import ItemSample, StudyConfig, StudyError
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.policy import default_tiebreak, main_pool, rank_main
from rose_core.instrument.joining import join
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.study import get_study
from rose_core.instrument.study_edit import clone_study, edit_study, versions
from tests.participants import new_session, run_to_end


def sampled(**kw) -> StudyConfig:
    base = dict(name="fill", split="test", practice_items=0, attention_every=0, items_per_participant=10,
                target_per_instance=3, sample=ItemSample(per_cell=2, seed=3), ordering="counterbalanced")
    base.update(kw)
    return StudyConfig(**base)


def live_counts(store, study_id):
    rows = store.query("SELECT a.instance_id, count(*) AS n FROM assignments a JOIN participants p "
                       "ON p.participant_id = a.participant_id WHERE p.study_id = ? AND a.kind = 'main' "
                       "AND a.released_at IS NULL GROUP BY a.instance_id", (study_id,))
    return {r["instance_id"]: r["n"] for r in rows}


@pytest.mark.parametrize("design", [
    dict(sample=ItemSample(per_cell=1, seed=3), items_per_participant=5),            # 25 items on distinct scenes
    dict(sample=ItemSample(per_cell=2, seed=3), same_scene_multiple_templates=True),  # 50 items, scenes shared
])
def test_every_sampled_item_reaches_two_raters_before_any_reaches_three(store, small_dataset, design):
    """Strict when no participant is kept from an item by the same-scene rule: the draw puts items on distinct
    scenes when it can (the first design), or the study lets a participant see a scene twice (the second)."""
    study = create_study(store, small_dataset, sampled(**design), ids=SequentialIds("f"), clock=FakeClock())
    pool = main_pool(small_dataset, study.config)
    if not study.config.same_scene_multiple_templates:
        assert len({i.scene_id for i in pool}) == len(pool)
    pool = [i.instance_id for i in pool]
    levels = []

    def check(screen):
        counts = live_counts(store, study.study_id)
        full = [counts.get(i, 0) for i in pool]
        for level in (2, 3):
            if max(full) >= level:
                assert min(full) >= level - 1, f"an item reached {level} raters while another had {min(full)}"
        levels.append(max(full))

    n_participants = len(pool) * 3 // study.config.items_per_participant
    for n in range(n_participants):
        _, end = run_to_end(new_session(store, small_dataset, study, f"P{n}", clock=FakeClock()), on_item=check)
        assert end.reason == "completed"
    counts = live_counts(store, study.study_id)
    assert sorted(counts) == sorted(pool) and set(counts.values()) == {3}
    assert levels == sorted(levels) and levels[-1] == 3   # the fill level never goes back


def test_least_annotated_comes_before_the_counterbalanced_template(small_dataset):
    cfg = sampled(templates=["T1", "T3"], subsets=["EmojiStyle"], sample=ItemSample(per_cell=3, seed=1),
                  items_per_participant=3)
    pool = main_pool(small_dataset, cfg)
    t1 = [i.instance_id for i in pool if i.template == "T1"]
    counts = {i: 1 for i in t1}                                   # T1 items have a rater, T3 items none
    ranked = list(rank_main(pool, cfg, counts, set(), set(), counterbalance=0, position=0,
                            tiebreak=default_tiebreak("p")))
    assert cfg.templates[0] == "T1"                               # T1 is the wanted template at this position
    assert [i.template for i in ranked] == ["T3"] * 3 + ["T1"] * 3


def test_edit_before_the_first_participant_changes_everything_in_a_new_version(store, small_dataset):
    clock = FakeClock()
    study = create_study(store, small_dataset, sampled(), ids=SequentialIds("e"), clock=clock)
    join(store, study, "me", "link", origin="preview")           # a preview is no participant
    new = dataclasses.replace(study.config, name="fill v2", sample=ItemSample(per_cell=1, seed=3),
                              items_per_participant=5)
    edited = edit_study(store, small_dataset, study, new, clock=clock)
    assert edited.version == 2 and len(edited.config.sample_ids) == 25
    stored = get_study(store, study.study_id)
    assert (stored.version, stored.name, stored.config.items_per_participant) == (2, "fill v2", 5)
    assert stored.config.sample_ids == edited.config.sample_ids
    assert [(v["version"], v["name"], v["config"].items_per_participant) for v in versions(store, study.study_id)] \
        == [(1, "fill", 10), (2, "fill v2", 5)]
    with pytest.raises(StudyError, match="nothing changed"):
        edit_study(store, small_dataset, stored, stored.config)
    with pytest.raises(StudyError, match="edited meanwhile"):   # an edit from a stale page
        edit_study(store, small_dataset, study, dataclasses.replace(study.config, seed=9))
    with pytest.raises(StudyError, match="sample.per_cell: 99 per cell"):  # checked before anything is written
        edit_study(store, small_dataset, stored, dataclasses.replace(stored.config, sample=ItemSample(per_cell=99)))
    assert get_study(store, study.study_id).version == 2


def test_after_the_first_participant_only_texts_change(store, small_dataset, monkeypatch):
    clock = FakeClock()
    study = create_study(store, small_dataset, sampled(), ids=SequentialIds("t"), clock=clock)
    join(store, study, "P1", "link")
    with pytest.raises(StudyError, match=r"items_per_participant, raters_per_item: the study has 1 participant; "
                                         r"only its texts \(texts, info, questionnaire\) can change now"):
        edit_study(store, small_dataset, study, dataclasses.replace(study.config, target_per_instance=2,
                                                                     items_per_participant=4))
    assert get_study(store, study.study_id).version == 1
    # what LIVE_EDITABLE lists may change, and the derived pool stays as it was
    monkeypatch.setattr(study_edit, "LIVE_EDITABLE", ("completion_code",))
    edited = edit_study(store, small_dataset, study, dataclasses.replace(study.config, completion_code="NEW1"))
    stored = get_study(store, study.study_id)
    assert (stored.version, stored.config.completion_code) == (2, "NEW1")
    assert stored.config.sample_ids == study.config.sample_ids == edited.config.sample_ids


def test_clone_keeps_the_sample_on_the_same_dataset(store, small_dataset):
    study = create_study(store, small_dataset, sampled(), ids=SequentialIds("c"), clock=FakeClock())
    twin = clone_study(store, small_dataset, study, "fill again", ids=SequentialIds("c2"), clock=FakeClock())
    assert twin.study_id != study.study_id and twin.name == "fill again" and twin.version == 1
    assert twin.config.sample_ids == study.config.sample_ids
    assert dataclasses.replace(twin.config, name="fill") == study.config


def test_an_sgp_study_file_creates_edits_and_round_trips(store, sgp_dataset):
    from rose_core.instrument.study_file import dump_study, load_study_text

    cfg = load_study_text('name = "puzzles"\nbenchmark = "sgp"\nattention_every = 0\nitems_per_participant = 3\n'
                          'raters_per_item = 2\npractice_items = 1\nsgp_modality = "text"\nsgp_input = "typed"\n'
                          'step_cap = "none"\nsgp_c1 = [2, 3]\n', "sgp.toml", None)
    study = study_edit.create_any(store, sgp_dataset, cfg, ids=SequentialIds("g"), clock=FakeClock())
    assert study.config.step_cap is None and study.config.practice_rounds
    again = load_study_text(dump_study(study.config), "again.toml", None)
    assert study_edit.changed_settings(study.config, again) == []
    edited = edit_study(store, sgp_dataset, study, dataclasses.replace(study.config, sgp_c1=[2]))
    assert edited.version == 2 and get_study(store, study.study_id).config.sgp_c1 == [2]
    with pytest.raises(StudyError, match="benchmark: a study cannot change benchmark"):
        edit_study(store, sgp_dataset, edited, dataclasses.replace(edited.config, benchmark="rose"))
