"""Several app processes behind HAProxy: sticky sessions, websockets, health checks, forwarded client addresses.

Streamlit keeps a session's state and its media (the item images) in the process that serves it, so a browser must
stay with one process: HAProxy pins it with a cookie (`SERVERID`) and proxies the websocket. Every process shares
the database, the cookie secret and the experimenter password; when one dies, HAProxy's health check
(`/_stcore/health`) takes it out and its browsers reconnect to another process, which resumes each participant
from the database. `scripts/run-cluster.sh`, the cluster test and `bench/bench_cluster.py` all start it from here.

    python -m tools.cluster --apps 3 --port 8501 [--address 0.0.0.0]   # foreground; Ctrl-C stops everything
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tools.serve import Server, free_port

HAPROXY = "/usr/sbin/haproxy"
COOKIE = "SERVERID"


def haproxy_config(backends: list[tuple[str, str, int]], address: str, port: int, stats_socket: Path) -> str:
    """HAProxy's configuration for `backends` (name, host, port); the public side listens on address:port."""
    servers = "\n".join(f"    server {name} {host}:{p} check cookie {name}" for name, host, p in backends)
    return f"""# Written by tools/cluster.py: ROSE Studio's app processes behind one public port.
global
    maxconn 8000
    stats socket {stats_socket} mode 600 level admin
    log stderr format raw local0 notice

defaults
    mode http
    log global
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # A participant's websocket stays open for the whole study: once upgraded it is a tunnel.
    timeout tunnel 2h
    timeout client-fin 5s
    timeout http-request 15s
    # A process that refuses a connection (just died, not yet marked down) is skipped for another.
    option redispatch
    retries 2

frontend rose
    bind {address}:{port}
    # The app believes this header from the proxy only (ROSE_TRUSTED_PROXIES names the proxy's address), so the
    # proxy writes it afresh with the address it received the connection from: whatever a client sent under this
    # name is dropped (`option forwardfor` would append to it, and the app would read the client's own entry).
    http-request set-header X-Forwarded-For %[src]
    default_backend apps

backend apps
    balance leastconn
    # Sticky sessions: the first response pins the browser to a process; a down process's browsers move on.
    cookie {COOKIE} insert indirect nocache httponly
    # A dead process refuses the check at once (out after ~3 s, and its browsers' requests are redispatched even
    # before); a busy one may answer slowly, and must not be taken out (its browsers would lose their media).
    option httpchk GET /_stcore/health
    http-check expect status 200
    timeout check 5s
    default-server inter 2s fastinter 1s downinter 1s fall 3 rise 2
{servers}
"""


@dataclass
class Cluster:
    """N app processes (`tools.serve.Server`) and HAProxy in front of them, on this host."""

    folder: Path
    env: dict[str, str]
    apps: int = 2
    port: int = 0
    address: str = "127.0.0.1"
    app_ports: list[int] = field(default_factory=list)
    servers: list[Server] = field(default_factory=list)
    proxy: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.address in ("0.0.0.0", "") else self.address
        return f"http://{host}:{self.port}"

    @property
    def names(self) -> list[str]:
        return [f"app{k + 1}" for k in range(len(self.servers))]

    def start(self, timeout: float = 120) -> Cluster:
        if not Path(HAPROXY).exists():
            raise RuntimeError(f"{HAPROXY} is missing: install Debian's haproxy package (scripts/test.sh and "
                               "scripts/run-cluster.sh do)")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.folder = self.folder.resolve()  # HAProxy reads a relative socket path as host:port
        self.port = self.port or free_port()
        ports = self.app_ports or [free_port() for _ in range(self.apps)]
        # One cookie secret for all (Streamlit signs its cookies with it); given by environment, never on a
        # command line that `ps` shows. The proxy on this host is the one whose X-Forwarded-For is believed
        # (ROSE_TRUSTED_PROXIES, when set, names every proxy: this one and any in front of it).
        env = {"STREAMLIT_SERVER_COOKIE_SECRET": os.environ.get("STREAMLIT_SERVER_COOKIE_SECRET") or secrets.token_hex(32),
               "ROSE_TRUSTED_PROXIES": os.environ.get("ROSE_TRUSTED_PROXIES") or "127.0.0.1",
               # Other processes' tabs may be open: never released as closed, a second tab asks (instrument/tabs.py).
               "ROSE_APP_PROCESSES": os.environ.get("ROSE_APP_PROCESSES") or str(max(2, self.apps)), **self.env}
        self.servers = [Server(self.folder / f"app{k + 1}.log", env, port=p) for k, p in enumerate(ports)]
        for s in self.servers:
            s.start(timeout)
        cfg = self.folder / "haproxy.cfg"
        cfg.write_text(haproxy_config([(n, "127.0.0.1", s.port) for n, s in zip(self.names, self.servers)],
                                      self.address, self.port, self.stats_socket))
        check = subprocess.run([HAPROXY, "-c", "-f", str(cfg)], capture_output=True, text=True)
        if check.returncode:
            raise RuntimeError(f"haproxy refused {cfg}: {check.stderr or check.stdout}")
        self.proxy = subprocess.Popen([HAPROXY, "-db", "-f", str(cfg)], stdout=(self.folder / "haproxy.log").open("ab"),
                                      stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proxy.poll() is not None:
                raise RuntimeError(f"haproxy exited: {(self.folder / 'haproxy.log').read_text()[-2000:]}")
            try:
                if set(self.states().values()) == {"UP"}:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the cluster did not come up: {self.states()}")

    @property
    def stats_socket(self) -> Path:
        return self.folder / "haproxy.sock"

    def states(self) -> dict[str, str]:
        """HAProxy's view of each app process: UP, DOWN, or a transition (e.g. "UP 1/2")."""
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(self.stats_socket))
            s.sendall(b"show stat\n")
            out = b""
            while chunk := s.recv(65536):
                out += chunk
        rows = [line.split(",") for line in out.decode().splitlines() if line and not line.startswith("#")]
        return {r[1]: r[17] for r in rows if r[0] == "apps" and r[1] not in ("FRONTEND", "BACKEND")}

    def server_of(self, cookie_value: str) -> Server:
        """The app process a browser with this SERVERID cookie is pinned to."""
        return self.servers[self.names.index(cookie_value)]

    def wait_state(self, name: str, state: str, timeout: float = 30) -> None:
        deadline = time.time() + timeout
        while self.states().get(name) != state:
            if time.time() > deadline:
                raise RuntimeError(f"{name} not {state} after {timeout} s: {self.states()}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proxy is not None and self.proxy.poll() is None:
            os.killpg(self.proxy.pid, signal.SIGTERM)
            try:
                self.proxy.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proxy.pid, signal.SIGKILL)
                self.proxy.wait()
        for s in self.servers:
            s.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description="ROSE Studio: N app processes behind HAProxy, until Ctrl-C")
    ap.add_argument("--apps", type=int, default=3)
    ap.add_argument("--port", type=int, default=8501, help="the public port (HAProxy)")
    ap.add_argument("--address", default="0.0.0.0", help="the public address HAProxy listens on")
    ap.add_argument("--app-port-base", type=int, default=0, help="app processes on BASE, BASE+1, … (0: free ports)")
    ap.add_argument("--folder", help="logs, haproxy.cfg and its socket (default: a fresh temporary folder)")
    a = ap.parse_args()
    if a.apps < 1:
        ap.error("--apps must be at least 1")
    folder = Path(a.folder) if a.folder else Path(tempfile.mkdtemp(prefix="rose-cluster-"))
    ports = [a.app_port_base + k for k in range(a.apps)] if a.app_port_base else []
    cluster = Cluster(folder, {}, apps=a.apps, port=a.port, address=a.address, app_ports=ports)
    stop = {"now": False}

    def on_signal(_sig, _frame) -> None:
        stop["now"] = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        cluster.start()
        print(f"ROSE Studio: {a.apps} app processes behind HAProxy on {cluster.url} "
              f"(apps on {', '.join(str(s.port) for s in cluster.servers)}; logs in {folder}). Ctrl-C stops all.",
              flush=True)
        down: set[str] = set()
        while not stop["now"]:
            time.sleep(1)
            for name, state in cluster.states().items():  # say when a process goes down or comes back
                if state.startswith("DOWN") and name not in down:
                    down.add(name)
                    print(f"ROSE Studio: {name} is DOWN (its participants continue on the others)", flush=True)
                elif state == "UP" and name in down:
                    down.discard(name)
                    print(f"ROSE Studio: {name} is UP again", flush=True)
    finally:
        cluster.stop()
        print("ROSE Studio: stopped HAProxy and every app process", flush=True)
        if not a.folder:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
