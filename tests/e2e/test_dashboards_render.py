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
