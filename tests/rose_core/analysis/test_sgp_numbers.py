"""The SGP numbers pinned: baselines and a human episode study through the participant session, exactly as the
code before episodes became one more item kind computed them (tests/fixtures/sgp/numbers.json), and the same
figures from SGP's one analysis entry point (`analysis.sgp.sgp_results`)."""
import json

from rose_core.analysis.sgp import HUMAN, sgp_results
from tests.sgp_numbers import BOOT, FIXTURE, SEED, _frame, compute

# added after the numbers were pinned: the illegal commands per play under each reader (the strict one equals the
# pinned `illegal`); compared on their own below, the pinned columns exactly
READER_COLUMNS = ("illegal_strict", "illegal_ivispar", "unclassified_ivispar")


def _pinned_columns(rows: list[dict]) -> list[dict]:
    for r in rows:
        assert r["illegal_strict"] == r["illegal"]
    return [{k: v for k, v in r.items() if k not in READER_COLUMNS} for r in rows]


def _agents_as_pinned(rows: list[dict]) -> list[dict]:
    """Added with the participant intervals (issue 22): `participants`, none for an agent (an integer on the
    human row, pinned there); an agent's row is otherwise exactly the one pinned before."""
    for r in rows:
        if r["solver"] != HUMAN:
            assert r["participants"] is None
    return [{k: v for k, v in r.items() if r["solver"] == HUMAN or k != "participants"} for r in rows]


def test_sgp_numbers_equal_the_pinned_ones(store, sgp_small):
    pinned = json.loads(FIXTURE.read_text())
    # the entry point on a study-less database: the agents on the whole build are the pinned baselines
    empty = sgp_results(store, sgp_small, 20, samples=3, seed=SEED, n_boot=BOOT, boot_seed=SEED)
    assert not empty.played and empty.agent_episodes == tuple(sgp_small.episodes)
    assert _agents_as_pinned(_pinned_columns(json.loads(json.dumps(_frame(empty.tables["summary"]))))) == \
        pinned["baselines"]["summary"]
    assert sgp_results(store, sgp_small, whole_build=False).tables is None

    got = json.loads(json.dumps(compute(store, sgp_small), sort_keys=True))
    got["baselines"]["summary"] = _agents_as_pinned(got["baselines"]["summary"])
    assert got["dataset_hash"] == pinned["dataset_hash"]
    assert got["baselines"] == pinned["baselines"]
    assert got["human"]["ends"] == pinned["human"]["ends"]
    assert got["human"]["episodes"] == pinned["human"]["episodes"]
    assert got["human"] == pinned["human"]
    # the pinned figures are figures: the random agent solves some, not all, and the humans' outcome mix is mixed
    rnd = next(r for r in pinned["baselines"]["summary"] if r["solver"] == "random (agent)")
    assert 0 < rnd["solved"] < rnd["plays"] and rnd["deviation"] > 0
    human = pinned["human"]["summary"][0]
    assert human["solved"] == 6 and human["plays"] == 9 and human["illegal"] > 0 and human["ineffective"] > 0
    # re-pinned on purpose (issue 22): three people solving 3/3, 0/3, 3/3 were 66.7 [35.4, 87.9] by Wilson over
    # the 9 plays; resampling the 3 people (expanded percentile at n = 3: practically min and max) gives [0, 100]
    assert human["participants"] == 3 and (human["lo"], human["hi"]) == (0.0, 100.0)

    # the entry point with the participants: their row is the pinned one, the agents play their episodes
    res = sgp_results(store, sgp_small, 20, samples=3, seed=SEED, n_boot=BOOT, boot_seed=SEED)
    rows = _agents_as_pinned(_pinned_columns(json.loads(json.dumps(_frame(res.tables["summary"])))))
    assert res.played and [r for r in rows if r["solver"] == HUMAN] == pinned["human"]["summary"]
    assert {r["solver"] for r in rows} == {HUMAN, "optimal (agent)", "random (agent)"}
    assert set(res.agent_episodes) == {e["episode_id"] for e in pinned["human"]["episodes"]}
