"""One small OpenAI-compatible chat server on loopback, for every model-run test (ROSE's run-model, SGP's
run-model and board-state inference): a real HTTP server on 127.0.0.1 that records each request and answers
through a function the test gives it.

`answer(body, path, n)` gets the request's JSON body, its path and its number (1, 2, … over the server's
life) and returns (HTTP status, JSON object); the server records `{"path", "auth", "body"}` per request.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Answer = Callable[[dict, str, int], "tuple[int, dict]"]


def completion(text: str, model: str = "fake") -> dict[str, Any]:
    """A chat-completion response whose one message says `text`."""
    return {"id": "x", "object": "chat.completion", "model": model, "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3}}


class ChatAPI:
    """A threaded HTTP server on 127.0.0.1 (a free port); `url` ends in /v1. Use as a context manager or call
    `close()`."""

    def __init__(self, answer: Answer):
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.answer = answer
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with api.lock:
                    api.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                    n = len(api.requests)
                code, obj = api.answer(body, self.path, n)
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def bodies(self) -> list[dict]:
        with self.lock:
            return [r["body"] for r in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ChatAPI:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
