"""Aggregate scored responses into the ROSE table row of a solver.

Definitions (ROSE spec):
  * template PASS = share of that template's instances answered exactly right;
  * Avg = mean of the five template PASS rates (T1..T5), *not* the pooled instance rate
    (the pooled rate is reported beside it as `pooled`);
  * Glyph / Emoji / Pixel = the same mean of five template rates, within those subsets;
  * VALID = pooled share of T1..T5 responses that follow the grammar;
  * Counting Avg = mean(G-Cnt, L-Cnt); Action Avg = mean(L-Clk, V-Clk, Excl-CS);
    gap = Counting Avg - Action Avg.
Rates are percentages. A rate with no instance is None (never 0), so a partial run
cannot look like a failing one.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import fmean
from typing import Iterable

from .records import GROUPS, MAIN_TEMPLATES, SUBSET_GROUP, TEMPLATE_LABEL, TEMPLATES

COUNTING = ("T1", "T2")
ACTION = ("T3", "T4", "T5")


@dataclass(frozen=True)
class ScoredRow:
    """The minimum a summary needs of one scored response."""

    template: str
    subset: str
    passed: bool
    valid: bool


@dataclass
class Summary:
    n: dict[str, int]                          # instances per template (incl. bridges)
    pass_rate: dict[str, float | None]         # per template label (G-Cnt ... mL-Cnt)
    valid_rate: dict[str, float | None]
    groups: dict[str, float | None]            # Glyph / Emoji / Pixel
    avg: float | None
    pooled: float | None
    valid: float | None
    counting_avg: float | None
    action_avg: float | None
    gap: float | None
    avg_method: str = field(default="mean of the five template PASS rates (T1..T5)")

    def to_json(self) -> dict:
        return asdict(self)


def rate(hits: int, n: int) -> float | None:
    """A percentage, or None when there is nothing to rate (never 0 for "no data")."""
    return 100.0 * hits / n if n else None


def mean_of_rates(values: Iterable[float | None]) -> float | None:
    """The mean, or None when any rate is missing (an Avg over four templates is not an Avg)."""
    vals = list(values)
    return None if not vals or any(v is None for v in vals) else fmean(vals)  # type: ignore[arg-type]


def summarize(rows: Iterable[ScoredRow]) -> Summary:
    n = {t: 0 for t in TEMPLATES}
    passed = dict.fromkeys(TEMPLATES, 0)
    valid = dict.fromkeys(TEMPLATES, 0)
    g_n: dict[tuple[str, str], int] = {}
    g_p: dict[tuple[str, str], int] = {}
    for r in rows:
        n[r.template] += 1
        passed[r.template] += r.passed
        valid[r.template] += r.valid
        if r.template in MAIN_TEMPLATES:
            k = (SUBSET_GROUP[r.subset], r.template)
            g_n[k] = g_n.get(k, 0) + 1
            g_p[k] = g_p.get(k, 0) + r.passed
    by_t = {t: rate(passed[t], n[t]) for t in TEMPLATES}
    main_n = sum(n[t] for t in MAIN_TEMPLATES)
    groups = {}
    for g in GROUPS:
        rates = [rate(g_p.get((g, t), 0), g_n.get((g, t), 0)) for t in MAIN_TEMPLATES]
        groups[g] = mean_of_rates(rates) if any(g_n.get((g, t)) for t in MAIN_TEMPLATES) else None
    counting = mean_of_rates(by_t[t] for t in COUNTING)
    action = mean_of_rates(by_t[t] for t in ACTION)
    return Summary(
        n={TEMPLATE_LABEL[t]: n[t] for t in TEMPLATES},
        pass_rate={TEMPLATE_LABEL[t]: by_t[t] for t in TEMPLATES},
        valid_rate={TEMPLATE_LABEL[t]: rate(valid[t], n[t]) for t in TEMPLATES},
        groups=groups,
        avg=mean_of_rates(by_t[t] for t in MAIN_TEMPLATES),
        pooled=rate(sum(passed[t] for t in MAIN_TEMPLATES), main_n),
        valid=rate(sum(valid[t] for t in MAIN_TEMPLATES), main_n),
        counting_avg=counting, action_avg=action,
        gap=None if counting is None or action is None else counting - action,
    )


def format_summary(name: str, s: Summary) -> str:
    """A fixed-width text table of one solver's row, for the command line."""
    def f(v: float | None) -> str:
        return "   -  " if v is None else f"{v:6.1f}"

    labels = [TEMPLATE_LABEL[t] for t in TEMPLATES]
    lines = [
        f"solver: {name}",
        "            " + " ".join(f"{lab:>7}" for lab in labels),
        "  n         " + " ".join(f"{s.n[lab]:>7}" for lab in labels),
        "  PASS %    " + " ".join(f"{f(s.pass_rate[lab]):>7}" for lab in labels),
        "  VALID %   " + " ".join(f"{f(s.valid_rate[lab]):>7}" for lab in labels),
        "  Glyph {}  Emoji {}  Pixel {}".format(*(f(s.groups[g]) for g in GROUPS)),
        f"  Avg {f(s.avg)}  ({s.avg_method}; pooled instance rate {f(s.pooled).strip()})",
        f"  VALID {f(s.valid)}  (pooled over T1..T5)",
        f"  Counting Avg {f(s.counting_avg)}  Action Avg {f(s.action_avg)}  gap {f(s.gap)}",
    ]
    return "\n".join(lines)
