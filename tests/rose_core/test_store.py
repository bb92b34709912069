import sqlite3
import threading

import pytest

from rose_core.store import SCHEMA_VERSION, Store


def test_new_database_is_wal_and_versioned(tmp_path):
    s = Store(tmp_path / "x.db")
    assert s.schema_version() == SCHEMA_VERSION
    with s.connect() as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = set(s.table_names())
    assert {"studies", "participants", "assignments", "runs", "responses", "events", "meta"} <= tables
    assert Store(tmp_path / "x.db").schema_version() == SCHEMA_VERSION  # reopening migrates nothing


def test_newer_schema_is_refused(tmp_path):
    s = Store(tmp_path / "x.db")
    with s.write() as c:
        c.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(RuntimeError, match="newer than this code"):
        Store(tmp_path / "x.db")


def test_failed_write_rolls_back(tmp_path):
    s = Store(tmp_path / "x.db")
    with pytest.raises(sqlite3.IntegrityError):
        with s.write() as c:
            c.execute("INSERT INTO studies VALUES ('a', 'n', 'h', '{}', 0, 1)")
            c.execute("INSERT INTO studies VALUES ('a', 'n', 'h', '{}', 0, 1)")
    assert s.query("SELECT count(*) AS n FROM studies")[0]["n"] == 0


def test_concurrent_read_modify_write_never_locks_or_loses(tmp_path):
    s = Store(tmp_path / "x.db")
    with s.write() as c:
        c.execute("INSERT INTO meta VALUES ('counter', '0')")
    errors = []

    def worker():
        try:
            for _ in range(100):
                with s.write() as c:
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
    assert s.query("SELECT value FROM meta WHERE key = 'counter'")[0]["value"] == "800"


def test_version_1_database_is_migrated_to_the_current_schema(tmp_path):
    from rose_core.store import MIGRATIONS

    path = tmp_path / "old.db"
    con = sqlite3.connect(path)  # a database as schema version 1 left it
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for stmt in MIGRATIONS[1]:
        con.execute(stmt)
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.execute("INSERT INTO studies VALUES ('s1', 'old study', 'h', '{}', 0, 1)")
    con.commit()
    con.close()
    s = Store(path)
    assert s.schema_version() == SCHEMA_VERSION >= 2
    assert s.query("SELECT name FROM studies") == [{"name": "old study"}]  # data kept
    idx = {r["name"] for r in s.query("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "responses_participant" in idx
