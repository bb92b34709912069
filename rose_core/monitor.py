"""What an experimenter watches while a study runs: who is where, and how covered the instances are."""
from __future__ import annotations

import time

import pandas as pd

from .dataset import Dataset
from .store import Store
from .study import Study, main_pool


def participants_frame(store: Store, study: Study) -> pd.DataFrame:
    rows = store.query(
        """SELECT p.participant_id, p.external_id, p.source, p.counterbalance, p.created_at, p.last_seen_at,
                  p.consent_at, p.practice_attempts, p.practice_passed, p.finished_at, p.end_reason,
                  coalesce(sum(r.kind = 'main'), 0) AS main_answered,
                  avg(CASE WHEN r.kind = 'main' THEN r.passed END) AS main_pass_rate,
                  avg(CASE WHEN r.kind = 'attention' THEN r.passed END) AS attention_pass_rate
           FROM participants p LEFT JOIN responses r ON r.participant_id = p.participant_id AND r.run_id = ?
           WHERE p.study_id = ? GROUP BY p.participant_id ORDER BY p.created_at""", (study.run_id, study.study_id))
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df["status"] = df.apply(lambda r: r["end_reason"] or ("active" if time.time() - r["last_seen_at"] < 600
                                                          else "idle"), axis=1)
    for col in ("created_at", "last_seen_at", "consent_at", "finished_at"):
        df[col] = pd.to_datetime(df[col], unit="s", utc=True)
    return df


def coverage(store: Store, ds: Dataset, study: Study) -> dict:
    """Answers per pool instance against the target: how far the study is from done."""
    pool = main_pool(ds, study.config)
    counts = dict((r["instance_id"], r["n"]) for r in store.query(
        "SELECT instance_id, count(*) AS n FROM responses WHERE run_id = ? AND kind = 'main' GROUP BY instance_id",
        (study.run_id,)))
    target = study.config.target_per_instance
    per = [min(counts.get(i.instance_id, 0), target) for i in pool]
    hist = pd.Series([counts.get(i.instance_id, 0) for i in pool]).value_counts().sort_index()
    return {"pool": len(pool), "target": target, "answers": sum(counts.values()),
            "complete_instances": sum(1 for v in per if v >= target),
            "progress": sum(per) / (target * len(pool)) if pool else 0.0,
            "histogram": {int(k): int(v) for k, v in hist.items()}}
