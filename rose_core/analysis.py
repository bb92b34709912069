"""Scored responses from the store as frames, and per-run summary rows (the ROSE table's raw material)."""
from __future__ import annotations

import pandas as pd

from .metrics import ScoredRow, Summary, summarize
from .store import Store

_SQL = """
SELECT r.run_id, runs.solver_kind, runs.solver_name, runs.study_id, r.participant_id, r.instance_id,
       r.template, r.subset, r.split, r.scene_id, r.valid, r.passed, r.failure, r.protocol, r.total_ms,
       r.first_action_ms
FROM responses r JOIN runs USING (run_id)
WHERE r.kind = 'main'
"""


def responses_frame(store: Store) -> pd.DataFrame:
    """Every main response (participants' practice and attention items excluded), one row each."""
    with store.connect() as conn:
        return pd.read_sql_query(_SQL, conn)


def summarize_frame(df: pd.DataFrame) -> Summary:
    return summarize(ScoredRow(t, s, bool(p), bool(v))
                     for t, s, p, v in zip(df["template"], df["subset"], df["passed"], df["valid"]))


def run_summaries(store: Store) -> pd.DataFrame:
    """One row per run: solver, kind, n, per-template PASS, Glyph/Emoji/Pixel, Avg, pooled, VALID, gap."""
    df = responses_frame(store)
    rows = []
    for (run_id, kind, name), g in df.groupby(["run_id", "solver_kind", "solver_name"], sort=False):
        s = summarize_frame(g)
        rows.append({"run": run_id, "solver": name, "kind": kind, "responses": len(g),
                     **{k: v for k, v in s.pass_rate.items()}, **s.groups, "Avg": s.avg, "pooled": s.pooled,
                     "VALID": s.valid, "Counting Avg": s.counting_avg, "Action Avg": s.action_avg, "gap": s.gap})
    return pd.DataFrame(rows)
