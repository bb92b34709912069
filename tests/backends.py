"""The two storage backends the tests run against: a SQLite file, and a database on a real PostgreSQL server.

`scripts/test.sh` starts a throwaway server (`scripts/_pg.sh`) and exports its URL as ROSE_TEST_PG_URL. Every
test gets a fresh database: `CREATE DATABASE … TEMPLATE` of one migrated once per session (~0.1 s), dropped
after the test. Nothing here is a mock: the stores are the app's own `Store`.
"""
from __future__ import annotations

import itertools
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:   # psycopg and the store are imported where they are used: tests/conftest.py imports this module
    from rose_core.storage.connection import Store   # in pytest-xdist's controller too, which opens no store

BACKENDS = ("sqlite", "postgresql")
PG_URL_ENV = "ROSE_TEST_PG_URL"
PG_REQUIRED_ENV = "ROSE_TEST_PG_REQUIRED"
PG_MISSING = (f"PostgreSQL backend not tested: {PG_URL_ENV} is not set (scripts/test.sh starts a throwaway "
              "server and sets it)")


def with_database(url: str, name: str) -> str:
    """The same server and user, another database."""
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, "/" + name, p.query, p.fragment))


class PgServer:
    """The test server: a migrated template database, and fresh databases made from it."""

    def __init__(self, url: str):
        import psycopg

        from rose_core.storage import open_store

        self.url = url
        self.admin = psycopg.connect(url, autocommit=True)
        self._n = itertools.count()
        self.prefix = f"rose_t{os.getpid()}"
        self.template = f"{self.prefix}_template"
        self.admin.execute(f'DROP DATABASE IF EXISTS "{self.template}" WITH (FORCE)')
        self.admin.execute(f'CREATE DATABASE "{self.template}" TEMPLATE template0')
        open_store(with_database(url, self.template)).close()  # migrated once; nobody stays connected to it
        self.made: list[str] = []

    def fresh(self, label: str = "") -> str:
        """A new, migrated, empty database; its URL."""
        name = f"{self.prefix}_{next(self._n)}{label}"
        self.admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
        self.made.append(name)
        return with_database(self.url, name)

    def drop(self, url_or_name: str) -> None:
        name = urlsplit(url_or_name).path.lstrip("/") if "://" in url_or_name else url_or_name
        self.admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self.made:
            self.made.remove(name)

    def close(self) -> None:
        for name in [*self.made, self.template]:
            self.admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.admin.close()


def copy_rows(src_url: str, dst_url: str) -> None:
    """Every row of one database into another of the same schema (COPY, constraints off while copying), with
    the identity counters moved past the copied ids."""
    import psycopg

    with psycopg.connect(src_url) as src, psycopg.connect(dst_url) as dst:
        dst.execute("SET session_replication_role = replica")
        tables = [r[0] for r in src.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
        for t in tables:
            dst.execute(f'DELETE FROM "{t}"')
            with src.cursor().copy(f'COPY "{t}" TO STDOUT (FORMAT BINARY)') as out, \
                    dst.cursor().copy(f'COPY "{t}" FROM STDIN (FORMAT BINARY)') as into:
                for block in out:
                    into.write(block)
        for t, col in dst.execute("SELECT table_name, column_name FROM information_schema.columns "
                                  "WHERE table_schema = current_schema() AND is_identity = 'YES'").fetchall():
            dst.execute(f"SELECT setval(pg_get_serial_sequence('{t}', '{col}'), coalesce(max({col}), 0) + 1, false) "
                        f'FROM "{t}"')
        dst.commit()


def clone(store: Store, into: str) -> Store:
    """A copy of a store's whole database at `into` (a file path, or a fresh PostgreSQL database's URL)."""
    from rose_core.storage import open_store
    from rose_core.storage.connection import is_postgres

    if (store.path is not None) == is_postgres(into):
        raise ValueError(f"clone: {store.location} and {into} are on different storage backends")
    if store.path is not None:
        with sqlite3.connect(store.path) as src, sqlite3.connect(into) as dst:
            src.backup(dst)
        return open_store(Path(into))
    copy_rows(store.location, into)
    return open_store(into)
