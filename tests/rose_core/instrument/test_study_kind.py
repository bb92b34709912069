"""The one participant session: a study's kind of item chosen by its benchmark, and the contract held."""
import pytest

from rose_core.instrument.config import StudyConfig, StudyError
from rose_core.instrument.episode_kind import EpisodeKind, EpisodeScreen
from rose_core.instrument.episode_study import create_sgp_study
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.study_kind import kind_for, open_participant_session, study_benchmark
from rose_core.instrument.joining import join
from rose_core.instrument.rose_kind import RoseKind
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.screens import Consent, Instructions, ItemScreen
from rose_core.instrument.session import ParticipantSession


def test_each_study_gets_its_kind_and_the_one_session_drives_it(store, sgp_small, small_dataset):
    sgp = create_sgp_study(store, sgp_small, StudyConfig(name="k", benchmark="sgp", practice_items=0,
                                                         attention_every=0), ids=SequentialIds("ks"),
                           clock=FakeClock())
    rose = create_study(store, small_dataset, StudyConfig(name="r", practice_items=0, attention_every=0,
                                                          items_per_participant=2, info={}),
                        ids=SequentialIds("kr"), clock=FakeClock())
    assert study_benchmark(store, sgp.study_id) == "sgp" and study_benchmark(store, rose.study_id) == "rose"
    assert study_benchmark(store, "nope") is None and study_benchmark(store, None) is None
    assert isinstance(kind_for(sgp, sgp_small), EpisodeKind) and isinstance(kind_for(rose, small_dataset), RoseKind)
    for study, ds, shown in ((sgp, sgp_small, EpisodeScreen), (rose, small_dataset, ItemScreen)):
        p = join(store, study, "K", "prolific", None, None, ids=SequentialIds(study.study_id), clock=FakeClock())
        s = open_participant_session(store, ds, study.study_id, p.participant_id, clock=FakeClock())
        assert type(s) is ParticipantSession
        assert isinstance(s.screen(), Consent)
        s.consent()
        ins = s.screen()
        assert isinstance(ins, Instructions)
        # the kind's own words: an SGP study's instructions are about puzzles, with no worked examples
        assert ("bottom-left cell" in ins.text) == (study is sgp) and bool(ins.templates) == (study is rose)
        s.finish_instructions()
        assert isinstance(s.screen(), shown)
    assert open_participant_session(store, sgp_small, "nope", "x") is None


def test_a_session_refuses_a_kind_of_another_benchmark(store, sgp_small):
    sgp = create_sgp_study(store, sgp_small, StudyConfig(name="k", benchmark="sgp", practice_items=0,
                                                         attention_every=0), ids=SequentialIds("kx"),
                           clock=FakeClock())
    p = join(store, sgp, "K", "prolific", None, None, ids=SequentialIds("kx2"), clock=FakeClock())
    with pytest.raises(StudyError, match="has benchmark 'sgp'; this session's kind of item is 'rose'"):
        ParticipantSession(store, sgp_small, sgp, p.participant_id)        # ROSE's kind by default
    s = ParticipantSession(store, sgp_small, sgp, p.participant_id, kind=EpisodeKind(sgp_small))
    assert s.kind.benchmark == "sgp"
