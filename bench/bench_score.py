"""Scoring throughput against a floor measured in the same run.

Floor: a bare scan of the same responses with the protocol's token regex
(`findall`, nothing else). Scoring = parse (final answer in free text) + score
(VALID, PASS, failure kind) into a Score record, on one core.

    python bench/bench_score.py [--n 300000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from responses import make_responses  # noqa: E402

from rose_core import Dataset, build_dataset, score  # noqa: E402
from rose_core.protocol import _TOKEN  # noqa: E402

TARGET_PER_S = 200_000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dataset", help="an existing dataset folder (default: build a 0.2-scale one)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(a.dataset) if a.dataset else Path(tmp) / "ds"
        if not a.dataset:
            build_dataset(root, scale=0.2)
        ds = Dataset.load(root)
    pairs = [(ds.key(i), r) for i, r in make_responses(ds, a.n)]
    texts = [r for _, r in pairs]
    find = _TOKEN.findall
    score_rates, floor_rates = [], []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        for k, r in pairs:
            score(k, r)
        score_rates.append(len(pairs) / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        for r in texts:
            find(r)
        floor_rates.append(len(texts) / (time.perf_counter() - t0))
    s, f = statistics.median(score_rates), statistics.median(floor_rates)
    mean_len = statistics.fmean(len(t) for t in texts)
    print(f"score: {len(pairs)} responses (mean {mean_len:.0f} chars), median of {a.repeat} runs, one core")
    print(f"  parse+score        {s:10,.0f} responses/s")
    print(f"  floor (regex scan) {f:10,.0f} responses/s")
    print(f"  ratio score/floor  {s / f:10.2f}")
    print(f"  target >= {TARGET_PER_S:,}/s: {'met' if s >= TARGET_PER_S else 'NOT met'}")
    big = "Let me think. " * 75_000 + "CLICK(R1,C1); DONE"
    t0 = time.perf_counter()
    score(pairs[0][0], big)
    print(f"  one {len(big) / 1e6:.1f} MB response: {1e3 * (time.perf_counter() - t0):.1f} ms")


if __name__ == "__main__":
    main()
