"""The analyses kept on disk: found only by their whole key, written whole, unreadable files ignored, evicted
least recently used first."""
import os

import pandas as pd

from rose_core.analysis.persist import MISS, DiskCache, analysis_code_digest


def test_a_value_comes_back_only_for_its_whole_key(tmp_path):
    cache = DiskCache(tmp_path / "a")
    frame = pd.DataFrame({"solver": ["m"], "Avg": [12.5], "n": [3]})
    key = ("per_solver", "main", None, "m", (20, 41, 0, (("model:m", 1.5),)))
    assert cache.get(key) is MISS
    cache.put(key, frame)
    pd.testing.assert_frame_equal(cache.get(key), frame)          # dtypes too (pickle, not a lossy format)
    for other in (key[:-1] + ((20, 41, 1, (("model:m", 1.5),)),),  # another verdicts generation
                  key[:-1] + ((20, 41, 0, (("model:m", 2.5),)),),  # the run replaced (another import time)
                  key[:-1] + ((21, 42, 0, (("model:m", 1.5),)),)):
        assert cache.get(other) is MISS
    assert not list((tmp_path / "a").glob(".part-*"))            # written whole, then renamed into place


def test_fetch_computes_once(tmp_path):
    cache, calls = DiskCache(tmp_path), []
    assert cache.fetch(("k",), lambda: calls.append(1) or 7) == 7
    assert DiskCache(tmp_path).fetch(("k",), lambda: calls.append(1) or 8) == 7   # a new process reads it
    assert calls == [1]


def test_a_torn_file_is_ignored_and_recomputed(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put(("k",), {"x": 1})
    cache._path(("k",)).write_bytes(b"\x80\x05garbage")
    assert cache.get(("k",)) is MISS
    assert cache.fetch(("k",), lambda: {"x": 2}) == {"x": 2}


def test_least_recently_used_files_are_evicted(tmp_path):
    cache = DiskCache(tmp_path, max_files=10)
    for k in range(10):
        cache.put((k,), k)
        os.utime(cache._path((k,)), (1000 + k, 1000 + k))
    cache.get((0,))                                  # used again: evicted last
    cache.put((10,), 10)
    left = {k for k in range(11) if cache.get((k,)) is not MISS}
    assert len(left) == 9 and 0 in left and 10 in left and 1 not in left


def test_analysis_code_digest_names_the_analysis_code():
    assert analysis_code_digest() == analysis_code_digest() and len(analysis_code_digest()) == 16


def test_local_prefix_of_a_sqlite_database_is_its_file(tmp_path):
    from rose_core.analysis.persist import local_prefix
    from rose_core.storage import open_store

    store = open_store(tmp_path / "rose.db")
    try:
        assert local_prefix(store) == tmp_path / "rose.db"
    finally:
        store.close()


def test_local_prefix_is_a_name_of_the_postgresql_database(tmp_path, monkeypatch, pg_server):
    """For PostgreSQL one name per server, port, database, user and schema as the connection resolved them, in
    the cache folder, never carrying the password (the same database reached with another password, or with its
    name left to PGDATABASE, shares its files; another database or schema never does)."""
    import psycopg

    from rose_core.analysis.persist import CACHE_ENV, local_prefix
    from rose_core.storage import open_store
    from tests.backends import with_database

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))

    def pg(url):
        store = open_store(url)
        try:
            return local_prefix(store)
        finally:
            store.close()

    one, two = pg_server.fresh("_one"), pg_server.fresh("_two")
    with psycopg.connect(one, autocommit=True) as c:
        c.execute("CREATE SCHEMA other")
    a = pg(one.replace("://rose@", "://rose:secret@"))
    assert a.parent == tmp_path / "cache" and a.name.startswith("pg-") and "secret" not in str(a)
    assert pg(one) == a
    monkeypatch.setenv("PGDATABASE", one.rsplit("/", 1)[1])
    assert pg(with_database(one, "")) == a
    monkeypatch.delenv("PGDATABASE")
    others = [pg(two), pg(one + "?options=-csearch_path%3Dother")]
    assert len({a, *others}) == 3
    for url in (one, two):
        pg_server.drop(url)


def test_write_whole_renames_into_place_and_leaves_nothing_when_refused(tmp_path):
    from rose_core.analysis.persist import write_whole

    target = tmp_path / "sub" / "f.bin"
    assert write_whole(target, lambda p: open(p, "wb").write(b"whole"))
    assert target.read_bytes() == b"whole" and sorted(x.name for x in target.parent.iterdir()) == ["f.bin"]

    def torn(p):
        open(p, "wb").write(b"half")
        raise OSError(28, "No space left on device")

    assert not write_whole(target, torn)
    assert target.read_bytes() == b"whole" and sorted(x.name for x in target.parent.iterdir()) == ["f.bin"]
    (tmp_path / "file").write_text("")
    assert not write_whole(tmp_path / "file" / "x.bin", lambda p: None)   # its folder cannot be made
