"""The schema: every migration in version order (recorded in `meta.schema_version`), and the meta counters.

Humans, models and reference agents share the `runs` and `responses` tables (a run's `solver_kind` tells them
apart), so every analysis reads one table. `apply_migrations` applies the missing steps (in version order;
numbers may have gaps while branches are merged) inside the caller's transaction. SQL is written once, in
SQLite's dialect; the PostgreSQL connection translates it (placeholders, `INSERT OR IGNORE`, column types).
"""
from __future__ import annotations

from .connection import Connection

MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE studies (
            study_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            dataset_hash TEXT NOT NULL,
            config TEXT NOT NULL,
            created_at REAL NOT NULL,
            active INTEGER NOT NULL DEFAULT 1
        )""",
        """CREATE TABLE participants (
            participant_id TEXT PRIMARY KEY,
            study_id TEXT NOT NULL REFERENCES studies(study_id),
            external_id TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('prolific', 'anonymous', 'link')),
            prolific_study_id TEXT,
            prolific_session_id TEXT,
            counterbalance INTEGER NOT NULL,
            created_at REAL NOT NULL,
            last_seen_at REAL NOT NULL,
            consent_at REAL,
            instructions_at REAL,
            practice_attempts INTEGER NOT NULL DEFAULT 0,
            practice_passed INTEGER,
            started_main_at REAL,
            finished_at REAL,
            end_reason TEXT,
            UNIQUE (study_id, external_id)
        )""",
        """CREATE TABLE assignments (
            participant_id TEXT NOT NULL REFERENCES participants(participant_id),
            kind TEXT NOT NULL CHECK (kind IN ('practice', 'main', 'attention')),
            position INTEGER NOT NULL,
            attempt INTEGER NOT NULL DEFAULT 0,
            instance_id TEXT NOT NULL,
            scene_id TEXT NOT NULL,
            assigned_at REAL NOT NULL,
            answered_at REAL,
            released_at REAL,
            PRIMARY KEY (participant_id, kind, attempt, position)
        )""",
        "CREATE INDEX assignments_instance ON assignments(instance_id) WHERE kind = 'main'",
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            solver_kind TEXT NOT NULL CHECK (solver_kind IN ('human', 'model', 'agent')),
            solver_name TEXT NOT NULL,
            study_id TEXT REFERENCES studies(study_id),
            source_file TEXT,
            format TEXT,
            dataset_hash TEXT NOT NULL,
            imported_at REAL NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        )""",
        """CREATE TABLE responses (
            response_id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(run_id),
            participant_id TEXT NOT NULL DEFAULT '',
            instance_id TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'main' CHECK (kind IN ('practice', 'main', 'attention')),
            attempt INTEGER NOT NULL DEFAULT 0,
            template TEXT NOT NULL,
            subset TEXT NOT NULL,
            split TEXT NOT NULL,
            scene_id TEXT NOT NULL,
            response TEXT NOT NULL,
            protocol TEXT,
            parsed TEXT NOT NULL,
            valid INTEGER NOT NULL,
            passed INTEGER NOT NULL,
            failure TEXT,
            errors TEXT NOT NULL,
            first_action_ms REAL,
            total_ms REAL,
            viewport_w INTEGER,
            viewport_h INTEGER,
            device_pixel_ratio REAL,
            focus_lost INTEGER,
            view_id TEXT,
            submitted_at REAL NOT NULL,
            UNIQUE (run_id, participant_id, instance_id, kind, attempt)
        )""",
        "CREATE INDEX responses_instance ON responses(instance_id)",
        """CREATE TABLE events (
            participant_id TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            view_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            row INTEGER,
            col INTEGER,
            value TEXT,
            client_ts REAL,
            server_ts REAL NOT NULL,
            PRIMARY KEY (participant_id, view_id, seq)
        )""",
        "CREATE INDEX events_instance ON events(participant_id, instance_id)",
    ],
    2: [
        # Per-participant summaries (monitoring, exclusions) read responses by participant.
        "CREATE INDEX responses_participant ON responses(participant_id, kind)",
    ],
    3: [
        # Which scorer produced a stored verdict (rose_core.benchmarks.rose.scoring.SCORER_VERSION); rows stored before: version 1.
        "ALTER TABLE responses ADD COLUMN scorer_version TEXT NOT NULL DEFAULT '1'",
    ],
    4: [
        # Practice feedback is part of the participant's state: shown until acknowledged, so a reload shows it again.
        "ALTER TABLE assignments ADD COLUMN acknowledged_at REAL",
        "UPDATE assignments SET acknowledged_at = answered_at WHERE kind = 'practice' AND answered_at IS NOT NULL",
        # The page's own timing beside the server's (responses.total_ms is assigned -> answered, server clock).
        "ALTER TABLE responses ADD COLUMN active_ms REAL",
        "ALTER TABLE responses ADD COLUMN client_total_ms REAL",
        "ALTER TABLE events ADD COLUMN active_ms REAL",
        "CREATE INDEX assignments_open ON assignments(participant_id) WHERE answered_at IS NULL",
    ],
    5: [
        # The browser tab (Streamlit session id) driving a participant and the address it connects from: one tab
        # at a time, held items of closed tabs released early, held items per address capped.
        "ALTER TABLE participants ADD COLUMN client_id TEXT",
        "ALTER TABLE participants ADD COLUMN client_address TEXT",
        # Requests the instrument refused, kept for the experimenter: an identity that does not match the stored
        # one, an answer after the time limit or for an item given to someone else, a damaged image.
        """CREATE TABLE participant_flags (
            study_id TEXT NOT NULL,
            participant_id TEXT,
            external_id TEXT,
            kind TEXT NOT NULL,
            detail TEXT NOT NULL,
            at REAL NOT NULL
        )""",
        "CREATE INDEX participant_flags_study ON participant_flags(study_id, kind)",
    ],
    6: [
        # Every experimenter sign-in attempt, to slow down and audit password guessing (rose_core.instrument.auth).
        """CREATE TABLE sign_in_attempts (
            attempt_id TEXT PRIMARY KEY,
            attempted_at REAL NOT NULL,
            client TEXT NOT NULL,
            session_id TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'wrong', 'refused'))
        )""",
        "CREATE INDEX sign_in_attempts_client ON sign_in_attempts(client, attempted_at)",
        "CREATE INDEX sign_in_attempts_session ON sign_in_attempts(session_id, attempted_at)",
    ],
    7: [
        # Episode benchmarks (iVISPAR's sliding geom puzzle): one row per move, stored once by (run, participant,
        # view, seq) like a click, with what the move did (outcome class, board after it, A* distance d_t) and
        # when (server clock; the page's times beside it). A reload resumes at the last stored board.
        """CREATE TABLE episode_steps (
            run_id TEXT NOT NULL,
            participant_id TEXT NOT NULL DEFAULT '',
            episode_id TEXT NOT NULL,
            view_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            command TEXT NOT NULL,
            outcome TEXT NOT NULL,
            valid INTEGER NOT NULL,
            state TEXT NOT NULL,
            distance INTEGER,
            ended TEXT,
            input TEXT,
            client_ms REAL,
            active_ms REAL,
            server_ts REAL NOT NULL,
            PRIMARY KEY (run_id, participant_id, view_id, seq)
        )""",
        "CREATE INDEX episode_steps_episode ON episode_steps(run_id, episode_id)",
        # One row per finished episode (the item's scored result), apart from ROSE's `responses`, so no ROSE
        # analysis, export or rescore ever reads an episode as a ROSE answer.
        """CREATE TABLE episode_results (
            result_id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(run_id),
            participant_id TEXT NOT NULL DEFAULT '',
            episode_id TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'main' CHECK (kind IN ('practice', 'main')),
            attempt INTEGER NOT NULL DEFAULT 0,
            sample INTEGER NOT NULL DEFAULT 0,
            modality TEXT NOT NULL,
            step_cap INTEGER,
            ended TEXT NOT NULL,
            steps INTEGER NOT NULL,
            response TEXT NOT NULL,
            protocol TEXT,
            parsed TEXT NOT NULL,
            valid INTEGER NOT NULL,
            passed INTEGER NOT NULL,
            failure TEXT,
            errors TEXT NOT NULL,
            first_action_ms REAL,
            total_ms REAL,
            active_ms REAL,
            view_id TEXT,
            submitted_at REAL NOT NULL,
            UNIQUE (run_id, participant_id, episode_id, kind, attempt, sample)
        )""",
        "CREATE INDEX episode_results_participant ON episode_results(participant_id, kind)",
    ],
    8: [
        # SGP's auxiliary board-state inference task: one row per written board (a model's or an agent's), with
        # the true board it is scored against, so a figure never depends on which SGP build the app has loaded.
        # Apart from ROSE's `runs` / `responses`: no ROSE view reads it (rose_core.storage.inference).
        """CREATE TABLE sgp_inference (
            dataset_hash TEXT NOT NULL,
            solver TEXT NOT NULL,
            solver_kind TEXT NOT NULL CHECK (solver_kind IN ('model', 'agent')),
            modality TEXT NOT NULL CHECK (modality IN ('2d', '3d', 'text')),
            item_id TEXT NOT NULL,
            episode_id TEXT NOT NULL,
            board TEXT NOT NULL CHECK (board IN ('start', 'goal')),
            sample INTEGER NOT NULL,
            n_geoms INTEGER NOT NULL,
            truth TEXT NOT NULL,
            response TEXT NOT NULL,
            ms REAL,
            source_file TEXT NOT NULL,
            imported_at REAL NOT NULL,
            PRIMARY KEY (dataset_hash, solver, modality, item_id, sample)
        )""",
    ],
    9: [
        # Who a participant is: a real one ('participant'), the experimenter opening the study from its page
        # ('preview'), a synthetic one driven by `study simulate` ('simulated'), or one the experimenter marked as a
        # test ('test'). Only 'participant' rows ever reach a number, an export or the checklist.
        "ALTER TABLE participants ADD COLUMN origin TEXT NOT NULL DEFAULT 'participant' "
        "CHECK (origin IN ('participant', 'preview', 'simulated', 'test'))",
        "CREATE INDEX participants_origin ON participants(study_id, origin)",
    ],
    10: [
        # The exact Markdown each participant page of a study showed (consent, instructions and their worked
        # examples, end, screen-out, debrief), fields filled in, per text version: 1 at creation, +1 per edit.
        """CREATE TABLE study_texts (
            study_id TEXT NOT NULL REFERENCES studies(study_id),
            version INTEGER NOT NULL,
            key TEXT NOT NULL,
            markdown TEXT NOT NULL,
            stored_at REAL NOT NULL,
            PRIMARY KEY (study_id, version, key)
        )""",
        # The optional end questionnaire: one row per question asked (answer NULL: not answered), stored once.
        """CREATE TABLE questionnaire_answers (
            participant_id TEXT NOT NULL REFERENCES participants(participant_id),
            question TEXT NOT NULL,
            answer TEXT,
            answered_at REAL NOT NULL,
            PRIMARY KEY (participant_id, question)
        )""",
    ],
    11: [
        # A study is edited in versions (until its first real participant every setting, then only its texts): the
        # current version on the study, every version's settings kept (rose_core.instrument.study_edit).
        "ALTER TABLE studies ADD COLUMN version INTEGER NOT NULL DEFAULT 1",
        """CREATE TABLE study_versions (
            study_id TEXT NOT NULL REFERENCES studies(study_id),
            version INTEGER NOT NULL,
            name TEXT NOT NULL,
            config TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (study_id, version)
        )""",
        "INSERT INTO study_versions(study_id, version, name, config, created_at) "
        "SELECT study_id, 1, name, config, created_at FROM studies",
    ],
    13: [
        # The device a participant's browser claims before consent (rose_core.storage.devices): its window in CSS
        # pixels, device pixel ratio, touch points and pointer. A claim, never trusted: stored for the device mix and
        # checked against the study's device policy. One row per participant (the latest claim; `reports` counts them).
        """CREATE TABLE devices (
            participant_id TEXT PRIMARY KEY REFERENCES participants(participant_id),
            viewport_w INTEGER,
            viewport_h INTEGER,
            dpr REAL,
            touch_points INTEGER,
            coarse_pointer INTEGER,
            allowed INTEGER NOT NULL,
            reports INTEGER NOT NULL,
            first_at REAL NOT NULL,
            reported_at REAL NOT NULL
        )""",
    ],
    12: [
        # Participants an experimenter excluded by hand, with the reason, who and when; reversible: lifting an
        # exclusion stamps revoked_by / revoked_at and keeps the row, so the audit trail is never rewritten. At most
        # one standing (not revoked) exclusion per participant.
        """CREATE TABLE participant_exclusions (
            exclusion_id INTEGER PRIMARY KEY,
            participant_id TEXT NOT NULL REFERENCES participants(participant_id),
            study_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            excluded_by TEXT NOT NULL,
            excluded_at REAL NOT NULL,
            revoked_by TEXT,
            revoked_at REAL
        )""",
        "CREATE UNIQUE INDEX participant_exclusions_standing ON participant_exclusions(participant_id) "
        "WHERE revoked_at IS NULL",
        "CREATE INDEX participant_exclusions_study ON participant_exclusions(study_id)",
    ],
    14: [
        # A study's secret for per-participant completion codes (rose_core.instrument.completion): kept on the study
        # row, never in its settings (which the pages show and study files carry), made on first use.
        "ALTER TABLE studies ADD COLUMN completion_secret TEXT",
    ],
}

SCHEMA_VERSION = max(MIGRATIONS)

def apply_migrations(conn: Connection, where: str) -> int:
    """Inside the caller's transaction: create `meta`, apply the missing migrations in version order and record
    the version (the PostgreSQL connection translates each statement). Returns the version found."""
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    current = int(row[0]) if row else 0
    if current > SCHEMA_VERSION:
        raise RuntimeError(f"{where}: schema version {current} is newer than this code ({SCHEMA_VERSION})")
    for version in sorted(v for v in MIGRATIONS if v > current):
        for stmt in MIGRATIONS[version]:
            conn.execute(stmt)
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))
    return current


def bump_verdicts_generation(conn: Connection) -> None:
    """Inside the transaction that rewrites verdicts in place (`rescore`) or changes which rows the analyses read
    (a participant marked as a test, a simulation removed): the generation is part of the one data version
    (`storage.version.DataVersion`), which every cache of responses keys on."""
    conn.execute("INSERT INTO meta(key, value) VALUES ('verdicts_generation', '1') "
                 "ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)")
