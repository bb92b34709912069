"""Planning a human study before (or while) running it: how many participants the pool needs, how precise the
human figures will be, how long a participant takes and what the study costs.

The precision figures use the project's own intervals at the expected accuracy: each template rate gets the
95 % Wilson interval (as the main table) of n = instances of that template × participants per instance
responses; the human Avg (mean of the five template rates, bootstrapped over participants on the dashboards) gets
the normal approximation of that bootstrap, 2 × 1.96 × SE with SE² = Σ_t p_t(1 − p_t)/n_t / 25, which is what
the percentile bootstrap converges to when participants answer independently with the same accuracy.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import MAIN_TEMPLATES, TEMPLATE_LABEL
from ..instrument.config import StudyConfig
from ..storage.connection import Store
from ..storage.responses import read_response_rows

Z95 = 1.959963984540054        # two-sided 95 % normal quantile
DEFAULT_SECONDS_PER_ITEM = 15.0  # used when no participant has answered yet and none is given


@dataclass(frozen=True)
class StudyPlan:
    pool: int                                  # instances in the pool
    per_template: dict[str, int]               # instances per template (label -> count)
    items_per_participant: int
    participants_per_instance: int
    accuracy: dict[str, float]                 # expected share right per template (label -> 0..1)
    participants: int                          # participants who finish, pool × per instance ÷ items (rounded up)
    responses: dict[str, int]                  # main responses per template when the pool is full
    template_width: dict[str, float]           # expected 95 % Wilson interval width, percentage points
    avg_width: float | None                    # expected 95 % interval width of the human Avg (pp); None: no Avg
    items_shown: int                           # per participant: main items + attention checks + one practice round
    seconds_per_item: float
    seconds_source: str                        # where seconds_per_item came from
    minutes_per_participant: float
    participant_hours: float                   # all participants together
    hourly_rate: float | None
    cost_per_participant: float | None
    cost: float | None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def wilson_width(p: float, n: int) -> float:
    """Width (percentage points) of the main table's 95 % Wilson interval at observed share p of n responses."""
    from ..common.stats import wilson

    if n <= 0:
        raise ValueError("a template with no responses has no interval")
    lo, hi = wilson(p * n, n)
    return hi - lo


def avg_width(accuracy: Mapping[str, float], responses: Mapping[str, int]) -> float | None:
    """Expected 95 % width (pp) of the mean of the five main template rates; None unless all five are there."""
    labels = [TEMPLATE_LABEL[t] for t in MAIN_TEMPLATES]
    if any(responses.get(lab, 0) <= 0 for lab in labels):
        return None
    var = sum(accuracy[lab] * (1 - accuracy[lab]) / responses[lab] for lab in labels) / len(labels) ** 2
    return 200 * Z95 * math.sqrt(var)


def plan_study(per_template: Mapping[str, int], items_per_participant: int, participants_per_instance: int,
               accuracy: float | Mapping[str, float], seconds_per_item: float, seconds_source: str = "given",
               hourly_rate: float | None = None, attention_checks: int = 0, practice_items: int = 0) -> StudyPlan:
    """The plan for a pool with `per_template` instances per template label (e.g. {"G-Cnt": 120, ...})."""
    per_template = {k: int(v) for k, v in per_template.items() if int(v) > 0}
    pool = sum(per_template.values())
    if pool == 0:
        raise ValueError("the pool is empty: no instance matches the split, subsets and templates")
    if items_per_participant < 1 or participants_per_instance < 1:
        raise ValueError("items per participant and participants per instance must be at least 1")
    if items_per_participant > pool:
        raise ValueError(f"items per participant ({items_per_participant}) exceed the pool ({pool} instances): "
                         "a participant never answers one instance twice")
    if isinstance(accuracy, Mapping):
        missing = [t for t in per_template if t not in accuracy]
        if missing:
            raise ValueError(f"expected accuracy missing for {', '.join(missing)}")
        acc = {t: float(accuracy[t]) for t in per_template}
    else:
        acc = {t: float(accuracy) for t in per_template}
    for t, p in acc.items():
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"expected accuracy for {t} is {p}: give a share between 0 and 1 (0.9 for 90 %)")
    if not seconds_per_item > 0:
        raise ValueError(f"seconds per item must be positive, got {seconds_per_item}")
    if hourly_rate is not None and hourly_rate < 0:
        raise ValueError(f"hourly rate must not be negative, got {hourly_rate}")
    participants = -(-pool * participants_per_instance // items_per_participant)
    responses = {t: n * participants_per_instance for t, n in per_template.items()}
    widths = {t: wilson_width(acc[t], responses[t]) for t in per_template}
    shown = items_per_participant + attention_checks + practice_items
    minutes = shown * seconds_per_item / 60
    hours = participants * minutes / 60
    notes = []
    aw = avg_width(acc, responses)
    if aw is None:
        notes.append("no human Avg: it needs all five main templates (G-Cnt, L-Cnt, L-Clk, V-Clk, Excl-CS) in the pool")
    if practice_items:
        notes.append(f"time counts one practice round of {practice_items} items; each retry adds as many")
    return StudyPlan(pool=pool, per_template=per_template, items_per_participant=items_per_participant,
                     participants_per_instance=participants_per_instance, accuracy=acc, participants=participants,
                     responses=responses, template_width=widths, avg_width=aw, items_shown=shown,
                     seconds_per_item=float(seconds_per_item), seconds_source=seconds_source,
                     minutes_per_participant=minutes, participant_hours=hours, hourly_rate=hourly_rate,
                     cost_per_participant=None if hourly_rate is None else hourly_rate * minutes / 60,
                     cost=None if hourly_rate is None else hourly_rate * hours, notes=notes)


def pool_by_template(ds: Dataset, cfg: StudyConfig) -> dict[str, int]:
    """Instances per template label in a study's main pool (before creation the pool still holds the scenes
    practice will take; `create_study` then keeps those out)."""
    from ..instrument.policy import main_pool

    from ..benchmarks.rose.records import TEMPLATES

    out: dict[str, int] = {}
    for inst in sorted(main_pool(ds, cfg), key=lambda i: TEMPLATES.index(i.template)):
        lab = TEMPLATE_LABEL[inst.template]
        out[lab] = out.get(lab, 0) + 1
    return out


def median_seconds_per_item(store: Store, study_id: str | None = None) -> tuple[float, int] | None:
    """(median server time per main item in seconds, responses it is from), over every study or one; None when
    no participant has answered yet. Server time: assigned → answered on the server's clock (`total_ms`)."""
    with store.connect() as conn:
        _, rows = read_response_rows(conn, ("total_ms",), kind="main", solver_kind="human", timed=True,
                                     study_id=study_id or None)
    ms = sorted(float(r[0]) for r in rows)
    if not ms:
        return None
    mid = len(ms) // 2
    median = ms[mid] if len(ms) % 2 else (ms[mid - 1] + ms[mid]) / 2
    return median / 1000, len(ms)


def seconds_per_item(store: Store | None, given: float | None, study_id: str | None = None) -> tuple[float, str]:
    """The time per item to plan with, and where it came from: given, else measured so far, else the default."""
    if given is not None:
        return float(given), "given"
    measured = median_seconds_per_item(store, study_id) if store is not None else None
    if measured is not None:
        where = f"study {study_id}" if study_id else "every study"
        return measured[0], f"median server time of {measured[1]:,} main responses so far ({where})"
    return DEFAULT_SECONDS_PER_ITEM, f"default {DEFAULT_SECONDS_PER_ITEM:g} s (no participant has answered yet)"


def plan_for_config(ds: Dataset, cfg: StudyConfig, accuracy: float | Mapping[str, float], store: Store | None = None,
                    seconds: float | None = None, hourly_rate: float | None = None,
                    study_id: str | None = None) -> StudyPlan:
    """The plan for a study configuration (created or not) over a dataset."""
    secs, source = seconds_per_item(store, seconds, study_id)
    plan = plan_study(pool_by_template(ds, cfg), cfg.items_per_participant, cfg.target_per_instance, accuracy,
                      secs, source, hourly_rate, cfg.attention_checks, cfg.practice_items)
    from ..instrument.sample import describe

    plan.notes.insert(0, describe(cfg))
    if cfg.participants:
        plan.notes.append(f"planned participants: {cfg.participants} (the pool needs {plan.participants})")
    return plan


def plan_rows(p: StudyPlan) -> list[dict]:
    """Per template: instances, responses, expected accuracy and interval width; then the Avg row."""
    from .display import fmt_count, fmt_rate

    rows = [{"template": t, "instances": fmt_count(n), "responses": fmt_count(p.responses[t]),
             "expected PASS %": fmt_rate(100 * p.accuracy[t]),
             "95 % interval width (pp)": fmt_rate(p.template_width[t]), "interval": "Wilson"}
            for t, n in p.per_template.items()]
    rows.append({"template": "Avg (human)", "instances": fmt_count(p.pool),
                 "responses": fmt_count(sum(p.responses.values())),
                 "expected PASS %": fmt_rate(None if p.avg_width is None else 100 * sum(
                     p.accuracy[TEMPLATE_LABEL[t]] for t in MAIN_TEMPLATES) / len(MAIN_TEMPLATES)),
                 "95 % interval width (pp)": fmt_rate(p.avg_width),
                 "interval": "bootstrap over participants (normal approximation)"})
    return rows


def summary_lines(p: StudyPlan, currency: str = "") -> list[str]:
    from .display import fmt_count, fmt_number, fmt_rate

    money = (lambda x: f"{currency}{x:,.2f}")
    lines = [f"pool: {fmt_count(p.pool)} instances × {p.participants_per_instance} participants each ÷ "
             f"{p.items_per_participant} items per participant = {fmt_count(p.participants)} participants who finish",
             f"time per participant: {p.items_shown} items shown × {fmt_number(p.seconds_per_item)} s = "
             f"{fmt_number(p.minutes_per_participant)} min (seconds per item: {p.seconds_source})",
             f"all participants: {fmt_number(p.participant_hours)} participant-hours",
             f"expected 95 % interval width of the human Avg: {fmt_rate(p.avg_width)} pp"]
    if p.hourly_rate is not None:
        lines.append(f"cost at {money(p.hourly_rate)}/h: {money(p.cost_per_participant)} per participant, "
                     f"{money(p.cost)} in all (platform fees not included)")
    return lines + [f"note: {n}" for n in p.notes]


__all__: Sequence[str] = ["StudyPlan", "plan_study", "plan_for_config", "pool_by_template", "median_seconds_per_item",
                          "seconds_per_item", "wilson_width", "avg_width", "plan_rows", "summary_lines", "Z95",
                          "DEFAULT_SECONDS_PER_ITEM"]
