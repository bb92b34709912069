"""The SGP human rows' intervals resample participants (issue 22), checked against a participant bootstrap written
out here by hand (its own loop over resamples, its own expanded percentile levels from scipy.stats), on the very
draws of the human row's stream; the agents' intervals stay over plays and episodes."""
from statistics import NormalDist
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rose_core.analysis.sgp import HUMAN, with_participant_intervals
from rose_core.common.stats import solver_rng

N_BOOT, SEED = 400, 3


def _levels(n: int) -> tuple[float, float]:
    tail = NormalDist().cdf(-np.sqrt(n / (n - 1)) * stats.t.ppf(0.975, n - 1))
    return 100 * tail, 100 * (1 - tail)


def _frames(seed: int = 11):
    """12 people of unequal skill, 2 to 6 plays each, beside an agent's 20 plays."""
    rng = np.random.default_rng(seed)
    rows, logs = [], []
    for i in range(12):
        p = rng.uniform(0.1, 0.95)
        for j in range(int(rng.integers(2, 7))):
            solved = bool(rng.random() < p)
            rows.append({"solver": HUMAN, "modality": "2d", "episode_id": f"e{j}", "solved": solved,
                         "d_at_c1": 0.0 if solved else float(rng.integers(1, 5))})
            logs.append(SimpleNamespace(solver=HUMAN, meta={"participant_id": f"p{i:02d}"}))
    for j in range(20):
        rows.append({"solver": "random (agent)", "modality": "-", "episode_id": f"e{j}", "solved": j % 3 == 0,
                     "d_at_c1": float(j % 4)})
        logs.append(SimpleNamespace(solver="random (agent)", meta={}))
    ep = pd.DataFrame(rows)
    summary = ep.groupby(["solver", "modality"], sort=False).agg(
        plays=("solved", "size"), solved_pct=("solved", "mean"), deviation=("d_at_c1", "mean")).reset_index()
    summary["solved_pct"] *= 100
    summary[["lo", "hi", "lo_dev", "hi_dev"]] = [[1.0, 2.0, 3.0, 4.0]] * len(summary)   # the metrics' own
    return ep, logs, summary


def test_human_intervals_equal_a_hand_written_participant_bootstrap():
    ep, logs, summary = _frames()
    out = with_participant_intervals(summary, ep, logs, N_BOOT, SEED)
    h = out[out["solver"] == HUMAN].iloc[0]
    people = np.array([lg.meta.get("participant_id") for lg in logs], dtype=object)
    mine = (ep["solver"] == HUMAN).to_numpy()
    ids = sorted(set(people[mine]))
    draws = solver_rng(SEED, f"participants|{HUMAN}|2d").integers(0, len(ids), size=(N_BOOT, len(ids)))
    solved, dev = [], []
    for d in draws:
        plays = pd.concat([ep[mine & (people == ids[k])] for k in d])
        solved.append(100 * plays["solved"].mean())
        dev.append(plays["d_at_c1"].mean())
    levels = _levels(len(ids))
    assert h["participants"] == 12 and isinstance(h["participants"], (int, np.integer))
    assert (h["lo"], h["hi"]) == pytest.approx(tuple(np.percentile(solved, levels)), abs=1e-9)
    assert (h["lo_dev"], h["hi_dev"]) == pytest.approx(tuple(np.percentile(dev, levels)), abs=1e-9)
    # wider than the Wilson interval over the plays, which treats one person's plays as independent
    from rose_core.common.stats import wilson
    w = wilson(int(ep[mine]["solved"].sum()), int(mine.sum()))
    assert h["hi"] - h["lo"] > w[1] - w[0]
    # the agent keeps the metrics' own intervals and has no participants
    a = out[out["solver"] != HUMAN].iloc[0]
    assert (a["lo"], a["hi"], a["lo_dev"], a["hi_dev"]) == (1.0, 2.0, 3.0, 4.0) and pd.isna(a["participants"])
    assert str(out["participants"].dtype) == "Int64"


def test_every_person_solving_everything_gets_wilson_over_people():
    ep, logs, summary = _frames()
    ep.loc[ep["solver"] == HUMAN, ["solved", "d_at_c1"]] = [True, 0.0]
    summary.loc[summary["solver"] == HUMAN, ["solved_pct", "deviation"]] = [100.0, 0.0]
    h = with_participant_intervals(summary, ep, logs, N_BOOT, SEED).iloc[0]
    lo, hi = stats.binomtest(12, 12).proportion_ci(method="wilson")
    assert (h["lo"], h["hi"]) == pytest.approx((100 * lo, 100 * hi)) and (h["lo_dev"], h["hi_dev"]) == (0.0, 0.0)


def test_a_human_play_without_its_participant_is_refused():
    ep, logs, summary = _frames()
    logs[0] = SimpleNamespace(solver=HUMAN, meta={})
    with pytest.raises(ValueError, match="without its participant id"):
        with_participant_intervals(summary, ep, logs, N_BOOT, SEED)


def test_human_regret_band_resamples_people_for_the_whole_curve():
    from rose_core.analysis.sgp import human_regret_band

    rng = np.random.default_rng(4)
    rows, people = [], {}
    for i in range(9):
        for sample in range(int(rng.integers(1, 4))):
            people[(HUMAN, "2d", f"e{i}", sample)] = f"p{i % 5}"
            for t in range(4):
                rows.append({"solver": HUMAN, "modality": "2d", "episode_id": f"e{i}", "sample": sample, "t": t,
                             "regret": float(rng.integers(0, 3) + t * (i % 2))})
    g = pd.DataFrame(rows)
    band = human_regret_band(g, people, N_BOOT, SEED).set_index("t")
    who = np.array([people[k] for k in zip(g["solver"], g["modality"], g["episode_id"], g["sample"])], dtype=object)
    ids = sorted(set(who))
    draws = solver_rng(SEED, f"participants|{HUMAN}|2d").integers(0, len(ids), size=(N_BOOT, len(ids)))
    levels = _levels(len(ids))
    for t in range(4):
        means = [pd.concat([g[(who == ids[k]) & (g["t"] == t).to_numpy()] for k in d])["regret"].mean() for d in draws]
        assert (band.loc[t, "regret_lo"], band.loc[t, "regret_hi"]) == pytest.approx(
            tuple(np.percentile(means, levels)), abs=1e-9)
