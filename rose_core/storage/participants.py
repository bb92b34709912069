"""Studies, participants and assignments: the SQL of the participant path.

Concurrency. On SQLite every write transaction is `BEGIN IMMEDIATE`: one writer at a time, so a transaction reads
exact counts. On PostgreSQL the participant path's transactions (`Store.write(concurrent=True)`) run side by side
(READ COMMITTED), and three locks keep the same rules without making participants wait for each other:

- `lock_participant`: a participant's row lock, taken first by every transaction of that participant. Their
  assignments change only under it: two tabs (or two app processes) of one participant take turns, and other
  participants' transactions release a silent participant's held items only after taking that lock without
  waiting (`SKIP LOCKED`), so an item is never released while its holder is answering it.
- `claim_instance`: an instance is assigned only under its per-instance claim (a transaction-scoped advisory lock
  taken with `pg_try_advisory_xact_lock`, i.e. skip-if-locked), after counting its live assignments again under
  it; a claimed instance is skipped for the next candidate. So the per-instance target is never exceeded, and
  participants arriving together take different instances instead of queueing on one.
- `lock_joins`: a study's arrival rank (counterbalancing) is read and used under one advisory lock per study,
  taken only when a new participant is stored.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from . import devices, questionnaire, study_texts, study_versions
from .columns import read_frame
from .connection import Connection, dialect

# The participants whose rows never reach a number, an export, the approvals or the checklist: previews, simulated
# and test participants (migration 9). Every reader of human rows leaves out `participant_id IN (NOT_COUNTED)`
# (but `rescore`, which keeps every stored verdict current: `responses_query(every_row=True)`); model and agent
# responses (participant_id '') are never in it.
NOT_COUNTED = "SELECT participant_id FROM participants WHERE origin != 'participant'"
# The participants no analysis ever reads: previews and tests. A dry run's simulated participants are read into the
# analyses' frame and dropped there unless a dry run is asked for (`report --include-simulated`, the dashboards'
# switch): the frame readers (`storage.responses`, analysable=True) leave out only these.
NEVER_ANALYSED = "SELECT participant_id FROM participants WHERE origin IN ('preview', 'test')"
# Origins whose assignments do not use up an instance's target: a preview or a test never takes a real rater's
# place (simulated participants do: a simulation fills its own study as real people would).
_TARGET_FREE = "('preview', 'test')"


def _fills_target(count_anonymous: bool) -> str:
    """The one rule of whose assignments use up an instance's target (a condition on `q`, the participant): never a
    preview's or a test's, and a visitor without a Prolific id's (source 'anonymous') only when the study says so
    (`StudyConfig.anonymous_counts`), so anonymous bots cannot fill the pool. A dry run's simulated participants
    arrive anonymous but stand for Prolific ones: they count, as they always did."""
    return f"q.origin NOT IN {_TARGET_FREE}" + ("" if count_anonymous else
                                               " AND (q.source != 'anonymous' OR q.origin = 'simulated')")


def filling_target(count_anonymous: bool) -> str:
    """The participants whose answers fill the targets (`_fills_target`), as a subquery: the Studies page's
    coverage counts by the same rule the assignment fills by."""
    return f"SELECT q.participant_id FROM participants q WHERE {_fills_target(count_anonymous)}"

# --------------------------------------------------------------------------- participants

@dataclass
class Participant:
    participant_id: str
    study_id: str
    external_id: str
    source: str
    counterbalance: int
    consent_at: float | None
    instructions_at: float | None
    practice_attempts: int
    practice_passed: bool | None
    finished_at: float | None
    end_reason: str | None
    started_main_at: float | None
    last_seen_at: float
    prolific_study_id: str | None = None
    prolific_session_id: str | None = None
    client_id: str | None = None          # the browser tab (Streamlit session) driving this participant now
    client_address: str | None = None
    origin: str = "participant"           # participant | preview | simulated | test (schema migration 9)


def _participant(row: Any) -> Participant:
    return Participant(row["participant_id"], row["study_id"], row["external_id"], row["source"],
                       row["counterbalance"], row["consent_at"], row["instructions_at"], row["practice_attempts"],
                       None if row["practice_passed"] is None else bool(row["practice_passed"]),
                       row["finished_at"], row["end_reason"], row["started_main_at"], row["last_seen_at"],
                       row["prolific_study_id"], row["prolific_session_id"], row["client_id"], row["client_address"],
                       row["origin"])


def get_participant(conn: Connection, participant_id: str) -> Participant | None:
    row = conn.execute("SELECT * FROM participants WHERE participant_id = ?", (participant_id,)).fetchone()
    return _participant(row) if row else None


def find_participant(conn: Connection, study_id: str, external_id: str) -> Participant | None:
    row = conn.execute("SELECT * FROM participants WHERE study_id = ? AND external_id = ?",
                       (study_id, external_id)).fetchone()
    return _participant(row) if row else None


def insert_participant(conn: Connection, participant_id: str, study_id: str, external_id: str, source: str,
                       prolific_study_id: str | None, prolific_session_id: str | None, t: float,
                       origin: str = "participant") -> None:
    """Counterbalance = arrival rank among the study's participants of the same origin (read in the same
    transaction), so previews and simulations never shift the real participants' counterbalancing."""
    (n,) = conn.execute("SELECT count(*) FROM participants WHERE study_id = ? AND origin = ?",
                        (study_id, origin)).fetchone()
    conn.execute("INSERT INTO participants(participant_id, study_id, external_id, source, prolific_study_id, "
                 "prolific_session_id, counterbalance, created_at, last_seen_at, origin) VALUES (?,?,?,?,?,?,?,?,?,?)",
                 (participant_id, study_id, external_id, source, prolific_study_id, prolific_session_id, n, t, t,
                  origin))


def real_participant_count(conn: Connection, study_id: str) -> int:
    """Participants of the study with origin 'participant' (previews, simulations and tests left out)."""
    (n,) = conn.execute("SELECT count(*) FROM participants WHERE study_id = ? AND origin = 'participant'",
                        (study_id,)).fetchone()
    return int(n)


def lock_joins(conn: Connection, study_id: str) -> None:
    """Before storing a new participant of the study (its arrival rank is a count read in the same transaction).
    SQLite: BEGIN IMMEDIATE already serialises; PostgreSQL: one advisory lock per study, held to the commit."""
    if dialect(conn) == "postgresql":
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (f"rose-join:{study_id}",))


def lock_participant(conn: Connection, participant_id: str) -> None:
    """First in every transaction of this participant: on PostgreSQL, the participant's row lock (see the module
    docstring); SQLite's BEGIN IMMEDIATE already serialises every writer."""
    if dialect(conn) == "postgresql":
        conn.execute("SELECT 1 FROM participants WHERE participant_id = ? FOR UPDATE", (participant_id,))


def touch(conn: Connection, participant_id: str, t: float) -> None:
    conn.execute("UPDATE participants SET last_seen_at = ? WHERE participant_id = ?", (t, participant_id))


def set_client(conn: Connection, participant_id: str, client_id: str, address: str | None) -> None:
    """This tab drives the participant from now on (another tab's messages are refused)."""
    conn.execute("UPDATE participants SET client_id = ?, client_address = ? WHERE participant_id = ?",
                 (client_id, address, participant_id))


def record_flag(conn: Connection, study_id: str, participant_id: str | None, external_id: str | None,
                kind: str, detail: str, t: float) -> None:
    """A refused request kept for the experimenter (identity mismatch, late answer, damaged image…)."""
    conn.execute("INSERT INTO participant_flags(study_id, participant_id, external_id, kind, detail, at) "
                 "VALUES (?,?,?,?,?,?)", (study_id, participant_id, external_id, kind, detail[:500], t))


def flags_export_query(study_id: str | None) -> tuple[str, tuple]:
    """Every flag (refused requests: takeover attempts, late answers, damaged images…) of one study, or all, for
    the export and the Participants page; `flagged_at` in epoch seconds. `external_id`: the one the flag recorded
    (an identity mismatch's), else the participant's own, so every row can be matched with the approvals CSV."""
    where, params = (" WHERE f.study_id = ?", (study_id,)) if study_id else ("", ())
    return ("SELECT f.study_id, f.participant_id, coalesce(f.external_id, p.external_id) AS external_id, f.kind, "
            "f.detail, f.at AS flagged_at FROM participant_flags f "
            f"LEFT JOIN participants p ON p.participant_id = f.participant_id{where} "
            "ORDER BY f.at, f.kind, f.participant_id", params)


def flags(conn: Connection, study_id: str) -> list[dict]:
    return [dict(r) for r in conn.execute("SELECT * FROM participant_flags WHERE study_id = ? ORDER BY at, kind",
                                          (study_id,))]


def set_consent(conn: Connection, participant_id: str, t: float) -> None:
    conn.execute("UPDATE participants SET consent_at = coalesce(consent_at, ?), last_seen_at = ? "
                 "WHERE participant_id = ?", (t, t, participant_id))


def set_instructions(conn: Connection, participant_id: str, t: float) -> None:
    conn.execute("UPDATE participants SET instructions_at = coalesce(instructions_at, ?), last_seen_at = ? "
                 "WHERE participant_id = ?", (t, t, participant_id))


def set_started_main(conn: Connection, participant_id: str, t: float) -> None:
    conn.execute("UPDATE participants SET started_main_at = coalesce(started_main_at, ?) WHERE participant_id = ?",
                 (t, participant_id))


def finish(conn: Connection, participant_id: str, reason: str, t: float) -> None:
    """The first end reason stays (a later call never overwrites it)."""
    conn.execute("UPDATE participants SET finished_at = coalesce(finished_at, ?), end_reason = coalesce(end_reason, ?) "
                 "WHERE participant_id = ?", (t, reason, participant_id))


def set_practice(conn: Connection, participant_id: str, passed: bool | None, attempts: int) -> None:
    conn.execute("UPDATE participants SET practice_passed = ?, practice_attempts = ? WHERE participant_id = ?",
                 (None if passed is None else int(passed), attempts, participant_id))


def participants_summary(conn: Connection, study: Any, counted: bool = True) -> list[dict]:
    """One row per participant with main answers, pass rates and attention results (the Studies page): the
    counted participants, or (`counted=False`) the previews, simulated and test ones, listed apart."""
    rows = conn.execute(
        f"""SELECT p.participant_id, p.external_id, p.source, p.origin, p.counterbalance, p.created_at,
                  p.last_seen_at, p.consent_at, p.practice_attempts, p.practice_passed, p.finished_at, p.end_reason,
                  count(CASE WHEN r.kind = 'main' THEN 1 END) AS main_answered,
                  avg(CASE WHEN r.kind = 'main' THEN r.passed END) AS main_pass_rate,
                  avg(CASE WHEN r.kind = 'attention' THEN r.passed END) AS attention_pass_rate
           FROM participants p LEFT JOIN responses r ON r.participant_id = p.participant_id AND r.run_id = ?
           WHERE p.study_id = ? AND p.origin {'=' if counted else '!='} 'participant'
           GROUP BY p.participant_id ORDER BY p.created_at, p.participant_id""",
        (study.run_id, study.study_id))
    return [dict(r) for r in rows]


def participant_rows(conn: Connection) -> list[dict[str, Any]]:
    """Every participant the analyses may count, of every study, with the study's name (participant_id, study_id,
    study, external_id, source, practice_attempts, practice_passed, end_reason, origin): real ones and a dry run's
    simulated ones (the analyses drop those unless asked, `analysis.selection.counted`), never a preview or a
    test. Ordered by study, external id, participant id: a total order that does not depend on the (random)
    participant ids."""
    return [dict(r) for r in conn.execute(
        "SELECT p.participant_id, p.study_id, s.name AS study, p.external_id, p.source, p.practice_attempts, "
        "p.practice_passed, p.end_reason, p.origin FROM participants p JOIN studies s USING (study_id) "
        f"WHERE p.participant_id NOT IN ({NEVER_ANALYSED}) ORDER BY p.study_id, p.external_id, p.participant_id")]



def review_rows(conn: Connection, study_id: str) -> list[dict[str, Any]]:
    """The counted participants of one study as the approvals need them (participant_id, external_id, source,
    prolific_session_id, created_at, consent_at, finished_at, last_seen_at, end_reason, practice_passed), by
    arrival."""
    return [dict(r) for r in conn.execute(
        "SELECT participant_id, external_id, source, prolific_session_id, created_at, consent_at, finished_at, "
        "last_seen_at, end_reason, practice_passed FROM participants WHERE study_id = ? AND origin = 'participant' "
        "ORDER BY created_at, participant_id", (study_id,))]


def participant_times(conn: Connection) -> Any:
    """Every counted participant's times (participant_id, created_at, consent_at, finished_at), as a pandas
    DataFrame."""
    return read_frame(conn, "SELECT participant_id, created_at, consent_at, finished_at FROM participants "
                            "WHERE origin = 'participant'")


def status_counts(conn: Connection, study_id: str) -> dict[str, int]:
    """Counted participants per end reason ('in progress' while not finished)."""
    return dict(conn.execute("SELECT coalesce(end_reason, 'in progress'), count(*) FROM participants "
                             "WHERE study_id = ? AND origin = 'participant' GROUP BY 1", (study_id,)).fetchall())


def set_origin(conn: Connection, participant_id: str, origin: str) -> int:
    """Mark a participant as a test (origin 'test') or back as a real one ('participant'); rows changed."""
    return conn.execute("UPDATE participants SET origin = ? WHERE participant_id = ? AND origin IN "
                        "('participant', 'test')", (origin, participant_id)).rowcount


def delete_study_rows(conn: Connection, study_id: str, run_id: str) -> dict[str, int]:
    """Everything a study stored, inside the caller's transaction: its responses, events, episodes, assignments,
    flags, exclusions, participants, run and the study itself. Returns rows deleted per table."""
    pids = "SELECT participant_id FROM participants WHERE study_id = ?"
    out = {}
    for table, sql, params in (
            ("responses", "DELETE FROM responses WHERE run_id = ?", (run_id,)),
            ("episode_steps", "DELETE FROM episode_steps WHERE run_id = ?", (run_id,)),
            ("episode_results", "DELETE FROM episode_results WHERE run_id = ?", (run_id,)),
            ("events", f"DELETE FROM events WHERE participant_id IN ({pids})", (study_id,)),
            ("assignments", f"DELETE FROM assignments WHERE participant_id IN ({pids})", (study_id,)),
            ("participant_exclusions", "DELETE FROM participant_exclusions WHERE study_id = ?", (study_id,)),
            ("participant_flags", "DELETE FROM participant_flags WHERE study_id = ?", (study_id,)),
            ("devices", devices.delete_of, (pids, (study_id,))),
            ("questionnaire_answers", questionnaire.delete_of, (pids, (study_id,))),
            ("participants", "DELETE FROM participants WHERE study_id = ?", (study_id,)),
            ("study_texts", study_texts.delete_study, (study_id,)),
            ("study_versions", study_versions.delete_study, (study_id,)),
            ("runs", "DELETE FROM runs WHERE run_id = ?", (run_id,)),
            ("studies", "DELETE FROM studies WHERE study_id = ?", (study_id,))):
        out[table] = sql(conn, *params) if callable(sql) else conn.execute(sql, params).rowcount
    return out


def origin_counts(conn: Connection, study_id: str) -> dict[str, int]:
    """Participants of the study per origin (participant, preview, simulated, test)."""
    return dict(conn.execute("SELECT origin, count(*) FROM participants WHERE study_id = ? GROUP BY origin",
                             (study_id,)).fetchall())


# The participants of one study and origin, as a sub-query every table's delete of them shares.
OF_ORIGIN = "SELECT participant_id FROM participants WHERE study_id = ? AND origin = ?"


def delete_of_origin(conn: Connection, study_id: str, origin: str) -> dict[str, int]:
    """Inside the caller's transaction, after their responses, events and episode rows are gone: the study's
    participants of this origin, their assignments and their flags. Returns rows deleted per table."""
    out = {}
    for table in ("assignments", "participant_flags", "participant_exclusions"):
        out[table] = conn.execute(f"DELETE FROM {table} WHERE participant_id IN ({OF_ORIGIN})",
                                  (study_id, origin)).rowcount
    out["devices"] = devices.delete_of(conn, OF_ORIGIN, (study_id, origin))
    out["questionnaire_answers"] = questionnaire.delete_of(conn, OF_ORIGIN, (study_id, origin))
    out["participants"] = conn.execute("DELETE FROM participants WHERE study_id = ? AND origin = ?",
                                       (study_id, origin)).rowcount
    return out


# --------------------------------------------------------------------------- assignments

@dataclass(frozen=True)
class Assignment:
    participant_id: str
    kind: str
    position: int
    attempt: int
    instance_id: str
    scene_id: str
    assigned_at: float
    answered_at: float | None
    released_at: float | None
    acknowledged_at: float | None


def _assignment(row: Any) -> Assignment:
    return Assignment(row["participant_id"], row["kind"], row["position"], row["attempt"], row["instance_id"],
                      row["scene_id"], row["assigned_at"], row["answered_at"], row["released_at"],
                      row["acknowledged_at"])


def participant_assignments(conn: Connection, participant_id: str) -> list[Assignment]:
    """All of a participant's assignments, in the order they were made (a few dozen rows: one query)."""
    return [_assignment(r) for r in conn.execute(
        "SELECT * FROM assignments WHERE participant_id = ? ORDER BY assigned_at, kind, attempt, position",
        (participant_id,))]


def insert_assignment(conn: Connection, participant_id: str, kind: str, position: int, attempt: int,
                      instance_id: str, scene_id: str, t: float) -> None:
    conn.execute("INSERT INTO assignments(participant_id, kind, position, attempt, instance_id, scene_id, "
                 "assigned_at) VALUES (?,?,?,?,?,?,?)", (participant_id, kind, position, attempt, instance_id,
                                                          scene_id, t))


def mark_answered(conn: Connection, a: Assignment, t: float) -> bool:
    """True when this call answered it (False: already answered, e.g. a double submit)."""
    cur = conn.execute("UPDATE assignments SET answered_at = ? WHERE participant_id = ? AND kind = ? AND attempt = ? "
                       "AND position = ? AND answered_at IS NULL", (t, a.participant_id, a.kind, a.attempt, a.position))
    return cur.rowcount == 1


def acknowledge(conn: Connection, a: Assignment, t: float) -> None:
    conn.execute("UPDATE assignments SET acknowledged_at = coalesce(acknowledged_at, ?) WHERE participant_id = ? "
                 "AND kind = ? AND attempt = ? AND position = ?", (t, a.participant_id, a.kind, a.attempt, a.position))


def release_stale(conn: Connection, study_id: str, cutoff: float, except_participant: str, t: float,
                  overdue_before: float | None = None) -> None:
    """Held main items of participants silent since `cutoff`, or who consented before `overdue_before` (past the
    study's time limit: a tab that keeps sending events is not silent, but its answers would be refused as late)
    go back to the pool (on PostgreSQL only those whose participant row is not locked right now: a participant in
    a transaction is not silent)."""
    gone = "(q.last_seen_at < ?" + (" OR q.consent_at < ?)" if overdue_before is not None else ")")
    args = (t, study_id, cutoff, *(() if overdue_before is None else (overdue_before,)), except_participant)
    if dialect(conn) == "postgresql":
        conn.execute(
            "UPDATE assignments SET released_at = ? WHERE kind = 'main' AND answered_at IS NULL AND released_at IS NULL "
            f"AND participant_id IN (SELECT q.participant_id FROM participants q WHERE q.study_id = ? AND {gone} "
            "AND q.participant_id != ? AND EXISTS (SELECT 1 FROM assignments h "
            "WHERE h.participant_id = q.participant_id AND h.kind = 'main' AND h.answered_at IS NULL "
            "AND h.released_at IS NULL) FOR UPDATE OF q SKIP LOCKED)", args)
        return
    conn.execute(
        "UPDATE assignments SET released_at = ? WHERE kind = 'main' AND answered_at IS NULL AND released_at IS NULL "
        f"AND participant_id IN (SELECT q.participant_id FROM participants q WHERE q.study_id = ? AND {gone} "
        "AND q.participant_id != ?)", args)


@dataclass(frozen=True)
class Holder:
    """A participant of the study holding a main item not answered yet."""

    participant_id: str
    client_id: str | None
    client_address: str | None
    last_seen_at: float


def holders(conn: Connection, study_id: str) -> list[Holder]:
    return [Holder(*r) for r in conn.execute(
        "SELECT DISTINCT q.participant_id, q.client_id, q.client_address, q.last_seen_at FROM participants q "
        "JOIN assignments a ON a.participant_id = q.participant_id WHERE q.study_id = ? AND a.kind = 'main' "
        "AND a.answered_at IS NULL AND a.released_at IS NULL ORDER BY q.participant_id", (study_id,))]


def release_holds(conn: Connection, participant_ids: list[str], t: float) -> None:
    """These participants' held main items go back to the pool (a late answer for them is refused). On
    PostgreSQL a participant in a transaction of their own right now is skipped (SKIP LOCKED: they are there)."""
    sql = ("UPDATE assignments SET released_at = ? WHERE participant_id = ? AND kind = 'main' "
           "AND answered_at IS NULL AND released_at IS NULL")
    if dialect(conn) == "postgresql":
        sql += " AND EXISTS (SELECT 1 FROM participants WHERE participant_id = ? FOR UPDATE SKIP LOCKED)"
        conn.executemany(sql, [(t, p, p) for p in participant_ids])
        return
    conn.executemany(sql, [(t, p) for p in participant_ids])


def release(conn: Connection, a: Assignment, t: float) -> None:
    """One held item back to the pool (its image cannot be shown)."""
    conn.execute("UPDATE assignments SET released_at = coalesce(released_at, ?) WHERE participant_id = ? AND kind = ? "
                 "AND attempt = ? AND position = ? AND answered_at IS NULL",
                 (t, a.participant_id, a.kind, a.attempt, a.position))


def main_answered_counts(conn: Connection, study_id: str, count_anonymous: bool = True) -> dict[str, int]:
    """Answered main items per instance (what a held item may still free up is not in it)."""
    return dict(conn.execute(
        "SELECT a.instance_id, count(*) FROM assignments a JOIN participants q ON q.participant_id = a.participant_id "
        f"WHERE q.study_id = ? AND a.kind = 'main' AND a.answered_at IS NOT NULL AND {_fills_target(count_anonymous)} "
        "GROUP BY a.instance_id",
        (study_id,)).fetchall())


def main_assignment_counts(conn: Connection, study_id: str, count_anonymous: bool = True) -> dict[str, int]:
    """Live main assignments per instance (answered or held, not released): what the target caps."""
    return dict(conn.execute(
        "SELECT a.instance_id, count(*) FROM assignments a JOIN participants q USING (participant_id) "
        f"WHERE q.study_id = ? AND a.kind = 'main' AND a.released_at IS NULL AND {_fills_target(count_anonymous)} "
        "GROUP BY a.instance_id",
        (study_id,)).fetchall())


# --------------------------------------------------------------------------- claims

MAX_CLAIM_TRIES = 64


@dataclass(frozen=True)
class Claim:
    """The instance claimed for this transaction, or None; `busy`: none was claimed because other participants'
    transactions held the candidates (or filled them since they were counted): try again in a moment."""

    instance_id: str | None
    busy: bool = False


def live_main_count(conn: Connection, study_id: str, instance_id: str, count_anonymous: bool = True) -> int:
    """Live main assignments of one instance in a study (answered or held, not released)."""
    return int(conn.execute(
        "SELECT count(*) FROM assignments a JOIN participants q USING (participant_id) WHERE q.study_id = ? "
        f"AND a.instance_id = ? AND a.kind = 'main' AND a.released_at IS NULL AND {_fills_target(count_anonymous)}",
        (study_id, instance_id)).fetchone()[0])


def claim_instance(conn: Connection, study_id: str, candidates: Iterable[str], target: int,
                   count_anonymous: bool = True) -> Claim:
    """The first candidate (best first, as the policy ranks them) that still has room below the target, claimed
    until the transaction ends (see the module docstring). SQLite: the counts the candidates were ranked by were
    read in this same exclusive transaction, so the first one is it."""
    if dialect(conn) != "postgresql":
        return Claim(next(iter(candidates), None))
    busy = False
    for tries, iid in enumerate(candidates):
        if tries >= MAX_CLAIM_TRIES:
            return Claim(None, busy=True)
        got = conn.execute("SELECT pg_try_advisory_xact_lock(hashtext(?), hashtext(?))", (study_id, iid)).fetchone()[0]
        if not got:
            busy = True
            continue
        # Counted again now that it is ours (a new statement: it sees every claim committed before ours).
        if live_main_count(conn, study_id, iid, count_anonymous) < target:
            return Claim(iid)
        busy = True  # filled since the ranking's counts were read: fresh counts may offer another
    return Claim(None, busy=busy)
