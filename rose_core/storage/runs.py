"""The `runs` table: one row per run (a model's, an agent's, a study's humans), which its responses belong to."""
from __future__ import annotations

from .connection import Connection


def other_dataset_builds(conn: Connection, dataset_hash: str, limit: int = 3) -> list[tuple[str, str]]:
    """Up to `limit` runs and studies scored against another dataset build than `dataset_hash`, as
    ('run <id>' or 'study <id>', their dataset hash)."""
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT 'run ' || run_id, dataset_hash FROM runs WHERE dataset_hash != ? UNION ALL "
        f"SELECT 'study ' || study_id, dataset_hash FROM studies WHERE dataset_hash != ? LIMIT {int(limit)}",
        (dataset_hash, dataset_hash)).fetchall()]
