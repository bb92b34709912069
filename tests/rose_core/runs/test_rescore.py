"""Re-scoring stored responses: a DB written through the real import and study paths, an old-version row; on
both backends (the `store` fixture)."""
import json

import pytest

from rose_core import SCORER_VERSION
from rose_core.cli import main
from rose_core.runs.rescore import RescoreError, rescore
from rose_core.runs.importer import import_run
from rose_core.storage.connection import IntegrityError
from tests.backends import clone


@pytest.fixture
def db(small_dataset, store, tmp_path):
    """A model run imported through the real path; one of its rows then set back to what scorer 1 stored.

    The abstention item's answer has bold clicks: scorer 1 dropped them, kept the bare DONE and stored PASS;
    the current scorer reads the clicks (failure_to_abstain).
    """
    ds = small_dataset
    insts = sorted(ds.instances.values(), key=lambda i: i.instance_id)
    abstain = next(i for i in insts if i.template == "T4" and i.gold.cells == [])
    others = [i for i in insts if i.template in ("T1", "T3") and i is not abstain][:6]
    run = tmp_path / "run.jsonl"
    bold = "The region looks odd at two cells.\n\n**CLICK(R1,C1)** and **CLICK(R1,C2)**, then **DONE**"
    with run.open("w") as f:
        f.write(json.dumps({"instance_id": abstain.instance_id, "response": bold, "dataset_hash": ds.dataset_hash}) + "\n")
        for i in others:
            f.write(json.dumps({"instance_id": i.instance_id, "response": "Answer: " + i.protocol_answer,
                                "dataset_hash": ds.dataset_hash}) + "\n")
    import_run(store, ds, run, "gpt-4o")
    with store.write() as c:  # the row as scorer 1 stored it (v0.1: upper-case contiguous CLICKs only)
        c.execute("UPDATE responses SET protocol = 'DONE', parsed = ?, valid = 1, passed = 1, failure = NULL, "
                  "errors = '[]', scorer_version = '1' WHERE instance_id = ?",
                  (json.dumps({"action": "DONE", "count": None, "clicks": [], "problem": None, "canonical": "DONE"}),
                   abstain.instance_id))
    return store, abstain, len(others) + 1


def _rows(store):
    return store.query("SELECT response_id, protocol, parsed, valid, passed, failure, errors, scorer_version "
                       "FROM responses ORDER BY response_id")


def test_import_stores_the_current_scorer_version(db):
    store, abstain, n = db
    versions = {r["scorer_version"] for r in store.query("SELECT scorer_version FROM responses WHERE instance_id != ?",
                                                         (abstain.instance_id,))}
    assert versions == {SCORER_VERSION}


def test_rescore_reports_exactly_the_changed_row_and_stores_it(db, small_dataset):
    store, abstain, n = db
    before = _rows(store)
    dry = rescore(store, small_dataset, dry_run=True)
    assert _rows(store) == before                      # a dry run writes nothing
    report = rescore(store, small_dataset)
    assert dry.to_json() | {"applied": True} == report.to_json()
    assert (report.responses, report.changed, report.rewritten) == (n, 1, 1)
    assert report.from_versions == {"1": 1, SCORER_VERSION: n - 1}
    assert report.counts == {("T4", "model:gpt-4o"): {"pass_to_fail": 1, "fail_to_pass": 0, "valid_to_invalid": 0,
                                                      "invalid_to_valid": 0, "failure_changed": 1}}
    assert report.failure_moves == {(None, "failure_to_abstain"): 1}
    row = store.query("SELECT * FROM responses WHERE instance_id = ?", (abstain.instance_id,))[0]
    assert (row["passed"], row["valid"], row["failure"], row["scorer_version"]) == (0, 1, "failure_to_abstain",
                                                                                    SCORER_VERSION)
    assert row["protocol"] == "CLICK(R1,C1); CLICK(R1,C2); DONE"
    assert json.loads(row["errors"])[0] == "failure_to_abstain"
    # every other row is untouched, and a second rescore changes nothing
    assert [r for r in _rows(store) if r["response_id"] != row["response_id"]] == \
        [r for r in before if r["response_id"] != row["response_id"]]
    again = rescore(store, small_dataset)
    assert (again.changed, again.rewritten) == (0, 0)


def test_dashboards_and_report_never_serve_verdicts_a_rescore_replaced(db, small_dataset):
    """The response frame is cached by the data version: a rescore rewrites rows in place, so it bumps the verdicts
    generation and every cache (the frame, the per-solver analyses) reloads. Until the rescore, the
    report names the stale scorer version loudly."""
    from rose_core.analysis import FrameCache, report_data

    store, abstain, n = db
    cache = FrameCache(store)
    frame, state = cache.get()
    assert frame.loc[frame["instance_id"] == abstain.instance_id, "passed"].item() == 1   # scorer 1's verdict
    report, _ = report_data(store, n_boot=50)
    assert report["scorer_versions"] == {"1": 1, SCORER_VERSION: n - 1}
    assert "stale" in report["scorer_warning"] and "rescore" in report["scorer_warning"]
    rescore(store, small_dataset)
    for fresh in (cache, FrameCache(store)):         # the running server's cache, and a restart
        frame, new_state = fresh.get()
        assert (new_state.rows, new_state.last) == (state.rows, state.last) and new_state.key != state.key
        assert frame.loc[frame["instance_id"] == abstain.instance_id, "passed"].item() == 0
    report, _ = report_data(store, n_boot=50)
    assert report["scorer_versions"] == {SCORER_VERSION: n} and report["scorer_warning"] is None


def test_a_failure_mid_way_leaves_nothing_changed(db, small_dataset):
    store, abstain, n = db
    with store.write() as c:  # every row differs from the current scorer's version...
        c.execute("UPDATE responses SET scorer_version = '1'")
        last = c.execute("SELECT max(response_id) FROM responses").fetchone()[0]
        # ...and the database refuses the last update, after the others were written in the transaction
        if store.dialect == "sqlite":
            c.execute(f"CREATE TRIGGER refuse BEFORE UPDATE ON responses WHEN NEW.response_id = {last} "
                      "BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
        else:
            c.execute("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                      "RAISE EXCEPTION 'disk says no' USING ERRCODE = '23000'; END $$")
            c.execute(f"CREATE TRIGGER refuse BEFORE UPDATE ON responses FOR EACH ROW "
                      f"WHEN (NEW.response_id = {last}) EXECUTE FUNCTION refuse()")
    before = _rows(store)
    with pytest.raises(IntegrityError, match="disk says no"):
        rescore(store, small_dataset)
    assert _rows(store) == before


def test_rows_from_another_dataset_build_are_refused(db, small_dataset):
    store, abstain, n = db
    with store.write() as c:
        c.execute("UPDATE runs SET dataset_hash = 'another-build'")
    before = _rows(store)
    with pytest.raises(RescoreError, match="another-build"):
        rescore(store, small_dataset)
    assert _rows(store) == before


def test_human_rows_are_rescored_from_their_protocol_string(populated_db, small_dataset, fresh_location):
    # the session's populated database (a study's participants + agents) is shared: re-score a copy
    store = clone(populated_db, fresh_location())
    report = rescore(store, small_dataset, dry_run=True)
    humans = store.query("SELECT count(*) AS n FROM responses x JOIN runs r USING (run_id) "
                         "WHERE r.solver_kind = 'human'")[0]["n"]
    assert humans > 0 and report.responses == store.query("SELECT count(*) AS n FROM responses")[0]["n"]
    assert report.changed == 0  # protocol strings written by the UI read the same under both scorers
    store.close()


def test_cli_rescore(db, small_dataset, capsys, tmp_path):
    store, abstain, n = db
    assert main(["rescore", "--db", store.location, "--dataset", str(small_dataset.root), "--dry-run",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["applied"], out["changed"], out["by_template_solver"][0]["pass_to_fail"]) == (False, 1, 1)
    assert main(["rescore", "--db", store.location, "--dataset", str(small_dataset.root)]) == 0
    text = capsys.readouterr().out
    assert "1 verdicts changed" in text and "model:gpt-4o" in text and "None -> failure_to_abstain: 1" in text
    assert main(["rescore", "--db", str(tmp_path / "missing.db"), "--dataset", str(small_dataset.root)]) == 2


def test_every_participants_rows_are_rescored_previews_simulated_and_tests_too(populated_db, small_dataset,
                                                                                fresh_location):
    """`report` tells you to run `rescore` for stale rows, `report --include-simulated` counts a dry run's
    simulated participants, and a test participant un-marked comes back counted: rescore must reach every stored
    row, whoever's it is, or those come back with stale verdicts and the warning never goes away."""
    from rose_core.analysis import report_data
    from rose_core.instrument.manage import mark_test

    store = clone(populated_db, fresh_location())
    people = [r["participant_id"] for r in store.query(
        "SELECT DISTINCT participant_id FROM responses WHERE participant_id != '' ORDER BY participant_id")]
    simulated, preview, tested = people[:3]
    with store.write() as c:  # a dry run's participant and a preview (their origins as `study simulate` and the
        # experimenter's preview link store them), every row back at an old scorer
        c.execute("UPDATE participants SET origin = 'simulated' WHERE participant_id = ?", (simulated,))
        c.execute("UPDATE participants SET origin = 'preview' WHERE participant_id = ?", (preview,))
        c.execute("UPDATE responses SET scorer_version = '1'")
    mark_test(store, tested, True, by="tester")
    total = store.query("SELECT count(*) AS n FROM responses")[0]["n"]
    of_them = store.query("SELECT count(*) AS n FROM responses WHERE participant_id IN (?, ?, ?)",
                          (simulated, preview, tested))[0]["n"]
    assert of_them > 0
    dry = rescore(store, small_dataset, dry_run=True)
    assert (dry.responses, dry.rewritten, dict(dry.from_versions)) == (total, total, {"1": total})
    report = rescore(store, small_dataset)
    assert (report.responses, report.rewritten) == (total, total)
    assert store.query("SELECT scorer_version, count(*) AS n FROM responses GROUP BY scorer_version") == \
        [{"scorer_version": SCORER_VERSION, "n": total}]
    mark_test(store, tested, False, by="tester")   # `study mark-test --undo`: back with current verdicts
    data, _ = report_data(store, n_boot=20, include_simulated=True)
    assert set(data["scorer_versions"]) == {SCORER_VERSION} and data["scorer_warning"] is None
    store.close()
