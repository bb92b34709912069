"""Run a model directly on any OpenAI-compatible chat endpoint with image input.

Concurrent requests, retries with exponential backoff (429, 5xx, connection errors), and resume:
the output JSONL gets one line per finished instance (with the raw response and the dataset hash kept,
per line), so a rerun of
the same command skips what is done and retries only what failed. The API key comes from the
environment (OPENAI_API_KEY by default), never from the command line. The run's settings (model, endpoint,
prompt variant, temperature, max tokens, date) go to `<out>.settings.toml` before the first request, which
`import-run` stores with the run; resuming with other settings is refused (one file, one set of settings).
"""
from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any, Callable

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.records import Instance
from ..common.chat import ChatEndpoint, ModelRunSummary, done_keys, image_part, run_jobs
from .settings import PROMPT_VARIANT, RunSettingsError, check_settings, read_settings, settings_toml, sidecar

SAME_RUN = ("model", "endpoint", "prompt_variant", "temperature", "max_tokens")   # what a resume must not change


def record_settings(out: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """Write the run's settings beside `out` (first start), or check a resume against the ones written then
    (their date, the first start's, is kept). Raises RunSettingsError when a setting differs."""
    path = sidecar(out)
    new = check_settings(settings, "run-model")
    if path.exists():
        old = read_settings(path)
        diff = [f"{k}: {old.get(k)!r} then, {new.get(k)!r} now" for k in SAME_RUN if old.get(k) != new.get(k)]
        if diff:
            raise RunSettingsError(f"{out} was started with other settings ({'; '.join(diff)}; see {path}): "
                                   "answers made with two settings cannot be one run. Write to another --out")
        return old
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(settings_toml(new), encoding="utf-8")
    os.replace(tmp, path)
    return new


def _done_ids(out: Path, dataset_hash: str) -> set[str]:
    """Instance ids already answered in `out`."""
    return done_keys(out, {"dataset_hash": dataset_hash},
                     lambda o: o.get("instance_id") if isinstance(o.get("response"), str) else None)


def run_model(ds: Dataset, base_url: str, model: str, out: Path | str, split: str | None = None,
              templates: list[str] | None = None, concurrency: int = 4, max_retries: int = 5,
              timeout: float = 120.0, max_tokens: int = 2048, temperature: float = 0.0,
              api_key_env: str = "OPENAI_API_KEY", limit: int | None = None, backoff_base: float = 1.0,
              progress: Callable[[int, int], None] | None = None) -> ModelRunSummary:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    record_settings(out, {"model": model, "endpoint": base_url, "prompt_variant": PROMPT_VARIANT,
                          "temperature": float(temperature), "max_tokens": int(max_tokens),
                          "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()})
    done = _done_ids(out, ds.dataset_hash)
    todo: list[Instance] = [i for i in ds.select(split=split, templates=templates) if i.instance_id not in done]
    if limit is not None:
        todo = todo[:limit]
    ep = ChatEndpoint(base_url, model, concurrency=concurrency, max_retries=max_retries, timeout=timeout,
                      max_tokens=max_tokens, temperature=temperature, api_key_env=api_key_env, backoff_base=backoff_base)

    def one(inst: Instance) -> tuple[str, dict | None, str | None]:
        png = (ds.root / inst.image).read_bytes()
        text, raw, err, attempts, secs = ep.ask([{"type": "text", "text": inst.prompt}, image_part(png)])
        if text is None:
            return inst.instance_id, None, err
        return inst.instance_id, {"instance_id": inst.instance_id, "response": text, "solver": model,
                                  "dataset_hash": ds.dataset_hash, "raw": raw, "attempts": attempts,
                                  "latency_s": round(secs, 3)}, None

    ok, failed = run_jobs(out, todo, one, concurrency, progress)
    return ModelRunSummary(len(done), len(todo), ok, failed)
