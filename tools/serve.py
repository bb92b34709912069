"""Start and stop a real Streamlit server on a free loopback port (tests and benchmarks share this)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


# The app decides whose X-Forwarded-For to believe (ROSE_TRUSTED_PROXIES, rose_core.instrument.client_address): the app
# server's own rule (uvicorn trusts the header from every loopback peer) is switched off, as scripts/run.sh does.
APP_ENV = {"FORWARDED_ALLOW_IPS": ""}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run SCRIPT` with the given environment; `kill()` is a crash (SIGKILL), `stop()` is clean."""

    def __init__(self, log: Path, env: dict[str, str] | None = None, script: str = "app.py", port: int | None = None):
        self.log, self.env, self.script = Path(log), env or {}, script
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 60) -> Server:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", self.script, "--server.port", str(self.port),
             "--server.address", "127.0.0.1"], cwd=ROOT, env={**os.environ, **APP_ENV, **self.env},
            stdout=self.log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"server did not start; log: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def cpu_seconds(self) -> float:
        """user + system CPU of the server process so far (from /proc)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
