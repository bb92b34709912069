"""The response frame: appended incrementally, snapshotted to Parquet, reloaded when a run is removed."""
import json
from pathlib import Path

import pandas as pd

from rose_core.analysis import responses_frame
from rose_core.run_import import import_run
from tests.backends import clone


def test_frame_cache_appends_new_responses_and_reloads_after_removal(populated_db, small_dataset, tmp_path,
                                                                     fresh_location):
    from rose_core.analysis import FrameCache
    from rose_core.run_import import delete_run

    store = clone(populated_db, fresh_location())
    cache = FrameCache(store)
    first, v1 = cache.get()
    # SQLite: a Parquet snapshot beside the file; PostgreSQL (several app processes): none, a full read
    assert Path(f"{store.location}.frame.parquet").exists() == (store.dialect == "sqlite")
    restarted, v = FrameCache(store).get()            # a new process starts from the snapshot (or the database)
    assert v == v1
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
