"""The upload attack of issue 23 against the real server: a visitor who only opened the sign-in page sends large
files straight to Streamlit's upload endpoint with its own session id (from the page's websocket) and XSRF
cookie. Before ui/uploads.py each file was kept in the process's memory until the session ended (six 150 MB
uploads: +900 MB); now every one is refused before its body is read and the process does not grow. A signed-in
experimenter's session still uploads (tests/e2e/test_model_runs_upload.py imports runs that way)."""
from __future__ import annotations

import http.client
import os
import time

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from .conftest import PASSWORD
from .helpers import sign_in

MB = 2**20
BOUNDARY = "----roseuploadattack"


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return kb / 1024


def watch_sessions(page) -> list[str]:
    """Every session id the server gives this page's tabs (NewSession messages), in order."""
    found: list[str] = []

    def frames(ws):
        def got(payload):
            if isinstance(payload, (bytes, bytearray)):
                msg = ForwardMsg()
                try:
                    msg.ParseFromString(bytes(payload))
                except Exception:
                    return
                if msg.HasField("new_session") and msg.new_session.initialize.session_id:
                    found.append(msg.new_session.initialize.session_id)
        ws.on("framereceived", got)

    page.on("websocket", frames)
    return found


def put_file(port: int, session_id: str, cookies: dict[str, str], size: int, name: str = "big.jsonl") -> int:
    """PUT one multipart file of `size` bytes, streamed (the test itself never holds it); the HTTP status, or 0
    when the server closed the connection before taking the whole body."""
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.putrequest("PUT", f"/_stcore/upload_file/{session_id}/attack-{os.urandom(4).hex()}")
        conn.putheader("Content-Type", f"multipart/form-data; boundary={BOUNDARY}")
        conn.putheader("Content-Length", str(len(head) + size + len(tail)))
        conn.putheader("Cookie", "; ".join(f"{k}={v}" for k, v in cookies.items()))
        if "_streamlit_xsrf" in cookies:
            conn.putheader("X-Xsrftoken", cookies["_streamlit_xsrf"])
        conn.endheaders()
        try:
            conn.send(head)
            chunk = b"x" * MB
            for _ in range(size // MB):
                conn.send(chunk)
            conn.send(tail)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the body was read: the answer may still be waiting
        try:
            return conn.getresponse().status
        except (ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError):
            return 0
    finally:
        conn.close()


def test_an_unsigned_visitor_cannot_fill_memory_through_the_upload_endpoint(server, browser):
    ctx = browser.new_context()
    page = ctx.new_page()
    try:
        seen = watch_sessions(page)
        page.goto(server.url)
        page.get_by_label("Experimenter password").wait_for()      # the sign-in page, not signed in
        sid = seen[-1]
        cookies = {c["name"]: c["value"] for c in ctx.cookies()}
        before = rss_mb(server.pid)
        statuses = [put_file(server.port, sid, cookies, 90 * MB) for _ in range(6)]  # under maxUploadSize
        statuses.append(put_file(server.port, sid, cookies, 150 * MB))            # over it
        time.sleep(1)
        after = rss_mb(server.pid)
        print(f"\nupload attack: RSS {before:.0f} MB before, {after:.0f} MB after 6x90 MB + 150 MB; "
              f"statuses {statuses}; load {os.getloadavg()}")
        assert all(s in (0, 400, 413) for s in statuses), statuses
        assert after - before < 60, (before, after)
        assert "upload refused: session" in server.log.read_text()
        # The same session, once signed in, may upload (one small file, kept for the Model runs form).
        sign_in(page, server.url, PASSWORD)                        # a new tab session, signed in
        sid = seen[-1]
        cookies = {c["name"]: c["value"] for c in ctx.cookies()}
        assert put_file(server.port, sid, cookies, 1 * MB, "run.jsonl") == 204
    finally:
        ctx.close()
