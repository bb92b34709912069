"""The experimenter sign-in in Chromium on the real server: guesses from one address are slowed, then refused
(the right password too) until the lockout expires, and every attempt is logged with its client address and
session; a blank configured password closes sign-in with a message, never a traceback."""
from __future__ import annotations

import time

from rose_core.store import Store

from .conftest import PASSWORD, start_server
from .helpers import wait_until


def _log(db) -> list[dict]:
    return Store(db).query("SELECT at, client, session_id, outcome FROM sign_in_attempts ORDER BY at")


def test_guesses_are_slowed_refused_logged_and_the_lockout_expires(server, browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto(server.url)
        for k in range(20):  # a burst from one websocket
            page.get_by_label("Experimenter password").fill(f"guess-{k}")
            page.get_by_role("button", name="Sign in").click()
            wait_until(lambda: len(_log(server.db)), lambda n, k=k: n == k + 1, what=f"attempt {k + 1} logged")
        rows = _log(server.db)
        assert [r["outcome"] for r in rows] == ["wrong"] * 5 + ["refused"] * 15
        assert {r["client"] for r in rows} == {"local"} and len({r["session_id"] for r in rows}) == 1
        page.get_by_text("Too many failed sign-ins from this address").wait_for()
        # The right password is refused while the lockout lasts, from a new session on the same address too.
        other = ctx.browser.new_context().new_page()
        other.goto(server.url)
        other.get_by_label("Experimenter password").fill(PASSWORD)
        other.get_by_role("button", name="Sign in").click()
        other.get_by_text("Too many failed sign-ins from this address").wait_for()
        assert other.get_by_role("link", name="Studies").count() == 0
        rows = _log(server.db)
        assert rows[-1]["outcome"] == "refused" and rows[-1]["session_id"] != rows[0]["session_id"]
        other.context.close()
        # Once the lockout (2 s after the fifth failure) has expired, the right password works.
        unlock = max(r["at"] for r in rows if r["outcome"] == "wrong") + 2.0
        time.sleep(max(0.0, unlock - time.time()) + 0.2)
        page.get_by_label("Experimenter password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("link", name="Studies").wait_for()
        assert _log(server.db)[-1]["outcome"] == "ok"
        assert page.locator("[data-testid=stException]").count() == 0
    finally:
        ctx.close()


def test_a_blank_configured_password_closes_sign_in_without_a_traceback(small_dataset, browser, tmp_path):
    srv = start_server(small_dataset, tmp_path, ROSE_EXPERIMENTER_PASSWORD="   ")
    ctx = browser.new_context()
    page = ctx.new_page()
    try:
        page.goto(srv.url)
        page.get_by_text("Sign-in is unavailable: environment variable ROSE_EXPERIMENTER_PASSWORD is blank").wait_for()
        assert page.get_by_label("Experimenter password").count() == 0
        assert page.locator("[data-testid=stException]").count() == 0
    finally:
        ctx.close()
        srv.stop()
