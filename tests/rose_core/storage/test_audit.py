"""What the benchmarks check a database against (storage.audit), on the bench's own synthetic database
(bench/synthetic.py, stored through the storage layer's writers), on both backends."""
import sys

from tests.command_line import ROOT

from rose_core.storage import audit

sys.path.insert(0, str(ROOT / "bench"))
import synthetic  # noqa: E402


def test_the_benches_checks_read_the_synthetic_database(small_dataset, fresh_location):
    ds = small_dataset
    store = synthetic.populate(fresh_location(), ds, human_responses=200, items_each=20, models=2, seed=3)
    models = 2 * len(ds.instances)
    assert audit.response_count(store) == 200 + models
    assert audit.responses_per_participant(store) == {f"BENCH{k}": 20 for k in range(10)}
    study_id = store.query("SELECT study_id FROM studies")[0]["study_id"]
    assert audit.responses_per_participant(store, study_id) == {f"BENCH{k}": 20 for k in range(10)}
    assert audit.responses_per_participant(store, "no-such-study") == {}
    assert audit.end_reasons(store) == audit.end_reasons(store, study_id) == {"completed": 10}
    assert audit.event_count(store) == audit.event_count(store, study_id) == 0
    assert audit.events_per_participant(store) == {}
    assert sorted(audit.participant_ids(store)) == [f"p{k:06d}" for k in range(10)]
    assert audit.main_solver_count(store) == 3                      # the humans and two models
    assert audit.scorer_versions(store) == (200 + models, 1, synthetic.SCORER_VERSION)
    # every model answers every instance once: over a target of 1 only where a human answered too
    humans = {r["instance_id"] for r in store.query("SELECT DISTINCT instance_id FROM responses WHERE "
                                                     "participant_id <> '' AND kind = 'main'")}
    assert audit.main_instances_over(store, 2) == len(humans)
    assert audit.main_instances_over(store, 0, study_id) == len(humans)
    assert audit.main_instances_over(store, 20, study_id) == 0
    runs = store.query("SELECT run_id, solver_kind, source_file, format, imported_at, meta FROM runs "
                       "WHERE solver_kind = 'model' ORDER BY run_id")
    submitted = store.query("SELECT DISTINCT submitted_at FROM responses")
    assert [(r["run_id"], r["source_file"], r["format"], r["meta"]) for r in runs] == \
        [("model:model-A", None, "synthetic", "{}"), ("model:model-B", None, "synthetic", "{}")]
    assert {r["imported_at"] for r in runs} == {r["submitted_at"] for r in submitted}   # the rows' own time
    with store.connect() as c:
        rows = list(audit.verdicts(c))
    first = store.query("SELECT response_id, instance_id, protocol, parsed, valid, passed, failure, errors "
                        "FROM responses WHERE run_id = 'model:model-A' ORDER BY instance_id LIMIT 1")[0]
    assert len(rows) == 200 + models and all(type(r) is tuple and len(r) == 8 for r in rows)
    assert rows[0] == tuple(first.values())     # model:model-A sorts first
    store.close()
