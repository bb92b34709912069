"""Episodes (iVISPAR's sliding geom puzzle): the SQL of their moves and results.

A move is one `episode_steps` row, stored once by (run, participant, view, seq) like a click; a finished
episode is one `episode_results` row (the item's scored `ItemResult` plus who, when and under which cap).
Both tables are apart from ROSE's `responses`, so ROSE's analyses, exports and rescore never read an episode.
"""
from __future__ import annotations

import json
from .columns import read_frame
from .participants import NOT_COUNTED, filling_target
from .connection import Connection
from dataclasses import astuple, dataclass, fields
from typing import Any, Literal, Sequence

EpisodeKind = Literal["practice", "main"]


@dataclass(frozen=True)
class StepRow:
    """One move: what was sent (the command string a model would write), what it did, the board after it."""

    run_id: str
    participant_id: str
    episode_id: str
    view_id: str
    seq: int                      # 0, 1, 2, … : the move's number in the episode (t = seq + 1)
    command: str
    outcome: str                  # effective, ineffective, occupied, out_of_bounds, illegal (the engine's classes)
    valid: int
    state: str                    # JSON: the board after the move
    distance: int | None          # d_t: A* distance from that board to the goal
    ended: str | None             # solved / step_cap when this move ended the episode
    input: str | None             # how a participant made it: click, keyboard, typed (None: a model or agent)
    client_ms: float | None       # the page's time since the episode was first shown
    active_ms: float | None
    server_ts: float

    def board(self) -> dict[str, Any]:
        return json.loads(self.state)


@dataclass(frozen=True)
class EpisodeResultRow:
    run_id: str
    participant_id: str
    episode_id: str
    kind: EpisodeKind
    attempt: int
    sample: int
    modality: str
    step_cap: int | None          # None: no cap (recorded, as iVISPAR's humans had none)
    ended: str                    # solved / failed / step_cap
    steps: int
    response: str
    protocol: str | None
    parsed: str                   # JSON
    valid: int
    passed: int
    failure: str | None
    errors: str                   # JSON list
    first_action_ms: float | None
    total_ms: float | None        # server: assigned -> ended
    active_ms: float | None
    view_id: str | None
    submitted_at: float


_STEP_COLS = [f.name for f in fields(StepRow)]
_INSERT_STEP = (f"INSERT OR IGNORE INTO episode_steps({', '.join(_STEP_COLS)}) "
                f"VALUES ({', '.join('?' * len(_STEP_COLS))})")
_RESULT_COLS = [f.name for f in fields(EpisodeResultRow)]
_INSERT_RESULT = (f"INSERT INTO episode_results({', '.join(_RESULT_COLS)}) "
                  f"VALUES ({', '.join('?' * len(_RESULT_COLS))})")


def insert_step(conn: Connection, row: StepRow) -> bool:
    """True when stored; False when this (run, participant, view, seq) was stored before (the first one stays)."""
    before = conn.total_changes
    conn.execute(_INSERT_STEP, astuple(row))
    return conn.total_changes > before


def view_steps(conn: Connection, run_id: str, participant_id: str, view_id: str) -> list[StepRow]:
    cur = conn.execute(f"SELECT {', '.join(_STEP_COLS)} FROM episode_steps WHERE run_id = ? AND participant_id = ? "
                       "AND view_id = ? ORDER BY seq", (run_id, participant_id, view_id))
    return [StepRow(*r) for r in cur.fetchall()]


def write_episode_results(conn: Connection, rows: Sequence[EpisodeResultRow]) -> int:
    """Inside the caller's transaction; a second row for the same episode and attempt raises IntegrityError."""
    conn.executemany(_INSERT_RESULT, [astuple(r) for r in rows])
    return len(rows)


def episode_result_of(conn: Connection, run_id: str, participant_id: str, episode_id: str, kind: str,
                      attempt: int) -> Any:
    return conn.execute("SELECT * FROM episode_results WHERE run_id = ? AND participant_id = ? AND episode_id = ? "
                        "AND kind = ? AND attempt = ? AND sample = 0",
                        (run_id, participant_id, episode_id, kind, attempt)).fetchone()


def practice_round_solved(conn: Connection, run_id: str, participant_id: str, attempt: int) -> list[int]:
    return [r[0] for r in conn.execute("SELECT passed FROM episode_results WHERE run_id = ? AND participant_id = ? "
                                       "AND kind = 'practice' AND attempt = ?", (run_id, participant_id, attempt))]


def main_result_counts(conn: Connection, run_id: str, count_anonymous: bool = True) -> dict[str, int]:
    """Counted finished main episodes per episode of one run; anonymous visitors' only when they fill the targets
    (`StudyConfig.anonymous_counts`, `participants.filling_target`)."""
    return dict(conn.execute("SELECT episode_id, count(*) FROM episode_results WHERE run_id = ? AND kind = 'main' "
                             f"AND participant_id NOT IN ({NOT_COUNTED}) "
                             f"AND participant_id IN ({filling_target(count_anonymous)}) GROUP BY episode_id",
                             (run_id,)).fetchall())


def results(conn: Connection, run_ids: Sequence[str] | None = None, kind: str = "main") -> list[dict]:
    """Finished episodes (every run, or these), oldest first, with the run's solver."""
    sql = ("SELECT e.*, r.solver_kind, r.solver_name, r.study_id FROM episode_results e JOIN runs r USING (run_id) "
           f"WHERE e.kind = ? AND e.participant_id NOT IN ({NOT_COUNTED})")
    params: list[Any] = [kind]
    if run_ids is not None:
        if not run_ids:
            return []
        sql += f" AND e.run_id IN ({', '.join('?' * len(run_ids))})"
        params += list(run_ids)
    return [dict(r) for r in conn.execute(sql + " ORDER BY e.result_id", params)]


def episode_steps(conn: Connection, run_id: str, participant_id: str, view_id: str) -> list[dict]:
    """One episode's moves as plain rows (the replay page)."""
    return [dict(zip(_STEP_COLS, astuple(s))) for s in view_steps(conn, run_id, participant_id, view_id)]


def participants_summary(conn: Connection, run_id: str, study_id: str) -> list[dict]:
    """One row per participant of an SGP study: main episodes finished and solved, practice solved."""
    rows = conn.execute(
        """SELECT p.participant_id, p.external_id, p.source, p.created_at, p.last_seen_at, p.consent_at,
                  p.practice_attempts, p.practice_passed, p.finished_at, p.end_reason,
                  count(CASE WHEN e.kind = 'main' THEN 1 END) AS main_episodes,
                  avg(CASE WHEN e.kind = 'main' THEN e.passed END) AS main_solved_rate,
                  avg(CASE WHEN e.kind = 'practice' THEN e.passed END) AS practice_solved_rate
           FROM participants p LEFT JOIN episode_results e ON e.participant_id = p.participant_id AND e.run_id = ?
           WHERE p.study_id = ? AND p.origin = 'participant' GROUP BY p.participant_id
           ORDER BY p.created_at, p.participant_id""",
        (run_id, study_id))
    return [dict(r) for r in rows]


_HUMAN_RESULTS = """
SELECT e.result_id, e.run_id, r.study_id, r.dataset_hash, e.participant_id, e.episode_id, e.modality, e.step_cap,
       e.ended, e.steps, e.response, e.parsed, e.passed, e.total_ms, e.view_id, e.submitted_at
FROM episode_results e JOIN runs r USING (run_id)
WHERE e.kind = 'main' AND r.solver_kind = 'human' AND e.participant_id NOT IN ({NOT_COUNTED})
ORDER BY e.result_id
""".format(NOT_COUNTED=NOT_COUNTED)
_MAIN_STEPS = """
SELECT s.run_id, s.participant_id, s.view_id, s.seq, s.command, s.outcome, s.distance, s.state, s.client_ms
FROM episode_steps s JOIN episode_results e
  ON e.run_id = s.run_id AND e.participant_id = s.participant_id AND e.view_id = s.view_id
WHERE e.kind = 'main' AND e.participant_id NOT IN ({NOT_COUNTED})
ORDER BY s.run_id, s.participant_id, s.view_id, s.seq
""".format(NOT_COUNTED=NOT_COUNTED)


def human_results_frame(conn: Connection) -> Any:
    """Every participant's finished main episode, with its run's study and dataset hash, as a pandas DataFrame
    (by result id)."""
    return read_frame(conn, _HUMAN_RESULTS)


def main_steps(conn: Connection) -> list[Any]:
    """Every stored move of a main episode (of any run), as rows readable by column name, in order of run,
    participant, view and sequence number."""
    return conn.execute(_MAIN_STEPS).fetchall()


EXPORT_TABLES = ("episode_results", "episode_steps")


def export_query(table: str, one_run: bool) -> str:
    """The SELECT of `export_rows` (one `?` for the run when `one_run`): episode results or moves with the run's
    study and the participant's external id."""
    if table not in EXPORT_TABLES:
        raise ValueError(f"unknown table {table!r}: expected one of {', '.join(EXPORT_TABLES)}")
    order = "t.result_id" if table == "episode_results" else "t.run_id, t.participant_id, t.view_id, t.seq"
    return (f"SELECT t.*, r.study_id, p.external_id, p.end_reason, x.reason AS excluded_reason, x.excluded_by, "
            f"x.excluded_at FROM {table} t JOIN runs r ON r.run_id = t.run_id "
            f"LEFT JOIN participants p ON p.participant_id = t.participant_id "
            f"LEFT JOIN participant_exclusions x ON x.participant_id = t.participant_id AND x.revoked_at IS NULL "
            f"WHERE t.participant_id NOT IN ({NOT_COUNTED}) {'AND t.run_id = ?' if one_run else ''} ORDER BY {order}")


def export_rows(conn: Connection, table: str, run_id: str | None = None) -> list[dict]:
    """Episode results or moves (of one study's run, or of every run), for download."""
    return [dict(r) for r in conn.execute(export_query(table, run_id is not None),
                                          (run_id,) if run_id is not None else ())]


def delete_of_origin(conn: Connection, run_id: str, study_id: str, origin: str) -> dict[str, int]:
    """Inside the caller's transaction: the SGP moves and episode results in the study's run of its participants
    of this origin. Rows deleted per table."""
    from .participants import OF_ORIGIN

    return {table: conn.execute(f"DELETE FROM {table} WHERE run_id = ? AND participant_id IN ({OF_ORIGIN})",
                                (run_id, study_id, origin)).rowcount
            for table in ("episode_steps", "episode_results")}
