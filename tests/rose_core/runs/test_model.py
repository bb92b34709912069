"""run-model against a small OpenAI-compatible server on loopback: retries, failures, resume, raw kept."""
import json
import threading

import pytest

from rose_core.common.chat import RunFileMismatch
from rose_core.runs.importer import import_run
from rose_core.runs.model import run_model
from rose_core.storage import open_store
from tests.chat_api import ChatAPI, completion
from tests.command_line import run_cli


class FakeAPI(ChatAPI):
    """Answers COUNT(1)/DONE; throttles each prompt's first call with 429; can fail T5 prompts with 500."""

    def __init__(self):
        self.calls: list[dict] = []
        self.seen: set[str] = set()
        self.fail_excluded = True
        self._seen_lock = threading.Lock()
        super().__init__(self._answer)

    def _answer(self, body: dict, path: str, n: int) -> tuple[int, dict]:
        text = body["messages"][0]["content"][0]["text"]
        image = body["messages"][0]["content"][1]["image_url"]["url"]
        with self._seen_lock:
            self.calls.append({"path": path, "auth": self.requests[n - 1]["auth"], "model": body["model"],
                               "image": image[:22]})
            first = text + image[-40:] not in self.seen
            self.seen.add(text + image[-40:])
        if path != "/v1/chat/completions":
            return 404, {"error": "not found"}
        if first:
            return 429, {"error": {"message": "slow down"}}
        if self.fail_excluded and "excluded" in text:
            return 500, {"error": {"message": "boom"}}
        return 200, completion("I looked carefully.\nCOUNT(1)" if "COUNT(n)" in text else "DONE", body["model"])


@pytest.fixture
def api():
    with FakeAPI() as a:
        yield a


def test_retries_failures_resume_and_import(api, small_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_KEY", "sk-local")
    out = tmp_path / "run.jsonl"
    insts = small_dataset.select(split="dev", templates=["T1", "T3", "T5"])
    t5 = [i for i in insts if i.template == "T5"]
    first = run_model(small_dataset, api.url, "fake-vlm", out, split="dev", templates=["T1", "T3", "T5"],
                      concurrency=3, max_retries=2, backoff_base=0.01, api_key_env="TEST_KEY")
    assert first.requested == len(insts)
    assert set(first.failed) == {i.instance_id for i in t5} and "HTTP 500" in next(iter(first.failed.values()))
    assert first.succeeded == len(insts) - len(t5)
    assert all(c["auth"] == "Bearer sk-local" and c["image"] == "data:image/png;base64," for c in api.calls)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert all(x["raw"]["object"] == "chat.completion" and x["attempts"] == 2 for x in lines)  # one 429 each
    api.fail_excluded = False
    calls_before = len(api.calls)
    second = run_model(small_dataset, api.url, "fake-vlm", out, split="dev", templates=["T1", "T3", "T5"],
                       concurrency=3, max_retries=2, backoff_base=0.01, api_key_env="TEST_KEY")
    assert second.done_before == first.succeeded and second.requested == len(t5) and not second.failed
    assert len(api.calls) - calls_before == len(t5)  # resume: only the failed ones were asked again
    assert all(x["dataset_hash"] == small_dataset.dataset_hash for x in map(json.loads, out.read_text().splitlines()))
    res = import_run(open_store(tmp_path / "rose.db"), small_dataset, out, "fake-vlm")
    assert res.format == "jsonl" and res.responses == len(insts)


def test_settings_are_written_kept_on_resume_and_stored_by_import(api, small_dataset, tmp_path):
    from rose_core.runs.settings import RunSettingsError, read_settings, sidecar

    api.fail_excluded = False
    out = tmp_path / "run.jsonl"
    kw = dict(split="dev", templates=["T1"], backoff_base=0.01, limit=2, max_tokens=512)
    run_model(small_dataset, api.url.replace("http://", "http://user:secret@") + "?key=x", "fake-vlm", out,
              temperature=0.2, **kw)
    first = read_settings(sidecar(out))
    assert first["model"] == "fake-vlm" and first["temperature"] == 0.2 and first["max_tokens"] == 512
    assert first["prompt_variant"] == "instance" and first["date"].endswith("+00:00")
    assert "secret" not in first["endpoint"] and "key=" not in first["endpoint"] and first["endpoint"].endswith("/v1")
    run_model(small_dataset, api.url, "fake-vlm", out, temperature=0.2, **{**kw, "limit": 3})   # a resume: kept
    assert read_settings(sidecar(out)) == first
    with pytest.raises(RunSettingsError, match="temperature: 0.2 then, 0.7 now"):
        run_model(small_dataset, api.url, "fake-vlm", out, temperature=0.7, **kw)
    db = tmp_path / "rose.db"
    r = run_cli("import-run", str(out), "--solver", "fake-vlm", "--dataset", str(small_dataset.root), "--db", str(db))
    assert r.returncode == 0 and f"settings: from {sidecar(out)}" in r.stdout, r.stderr
    meta = json.loads(open_store(db).query("SELECT meta FROM runs WHERE run_id = 'model:fake-vlm'")[0]["meta"])
    assert meta["settings"] == first


def test_resume_refuses_a_file_of_another_build(small_dataset, tmp_path):
    out = tmp_path / "run.jsonl"
    iid = small_dataset.select(split="dev", templates=["T1"])[0].instance_id
    out.write_text(json.dumps({"instance_id": iid, "response": "COUNT(1)", "dataset_hash": "0123456789abcdef"}) + "\n")
    with pytest.raises(RunFileMismatch, match="holds answers for dataset_hash '0123456789abcdef'"):
        run_model(small_dataset, "http://127.0.0.1:9/v1", "m", out, split="dev", templates=["T1"], limit=1)


def test_torn_last_line_is_ignored_on_resume(api, small_dataset, tmp_path):
    out = tmp_path / "run.jsonl"
    iid = small_dataset.select(split="dev", templates=["T1"])[0].instance_id
    out.write_text(json.dumps({"instance_id": iid, "response": "COUNT(1)", "dataset_hash": small_dataset.dataset_hash})
                   + "\n" + '{"instance_id": "tor')
    api.fail_excluded = False
    res = run_model(small_dataset, api.url, "m", out, split="dev", templates=["T1"], backoff_base=0.01, limit=3)
    assert res.done_before == 1 and res.requested == 3


def test_unreachable_endpoint_fails_cleanly(small_dataset, tmp_path):
    res = run_model(small_dataset, "http://127.0.0.1:9/v1", "m", tmp_path / "r.jsonl", split="dev",
                    templates=["T1"], max_retries=1, backoff_base=0.01, limit=2, timeout=2)
    assert res.succeeded == 0 and len(res.failed) == 2
    assert all("URLError" in e or "Connection" in e for e in res.failed.values())
