"""The SGP numbers pinned: baselines and a human episode study through the participant session, exactly as the
code before episodes became one more item kind computed them (tests/fixtures/sgp/numbers.json)."""
import json

from tests.sgp_numbers import FIXTURE, compute


def test_sgp_numbers_equal_the_pinned_ones(store, sgp_small):
    pinned = json.loads(FIXTURE.read_text())
    got = json.loads(json.dumps(compute(store, sgp_small), sort_keys=True))
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
