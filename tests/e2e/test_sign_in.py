"""The experimenter sign-in in Chromium on the real server: guesses from one address are slowed, then refused
(the right password too) until the lockout expires, and every attempt is logged with its client address and
session; a blank configured password closes sign-in with a message, never a traceback."""
from __future__ import annotations

import time

from rose_core.instrument.auth import DEFAULT_POLICY, GuessPolicy
from rose_core.instrument.client_address import LOOPBACK
from rose_core.storage import open_store

from .conftest import PASSWORD, start_server
from .helpers import wait_until


def _log(db) -> list[dict]:
    return open_store(db).query("SELECT attempted_at AS at, client, session_id, outcome FROM sign_in_attempts "
                           "ORDER BY attempted_at")


def _replayed(rows: list[dict], policy: GuessPolicy) -> list[str]:
    """What the policy says each logged attempt's outcome must have been, from the logged times alone (one
    client address here, so its failures are the session's too)."""
    out, failures, last = [], 0, None
    for r in rows:
        locked = last is not None and r["at"] < last + policy.lockout_s(failures)
        if locked:
            out.append("refused")
        elif r["outcome"] == "ok":
            out.append("ok")
            failures, last = 0, None
        else:
            out.append("wrong")
            failures, last = failures + 1, r["at"]
    return out


def test_a_burst_is_slowed_by_the_default_policy_and_the_lockout_expires(server, browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto(server.url)
        for k in range(20):  # a burst from one websocket, each guess sent as soon as the last one is logged
            page.get_by_label("Experimenter password").fill(f"guess-{k}")
            page.get_by_role("button", name="Sign in").click()
            wait_until(lambda: len(_log(server.db)), lambda n, k=k: n == k + 1, what=f"attempt {k + 1} logged")
        rows = _log(server.db)
        outcomes = [r["outcome"] for r in rows]
        assert outcomes == _replayed(rows, DEFAULT_POLICY)  # every decision is the policy's at the logged time
        assert outcomes[:6] == ["wrong"] * 5 + ["refused"] and outcomes.count("wrong") < 10
        assert {r["client"] for r in rows} == {LOOPBACK} and len({r["session_id"] for r in rows}) == 1
        # Now the right password, until it is let in: refused exactly while a lockout lasts, then accepted.
        for _ in range(120):
            page.get_by_label("Experimenter password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            n = len(rows) + 1
            rows = wait_until(lambda: _log(server.db), lambda got, n=n: len(got) == n, what="attempt logged")
            if rows[-1]["outcome"] == "ok":
                break
            page.get_by_text("Too many failed sign-ins from this address").wait_for()
            time.sleep(0.5)
        assert rows[-1]["outcome"] == "ok" and [r["outcome"] for r in rows] == _replayed(rows, DEFAULT_POLICY)
        page.get_by_role("link", name="Studies").wait_for()
        assert page.locator("[data-testid=stException]").count() == 0
    finally:
        ctx.close()


def test_the_right_password_is_refused_during_a_lockout_from_any_session_of_the_address(small_dataset, browser,
                                                                                         tmp_path):
    srv = start_server(small_dataset, tmp_path, ROSE_SIGN_IN_LOCKOUT="3,600,600")
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.goto(srv.url)
        for k in range(3):
            page.get_by_label("Experimenter password").fill(f"guess-{k}")
            page.get_by_role("button", name="Sign in").click()
            wait_until(lambda: len(_log(srv.db)), lambda n, k=k: n == k + 1, what=f"attempt {k + 1} logged")
        page.get_by_text("The next attempt is possible in 10 min").wait_for()
        other = ctx.new_page()  # a new tab: a new session from the same address
        other.goto(srv.url)
        other.get_by_label("Experimenter password").fill(PASSWORD)
        other.get_by_role("button", name="Sign in").click()
        other.get_by_text("Too many failed sign-ins from this address or for this account: try again in").wait_for()
        assert other.get_by_role("link", name="Studies").count() == 0
        rows = _log(srv.db)
        assert [r["outcome"] for r in rows] == ["wrong"] * 3 + ["refused"]
        assert rows[-1]["session_id"] != rows[0]["session_id"]
        assert other.locator("[data-testid=stException]").count() == 0
    finally:
        ctx.close()
        srv.stop()


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
