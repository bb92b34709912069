"""Coverage of the human intervals: do the 95 % intervals of the main table cover the truth 95 % of the time?

Each simulated study draws answers from a known truth straight into the analysis's input frame (the columns
`responses_frame` gives; `analysis.tables.solver_row` computes the row exactly as the Results page and `report`
do): `--people` participants answer `--items` items each, every item answered by `--raters` of them. The items
are spread evenly over the five main templates and the five subsets; participant i answers an item of template
t and subset s right with probability expit(logit(p[t, s]) + u_i), u_i ~ N(0, --person-sd²) (a person effect:
one person's answers cluster), optionally plus an item effect v_j ~ N(0, --item-sd²) fixed across the studies
(the benchmark's items are a fixed set). The truth of a template rate is the mean over that template's items of
the participants' population accuracy on the item (the person effect integrated out by Gauss–Hermite
quadrature); Avg's is the mean of the five. Which participant answers which item is drawn anew in every study.

Reported: per template and for Avg, the share of studies whose interval covers the truth, with its Monte-Carlo
standard error sqrt(c (1 − c) / studies); and the pooled coverage over the five templates. Target 93–97 %.

    python bench/bench_coverage.py [--studies 400] [--people 30] [--items 40] [--raters 3] [--boot 1000]
                                   [--person-sd 0.8] [--item-sd 0] [--seed 0]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rose_core.analysis.tables import solver_row  # noqa: E402
from rose_core.benchmarks.rose.records import MAIN_TEMPLATES, SUBSETS, TEMPLATE_LABEL  # noqa: E402

# Per template (rows: T1..T5) and subset (columns: SUBSETS): the population's typical accuracy, a realistic human
# profile (counting easier than clicking, pixel subsets harder).
ACCURACY = np.array([
    [0.97, 0.95, 0.96, 0.90, 0.93],
    [0.94, 0.92, 0.93, 0.85, 0.88],
    [0.90, 0.88, 0.89, 0.78, 0.82],
    [0.92, 0.90, 0.91, 0.80, 0.84],
    [0.88, 0.85, 0.86, 0.75, 0.80],
])


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p / (1 - p))


def population_accuracy(logit: np.ndarray, person_sd: float) -> np.ndarray:
    """E[expit(logit + u)], u ~ N(0, person_sd²): the share of the population answering right (Gauss–Hermite)."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    return (1 / (1 + np.exp(-(logit[..., None] + person_sd * x)))) @ w


def design(items: int, rng: np.random.Generator, item_sd: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fixed item set: template and subset codes (balanced) and each item's logit (with its item effect)."""
    t = np.arange(items) % len(MAIN_TEMPLATES)
    s = (np.arange(items) // len(MAIN_TEMPLATES)) % len(SUBSETS)
    logit = _logit(ACCURACY[t, s]) + item_sd * rng.standard_normal(items)
    return t, s, logit


def assign(people: int, per_person: int, n_items: int, raters: int, rng: np.random.Generator) -> np.ndarray:
    """(people x per_person) item indices: every item answered by exactly `raters` different people. Rounds of
    a random permutation of the items dealt out in order; a person dealt one item twice is swapped with another
    person's slot until nobody is (a person never answers an item twice)."""
    slots = np.concatenate([rng.permutation(n_items) for _ in range(raters)]).reshape(people, per_person)
    for _ in range(10_000):
        dup = [i for i in range(people) if len(set(slots[i].tolist())) < per_person]
        if not dup:
            return slots
        i = dup[0]
        row = slots[i]
        k = int(np.flatnonzero(pd.Series(row).duplicated().to_numpy())[0])
        j, m = int(rng.integers(people)), int(rng.integers(per_person))
        if j != i and slots[j, m] not in row and row[k] not in slots[j]:
            slots[i, k], slots[j, m] = slots[j, m], slots[i, k]
    raise RuntimeError("could not deal the items without a repeat")


def one_study(k: int, args: argparse.Namespace, t: np.ndarray, s: np.ndarray, logit: np.ndarray) -> pd.DataFrame:
    """One simulated study as the analysis's input frame (human rows of `responses_frame`)."""
    rng = np.random.default_rng([args.seed, k])
    n_items = len(t)
    slots = assign(args.people, args.items, n_items, args.raters, rng)
    person = np.repeat(np.arange(args.people), args.items)
    item = slots.ravel()
    u = args.person_sd * rng.standard_normal(args.people)
    p = 1 / (1 + np.exp(-(logit[item] + u[person])))
    passed = (rng.random(len(item)) < p).astype(np.int64)
    return pd.DataFrame({
        "solver_kind": "human", "participant_id": [f"p{i:03d}" for i in person],
        "scene_id": [f"s{j:04d}" for j in item], "template": np.array(MAIN_TEMPLATES)[t[item]],
        "subset": np.array(SUBSETS)[s[item]], "passed": passed, "valid": np.ones(len(item), dtype=np.int64),
        "unit": [f"p{i:03d}" for i in person]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--studies", type=int, default=400)
    ap.add_argument("--people", type=int, default=30)
    ap.add_argument("--items", type=int, default=40, help="items per participant")
    ap.add_argument("--raters", type=int, default=3, help="participants per item")
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--person-sd", type=float, default=0.8, help="SD of the person effect on the logit scale")
    ap.add_argument("--item-sd", type=float, default=0.0, help="SD of a fixed item effect on the logit scale")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if (args.people * args.items) % args.raters:
        sys.exit(f"--people × --items ({args.people * args.items}) must be a multiple of --raters ({args.raters})")
    n_items = args.people * args.items // args.raters
    t, s, logit = design(n_items, np.random.default_rng([args.seed, 10**9]), args.item_sd)
    pop = population_accuracy(logit, args.person_sd)
    truth = {TEMPLATE_LABEL[tm]: 100 * float(pop[t == k].mean()) for k, tm in enumerate(MAIN_TEMPLATES)}
    truth["Avg"] = float(np.mean([truth[TEMPLATE_LABEL[tm]] for tm in MAIN_TEMPLATES]))
    names = list(truth)
    hits = {n: 0 for n in names}
    widths = {n: [] for n in names}
    start = time.perf_counter()
    for k in range(args.studies):
        row = solver_row("Human", one_study(k, args, t, s, logit), n_boot=args.boot, seed=k)
        for n in names:
            hits[n] += int(row[f"{n} lo"] <= truth[n] <= row[f"{n} hi"])
            widths[n].append(row[f"{n} hi"] - row[f"{n} lo"])
    took = time.perf_counter() - start
    print(f"{args.studies} simulated studies: {args.people} participants × {args.items} items, {args.raters} raters "
          f"per item ({n_items} items), person SD {args.person_sd}, item SD {args.item_sd}, {args.boot} resamples, "
          f"seed {args.seed}; {took:.1f} s ({1000 * took / args.studies:.0f} ms a study); load {os.getloadavg()[0]:.2f}")
    print(f"{'statistic':<10} {'truth':>6} {'coverage':>9} {'MC s.e.':>8} {'mean width':>11}")
    for n in names:
        c = hits[n] / args.studies
        print(f"{n:<10} {truth[n]:6.2f} {100 * c:8.1f}% {100 * np.sqrt(c * (1 - c) / args.studies):7.1f}% "
              f"{np.mean(widths[n]):10.2f}")
    pooled = sum(hits[TEMPLATE_LABEL[tm]] for tm in MAIN_TEMPLATES) / (5 * args.studies)
    print(f"templates pooled: {100 * pooled:.1f}% (MC s.e. {100 * np.sqrt(pooled * (1 - pooled) / (5 * args.studies)):.1f}%, "
          "the five templates' studies not independent of one another)")


if __name__ == "__main__":
    main()
