"""A simulated pilot seen by the analysis: the exclusion rules remove exactly the simulated too-fast and
attention-failing participants, simulated answers are never counted unless asked for, and then said loudly."""
from pathlib import Path

from rose_core.analysis import ExclusionRules, Filters, participant_table, report_data, select_from_store
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.simulate import load_truth, parse_truth, simulate
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from tests.participants import new_session, run_to_end

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "truth.toml"


def dry_run(store, ds, n=24, seed=5, truth=None):
    study = create_study(store, ds, StudyConfig(
        name="dry run", split="all", items_per_participant=20, target_per_instance=3, practice_items=4,
        attention_every=5, seed=4), ids=SequentialIds("dry"), clock=FakeClock())
    return study, simulate(store, ds, study, truth or load_truth(EXAMPLE), n, seed)


def test_the_exclusion_rules_remove_exactly_the_simulated_careless(store, small_dataset):
    truth = parse_truth({"too_fast": 0.2, "attention_failure": 0.2, "drop_out": 0.15})
    _, sim = dry_run(store, small_dataset, n=30, truth=truth)
    parts = participant_table(store, ExclusionRules())
    reasons = dict(zip(parts["participant_id"], parts["excluded"]))
    truth_fast = {p.participant_id for p in sim.participants if p.role == "too_fast" and p.main_answered}
    truth_attention = {p.participant_id for p in sim.participants if p.attention_failed}
    assert len(truth_fast) == 6 and len(truth_attention) >= 5      # the careless the simulator made
    assert {p for p, r in reasons.items() if "too fast" in r} == truth_fast
    assert {p for p, r in reasons.items() if "attention" in r} == truth_attention
    careless = {p for p, r in reasons.items() if r.replace("unfinished", "").strip(", ")}
    assert careless == {p.participant_id for p in sim.participants if p.should_be_excluded}
    # nobody else: the attentive are kept; the drop-outs only by the completed-only rule (no streak, no slip)
    assert all(reasons[p.participant_id] == "" for p in sim.participants if p.role == "attentive")
    assert all(reasons[p.participant_id] == "unfinished" for p in sim.participants if p.role == "drop_out")


def test_simulated_answers_count_only_when_asked_for(store, small_dataset):
    study, sim = dry_run(store, small_dataset)
    clock = FakeClock(study.created_at + 90_000)
    real = new_session(store, small_dataset, study, "REAL", ids=SequentialIds("real"), clock=clock)
    run_to_end(real, on_item=lambda _screen: clock.advance(5.0))   # 5 s per item: not too fast
    rules = ExclusionRules()
    real_only = select_from_store(store, Filters(), rules)
    humans = real_only.df[real_only.df["solver_kind"] == "human"]
    assert set(humans["participant_id"]) == {real.participant_id}
    assert set(real_only.participants["participant_id"]) == {real.participant_id} and real_only.n_excluded == 0
    dry = select_from_store(store, Filters(origins=("participant", "simulated")), rules)
    # completed-only (on by default) also leaves out the drop-outs
    counted = {p.participant_id for p in sim.participants
               if p.main_answered and not p.should_be_excluded and p.role != "drop_out"}
    assert set(dry.df.loc[dry.df["solver_kind"] == "human", "participant_id"]) == counted | {real.participant_id}
    assert dry.n_excluded == sum(p.should_be_excluded or p.role == "drop_out" for p in sim.participants)
    report, _ = report_data(store, n_boot=50)
    assert report["simulated_warning"] is None
    report, table = report_data(store, n_boot=50, include_simulated=True)
    assert report["simulated_warning"].startswith(f"{len(sim.participants)} simulated participants")
