"""The SGP results' heatmap cells: the value in the one number format and the plays behind it; an empty cell is
MISSING, never "NaN"."""
import pandas as pd

from rose_core.analysis.display import MISSING
from rose_core.analysis.sgp import agent_logs, group_heatmap, heatmap_labels
from rose_core.benchmarks.sgp import episodes_frame


def test_heatmap_cells_say_the_value_and_how_many_plays(sgp_small):  # noqa: F811
    some = tuple(e for e in sgp_small.episodes if not (sgp_small.episodes[e].n_geoms == 3
                                                       and sgp_small.episodes[e].c1 == 3))   # one cell left empty
    ep = episodes_frame(agent_logs(sgp_small, some, samples=2, seed=0, step_cap=20))
    hm = group_heatmap(ep, "random (agent)", "-", "solved")
    text = heatmap_labels(ep, "random (agent)", "-", "solved")
    assert text.shape == hm.shape and text.loc[3, 3] == MISSING
    for g, c in [(2, 2), (2, 3), (3, 2)]:
        plays = int(((ep["solver"] == "random (agent)") & (ep["n_geoms"] == g) & (ep["c1"] == c)).sum())
        assert text.loc[g, c] == f"{hm.loc[g, c]:.1f}<br>n={plays}" and plays == 2 * 3
    d = heatmap_labels(ep, "optimal (agent)", "-", "d_at_c1")
    assert d.loc[2, 2] == "0.0<br>n=3"


def test_the_bundle_carries_the_human_row_beside_the_agents(store, sgp_small, small_dataset, monkeypatch):  # noqa: F811
    """Participants' SGP episodes (one solves both, one spends the cap on unreadable moves) become the bundle's
    sgp_results table: the human row with the agents on the same episodes, the same numbers as the results
    page's summary; no SGP build, no table and a note saying why."""
    from rose_core.analysis.bundle import paper_report
    from rose_core.analysis.bundle.render import to_latex, to_markdown
    from rose_core.analysis.report import report_data
    from rose_core.analysis.sgp import human_episodes, results_tables, select_human, SgpExclusions
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.episode_session import create_sgp_study
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from tests.sgp_players import participant, run_to_end

    monkeypatch.setenv("ROSE_SGP_DATASET_DIR", str(sgp_small.root / "absent"))
    assert paper_report(store, small_dataset, n_boot=20).report["sgp_results"] == \
        {"note": "no SGP participant episode stored", "rows": []}
    study = create_sgp_study(store, sgp_small, StudyConfig(name="b", benchmark="sgp", practice_items=0,
                                                           items_per_participant=2, target_per_instance=2,
                                                           attention_every=0), ids=SequentialIds("b"),
                             clock=FakeClock())
    clock = FakeClock()
    for k in range(2):
        run_to_end(participant(store, sgp_small, study, f"B{k}", clock), solved=lambda screen, k=k: k == 0, clock=clock)
    missing = paper_report(store, small_dataset, n_boot=20)
    assert "sgp_results" not in [t.name for t in missing.tables]
    assert "is missing" in missing.report["sgp_results"]["note"] and missing.report["sgp_results"]["rows"] == []
    monkeypatch.setenv("ROSE_SGP_DATASET_DIR", str(sgp_small.root))
    paper = paper_report(store, small_dataset, n_boot=20, seed=3)
    t = paper.table("sgp_results")
    rows = t.frame.set_index(["solver", "modality"])
    assert set(rows.index) == {("Human", "2d"), ("optimal (agent)", "-"), ("random (agent)", "-")}
    human = rows.loc[("Human", "2d")]
    assert (human["plays"], human["solved"], human["solved_pct"]) == (4, 2, 50.0)
    # issue 22: the human row says how many people it rests on and its intervals resample them (2 people)
    assert human["participants"] == 2 and pd.isna(rows.loc[("random (agent)", "-")]["participants"])
    assert "over participants" in t.caption and "Participants" in to_markdown(t)
    assert rows.loc[("optimal (agent)", "-")]["episodes"] == human["episodes"]
    page = results_tables(select_human(human_episodes(store), sgp_small, SgpExclusions(), 20).logs
                          + agent_logs(sgp_small, tuple(sorted(set(human_episodes(store)["episode_id"]))), 3, 0, 20),
                          20, 3)["summary"]
    assert page.set_index(["solver", "modality"]).loc[("Human", "2d"), "deviation"] == human["deviation"]
    assert "Human" in to_markdown(t) and "Human" in to_latex(t)
    assert paper.report["tables"]["sgp_results"]["rows"] == paper.report["sgp_results"]["rows"]
    assert report_data(store, n_boot=20, seed=3)[0]["sgp_results"] == paper.report["sgp_results"]  # report --json
