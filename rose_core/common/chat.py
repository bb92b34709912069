"""Any OpenAI-compatible chat endpoint with image input: requests with retries and exponential backoff (429, 5xx,
connection errors), the reply's text, and the loop every model runner shares (concurrent jobs, one line appended
per finished job, resume by the lines already written). Used by ROSE's and SGP's model runs (`rose_core.runs`).
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
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


@dataclass
class ModelRunSummary:
    done_before: int
    requested: int
    succeeded: int
    failed: dict[str, str]      # instance_id -> last error


class RunFileMismatch(ValueError):
    """The output file to resume holds answers on another build of the dataset."""


K = TypeVar("K")


def done_keys(out: Path, identity: dict[str, Any], key_of: Callable[[dict], "K | None"]) -> set[K]:
    """The keys (`key_of(line)`; None: not a finished answer) of the lines already in `out`. A torn last line
    from a crash is ignored; a line written with another identity (dataset build, model, modality: the fields in
    `identity`) refuses the resume instead of being mixed in. Every runner's resume."""
    done: set[K] = set()
    if not out.exists():
        return done
    for line in out.read_text(errors="replace").splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(obj, dict) or (key := key_of(obj)) is None:
            continue
        theirs = {k: obj.get(k) for k in identity}
        if theirs != identity:
            def said(d: dict) -> str:
                return ", ".join(f"{k} {v!r}" for k, v in d.items())
            raise RunFileMismatch(f"{out}: holds answers for {said(theirs)}, not for {said(identity)}: "
                                  "choose another --out")
        done.add(key)
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


def reply_text(raw: dict) -> tuple[str | None, str | None]:
    """(the reply's text, None), or (None, why) when the response is not a chat completion's shape."""
    try:
        return message_text(raw), None
    except (KeyError, IndexError, TypeError, AttributeError) as e:
        return None, f"unexpected response shape ({type(e).__name__}: {e})"


Job = TypeVar("Job")
# A job's work: (its name, the line to append or None, the error when it failed).
Work = Callable[[Job], "tuple[str, dict | None, str | None]"]


def run_jobs(out: Path, jobs: Sequence[Job], work: Work, concurrency: int,
             progress: Callable[[int, int], None] | None = None) -> tuple[int, dict[str, str]]:
    """Run `work` over `jobs` on `concurrency` threads, appending each finished job's line to `out` the moment it
    is done (flushed: a crash loses only the jobs in flight, which a rerun does again): (jobs that succeeded,
    {name: last error} of those that failed). The one loop of every model runner (ROSE's, SGP's plays and
    board-state inference)."""
    lock = threading.Lock()
    failed: dict[str, str] = {}
    ok = 0
    with out.open("a") as f, ThreadPoolExecutor(max(1, concurrency)) as pool:
        futures = [pool.submit(work, job) for job in jobs]
        for k, fut in enumerate(as_completed(futures), 1):
            name, line, err = fut.result()
            with lock:
                if line is not None:
                    f.write(json.dumps(line) + "\n")
                    f.flush()
                    ok += 1
                else:
                    failed[name] = err or "unknown error"
            if progress:
                progress(k, len(jobs))
    return ok, failed


def chat_body(model: str, content: list[dict], temperature: float, max_tokens: int) -> dict:
    """One user message with these content parts (text and images), as every runner sends it."""
    return {"model": model, "temperature": temperature, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": content}]}


def image_part(png: bytes) -> dict:
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{base64.b64encode(png).decode()}"}}


@dataclass(frozen=True)
class ChatEndpoint:
    """An OpenAI-compatible chat endpoint and how to ask it (the key comes from the environment variable named
    `api_key_env`, never from the command line). The benchmarks' runners extend it with their own fields."""

    base_url: str
    model: str
    _: KW_ONLY
    concurrency: int = 4
    max_retries: int = 5
    timeout: float = 120.0
    max_tokens: int = 2048
    temperature: float = 0.0
    api_key_env: str = "OPENAI_API_KEY"
    backoff_base: float = 1.0

    def ask(self, content: list[dict]) -> tuple[str | None, dict | None, str | None, int, float]:
        """One user message with these content parts: (the reply's text or None, the raw response, the error,
        attempts, seconds), through `post_with_retries`."""
        return self.post(chat_body(self.model, content, self.temperature, self.max_tokens))

    def post(self, body: dict) -> tuple[str | None, dict | None, str | None, int, float]:
        """Any chat-completion body (several messages, other sampling fields), as `ask` returns."""
        url = self.base_url.rstrip("/") + "/chat/completions"
        raw, err, attempts, secs = post_with_retries(url, os.environ.get(self.api_key_env), body, self.timeout,
                                                     self.max_retries, self.backoff_base)
        text, err = reply_text(raw) if raw is not None else (None, err)
        return text, raw, err, attempts, secs
