"""Scoring throughput against a floor measured in the same run, and linear time on hostile input.

Floor: a bare scan of the same responses with one fixed regex (`findall` of v0.1's
upper-case token pattern, nothing else), so the floor means the same thing whatever
the scorer does. Scoring = parse (final answer in free text: NFKC, reasoning blocks,
markdown, separators) + score (VALID, PASS, failure kind) into a Score record, on one core.

The mix: `responses.make_responses` (protocol answers, wrong answers, prose, missing
terminals) plus, with --styled (default 0.3), the same answers written the way models
write them (bold, lists, lower case, full-width punctuation, think blocks).

Linear time: each pathological shape is parsed at 1 MB and 2 MB; the ratio of the two
times should be near 2 (quadratic behaviour would show 4).

A record, not a requirement: what users wait for is measured end to end by bench/bench_parser.py (importing a
run, rescoring a database).

    python bench/bench_score.py [--n 300000] [--repeat 5] [--styled 0.3]
"""
from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from responses import make_responses  # noqa: E402

from rose_core import Dataset, build_dataset, parse, score  # noqa: E402

FLOOR = re.compile(r"(COUNT|SUBMIT)\s*\(\s*([+-]?\d+)\s*\)|CLICK\s*\(\s*R\s*([+-]?\d+)\s*,\s*C\s*([+-]?\d+)\s*\)"
                   r"|\b(DONE)\b")
FULL_WIDTH = str.maketrans("(),;", "（），；")


def styled(answer: str, rng: random.Random) -> str:
    """One answer re-written the way a model might write it."""
    actions = [a.strip() for a in answer.split(";") if a.strip()]
    way = rng.randrange(6)
    if way == 0:
        return " and ".join(f"**{a}**" for a in actions)
    if way == 1:
        return "Final answer:\n" + "\n".join(f"- {a}" for a in actions)
    if way == 2:
        return "; ".join(a.lower() for a in actions)
    if way == 3:
        return "；".join(actions).translate(FULL_WIDTH)
    if way == 4:
        return "<think>\nLet me look at each row. Row 2 looks odd.\n</think>\n\n" + "; ".join(actions)
    return "```\n" + "\n".join(actions) + "\n```"


HOSTILE = {
    "prose + answer": lambda n: "Let me think. " * (n // 14) + "CLICK(R1,C1); DONE",
    "70k-style clicks": lambda n: "CLICK(R1,C1); " * (n // 14) + "DONE",
    "clicks broken by prose": lambda n: "CLICK(R1,C1) x " * (n // 15) + "DONE",
    "unclosed calls": lambda n: "CLICK(" * (n // 6),
    "emphasis run": lambda n: "CLICK(R1,C1)" + "*`_" * (n // 3) + "x DONE",
    "fence run": lambda n: "CLICK(R1,C1)" + "```" * (n // 3) + "x DONE",
    "annotated line": lambda n: "- CLICK(R1,C1) " + "y" * n + "\n- DONE",
    "done words": lambda n: "done " * (n // 5),
    "think tags": lambda n: "<think>" * (n // 7),
    "full-width": lambda n: "CLICK（R1，C1）；" * (n // 13) + "DONE",
    "click-ish words": lambda n: "clicks tap select mark " * (n // 23) + "DONE",
    "bare pairs": lambda n: "CLICK(R1,C1) " + "(R1,C1) " * (n // 8) + "DONE",
    "keyword emphasis": lambda n: "**CLICK**(R1,C1); " * (n // 18) + "DONE",
    "restated terminals": lambda n: "CLICK(R1,C1); DONE\n" + "DONE\n" * (n // 5),
    "blank lines (not ASCII)": lambda n: "\u00e9" + "\n" * n + "DONE",
    "spaces then prose": lambda n: "\u00e9 CLICK(R1,C1);" + " " * n + "x DONE",
}


def _time(read, text: str) -> float:
    t0 = time.process_time()
    read(text)
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--styled", type=float, default=0.3, help="fraction of answers re-written in a model's style")
    ap.add_argument("--dataset", help="an existing dataset folder (default: build a 0.2-scale one)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(a.dataset) if a.dataset else Path(tmp) / "ds"
        if not a.dataset:
            build_dataset(root, scale=0.2)
        ds = Dataset.load(root)
    rng = random.Random(1)
    pairs = [(ds.key(i), styled(r, rng) if rng.random() < a.styled else r) for i, r in make_responses(ds, a.n)]
    texts = [r for _, r in pairs]
    find = FLOOR.findall
    score_rates, floor_rates = [], []
    for _ in range(a.repeat):  # CPU time of this process: one core, whatever else the machine runs
        t0 = time.process_time()
        for k, r in pairs:
            score(k, r)
        score_rates.append(len(pairs) / (time.process_time() - t0))
        t0 = time.process_time()
        for r in texts:
            find(r)
        floor_rates.append(len(texts) / (time.process_time() - t0))
    s, f = statistics.median(score_rates), statistics.median(floor_rates)
    mean_len = statistics.fmean(len(t) for t in texts)
    print(f"score: {len(pairs)} responses (mean {mean_len:.0f} chars, {a.styled:.0%} model-styled), "
          f"median of {a.repeat} runs, CPU time on one core")
    print(f"  parse+score        {s:10,.0f} responses/s  (best run {max(score_rates):,.0f})")
    print(f"  floor (regex scan) {f:10,.0f} responses/s  (best run {max(floor_rates):,.0f})")
    print(f"  ratio score/floor  {s / f:10.2f}")
    big = HOSTILE["prose + answer"](1_050_000)
    t0 = time.process_time()
    score(pairs[0][0], big)
    print(f"  one {len(big) / 1e6:.1f} MB response: {1e3 * (time.process_time() - t0):.1f} ms")
    print("linear time (ms at 1 MB, at 2 MB, ratio; ~2 is linear, ~4 quadratic):")
    for name, make in HOSTILE.items():
        t1 = min(_time(parse, make(1_000_000)) for _ in range(3))
        t2 = min(_time(parse, make(2_000_000)) for _ in range(3))
        print(f"  {name:24s} {1e3 * t1:8.1f} {1e3 * t2:8.1f} {t2 / t1:6.2f}")


if __name__ == "__main__":
    main()
