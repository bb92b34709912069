"""The store on both backends (the `store` fixture: a SQLite file, a PostgreSQL database), and what is SQLite's own
(WAL, connection reuse, migrating files left by older versions)."""
import sqlite3
import threading

import pytest

from rose_core.storage import open_store
from rose_core.storage.connection import IntegrityError, Store
from rose_core.storage.schema import SCHEMA_VERSION

STUDY_ROW = "INSERT INTO studies(study_id, name, dataset_hash, config, created_at, active) VALUES "


def test_a_new_database_is_versioned_and_reopening_migrates_nothing(store):
    assert store.schema_version() == SCHEMA_VERSION
    assert {"studies", "participants", "assignments", "runs", "responses", "events", "meta"} <= set(store.table_names())
    again = open_store(store.location)
    assert again.schema_version() == SCHEMA_VERSION
    again.close()


def test_newer_schema_is_refused(store):
    with store.write() as c:
        c.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(RuntimeError, match="newer than this code"):
        open_store(store.location)


def test_failed_write_rolls_back(store):
    with pytest.raises(IntegrityError):
        with store.write() as c:
            c.execute(STUDY_ROW + "('a', 'n', 'h', '{}', 0, 1)")
            c.execute(STUDY_ROW + "('a', 'n', 'h', '{}', 0, 1)")
    assert store.query("SELECT count(*) AS n FROM studies")[0]["n"] == 0


def test_concurrent_read_modify_write_never_locks_or_loses(store):
    """Writers take turns (SQLite: BEGIN IMMEDIATE; PostgreSQL: the writers' advisory lock)."""
    with store.write() as c:
        c.execute("INSERT INTO meta VALUES ('counter', '0')")
    errors = []

    def worker():
        try:
            for _ in range(100):
                with store.write() as c:
                    v = int(c.execute("SELECT value FROM meta WHERE key = 'counter'").fetchone()[0])
                    c.execute("UPDATE meta SET value = ? WHERE key = 'counter'", (str(v + 1),))
        except Exception as e:  # pragma: no cover - the assertion below reports it
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.query("SELECT value FROM meta WHERE key = 'counter'")[0]["value"] == "800"


def test_write_inside_write_on_one_thread_is_refused(store):
    with pytest.raises(RuntimeError, match="inside another transaction"):
        with store.write():
            with store.write():
                pass


def test_one_writer_stores_a_whole_run_in_one_transaction_or_nothing(store):
    from rose_core.benchmarks.rose.scoring import SCORER_VERSION
    from rose_core.storage import ResponseRow, store_responses, write_responses

    s = store
    with s.write() as c:
        c.execute("INSERT INTO runs(run_id, solver_kind, solver_name, dataset_hash, imported_at) "
                  "VALUES ('model:m', 'model', 'm', 'h', 0)")
    rows = [ResponseRow.scored("model:m", f"I{i}", "T1", "PixelEdit", "dev", f"S{i}", "COUNT(2)", "COUNT(2)",
                               {"count": 2}, True, i % 2 == 0, None if i % 2 == 0 else "miscount",
                               [] if i % 2 == 0 else ["miscount"], 1.0, scorer_version=SCORER_VERSION)
            for i in range(1000)]
    assert store_responses(s, rows) == 1000
    got = s.query("SELECT count(*) AS n, sum(passed) AS p, min(participant_id) AS pid, max(kind) AS k FROM responses")
    assert got == [{"n": 1000, "p": 500, "pid": "", "k": "main"}]
    with pytest.raises(IntegrityError):  # a duplicate in the batch: the whole batch rolls back
        with s.write() as c:
            write_responses(c, [ResponseRow.scored("model:m", "J1", "T1", "PixelEdit", "dev", "S", "x", None, {}, False,
                                                   False, "invalid", ["invalid"], 2.0,
                                                   scorer_version=SCORER_VERSION)] + rows[:1])
    assert s.query("SELECT count(*) AS n FROM responses")[0]["n"] == 1000


def test_times_keep_their_sub_second_digits_and_text_sorts_byte_wise(store):
    """Epoch seconds are 8-byte floats on both backends (PostgreSQL's REAL would keep ~7 digits), and text orders
    as SQLite orders it, whatever the server's locale (the PostgreSQL columns are COLLATE "C")."""
    t = 1_763_000_000.123456
    with store.write() as c:
        for sid in ("b", "B", "a", "_x", "é", "Z9"):
            c.execute(STUDY_ROW + "(?, 'n', 'h', '{}', ?, 1)", (sid, t))
    rows = store.query("SELECT study_id, created_at FROM studies ORDER BY study_id")
    assert [r["study_id"] for r in rows] == sorted(["b", "B", "a", "_x", "é", "Z9"])  # Python's order = code points
    assert {r["created_at"] for r in rows} == {t}


def test_a_caught_error_inside_a_transaction_is_never_committed_silently(store):
    """SQLite undoes only the failed statement and the transaction goes on; PostgreSQL aborts the transaction, and
    its COMMIT would quietly roll everything back. The PostgreSQL store refuses to pretend: the write raises."""

    def body():
        with store.write() as c:
            c.execute(STUDY_ROW + "('a', 'n', 'h', '{}', 0, 1)")
            try:
                c.execute(STUDY_ROW + "('a', 'n', 'h', '{}', 0, 1)")
            except IntegrityError:
                pass

    if store.dialect == "sqlite":
        body()
        assert store.query("SELECT study_id FROM studies") == [{"study_id": "a"}]
    else:
        with pytest.raises(sqlite3.OperationalError, match="roll the whole transaction back"):
            body()
        assert store.query("SELECT study_id FROM studies") == []


# --------------------------------------------------------------------------- SQLite's own

def test_new_database_is_wal_and_versioned(tmp_path):
    s = open_store(tmp_path / "x.db")
    assert s.schema_version() == SCHEMA_VERSION
    with s.connect() as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = set(s.table_names())
    assert {"studies", "participants", "assignments", "runs", "responses", "events", "meta"} <= tables
    assert open_store(tmp_path / "x.db").schema_version() == SCHEMA_VERSION  # reopening migrates nothing


def test_version_1_database_is_migrated_to_the_current_schema(tmp_path):
    from rose_core.storage.schema import MIGRATIONS

    path = tmp_path / "old.db"
    con = sqlite3.connect(path)  # a database as schema version 1 left it
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for stmt in MIGRATIONS[1]:
        con.execute(stmt)
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.execute("INSERT INTO studies VALUES ('s1', 'old study', 'h', '{}', 0, 1)")
    con.commit()
    con.close()
    s = open_store(path)
    assert s.schema_version() == SCHEMA_VERSION >= 2
    assert s.query("SELECT name FROM studies") == [{"name": "old study"}]  # data kept
    assert s.query("SELECT version FROM studies") == [{"version": 1}]     # a stored study is version 1 (migration 11)
    assert s.query("SELECT study_id, version, name, config FROM study_versions") == [
        {"study_id": "s1", "version": 1, "name": "old study", "config": "{}"}]
    idx = {r["name"] for r in s.query("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "responses_participant" in idx


def test_connections_are_reused_per_thread_and_the_wal_survives_a_rerun(tmp_path):
    s = open_store(tmp_path / "x.db")
    opened = s.opened

    def rerun():  # a Streamlit rerun: a new thread, several operations
        for _ in range(5):
            with s.write() as c:
                c.execute("INSERT OR REPLACE INTO meta VALUES ('k', 'v')")
            s.query("SELECT * FROM meta")

    for _ in range(3):
        t = threading.Thread(target=rerun)
        t.start()
        t.join()
    assert s.opened - opened == 1  # one connection, handed from thread to thread through the pool
    # The store's own connection stays open, so closing the last reader never checkpoints and deletes the WAL.
    assert (tmp_path / "x.db-wal").exists()


def test_migrations_apply_in_order_across_a_gap(tmp_path):
    from rose_core.storage.schema import MIGRATIONS

    path = tmp_path / "v2.db"
    con = sqlite3.connect(path)  # a database as schema version 2 left it
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for v in (1, 2):
        for stmt in MIGRATIONS[v]:
            con.execute(stmt)
    con.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    con.execute("INSERT INTO studies VALUES ('s1', 'old', 'h', '{}', 0, 1)")
    con.execute("INSERT INTO participants(participant_id, study_id, external_id, source, counterbalance, created_at, "
                "last_seen_at) VALUES ('p1', 's1', 'e', 'link', 0, 0, 0)")
    con.execute("INSERT INTO assignments(participant_id, kind, position, instance_id, scene_id, assigned_at, "
                "answered_at) VALUES ('p1', 'practice', 0, 'i', 's', 1, 2)")
    con.commit()
    con.close()
    s = open_store(path)
    assert s.schema_version() == SCHEMA_VERSION
    # Practice answered before feedback was stored counts as acknowledged: nobody sees old feedback again.
    assert s.query("SELECT acknowledged_at FROM assignments") == [{"acknowledged_at": 2}]


def test_open_store_picks_the_backend_from_the_location(tmp_path, monkeypatch):
    from rose_core.storage.sqlite import SqliteStore

    s = open_store(tmp_path / "a.db")
    assert isinstance(s, SqliteStore) and isinstance(s, Store) and s.path == tmp_path / "a.db"
    s.close()
    monkeypatch.setenv("ROSE_DB", str(tmp_path / "b.db"))
    for default in (None, ""):
        s = open_store(default)
        assert isinstance(s, SqliteStore) and s.location == str(tmp_path / "b.db")
        s.close()
    with pytest.raises(TypeError):
        Store()  # the interface: only open_store (or a backend's class) makes a store
