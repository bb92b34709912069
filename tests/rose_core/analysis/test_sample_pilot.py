"""A pilot on a designed sample is analysable: 8 scripted participants on the shipped example study file (4 per
template × subset, shared scenes, 3 raters) give Krippendorff's α, the majority panel's accuracy and the
conditioned gap, which a pilot over the whole split leaves empty (one rater per instance)."""
import math
import random
from pathlib import Path

from rose_core.analysis.bundle import paper_report
from rose_core.instrument.screens import Questionnaire
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.rose_study import create_study
from rose_core.instrument.study_file import load_study_file
from tests.participants import new_session, run_to_end

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "study.toml"


def test_eight_participants_on_the_example_sample_give_alpha_panel_and_gap(store, small_dataset):
    study = create_study(store, small_dataset, load_study_file(EXAMPLE), ids=SequentialIds("pilot"),
                         clock=FakeClock())
    rng = random.Random(2026)
    for n in range(8):
        clock = FakeClock()

        def right(screen):
            clock.advance(rng.uniform(4, 12))
            return screen.kind != "main" or rng.random() < 0.8

        session = new_session(store, small_dataset, study, f"PILOT{n}", clock=clock)
        _, end = run_to_end(session, right=right)
        if isinstance(end, Questionnaire):          # the example study asks its end questions
            session.answer_questionnaire({"vision": "normal"})
            end = session.screen()
        assert end.reason == "completed"
    per_item = [r["n"] for r in store.query("SELECT count(*) AS n FROM responses WHERE kind = 'main' "
                                            "GROUP BY instance_id")]
    assert len(per_item) == 100 and min(per_item) >= 2
    report = paper_report(store, small_dataset, exclusions=False)
    agreement = report.table("agreement_human").frame.iloc[0]
    for col in ("alpha_cells", "alpha_counts", "panel_accuracy", "individual_accuracy"):
        assert agreement[col] is not None and not math.isnan(agreement[col]), col
    assert agreement["panel_items"] == 100
    gap = report.table("gap_conditioned").frame
    human = gap[gap["solver"] == "Human"].iloc[0]
    assert human["scenes"] > 0
    for col in ("Counting Avg", "Action Avg", "gap"):
        assert human[col] is not None and not math.isnan(float(human[col])), col
