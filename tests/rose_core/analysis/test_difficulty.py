"""PASS against generation parameters covers every response once."""
from rose_core.analysis import DIFFICULTY_PARAMS, difficulty_table, instance_params, responses_frame


def test_difficulty_covers_every_response(populated_db, small_dataset):
    df = responses_frame(populated_db)
    params = instance_params(small_dataset)
    d = difficulty_table(df, params, "targets in grid")
    assert {"solver", "value", "PASS", "n"} <= set(d.columns) and d["n"].sum() == len(df)
    assert ((d["PASS"] >= 0) & (d["PASS"] <= 100)).all()
    oracle = difficulty_table(df[df["solver"] == "oracle (agent)"], params, "template")
    assert (oracle["PASS"] == 100).all() and set(oracle["value"]) >= {"G-Cnt", "L-Clk"}
    assert set(DIFFICULTY_PARAMS) >= {"grid cells", "subset", "PixelEdit changed pixels"}
