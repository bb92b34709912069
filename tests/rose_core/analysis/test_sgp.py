"""The SGP results' heatmap cells: the value in the one number format and the plays behind it; an empty cell is
MISSING, never "NaN"."""
from rose_core.analysis.formats import MISSING
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
