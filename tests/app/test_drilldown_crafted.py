"""The Drill-down page stays up on events no browser of ours sends (stored by an older version, or written into
the database by hand): a click with no row or column, a cell outside the grid, a single event."""
import pytest

from rose_core.analysis.display import MISSING
from tests.backends import clone

from .test_dashboards import open_page


@pytest.fixture
def crafted_env(small_dataset, populated_db, monkeypatch, fresh_location):
    from .conftest import pages_on

    store = clone(populated_db, fresh_location())
    row = store.query("SELECT instance_id, participant_id FROM responses WHERE kind = 'main' "
                      "AND template = 'G-Clk' AND participant_id != '' ORDER BY response_id LIMIT 1")[0]
    with store.write() as c:
        c.execute("DELETE FROM events WHERE participant_id = ? AND instance_id = ?",
                  (row["participant_id"], row["instance_id"]))
    with pages_on(monkeypatch, small_dataset, store.location):
        yield store, row


def _store_events(store, row, events):
    with store.write() as c:
        c.executemany("INSERT INTO events(participant_id, instance_id, view_id, seq, type, row, col, value, client_ts, "
                      "server_ts) VALUES (?,?,?,?,?,?,?,?,?,?)",
                      [(row["participant_id"], row["instance_id"], "vcrafted", *e) for e in events])


def _open(row):
    at = open_page("app_pages/drilldown.py")
    at.sidebar.checkbox(key="dash_ex_att").uncheck()
    at.sidebar.checkbox(key="dash_ex_fast").uncheck()
    at.sidebar.checkbox(key="dash_ex_streak").uncheck().run()
    at.selectbox(key="drill_instance").select(row["instance_id"]).run()
    at.selectbox(key="drill_participant").select(row["participant_id"]).run()
    return at


def test_a_single_cell_less_event_never_breaks_the_drilldown(crafted_env):
    store, row = crafted_env
    _store_events(store, row, [(0, "click", None, None, None, 10.0, 1.0)])
    at = _open(row)
    assert not at.exception, at.exception
    replay = at.dataframe[1].value
    assert len(replay) == 1 and replay["selection after"].iloc[0] == MISSING  # shown formatted: nothing selected


def test_crafted_cells_and_types_never_break_the_drilldown(crafted_env):
    store, row = crafted_env
    if store.dialect == "postgresql":
        pytest.skip("text in integer columns: SQLite stores it, PostgreSQL refuses it at the INSERT")
    _store_events(store, row, [
        (0, "click", 2, None, None, 10.0, 1.0), (1, "undo", None, None, "click", 20.0, 2.0),
        (2, "click", 99, -3, None, 10.0, 3.0), (3, "click", 1, 1, None, None, 4.0),
        (4, "unclick", "x", 1, None, "t", 5.0), (5, "weird", 1, 1, "v" * 500, 40.0, 6.0),
        ("seven", "click", 2, 2, None, 50.0, 7.0)])
    at = _open(row)
    assert not at.exception, at.exception
    replay = at.dataframe[1].value
    assert list(replay["seq"]) == ["0", "1", "2", "3", "4", "5"]      # an event with no sequence number cannot be placed
    # only cells of the grid are ever selected; a click with no (or an impossible) cell changes nothing
    assert list(replay["selection after"]) == [MISSING, MISSING, MISSING, "R1C1", "R1C1", "R1C1"]
    assert len(at.get("plotly_chart")) == 2
