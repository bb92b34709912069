"""The response frame: read as whole columns, appended incrementally, reloaded when a run is removed or replaced,
keyed by the one data version."""
import json
from pathlib import Path

import numpy as np
import pandas as pd

from rose_core.analysis import responses_frame
from rose_core.analysis.persist import local_prefix
from rose_core.runs.importer import import_run
from tests.backends import clone


def test_frame_cache_appends_new_responses_and_reloads_after_removal(populated_db, small_dataset, tmp_path,
                                                                     fresh_location):
    from rose_core.analysis import FrameCache
    from rose_core.runs.importer import delete_run

    store = clone(populated_db, fresh_location())
    cache = FrameCache(store)
    first, v1 = cache.get()
    pd.testing.assert_frame_equal(first, responses_frame(store))
    assert cache.get()[0] is first and cache.get()[1] == v1     # unchanged: the same frame
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
    as they were. The frame (and everything keyed on its version) must still see the new answers, in this process
    and in a new one."""
    from rose_core.analysis import FrameCache

    store = clone(populated_db, fresh_location())
    import_run(store, small_dataset, _run_file(tmp_path / "right.jsonl", small_dataset, lambda i: i.protocol_answer),
               "late-model")
    cache = FrameCache(store)
    before, v1 = cache.get()
    assert before.loc[before["solver"] == "late-model", "passed"].tolist() == [1] * 9
    import_run(store, small_dataset, _run_file(tmp_path / "wrong.jsonl", small_dataset, lambda i: "nonsense"),
               "late-model", replace=True)
    for fresh in (cache, FrameCache(store)):   # the running server, and a restart
        after, v2 = fresh.get()
        assert v2 != v1 and v2.key != v1.key
        if store.dialect == "sqlite":            # same rows, same last id, same generation: only the runs differ
            assert (v2.rows, v2.last, v2.generation) == (v1.rows, v1.last, v1.generation)
        assert after.loc[after["solver"] == "late-model", "passed"].tolist() == [0] * 9
        pd.testing.assert_frame_equal(after, responses_frame(store))


def test_the_participants_share_of_the_version_follows_their_data_only(populated_db, small_dataset, tmp_path,
                                                                          fresh_location):
    """The participant statistics are cached by `DataVersion.people_part`: a model run leaves it as it was (no
    recompute), while a study's run made anew (a database rebuilt at the same path with as many participant
    responses) or a rescore's generation changes it; the whole version changes with each."""
    from rose_core.storage.schema import bump_verdicts_generation
    from rose_core.storage.version import data_version

    store = clone(populated_db, fresh_location())

    def version():
        with store.connect() as c:
            return data_version(c)

    v1 = version()
    import_run(store, small_dataset, _run_file(tmp_path / "m.jsonl", small_dataset, lambda i: "DONE"), "late-model")
    v2 = version()
    assert v2.people_part() == v1.people_part() and v2.key != v1.key and v2.rows == v1.rows + 9
    with store.write() as c:   # the study's run created at another time: the same counts, not the same data
        c.execute("UPDATE runs SET imported_at = imported_at + 1 WHERE solver_kind = 'human'")
    v3 = version()
    assert v3.people_part()[0] == v2.people_part()[0] and v3.people_part() != v2.people_part() and v3.key != v2.key
    with store.write() as c:
        bump_verdicts_generation(c)
    v4 = version()
    assert v4.generation == v3.generation + 1 and v4.people_part() != v3.people_part() and v4.key != v3.key


def test_a_participant_marked_as_a_test_leaves_the_frame_and_comes_back(populated_db, fresh_location):
    """Marking a participant as a test writes no response, yet the analyses stop reading theirs: the data version
    (its counts are of the rows the analyses read) changes, the frame in memory is read again without them, the
    participants' share changes (their statistics are recomputed); marked back, all of it returns."""
    from rose_core.analysis import FrameCache
    from rose_core.storage.participants import set_origin

    store = clone(populated_db, fresh_location())
    cache = FrameCache(store)
    before, v1 = cache.get()
    human = before[before["solver_kind"] == "human"]
    who = str(human["participant_id"].iloc[0])
    theirs = int((human["participant_id"] == who).sum())
    assert theirs
    with store.write() as c:
        assert set_origin(c, who, "test") == 1
    after, v2 = cache.get()
    assert v2 != v1 and v2.rows < v1.rows and v2.last == v1.last and v2.people_part() != v1.people_part()
    assert who not in set(after["participant_id"]) and len(after) == len(before) - theirs
    pd.testing.assert_frame_equal(after, responses_frame(store))
    with store.write() as c:
        assert set_origin(c, who, "participant") == 1
    back, v3 = cache.get()
    assert (v3.rows, v3.people) == (v1.rows, v1.people) and len(back) == len(before)
    pd.testing.assert_frame_equal(back, responses_frame(store))


def test_frame_text_is_plain_strings_from_the_database(populated_db, fresh_location):
    """Object columns (not Arrow strings: every filter of those re-encodes the column), the same from a full read
    and through the cache; a missing failure kind is None."""
    from rose_core.analysis import FrameCache

    store = clone(populated_db, fresh_location())
    read = responses_frame(store)
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


def test_two_postgresql_databases_named_by_libpq_defaults_never_share_cached_analyses(pg_server, populated_stores,
                                                                                        small_dataset, monkeypatch):
    """A URL may leave the database (or host, port, user) to libpq: PGDATABASE, a service file, `options`. Two
    databases reached with one URL text are still two: copies of one database (a staging copy, a restore) that
    then each took one different answer have the same data version, so analyses on disk under one name would hand
    the second the first's numbers. Each is read as it is, and their files are named apart."""
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
    frames, prefixes = [], []
    for name in names:
        monkeypatch.setenv("PGDATABASE", name.rsplit("/", 1)[1])
        store = open_store(no_database)
        try:
            truth = responses_frame(store)
            frame, _ = FrameCache(store).get()
            pd.testing.assert_frame_equal(frame, truth, check_dtype=False)
            frames.append(frame)
            prefixes.append(local_prefix(store))
        finally:
            store.close()
    assert frames[0]["passed"].sum() == frames[1]["passed"].sum() + 1
    assert prefixes[0] != prefixes[1]
    for name in names:
        pg_server.drop(name)


def _answering(store, small_dataset):
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.screens import ItemScreen
    from rose_core.instrument.study import list_studies
    from tests.participants import answer, new_session

    study = list_studies(store)[0]
    session = new_session(store, small_dataset, study, "late", ids=SequentialIds("late"), clock=FakeClock())

    def answer_one() -> None:
        while not isinstance(screen := session.screen(), ItemScreen) or screen.kind != "main":
            answer(session, screen)
        answer(session, screen)

    return answer_one


def test_an_answer_committed_while_the_frame_is_read_is_counted_once(populated_db, small_dataset, fresh_location):
    """A participant answering between the version check and the rows read: the rows and the version handed out
    are read in one snapshot, so the next refresh neither appends the answer a second time nor misses one."""
    from rose_core.analysis import FrameCache

    store = clone(populated_db, fresh_location())
    answer_one = _answering(store, small_dataset)

    class AnsweredMeanwhile(FrameCache):
        pending = [True]

        def current(self):
            out = super().current()
            if self.pending and self.pending.pop():
                answer_one()                           # commits after the version, before the rows
            return out

    cache = AnsweredMeanwhile(store)
    _, v = cache.get()
    assert v == FrameCache(store).current()            # the version of the rows read, the answer included
    answer_one()                                       # the next answer: the frame is brought up to date
    frame, _ = cache.get()
    truth = responses_frame(store)
    assert frame["response_id"].is_unique and len(frame) == len(truth)
    pd.testing.assert_frame_equal(frame, truth, check_dtype=False)


def test_a_response_committed_below_the_last_id_read_is_not_missed(populated_db, small_dataset, fresh_location):
    """PostgreSQL hands ids out before commit: an answer with a lower id can commit after one with a higher id that
    the frame already holds. Appending only what lies beyond the last id would miss it for good; the count of a
    the version's own count, and the count of what lies beyond its last id, read beside the appended rows, tell,
    and the frame is read again."""
    from rose_core.analysis import FrameCache

    store = clone(populated_db, fresh_location())
    cache = FrameCache(store)
    first, _ = cache.get()
    last = int(first["response_id"].max())
    with store.write() as c:
        row = c.execute("SELECT * FROM responses WHERE kind = 'main' ORDER BY response_id DESC LIMIT 1").fetchone()
        cols = [k for k in row.keys() if k not in ("response_id", "attempt")]
        for rid, attempt in ((last + 10, 7), (last + 5, 8)):     # the higher id first: the frame reads it
            c.execute(f"INSERT INTO responses(response_id, attempt, {', '.join(cols)}) VALUES "
                      f"(?, ?, {', '.join('?' * len(cols))})", (rid, attempt, *[row[k] for k in cols]))
            if attempt == 7:
                c.execute("COMMIT")
                assert len(cache.get()[0]) == len(first) + 1
                c.execute("BEGIN")
    frame, _ = cache.get()
    assert len(frame) == len(first) + 2
    pd.testing.assert_frame_equal(frame, responses_frame(store), check_dtype=False)


def test_the_version_handed_out_with_the_frame_is_that_of_its_rows(populated_db, small_dataset, tmp_path,
                                                                   fresh_location):
    """The dashboards key every cached analysis on the version handed out with the frame (`ui.dash._signature`:
    rows, last id, the runs' share of the version). A run replaced between the version check and the rows read
    (here: right after the check, through the real import) must not leave the old import time beside the new
    rows: SQLite reuses the freed ids, so that key would serve the replaced run's old numbers for its new rows."""
    from rose_core.analysis import FrameCache

    store = clone(populated_db, fresh_location())
    import_run(store, small_dataset, _run_file(tmp_path / "right.jsonl", small_dataset, lambda i: i.protocol_answer),
               "late-model")

    class ReplacedMeanwhile(FrameCache):
        """A new process's first read, with the run replaced right after the version is checked."""
        race = True

        def current(self):
            out = super().current()
            if self.race:
                self.race = False
                import_run(store, small_dataset, _run_file(tmp_path / "wrong.jsonl", small_dataset,
                                                           lambda i: "nonsense"), "late-model", replace=True)
            return out

    frame, version = ReplacedMeanwhile(store).get()
    with store.connect() as c:
        now = float(c.execute("SELECT imported_at FROM runs WHERE run_id = 'model:late-model'").fetchone()[0])
    assert frame.loc[frame["solver"] == "late-model", "passed"].tolist() == [0] * 9     # the new rows
    assert version.stamps["model:late-model"] == now                                   # with their own time
    assert version == FrameCache(store).get()[1]


# Text the old `group_concat` / `string_agg` read split on or marked NULL with, quotes, backslashes, control
# characters, SQL and unicode: every one must come back exactly as stored.
_ODD = ["a,b", "a\x1fb", "a\x1eb", "a\x1db", "tab\there", "new\nline", "it's", 'say "hi"',
        "back\\slash", "\\N", "NULL", "", " ", "-- not a comment", "'; DROP TABLE responses; --", "é ü ß",
        "日本語", "🌹🧩", "\u200b", "%s %% $1 ?"]


def _old_frame(store, after_id=0):
    """The frame as the code before the column reader read it in its row form (`read_response_rows` into object
    columns, then the same typing): the reference the column read must equal, row for row and dtype for dtype."""
    from rose_core.analysis import frame
    from rose_core.storage.responses import read_response_rows

    with store.connect() as conn:
        names, rows = read_response_rows(conn, frame._COLUMNS, kind="main", after_id=after_id, analysable=True)
    df = pd.DataFrame(rows, columns=names, dtype=object) if rows else pd.DataFrame(
        {c: pd.Series(dtype=object) for c in names})
    return frame._typed(df)


def _same_frame(got, want):
    assert list(got.columns) == list(want.columns)
    assert {c: str(t) for c, t in got.dtypes.items()} == {c: str(t) for c, t in want.dtypes.items()}
    assert len(got) == len(want)
    for col in got.columns:
        if got[col].dtype == object:       # None stays None (not NaN), text exactly as stored
            assert got[col].tolist() == want[col].tolist(), col
            assert all(v is None or type(v) is str for v in got[col]), col
        else:
            np.testing.assert_array_equal(got[col].to_numpy(), want[col].to_numpy(), err_msg=col)
    pd.testing.assert_frame_equal(got, want)


def test_the_column_read_equals_the_row_read_with_nulls_odd_text_and_many_runs(populated_db, fresh_location):
    """Sixty model runs (names and ids full of separators, quotes and unicode) beside the study's participants,
    with NULL protocols, failures and timings and odd text in every text column: the frame read as columns is
    the one the row read gives, whole and after an id, and as the cache appends it."""
    import math

    from rose_core.analysis import FrameCache
    from rose_core.storage.responses import ResponseRow, store_responses

    store = clone(populated_db, fresh_location())
    cache = FrameCache(store)
    cache.get()
    with store.connect() as c:
        last = int(c.execute("SELECT max(response_id) FROM responses").fetchone()[0])
    with store.write() as c:
        for k in range(60):
            odd = _ODD[k % len(_ODD)]
            c.execute("INSERT INTO runs(run_id, solver_kind, solver_name, study_id, dataset_hash, imported_at) "
                      "VALUES (?, ?, ?, NULL, ?, ?)", (f"model:{odd}{k}", "model" if k % 7 else "agent",
                                                       f"{odd} m{k}", "h", 1_000.0 + k))
    rows = []
    floats = [0.1, 1 / 3, 5e-324, 1.7976931348623157e308, -0.0, 123456789.12345679, None]
    for k in range(60):
        for j in range(7):
            odd, other = _ODD[(k + j) % len(_ODD)], _ODD[(3 * k + j) % len(_ODD)]
            rows.append(ResponseRow(
                f"model:{_ODD[k % len(_ODD)]}{k}", f"{odd}-inst{j}", f"T{j % 5 + 1}", other, "dev", f"{other}s{j}",
                odd, None if j % 3 == 0 else other, "{}", j % 2, (j // 2) % 2, None if j % 2 else odd, "[]",
                1.0, kind="main" if j < 6 else "practice", first_action_ms=floats[(k + j) % len(floats)],
                total_ms=None if (k + j) % 4 == 0 else float(k * 100 + j), scorer_version=other or "v"))
    store_responses(store, rows)

    full = responses_frame(store)
    assert full["run_id"].nunique() >= 60 and full["protocol"].isna().any() and full["failure"].isna().any()
    assert full["total_ms"].isna().any() and any(v is not None and "\x1f" in v for v in full["instance_id"])
    assert not math.isnan(full["first_action_ms"].max()) and full["first_action_ms"].isna().any()
    _same_frame(full, _old_frame(store))
    _same_frame(responses_frame(store, after_id=last), _old_frame(store, after_id=last).reset_index(drop=True))
    appended, _ = cache.get()                          # the cache read the rows before: it appends the new ones
    _same_frame(appended, _old_frame(store))
