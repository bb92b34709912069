"""The cluster's HAProxy configuration (tools/cluster.py) in front of a backend that records the headers it gets:
a client's own X-Forwarded-For never reaches the app. With `option forwardfor` HAProxy appended its peer to the
client's value, and the app (trusting 127.0.0.1) read the client's forged last entry as its address: a new
address per sign-in guess, no lockout."""
from __future__ import annotations

import http.server
import subprocess
import threading
import time
import urllib.request

from tools.cluster import haproxy_config
from tools.serve import free_port


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[list[str]] = []

    def do_GET(self):  # noqa: N802 (the standard library's name)
        self.seen.append(self.headers.get_all("X-Forwarded-For") or [])
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def test_the_proxy_overwrites_a_forged_forwarded_for(haproxy, tmp_path):
    backend = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    port = free_port()
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(haproxy_config([("app1", "127.0.0.1", backend.server_address[1])], "127.0.0.1", port,
                                  tmp_path / "stats.sock"))
    proxy = subprocess.Popen([haproxy, "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                             start_new_session=True)
    try:
        deadline = time.time() + 20
        while True:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/_stcore/health",
                                             headers={"X-Forwarded-For": "203.0.113.77"})
                with urllib.request.urlopen(req, timeout=2) as r:
                    assert r.status == 200
                break
            except OSError:
                assert time.time() < deadline, "haproxy did not come up"
                time.sleep(0.2)
        forged = [h for h in _Recorder.seen if h]
        assert forged and all(h == ["127.0.0.1"] for h in forged), _Recorder.seen
    finally:
        proxy.terminate()
        proxy.wait(10)
        backend.shutdown()
