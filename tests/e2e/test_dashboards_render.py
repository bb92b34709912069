"""Each dashboard chart renders in Chromium: a Plotly SVG with drawn traces, on the populated database."""
import pytest

from tools.serve import Server

from .conftest import PASSWORD

PAGES = {"Results": 4, "Agreement and difficulty": 2, "Participants": 3, "Drill-down": 1}


@pytest.fixture
def dash_server(small_dataset, populated_db, tmp_path):
    srv = Server(tmp_path / "server.log", {"ROSE_DATASET_DIR": str(small_dataset.root),
                                           "ROSE_DB": str(populated_db.path),
                                           "ROSE_EXPERIMENTER_PASSWORD": PASSWORD}).start()
    yield srv
    srv.stop()


def test_every_chart_renders(dash_server, page):
    page.goto(dash_server.url)
    page.get_by_label("Experimenter password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Results", exact=True).wait_for()
    for title, n_charts in PAGES.items():
        page.get_by_role("link", name=title, exact=True).click()
        page.get_by_role("heading", name=title).first.wait_for(timeout=30_000)
        page.wait_for_function(
            f"[...document.querySelectorAll('.js-plotly-plot')].filter(p => p.querySelector('.main-svg')).length"
            f" >= {n_charts}", timeout=30_000)
        plots = page.locator(".js-plotly-plot")
        assert plots.count() >= n_charts, title
        for k in range(plots.count()):
            plot = plots.nth(k)
            plot.scroll_into_view_if_needed()
            drawn = plot.locator(".trace, .layer-above image, g.imagelayer image, .shapelayer path").count()
            assert drawn > 0, f"{title}: chart {k} has no drawn trace"
        assert page.locator("[data-testid=stException]").count() == 0, title


def _table_fits(page, k: int) -> dict:
    """The k-th table's scroller: its content width against the width shown (no sideways scroll when equal)."""
    return page.evaluate(
        "k => { const s = document.querySelectorAll('[data-testid=stDataFrame] .dvn-scroller')[k];"
        " return {content: s.scrollWidth, shown: s.clientWidth}; }", k)


def test_n_and_intervals_in_view_at_1440_px(dash_server, browser, tmp_path):
    """Issue 22: at 1440 px the main table (solver, n, Avg, the five templates, each with its interval) and the
    human − model table need no sideways scroll; the agreement table puts κ right after the solver."""
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto(dash_server.url)
        page.get_by_label("Experimenter password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("link", name="Results", exact=True).click()
        page.get_by_role("heading", name="Results").first.wait_for()
        page.wait_for_function("document.querySelectorAll('[data-testid=stTable]').length >= 3")
        page.screenshot(path=str(tmp_path / "results_1440.png"), full_page=True)
        tables = page.evaluate("() => [...document.querySelectorAll('[data-testid=stTable]')].map(t => {"
                               " const c = t.querySelector('table'); return {content: c.scrollWidth,"
                               " shown: t.clientWidth, heads: [...c.querySelectorAll('thead th')]"
                               ".map(h => h.innerText.trim())}; })")
        for what, t in zip(("main table", "groups", "human − model"), tables):
            assert t["content"] <= t["shown"] + 1, (what, t)          # no sideways scroll
        assert tables[0]["heads"][:3] == ["solver", "n", "Avg"] and len(tables[0]["heads"]) == 8, tables[0]
        # the gap (a data grid, drawn after the static tables): wait for its scroller before measuring it
        page.wait_for_function("document.querySelectorAll('[data-testid=stDataFrame] .dvn-scroller').length >= 1")
        fits = _table_fits(page, 0)                                     # the gap, with its intervals
        assert fits["content"] <= fits["shown"] + 1, ("gap", fits)
        page.get_by_role("link", name="Agreement and difficulty", exact=True).click()
        page.get_by_role("heading", name="Agreement and difficulty").first.wait_for()
        page.wait_for_function("document.querySelectorAll('[data-testid=stDataFrame] .dvn-scroller').length >= 1")
        assert page.locator("[data-testid=stException]").count() == 0
        hm = page.locator("[data-testid=stDataFrame]").first
        hm.scroll_into_view_if_needed()
        hm.screenshot(path=str(tmp_path / "agreement_1440.png"))
        # κ (mean), its spread and n right after the solver: in view without scrolling sideways
        box = hm.bounding_box()
        assert box is not None and box["width"] <= 1440
    finally:
        ctx.close()
