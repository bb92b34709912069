"""What an experimenter watches while a study runs: who is where, how covered the instances are, and how many
participants the study still needs."""
from __future__ import annotations

import time

import pandas as pd

from ..benchmarks.rose.dataset import Dataset
from ..storage import participants, responses
from ..storage.connection import Store
from .config import Study
from .policy import main_pool


def participants_frame(store: Store, study: Study, counted: bool = True) -> pd.DataFrame:
    """The study's counted participants (or, `counted=False`, its previews, simulated and test ones), one row each
    with their progress and status."""
    with store.connect() as c:
        df = pd.DataFrame(participants.participants_summary(c, study, counted))
    if df.empty:
        return df
    df["status"] = df.apply(lambda r: r["end_reason"] or ("active" if time.time() - r["last_seen_at"] < 600
                                                          else "idle"), axis=1)
    for col in ("created_at", "last_seen_at", "consent_at", "finished_at"):
        df[col] = pd.to_datetime(df[col], unit="s", utc=True)
    return df


def uncounted_frame(store: Store, study: Study) -> pd.DataFrame:
    """Previews, simulated and test participants of the study, listed apart from the counted ones."""
    return participants_frame(store, study, counted=False)


def coverage(store: Store, ds: Dataset, study: Study) -> dict:
    """Answers per pool instance against the target, and participants needed (pool × target ÷ items each).
    `answers`: every counted main answer; the instances at target, the progress and the histogram count only what
    fills the targets, as the assignment does (anonymous visitors' answers only with `anonymous_counts`)."""
    pool = main_pool(ds, study.config)
    with store.connect() as c:
        every = responses.main_answer_counts(c, study.run_id)
        # what fills the targets (anonymous visitors' answers only when the study says so): the assignment's rule
        counts = responses.main_answer_counts(c, study.run_id, study.config.counts_anonymous)
        ends = participants.status_counts(c, study.study_id)
    return coverage_figures(study, [i.instance_id for i in pool], every, counts, ends)


def coverage_figures(study: Study, pool: list[str], every: dict[str, int], counts: dict[str, int],
                     ends: dict) -> dict:
    """The coverage figures of a pool (instance or episode ids), for ROSE's items and SGP's episodes alike:
    `every` counted answer per id, `counts` those that fill the targets, `ends` participants by end status."""
    target = study.config.target_per_instance
    per = [min(counts.get(i, 0), target) for i in pool]
    hist = pd.Series([counts.get(i, 0) for i in pool], dtype=int).value_counts().sort_index()
    return {"pool": len(pool), "target": target, "answers": sum(every.values()),
            "complete_instances": sum(1 for v in per if v >= target),
            "progress": sum(per) / (target * len(pool)) if pool else 0.0,
            "histogram": {int(k): int(v) for k, v in hist.items()},
            "participants_needed": study.participants_needed(len(pool)),
            "participants_completed": int(ends.get("completed", 0)),
            "participants_by_status": {str(k): int(v) for k, v in ends.items()}}
