"""The participant table's streak column, vectorized, equals the plain definition (`_longest_streak` over
`Answer.says`) on random answers, missing and unreadable records included."""
import json
import random

import pandas as pd

from rose_core.analysis.answers import decode_answer
from rose_core.analysis.selection import _longest_streak, _longest_streaks


def test_vectorized_streaks_equal_the_definition():
    rng = random.Random(3)
    records = [json.dumps({"clicks": [[1, 2]], "count": None}), json.dumps({"clicks": [[1, 2]], "count": 1}),
               json.dumps({"clicks": [[2, 1], [1, 2]], "count": None}), json.dumps({"clicks": [], "count": 0}),
               json.dumps({"clicks": [], "count": None}), "not json", None, json.dumps({"clicks": [[3, 3]]})]
    rows = []
    for p in range(40):
        for _ in range(rng.randint(0, 30)):
            rows.append({"participant_id": f"p{p:02d}", "parsed": rng.choice(records[:rng.randint(1, len(records))])})
    main = pd.DataFrame(rows)
    got = _longest_streaks(main)
    want = main.groupby("participant_id")["parsed"].agg(lambda x: _longest_streak([decode_answer(v).says() for v in x]))
    assert got.to_dict() == want.to_dict()
    assert _longest_streaks(main.iloc[:0]).empty
