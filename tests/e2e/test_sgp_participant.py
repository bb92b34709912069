"""An SGP study in real Chromium against the real server: a person plays an episode to the goal with the board's
buttons (a reload in the middle resumes at the current board), with the keyboard, and by typing; the human
condition that matches the models': piece buttons without cells, a 3D board clicked on its highlighted cells,
several moves typed in one line."""
import re

import pytest

from rose_core.benchmarks.sgp import SHAPE_2D
from rose_core.benchmarks.sgp.render import cell_at, hit_map
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.episode_session import (
    EpisodeScreen,
    create_sgp_study,
    open_episode_session,
)
from rose_core.storage import open_store
from tests.sgp_players import solution

from .conftest import start_server
from .helpers import participant_id, start, wait_until


@pytest.fixture(scope="module")
def sgp_server(small_dataset, sgp_small, tmp_path_factory):  # noqa: F811
    srv = start_server(small_dataset, tmp_path_factory.mktemp("sgp"), ROSE_SGP_DATASET_DIR=str(sgp_small.root))
    yield srv
    srv.stop()


def make(server, ds, **kw):
    cfg = dict(name="e2e sgp", benchmark="sgp", practice_items=0, items_per_participant=2, target_per_instance=1,
               attention_every=0, completion_code="SGP-OK")
    cfg.update(kw)
    return create_sgp_study(open_store(server.db), ds, StudyConfig(**cfg))


def shown(store, ds, study, ext) -> EpisodeScreen:
    screen = open_episode_session(store, ds, study.study_id, participant_id(store, study.study_id, ext)).screen()
    assert isinstance(screen, EpisodeScreen), screen
    return screen


def acked(page, view: str, n: int) -> None:
    page.locator(f'.sb-root[data-view="{view}"][data-ack="{n}"][data-pending="0"]').wait_for()


def piece_name(command: str, modality: str) -> tuple[str, str]:
    _, color, shape, direction = command.split()
    return f"{color} {SHAPE_2D[shape] if modality == '2d' else shape}", direction


def test_an_episode_to_the_goal_by_clicking_with_a_reload_in_the_middle(sgp_server, page, sgp_small):  # noqa: F811
    store = open_store(sgp_server.db)
    study = make(sgp_server, sgp_small)
    start(page, f"{sgp_server.url}/?study={study.study_id}&PROLIFIC_PID=G1")
    page.locator(".sb-root").wait_for()
    screen = shown(store, sgp_small, study, "G1")
    path = solution(screen)
    assert len(path) >= 2
    root = page.locator(f'.sb-root[data-view="{screen.view_id}"]')
    for k, command in enumerate(path):
        if k == 1:  # a reload mid-episode: the board the server holds, nothing lost or repeated
            page.reload()
            acked(page, screen.view_id, 1)
            now = shown(store, sgp_small, study, "G1")
            assert now.ack_seq == 1 and now.state != screen.item.start()
            for g in now.item.geoms(now.state):   # pieces by name only: the models get no cells in 2D
                assert root.get_by_role("button", name=g["name"], exact=True).count() == 1
            assert root.get_by_role("button", name=re.compile(" at [A-Z][0-9]")).count() == 0
        name, direction = piece_name(command, "2d")
        root.get_by_role("button", name=name, exact=True).click()
        if k == 2:   # the cell next to the chosen piece, on the board itself
            root.locator(f'.sb-cell.sb-target[data-dir="{direction}"]').click()
        else:
            root.get_by_role("button", name=f"move {direction}", exact=True).click()
        if k < len(path) - 1:
            acked(page, screen.view_id, k + 1)
    page.wait_for_function("v => !document.querySelector(`.sb-root[data-view=\"${v}\"]`)", arg=screen.view_id)
    r = wait_until(lambda: store.query("SELECT * FROM episode_results"), lambda rows: len(rows) == 1)[0]
    assert (r["passed"], r["ended"], r["steps"], r["step_cap"]) == (1, "solved", len(path), 20)
    steps = store.query("SELECT * FROM episode_steps ORDER BY seq")
    assert [s["seq"] for s in steps] == list(range(len(path)))
    # the command a model shown the 2D board writes (2D shape names), read by the same parser
    assert [s["command"] for s in steps] == [f"move {piece_name(c, '2d')[0]} {c.split()[-1]}" for c in path]
    assert r["protocol"] == "; ".join(path)                             # canonical: the 3D names
    assert {s["input"] for s in steps} == {"click"} and all(s["outcome"] == "effective" for s in steps)
    assert all(a["server_ts"] <= b["server_ts"] for a, b in zip(steps, steps[1:]))
    assert page.locator(".sb-root").count() == 1                       # the next puzzle is up


def test_keyboard_and_typed_moves_in_3d_and_text(sgp_server, browser, sgp_small):  # noqa: F811
    store = open_store(sgp_server.db)
    for how, modality, ext in (("keyboard", "3d", "K1"), ("typed", "text", "T1")):
        study = make(sgp_server, sgp_small, name=f"e2e {how}", sgp_input=how, sgp_modality=modality,
                     items_per_participant=1, sgp_goal_view="toggle" if how == "keyboard" else "side_by_side")
        ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
        page = ctx.new_page()
        page.set_default_timeout(20_000)
        start(page, f"{sgp_server.url}/?study={study.study_id}&PROLIFIC_PID={ext}")
        page.locator(".sb-root").wait_for()
        screen = shown(store, sgp_small, study, ext)
        path = solution(screen)
        if how == "keyboard":  # the goal behind a toggle: one board on screen, the goal or the participant's own
            assert page.locator(".sb-board:visible").count() == 1
            page.get_by_role("button", name="Show the goal").click()
            assert page.locator(".sb-current figcaption").inner_text() == "Goal"
            page.get_by_role("button", name="Show my board").click()
            assert page.locator(".sb-current figcaption").inner_text() == "Your board"
        else:
            assert page.locator(".sb-text").count() == 2 and "Goal" in page.locator(".sb-goal").inner_text()
        for k, command in enumerate(path):
            if how == "keyboard":
                name, direction = piece_name(command, modality)
                names = [g["name"] for g in shown(store, sgp_small, study, ext).item.geoms(
                    shown(store, sgp_small, study, ext).state)]
                page.keyboard.press(str(names.index(name) + 1))
                now = shown(store, sgp_small, study, ext)      # the reachable cells lit, nothing to click on
                at = next(g["coord"] for g in now.item.geoms(now.state) if g["name"] == name)
                lit = page.locator(".sb-current .sb-cell.sb-target")
                assert sorted(lit.evaluate_all("els => els.map(e => e.dataset.coord)")) == \
                    sorted(_free_neighbours(now, at))
                assert page.locator(".sb-overlay.sb-live").count() == 0
                page.keyboard.press({"up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft",
                                     "right": "ArrowRight"}[direction])
            else:
                page.get_by_label("Your move:").fill(command.replace("move", "Move", 1))
                page.keyboard.press("Enter")
            if k < len(path) - 1:
                acked(page, screen.view_id, k + 1)
        page.get_by_text("SGP-OK").wait_for()                         # one episode: the end page and its code
        rows = store.query("SELECT e.passed, e.modality, s.input FROM episode_results e JOIN episode_steps s "
                           "USING (run_id, participant_id, view_id) WHERE e.run_id = ?", (study.run_id,))
        assert rows and all(r["passed"] == 1 and r["modality"] == modality and r["input"] == how for r in rows)
        ctx.close()


def _screen_point(page, view: str, x: float, y: float) -> tuple[float, float]:
    """Where image pixel (x, y) of the current board is on the page (the image is scaled to its figure)."""
    box = page.locator(f'.sb-root[data-view="{view}"] .sb-current .sb-stage img').bounding_box()
    w, h = page.evaluate(f"""() => {{ const i = document.querySelector('.sb-root[data-view="{view}"] .sb-current img');
                                      return [i.naturalWidth, i.naturalHeight]; }}""")
    return box["x"] + x * box["width"] / w, box["y"] + y * box["height"] / h


def _on(screen: EpisodeScreen, coord: str) -> tuple[float, float]:
    """A point of the board image that the server's hit map gives to `coord` (the cell's polygon where no nearer
    solid covers it), well inside: on the way from the polygon's centre towards its top."""
    hits = hit_map(screen.state, "3d")
    pts = next(h.points for h in hits if h.coord == coord)
    xs, ys = zip(*pts)
    cx, cy = sum(xs) / len(xs), sum(ys) / len(ys)
    for f in (0.3, 0.0, 0.5, -0.3, 0.15, 0.45):
        p = (cx, cy + f * (min(ys) - cy))
        if cell_at(hits, *p) == coord and all(cell_at(hits, p[0] + dx, p[1] + dy) == coord
                                              for dx in (-3, 3) for dy in (-3, 3)):
            return p
    raise AssertionError(f"no clear point on {coord}")


def test_a_3d_episode_by_clicking_the_board_on_highlighted_cells(sgp_server, page, sgp_small):  # noqa: F811
    """3D, click input: no coordinates anywhere on the page, a piece chosen by a click on its solid, its free
    neighbours highlighted (and nothing else), the move made by a click on the highlighted cell; the server
    stores it with the cells it checked."""
    store = open_store(sgp_server.db)
    study = make(sgp_server, sgp_small, name="e2e 3d click", sgp_modality="3d", items_per_participant=1)
    start(page, f"{sgp_server.url}/?study={study.study_id}&PROLIFIC_PID=C3")
    page.locator(".sb-root").wait_for()
    screen = shown(store, sgp_small, study, "C3")
    root = page.locator(f'.sb-root[data-view="{screen.view_id}"]')
    controls = root.locator(".sb-controls").inner_text()
    assert not re.search(r"\b[A-D][1-4]\b", controls), controls          # no cell names on the buttons
    assert "(image)" in root.locator(".sb-current img").get_attribute("alt")
    assert root.locator(".sb-cell.sb-target").count() == 0                 # nothing chosen, nothing lit
    path = solution(screen)
    for k, command in enumerate(path):
        now = shown(store, sgp_small, study, "C3")
        name, direction = piece_name(command, "3d")
        g = next(g for g in now.item.geoms(now.state) if g["name"] == name)
        page.mouse.click(*_screen_point(page, now.view_id, *_on(now, g["coord"])))   # on the piece's solid
        assert root.get_by_role("button", name=name, exact=True).get_attribute("aria-pressed") == "true"
        lit = root.locator(".sb-cell.sb-target")
        free = {c: d for c, d in _free_neighbours(now, g["coord"]).items()}
        assert sorted(lit.evaluate_all("els => els.map(e => e.dataset.coord)")) == sorted(free)
        assert root.locator(".sb-cell.sb-selected").count() == 1
        target = next(c for c, d in free.items() if d == direction)
        page.mouse.click(*_screen_point(page, now.view_id, *_on(now, target)))
        if k < len(path) - 1:
            acked(page, screen.view_id, k + 1)
    page.get_by_text("SGP-OK").wait_for()
    r = store.query("SELECT passed, steps, modality FROM episode_results WHERE run_id = ?", (study.run_id,))[0]
    assert (r["passed"], r["steps"], r["modality"]) == (1, len(path), "3d")
    rows = store.query("SELECT command, input, outcome FROM episode_steps WHERE run_id = ? ORDER BY seq",
                       (study.run_id,))
    assert [x["command"] for x in rows] == path and {x["input"] for x in rows} == {"click"}


def _free_neighbours(screen: EpisodeScreen, at: str) -> dict[str, str]:
    taken = {g["coord"] for g in screen.item.geoms(screen.state)}
    n = screen.item.board_size
    out = {}
    for d, (dc, dr) in {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}.items():
        c, r = ord(at[0]) - 65 + dc, int(at[1:]) - 1 + dr
        cell = f"{chr(65 + c)}{r + 1}"
        if 0 <= c < n and 0 <= r < n and cell not in taken:
            out[cell] = d
    return out


def test_several_moves_typed_in_one_line_in_2d(sgp_server, page, sgp_small):  # noqa: F811
    """2D, typed, several moves per submission: the 2D names in the hint and the allowed words beside the field;
    the whole solution and one move too many typed in one line: each stored as a step, the extra one refused
    and said so."""
    store = open_store(sgp_server.db)
    study = make(sgp_server, sgp_small, name="e2e several", sgp_input="typed", sgp_several_moves=True,
                 items_per_participant=1)
    start(page, f"{sgp_server.url}/?study={study.study_id}&PROLIFIC_PID=S2")
    page.locator(".sb-root").wait_for()
    screen = shown(store, sgp_small, study, "S2")
    field = page.get_by_label("Your moves:")
    assert field.get_attribute("placeholder") == "move red square up, move red square left"
    words = page.locator(".sb-words").inner_text()
    assert "square, triangle, circle, hexagon" in words and "up, down, left, right" in words
    assert "commas" in words and "cube" not in words
    path = [f"move {piece_name(c, '2d')[0]} {c.split()[-1]}" for c in solution(screen)]
    extra = "move red square up"
    field.fill(", ".join(path + [extra]))
    page.get_by_role("button", name="Send moves").click()
    page.get_by_text("SGP-OK").wait_for()
    rows = store.query("SELECT seq, command, outcome FROM episode_steps WHERE run_id = ? ORDER BY seq",
                       (study.run_id,))
    assert [(x["seq"], x["command"]) for x in rows] == list(enumerate(path))
    r = store.query("SELECT passed, steps FROM episode_results WHERE run_id = ?", (study.run_id,))[0]
    assert (r["passed"], r["steps"]) == (1, len(path))
    assert page.get_by_text(f"not made: {extra}").count() == 1
