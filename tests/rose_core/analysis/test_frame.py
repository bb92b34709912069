"""The response frame: appended incrementally, snapshotted to Parquet, reloaded when a run is removed."""
import json
import os
from pathlib import Path

import pandas as pd

from rose_core.analysis import responses_frame
from rose_core.analysis.persist import CACHE_ENV, local_prefix
from rose_core.runs.importer import import_run
from tests.backends import clone


def test_frame_cache_appends_new_responses_and_reloads_after_removal(populated_db, small_dataset, tmp_path,
                                                                     fresh_location):
    from rose_core.analysis import FrameCache
    from rose_core.runs.importer import delete_run

    store = clone(populated_db, fresh_location())
    cache = FrameCache(store)
    first, v1 = cache.get()
    # a Parquet snapshot: beside a SQLite file; for PostgreSQL in the cache folder, under the database's own name
    snapshot = Path(f"{local_prefix(store)}.frame.parquet")
    assert snapshot.exists()
    if store.dialect == "sqlite":
        assert snapshot == Path(f"{store.location}.frame.parquet")
    else:
        assert snapshot.parent == Path(os.environ[CACHE_ENV])
    restart = FrameCache(store)
    restarted, v = restart.get()                      # a new process starts from the snapshot
    assert v == v1 and restart.snapshot_rows == v1[0] == len(first)
    pd.testing.assert_frame_equal(restarted, first, check_dtype=False)
    assert cache.get()[1] == v1                       # unchanged: same frame
    f = tmp_path / "m.jsonl"
    f.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": "DONE",
                                     "dataset_hash": small_dataset.dataset_hash}) + "\n"
                         for i in list(small_dataset.instances.values())[:7]))
    import_run(store, small_dataset, f, "late-model")
    grown, v2 = cache.get()
    assert len(grown) == len(first) + 7 and v2 != v1
    # appending gives a full reload's frame (a new run with no timings may hold None where a reload has NaN)
    pd.testing.assert_frame_equal(grown, responses_frame(store), check_dtype=False)
    delete_run(store, "agent:oracle")
    shrunk, _ = cache.get()
    pd.testing.assert_frame_equal(shrunk, responses_frame(store), check_dtype=False)
    assert "oracle (agent)" not in set(shrunk["solver"])


def _run_file(path: Path, ds, answer) -> Path:
    path.write_text("".join(json.dumps({"instance_id": i.instance_id, "response": answer(i),
                                        "dataset_hash": ds.dataset_hash}) + "\n"
                            for i in list(ds.instances.values())[:9]))
    return path


def test_a_run_replaced_by_one_of_the_same_size_is_reloaded(populated_db, small_dataset, tmp_path, fresh_location):
    """SQLite reuses the freed response ids: a replaced run of the same size leaves (rows, last id, generation)
    as they were. The frame (and everything keyed on its state) must still see the new answers, in this process
    and after a restart from the Parquet snapshot."""
    from rose_core.analysis import FrameCache

    store = clone(populated_db, fresh_location())
    import_run(store, small_dataset, _run_file(tmp_path / "right.jsonl", small_dataset, lambda i: i.protocol_answer),
               "late-model")
    cache = FrameCache(store)
    before, v1 = cache.get()
    assert before.loc[before["solver"] == "late-model", "passed"].tolist() == [1] * 9
    import_run(store, small_dataset, _run_file(tmp_path / "wrong.jsonl", small_dataset, lambda i: "nonsense"),
               "late-model", replace=True)
    for fresh in (cache, FrameCache(store)):   # the running server, and a restart from the snapshot
        after, v2 = fresh.get()
        assert v2 != v1
        if store.dialect == "sqlite":            # same rows, same last id, same generation: only the runs differ
            assert v2[:3] == v1[:3]
        assert after.loc[after["solver"] == "late-model", "passed"].tolist() == [0] * 9
        pd.testing.assert_frame_equal(after, responses_frame(store))


def test_human_version_follows_the_participants_data_only(populated_db, small_dataset, tmp_path, fresh_location):
    """The participant statistics are cached by `human_version`: a model run leaves it as it was (no recompute),
    while a study's run made anew (a database rebuilt at the same path with as many participant responses) or a
    rescore's generation changes it."""
    from rose_core.analysis import human_version
    from rose_core.storage.schema import bump_verdicts_generation

    store = clone(populated_db, fresh_location())
    v1 = human_version(store)
    import_run(store, small_dataset, _run_file(tmp_path / "m.jsonl", small_dataset, lambda i: "DONE"), "late-model")
    assert human_version(store) == v1
    with store.write() as c:   # the study's run created at another time: the same counts, not the same data
        c.execute("UPDATE runs SET imported_at = imported_at + 1 WHERE solver_kind = 'human'")
    v2 = human_version(store)
    assert v2[:3] == v1[:3] and v2 != v1
    with store.write() as c:
        bump_verdicts_generation(c)
    assert human_version(store)[2] == v2[2] + 1


def test_frame_text_is_plain_strings_from_the_database_and_the_snapshot(populated_db, fresh_location):
    """Object columns (not Arrow strings: every filter of those re-encodes the column), the same from a full read
    and from the snapshot; a missing failure kind is None either way."""
    from rose_core.analysis import FrameCache

    store = clone(populated_db, fresh_location())
    read = responses_frame(store)
    FrameCache(store).get()
    snap, _ = FrameCache(store).get()
    for df in (read, snap):
        for col in ("solver", "instance_id", "protocol", "failure", "study_id", "unit"):
            assert df[col].dtype == object, col
        assert df["failure"].map(lambda v: v is None or isinstance(v, str)).all()
        assert df["response_id"].dtype == "int64" and df["total_ms"].dtype == float
    pd.testing.assert_frame_equal(snap, read)


def test_runs_whose_names_read_as_another_solver_s_label_keep_their_own_rows(small_dataset, store):
    """Databases imported before such names were refused: a model named 'oracle (agent)' beside the agent
    'oracle', or named 'Human', must not be pooled with them (the tables group by label)."""
    from rose_core.analysis import report_data
    from rose_core.benchmarks.rose.scoring import SCORER_VERSION, score
    from rose_core.runs.importer import _store_run
    from rose_core.storage.responses import ResponseRow

    insts = small_dataset.select(templates=["T1", "T2", "T3", "T4", "T5"])

    def put(kind, name, right):
        rows = []
        for i in insts:
            s = score(small_dataset.key(i.instance_id), i.protocol_answer if right else "COUNT(99)")
            rows.append(ResponseRow.scored(f"{kind}:{name}", i.instance_id, i.template, i.subset, i.split, i.scene_id,
                                           "", s.parsed.canonical, s.parsed.to_json(), s.valid, s.passed, s.failure,
                                           s.errors, 0.0, scorer_version=SCORER_VERSION))
        _store_run(store, f"{kind}:{name}", kind, name, "x", "jsonl", small_dataset.dataset_hash, {}, rows, False)

    put("agent", "oracle", True)
    put("model", "oracle (agent)", False)
    put("model", "Human", False)
    labels = responses_frame(store).groupby("solver")["run_id"].unique()
    assert {k: list(v) for k, v in labels.items()} == {
        "oracle (agent)": ["agent:oracle"], "oracle (agent) (model)": ["model:oracle (agent)"],
        "Human (model)": ["model:Human"]}
    rows = {r["solver"]: r for r in report_data(store, published=False, n_boot=20)[0]["rows"]}
    assert rows["oracle (agent)"]["Avg"] == 100.0 and rows["oracle (agent) (model)"]["Avg"] < 100.0


def test_two_postgresql_databases_named_by_libpq_defaults_never_share_a_snapshot(pg_server, populated_stores,
                                                                                    small_dataset, monkeypatch):
    """A URL may leave the database (or host, port, user) to libpq: PGDATABASE, a service file, `options`. Two
    databases reached with one URL text are still two: copies of one database (a staging copy, a restore) that
    then each took one different answer have the same data version (rows, last id, generation, runs' times), so
    a shared snapshot would hand the second the first's answers."""
    from rose_core.analysis import FrameCache
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.screens import ItemScreen
    from rose_core.instrument.study import list_studies
    from rose_core.storage import open_store
    from tests.backends import with_database
    from tests.participants import answer, new_session

    names = [pg_server.fresh("_a"), pg_server.fresh("_b")]
    source = populated_stores("postgresql")
    for name, right in zip(names, (True, False)):
        s = clone(source, name)
        study = list_studies(s)[0]
        session = new_session(s, small_dataset, study, "late", ids=SequentialIds("late"), clock=FakeClock())
        while not isinstance(screen := session.screen(), ItemScreen) or screen.kind != "main":
            answer(session, screen)
        answer(session, screen, right=right)           # one answer each: right in one, wrong in the other
        s.close()
    no_database = with_database(pg_server.url, "")       # ROSE_DB=postgresql://user@host:port/ + PGDATABASE
    frames = []
    for name in names:
        monkeypatch.setenv("PGDATABASE", name.rsplit("/", 1)[1])
        store = open_store(no_database)
        try:
            truth = responses_frame(store)
            frame, _ = FrameCache(store).get()         # the second process starts after the first saved its snapshot
            pd.testing.assert_frame_equal(frame, truth, check_dtype=False)
            frames.append(frame)
        finally:
            store.close()
    assert frames[0]["passed"].sum() == frames[1]["passed"].sum() + 1
    for name in names:
        pg_server.drop(name)


def test_an_answer_committed_while_the_frame_is_read_is_counted_once(populated_db, small_dataset, fresh_location,
                                                                      monkeypatch):
    """The data version and the rows are read in two statements: a participant answering in between puts a row in
    the frame that the version does not count, and the next refresh must not append it a second time."""
    from rose_core.analysis import FrameCache
    from rose_core.analysis import frame as frame_module
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.screens import ItemScreen
    from rose_core.instrument.study import list_studies
    from tests.participants import answer, new_session

    store = clone(populated_db, fresh_location())
    study = list_studies(store)[0]
    session = new_session(store, small_dataset, study, "late", ids=SequentialIds("late"), clock=FakeClock())

    def answer_one() -> None:
        while not isinstance(screen := session.screen(), ItemScreen) or screen.kind != "main":
            answer(session, screen)
        answer(session, screen)

    read_rows, pending = frame_module.responses_frame, [True]

    def rows_after_an_answer(store, after_id=0):     # a participant's answer commits just before the rows are read
        if pending and pending.pop():
            answer_one()
        return read_rows(store, after_id)

    monkeypatch.setattr(frame_module, "responses_frame", rows_after_an_answer)
    cache = FrameCache(store, snapshot=False)
    cache.get()
    answer_one()                                       # the next answer: the frame is brought up to date
    frame, _ = cache.get()
    truth = read_rows(store)
    assert frame["response_id"].is_unique and len(frame) == len(truth)
    pd.testing.assert_frame_equal(frame, truth, check_dtype=False)


def test_an_unusable_cache_folder_only_costs_a_full_read(pg_server, monkeypatch, tmp_path):
    """The PostgreSQL snapshot lives in the cache folder, which may be one this process cannot look into (made by
    another user, mode 700) or name: the dashboards then read the database, they never fail. (A name too long
    to look up stands in for a folder not searchable: the tests may run as root, who may search every folder.)"""
    from rose_core.analysis import FrameCache
    from rose_core.storage import open_store

    for unusable in (tmp_path / ("x" * 300), tmp_path / "locked"):
        if unusable.name == "locked":
            unusable.mkdir(mode=0o000)
        monkeypatch.setenv(CACHE_ENV, str(unusable))
        url = pg_server.fresh()
        store = open_store(url)
        try:
            frame, state = FrameCache(store).get()
            assert len(frame) == 0 and state[0] == 0
        finally:
            store.close()
            pg_server.drop(url)


def test_a_snapshot_written_by_other_frame_code_with_the_same_columns_is_not_served(populated_db, fresh_location):
    """The snapshot holds derived columns (each run's solver label, the resampling unit, the study filled in): a
    version of the code that derived them otherwise (an older label rule pooled two runs into one row) writes the
    same column names. Its frame must not be served after an upgrade: the snapshot says which frame code wrote it,
    and another code's is a full read (here: labels as an older rule wrote them, under another code stamp)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rose_core.analysis import FrameCache

    store = clone(populated_db, fresh_location())
    FrameCache(store).get()
    path = Path(f"{local_prefix(store)}.frame.parquet")
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"rose_state"])
    meta["code"] = "another version of the frame code"
    solver = pa.array([s.replace(" (agent)", "") for s in table.column("solver").to_pylist()])
    table = table.set_column(table.column_names.index("solver"), "solver", solver)
    pq.write_table(table.replace_schema_metadata({b"rose_state": json.dumps(meta).encode()}), path)
    frame, _ = FrameCache(store).get()
    assert "oracle (agent)" in set(frame["solver"])
    pd.testing.assert_frame_equal(frame, responses_frame(store))


def test_the_import_times_handed_out_with_the_frame_are_those_of_its_rows(populated_db, small_dataset, tmp_path,
                                                                          fresh_location):
    """`get_with_stamps` hands out the runs' import times the frame was read with; the dashboards key every cached
    analysis on them (`ui.dash._signature`: rows, last id, generation, import times). A run replaced between the
    version read and the rows read (here: right after the version, through the real import) left the old time
    beside the new rows: the cache key of the replaced run's old answers (SQLite reuses the freed ids, so rows and
    last id are the same) then served its old numbers for the new rows."""
    from rose_core.analysis import FrameCache

    store = clone(populated_db, fresh_location())
    import_run(store, small_dataset, _run_file(tmp_path / "right.jsonl", small_dataset, lambda i: i.protocol_answer),
               "late-model")

    class ReplacedMeanwhile(FrameCache):
        """A new process's first read, with the run replaced right after the version is read."""
        race = True

        def _current(self):
            out = super()._current()
            if self.race:
                self.race = False
                import_run(store, small_dataset, _run_file(tmp_path / "wrong.jsonl", small_dataset,
                                                           lambda i: "nonsense"), "late-model", replace=True)
            return out

    frame, state, stamps = ReplacedMeanwhile(store, snapshot=False).get_with_stamps()
    with store.connect() as c:
        now = float(c.execute("SELECT imported_at FROM runs WHERE run_id = 'model:late-model'").fetchone()[0])
    assert frame.loc[frame["solver"] == "late-model", "passed"].tolist() == [0] * 9     # the new rows
    assert stamps["model:late-model"] == now                                           # with their own time
    assert state == FrameCache(store, snapshot=False).get()[1]
