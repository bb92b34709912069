"""SGP move latency in real Chromium: press "move …" -> the server has stored the move and the page shows the
board after it (the component's data-ack, after the next paint), next to the one-button Streamlit floor.

    python bench/bench_sgp_moves.py [--episodes 4] [--gap-ms 150]

A real SGP study on the real server (2D board, click input, cap 20); each move is the first step of an A*
path from the board on screen (so every move is effective and the episode runs c1 moves); the piece is chosen
first (a local click), then the arrow is timed. The last move of each episode (which opens the next one) is not
timed. Server CPU per move beside the floor's per rerun.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_click_latency import MEASURE, measure, q  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from rose_core.benchmarks.sgp import (  # noqa: E402
    SHAPE_2D,
    BuildParams,
    SgpDataset,
    build_sgp_dataset,
)
from rose_core.instrument.config import StudyConfig  # noqa: E402
from rose_core.instrument.episode_session import (  # noqa: E402
    EpisodeScreen,
    create_sgp_study,
    open_episode_session,
)
from rose_core.storage import audit, open_store
from tests.sgp_players import solution  # noqa: E402
from tools.serve import CHROMIUM, CHROMIUM_ARGS, Server  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=4)
    ap.add_argument("--gap-ms", type=float, default=150)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_sgp_dataset(tmp / "sgp", BuildParams(seed=5, geoms=(4, 6), c1=(8,), per_cell=a.episodes), workers=1)
        ds = SgpDataset.load(tmp / "sgp")
        db = open_store(tmp / "rose.db")
        study = create_sgp_study(db, ds, StudyConfig(name="bench", benchmark="sgp", practice_items=0, attention_every=0,
                                                     items_per_participant=a.episodes, target_per_instance=1))
        app = Server(tmp / "app.log", {"ROSE_DATASET_DIR": str(tmp / "no-rose"), "ROSE_DB": str(db.path),
                                       "ROSE_SGP_DATASET_DIR": str(tmp / "sgp")}).start()
        floor = Server(tmp / "floor.log", script="bench/floor_app.py").start()
        lat: list[float] = []
        cpu_ms = 0.0
        try:
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                pg = b.new_page(viewport={"width": 1200, "height": 1000})
                pg.goto(f"{app.url}/?study={study.study_id}&PROLIFIC_PID=B1")
                pg.get_by_text("I have read the above").click()
                pg.get_by_role("button", name="Continue").click()
                pg.get_by_text("I have read the above").wait_for(state="detached")  # the instructions now
                pg.get_by_role("button", name="Continue").click()
                pid = audit.participant_ids(db)[0]
                for _ in range(a.episodes):
                    pg.locator(".sb-root").wait_for()
                    screen = open_episode_session(db, ds, study.study_id, pid).screen()
                    assert isinstance(screen, EpisodeScreen)
                    root = f'.sb-root[data-view="{screen.view_id}"]'
                    path = solution(screen)
                    for k, cmd in enumerate(path):
                        _, color, shape, direction = cmd.split()
                        pg.locator(root).wait_for()
                        pg.locator(f'{root}[data-ack="{k}"][data-pending="0"]').wait_for()
                        pg.locator(f'{root} .sb-piece[data-name="{color} {SHAPE_2D[shape]}"]').click()
                        bb = pg.locator(f"{root} .sb-arrow.sb-{direction}").bounding_box()
                        xy = (bb["x"] + bb["width"] / 2, bb["y"] + bb["height"] / 2)
                        if k == len(path) - 1:
                            pg.mouse.click(*xy)
                            pg.wait_for_function("v => !document.querySelector(`.sb-root[data-view=\"${v}\"]`)",
                                                 arg=screen.view_id)
                            continue
                        got, cpu = measure(pg, [(root, "data-ack", str(k + 1), xy)], app, a.gap_ms)
                        lat += got
                        cpu_ms += cpu
                pf = b.new_page(viewport={"width": 1200, "height": 1000})
                pf.goto(floor.url)
                pf.wait_for_selector("[data-testid=stText]")
                time.sleep(1)
                bb = pf.locator("button").first.bounding_box()
                xy = (bb["x"] + bb["width"] / 2, bb["y"] + bb["height"] / 2)
                floor_lat, floor_cpu = measure(pf, [("[data-testid=stText]", None, f"ack={i + 1}", xy)
                                                    for i in range(len(lat))], floor, a.gap_ms)
                b.close()
        finally:
            app.stop()
            floor.stop()
    n = len(lat)
    m, p95 = statistics.median(lat), q(lat, 95)
    fm, f95 = statistics.median(floor_lat), q(floor_lat, 95)
    print(f"SGP move -> stored and redrawn, {n} moves over {a.episodes} episodes, headless Chromium "
          f"(load {os.getloadavg()[0]:.1f})")
    print(f"  move (2D, click)   median {m:6.1f} ms  p95 {p95:6.1f} ms  max {max(lat):6.1f} ms  "
          f"server CPU {cpu_ms / n:5.1f} ms/move (includes the {a.gap_ms:.0f} ms pause's idle)")
    print(f"  floor (1 button)   median {fm:6.1f} ms  p95 {f95:6.1f} ms  max {max(floor_lat):6.1f} ms  "
          f"server CPU {floor_cpu:5.1f} ms/rerun")
    print(f"  ratio move/floor   median {m / fm:6.2f}   p95 {p95 / f95:6.2f}")


if __name__ == "__main__":
    _ = MEASURE
    main()
