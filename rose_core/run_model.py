"""Run a model directly on any OpenAI-compatible chat endpoint with image input.

Concurrent requests, retries with exponential backoff (429, 5xx, connection errors), and resume:
the output JSONL gets one line per finished instance (with the raw response and the dataset hash kept,
per line), so a rerun of
the same command skips what is done and retries only what failed. The API key comes from the
environment (OPENAI_API_KEY by default), never from the command line.
"""
from __future__ import annotations

import base64
import json
import os
import random
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .benchmarks.rose.dataset import Dataset
from .benchmarks.rose.records import Instance

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


@dataclass
class ModelRunSummary:
    done_before: int
    requested: int
    succeeded: int
    failed: dict[str, str]      # instance_id -> last error


class RunFileMismatch(ValueError):
    """The output file to resume holds answers on another build of the dataset."""


def _done_ids(out: Path, dataset_hash: str) -> set[str]:
    """Instance ids already answered in `out` (a torn last line from a crash is ignored); answers made on
    another build refuse the resume instead of being mixed in."""
    done: set[str] = set()
    if not out.exists():
        return done
    for line in out.read_text(errors="replace").splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("response"), str):
            if obj.get("dataset_hash") != dataset_hash:
                raise RunFileMismatch(f"{out}: holds answers for dataset {obj.get('dataset_hash')!r}, not this one "
                                      f"({dataset_hash}): choose another --out")
            done.add(obj.get("instance_id"))
    return done


def _request(url: str, key: str | None, body: dict, timeout: float) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          **({"Authorization": f"Bearer {key}"} if key else {})})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def post_with_retries(url: str, key: str | None, body: dict, timeout: float, max_retries: int,
                      backoff_base: float) -> tuple[dict | None, str | None, int, float]:
    """POST one chat request, retrying with exponential backoff and jitter on 429/5xx/connection errors:
    (response or None, last error, attempts, seconds). Shared by every benchmark's model runner."""
    err = None
    t0 = time.perf_counter()
    for attempt in range(1, max_retries + 2):
        try:
            return _request(url, key, body, timeout), None, attempt, time.perf_counter() - t0
        except urllib.error.HTTPError as e:
            err = f"HTTP {e.code}: {e.read()[:200].decode(errors='replace')}"
            if e.code not in RETRY_STATUS:
                break
        except (urllib.error.URLError, TimeoutError, ConnectionError, json.JSONDecodeError) as e:
            err = f"{type(e).__name__}: {e}"
        if attempt <= max_retries:
            time.sleep(backoff_base * 2 ** (attempt - 1) * (0.5 + random.random()))
    return None, err, max_retries + 1, time.perf_counter() - t0


def message_text(resp: dict) -> str:
    content = resp["choices"][0]["message"]["content"]
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return content or ""


def run_model(ds: Dataset, base_url: str, model: str, out: Path | str, split: str | None = None,
              templates: list[str] | None = None, concurrency: int = 4, max_retries: int = 5,
              timeout: float = 120.0, max_tokens: int = 2048, temperature: float = 0.0,
              api_key_env: str = "OPENAI_API_KEY", limit: int | None = None, backoff_base: float = 1.0,
              progress: Callable[[int, int], None] | None = None) -> ModelRunSummary:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _done_ids(out, ds.dataset_hash)
    todo: list[Instance] = [i for i in ds.select(split=split, templates=templates) if i.instance_id not in done]
    if limit is not None:
        todo = todo[:limit]
    url = base_url.rstrip("/") + "/chat/completions"
    key = os.environ.get(api_key_env)
    lock = threading.Lock()
    failed: dict[str, str] = {}
    ok = 0

    def one(inst: Instance) -> tuple[str, dict | None, str | None, int, float]:
        img = base64.b64encode((ds.root / inst.image).read_bytes()).decode()
        body = {"model": model, "temperature": temperature, "max_tokens": max_tokens, "messages": [{
            "role": "user", "content": [{"type": "text", "text": inst.prompt},
                                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{img}"}}]}]}
        return (inst.instance_id, *post_with_retries(url, key, body, timeout, max_retries, backoff_base))

    with out.open("a") as f, ThreadPoolExecutor(max(1, concurrency)) as pool:
        futures = [pool.submit(one, inst) for inst in todo]
        for k, fut in enumerate(as_completed(futures), 1):
            iid, raw, err, attempts, secs = fut.result()
            with lock:
                if raw is not None:
                    try:
                        text = message_text(raw)
                    except (KeyError, IndexError, TypeError) as e:
                        failed[iid] = f"unexpected response shape ({type(e).__name__}: {e})"
                    else:
                        f.write(json.dumps({"instance_id": iid, "response": text, "solver": model,
                                            "dataset_hash": ds.dataset_hash, "raw": raw,
                                            "attempts": attempts, "latency_s": round(secs, 3)}) + "\n")
                        f.flush()
                        ok += 1
                else:
                    failed[iid] = err or "unknown error"
            if progress:
                progress(k, len(todo))
    return ModelRunSummary(len(done), len(todo), ok, failed)
