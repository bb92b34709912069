"""The end page's automatic redirect reaches its URL in headless Chromium; only http(s) URLs are followed."""
from __future__ import annotations

import pytest

from ui.redirect import redirect_target

from .grid_harness import DESKTOP, harness  # noqa: F401  (fixture)


def test_redirect_reaches_a_loopback_url(browser, harness, landing):  # noqa: F811
    ctx = browser.new_context(**DESKTOP)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        target = f"{landing}/done?cc=C0DE-42"
        page.goto(harness.url(redirect=target))
        page.wait_for_url(f"{landing}/done*", timeout=20_000)
        assert page.locator("body").inner_text() == "landed /done?cc=C0DE-42"
        assert errors == []
    finally:
        ctx.close()


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,hi", "ftp://example.org/x", "/relative",
                                 "https://", "", "prolific.com/done"])
def test_only_http_urls_are_followed(url):
    with pytest.raises(ValueError, match="http"):
        redirect_target(url)


def test_http_and_https_urls_pass():
    assert redirect_target(" https://app.prolific.com/submissions/complete?cc=X1 ") == \
        "https://app.prolific.com/submissions/complete?cc=X1"
    assert redirect_target("http://127.0.0.1:8000/") == "http://127.0.0.1:8000/"
