"""A model run's settings: checked by name and type (unknown keys refused), read from TOML, stored with the run."""
import json

import pytest

from rose_core.runs.importer import RunImportError, import_run
from rose_core.runs.settings import FIELDS, RunSettingsError, check_settings, read_settings, settings_toml


def test_settings_round_trip_through_toml(tmp_path):
    s = {"model": "qwen", "endpoint": "https://api.example.org/v1", "prompt_variant": "instance",
         "system_prompt": 'say "COUNT"\nthen stop', "temperature": 0.0, "top_p": 1, "max_tokens": 2048, "seed": 3,
         "date": "2026-05-01T10:00:00+00:00", "notes": "vLLM 0.9"}
    path = tmp_path / "s.toml"
    path.write_text(settings_toml(s))
    assert read_settings(path) == s


def test_toml_dates_and_endpoints_are_stored_as_text_without_secrets(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("date = 2026-05-01\nendpoint = \"https://me:pw@host:8443/v1?api_key=sk#x\"\n")
    assert read_settings(path) == {"date": "2026-05-01", "endpoint": "https://host:8443/v1"}


@pytest.mark.parametrize("text, message", [
    ("temprature = 0.7\n", "unknown key 'temprature'"),
    ("temperature = \"hot\"\n", "temperature = 'hot': expected int or float"),
    ("max_tokens = 0\n", "max_tokens = 0: must be positive"),
    ("max_tokens = 1.5\n", "max_tokens = 1.5: expected int"),
    ("temperature = -1\n", "must not be negative"),
    ("date = \"yesterday\"\n", "not an ISO 8601 date"),
    ("seed = true\n", "seed = True: expected int"),
    ("temperature = nan\n", "not a finite number"),
    ("[sampling]\ntemperature = 1\n", "sampling: tables and arrays are not settings"),
    ("temperature = \n", "not valid TOML"),
    ("", "no settings"),
])
def test_bad_settings_are_refused_naming_the_file_and_key(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(RunSettingsError, match=message) as e:
        read_settings(path)
    assert str(path) in str(e.value)


def test_every_problem_is_named_at_once():
    with pytest.raises(RunSettingsError) as e:
        check_settings({"a": 1, "b": 2, "max_tokens": -1}, "x.toml")
    assert str(e.value).count("x.toml") == 3
    assert set(FIELDS) >= {"model", "endpoint", "prompt_variant", "temperature", "max_tokens", "date"}


def test_import_stores_checked_settings_and_refuses_bad_ones(small_dataset, store, tmp_path):
    iid = small_dataset.select(split="dev", templates=["T1"])[0].instance_id
    run = tmp_path / "r.jsonl"
    run.write_text(json.dumps({"instance_id": iid, "response": "COUNT(1)", "dataset_hash": small_dataset.dataset_hash})
                   + "\n")
    with pytest.raises(RunImportError, match="unknown key 'temp'"):
        import_run(store, small_dataset, run, "m", settings={"temp": 1})
    assert not store.query("SELECT run_id FROM runs")          # nothing stored
    import_run(store, small_dataset, run, "m", settings={"temperature": 0, "model": "m-1"})
    meta = json.loads(store.query("SELECT meta FROM runs WHERE run_id = 'model:m'")[0]["meta"])
    assert meta["settings"] == {"temperature": 0, "model": "m-1"}
