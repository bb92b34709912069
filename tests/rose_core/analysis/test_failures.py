"""The failure-kind shares' intervals (the bundle's failure figure draws them as error bars), checked against a
plain computation: every resample rebuilt as a frame of whole units (`test_intervals._resampled_frames`), each
share recomputed with pandas and read at the expanded percentile levels computed by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rose_core.analysis.failures import failure_table, with_share_intervals

from .test_intervals import _levels, _resampled_frames, _wilson
from .test_vectorised import synthetic

BOOT = 200


@pytest.mark.parametrize("solver,unit", [("Human", "participant_id"), ("m0", "scene_id")])
def test_failure_shares_resample_whole_units(solver, unit):
    g = synthetic(5, people=8, scenes=12, share=0.6)
    g = g[g["solver"] == solver]
    table = with_share_intervals(g, failure_table(g), n_boot=BOOT)
    assert len(table) >= 6 and table["share lo"].notna().all()
    keys = list(zip(table["template"], table["failure"]))
    shares: dict[tuple, list[float]] = {k: [] for k in keys}
    for frame in _resampled_frames(g, unit, 0, solver, BOOT):
        # the resample's columns as arrays, each template's rows picked once (a frame filter per key took ~12 s)
        template, failure = frame["template"].to_numpy(), frame["failure"].to_numpy()
        rows = {t: failure[template == t] for t in {t for t, _ in keys}}
        for t, k in keys:
            on = rows[t]
            shares[(t, k)].append(100 * (on == k).mean() if len(on) else np.nan)
    lv = _levels(g[unit].nunique())
    for (t, k), (_, row) in zip(keys, table.iterrows()):
        v = np.array(shares[(t, k)])
        want = np.percentile(v[~np.isnan(v)], lv)
        assert (row["share lo"], row["share hi"]) == pytest.approx(tuple(want), abs=1e-9), (t, k)
        assert row["share lo"] <= row["share"] <= row["share hi"]


def test_a_share_at_100_gets_wilson_over_units_and_one_unit_none():
    rows = [{"solver": "a", "solver_kind": "model", "participant_id": "", "scene_id": f"s{k}", "template": "T1",
             "failure": "miscount", "passed": 0} for k in range(6)]
    df = pd.DataFrame(rows)
    out = with_share_intervals(df, failure_table(df), n_boot=50)
    assert (out["share lo"].iloc[0], out["share hi"].iloc[0]) == pytest.approx(_wilson(6, 6))
    one = df.iloc[:1]
    out = with_share_intervals(one, failure_table(one), n_boot=50)
    assert out["share lo"].isna().all() and out["share hi"].isna().all()   # one unit: no interval, never a point
