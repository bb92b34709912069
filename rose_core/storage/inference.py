"""SGP's board-state inference answers (`sgp_inference`): one row per written board, with its true board.

Rows of one (build, solver, modality) are stored together: an import replaces that group whole or not at all.
Plain SQL that SQLite and PostgreSQL both run.
"""
from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Sequence

from .connection import Connection


@dataclass(frozen=True)
class InferenceRow:
    dataset_hash: str
    solver: str
    solver_kind: str               # model / agent
    modality: str                  # 2d / 3d / text
    item_id: str                   # "<episode_id>:<board>"
    episode_id: str
    board: str                     # start / goal
    sample: int
    n_geoms: int
    truth: str                     # JSON: the true board's state
    response: str                  # what the solver wrote
    ms: float | None               # the solver's time for this board (a model's request latency)
    source_file: str
    imported_at: float


_COLS = [f.name for f in fields(InferenceRow)]
_INSERT = f"INSERT INTO sgp_inference({', '.join(_COLS)}) VALUES ({', '.join('?' * len(_COLS))})"
Group = tuple[str, str, str]       # (dataset_hash, solver, modality)


def stored_groups(conn: Connection, groups: Sequence[Group]) -> dict[Group, int]:
    """How many rows each of these (build, solver, modality) groups already has (groups without rows left out)."""
    out: dict[Group, int] = {}
    for g in groups:
        n = conn.execute("SELECT count(*) FROM sgp_inference WHERE dataset_hash = ? AND solver = ? AND modality = ?",
                         g).fetchone()[0]
        if n:
            out[g] = int(n)
    return out


def replace_groups(conn: Connection, rows: Sequence[InferenceRow]) -> int:
    """Inside the caller's transaction: delete the groups these rows belong to, then insert the rows."""
    for g in sorted({(r.dataset_hash, r.solver, r.modality) for r in rows}):
        delete_group(conn, g)
    conn.executemany(_INSERT, [astuple(r) for r in rows])
    return len(rows)


def all_rows(conn: Connection) -> list[dict]:
    """Every stored answer, in a total order (build, solver, modality, item, sample)."""
    return [dict(r) for r in conn.execute(
        f"SELECT {', '.join(_COLS)} FROM sgp_inference ORDER BY dataset_hash, solver, modality, item_id, sample")]


def version(conn: Connection) -> tuple[int, float]:
    """(rows, latest import time): changes whenever an import stores or replaces answers (a cache key)."""
    n, last = conn.execute("SELECT count(*), max(imported_at) FROM sgp_inference").fetchone()
    return int(n), float(last or 0.0)


def delete_group(conn: Connection, group: Group) -> int:
    return conn.execute("DELETE FROM sgp_inference WHERE dataset_hash = ? AND solver = ? AND modality = ?",
                        group).rowcount
