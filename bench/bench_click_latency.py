"""Click-to-visible latency of the participant grid in real Chromium, next to a one-button Streamlit floor.

Measured in the page (performance.now, sub-millisecond): pointerdown -> the clicked cell shows its new state,
after the next animation frame (paint). For the floor app the first visible change is its rerun's text.
Also: server CPU per click for both (from /proc). Targets: grid median <= 16 ms, p95 <= 33 ms.

    python bench/bench_click_latency.py [--clicks 80] [--gap-ms 120] [--page participant|harness]

--page participant (default) clicks an item of a real study in the participant page (events stored in SQLite);
--page harness clicks the same component on tests/e2e/grid_app.py (an 8x8 item; events appended to a file),
which isolates the component from the study server.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from playwright.sync_api import sync_playwright  # noqa: E402
from setup_study import prepare  # noqa: E402

from tools.serve import CHROMIUM, CHROMIUM_ARGS, Server  # noqa: E402

MEASURE = r"""
({sel, attr, expect}) => { window.__p = new Promise(resolve => {
  const now = () => performance.now();
  const out = {};
  const afterPaint = () => new Promise(res => requestAnimationFrame(() => setTimeout(res, 0)));
  const ok = () => { const e = document.querySelector(sel); return e && (attr ? e.getAttribute(attr) === expect
                                                                            : e.textContent.trim() === expect); };
  let pending = false;
  const check = async () => {
    if (out.down === undefined || pending || !ok()) return;
    pending = true; mo.disconnect(); await afterPaint(); out.visible = now(); resolve(out);
  };
  const mo = new MutationObserver(check);
  mo.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  window.addEventListener('pointerdown', () => { out.down = now(); setTimeout(check, 0); }, {capture: true, once: true});
}); }
"""


def q(xs: list[float], pc: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(pc / 100 * (len(s) - 1))))]


def measure(page, targets, server: Server, gap_ms: float) -> tuple[list[float], float]:
    lat = []
    cpu0 = server.cpu_seconds()
    for sel, attr, expect, (x, y) in targets:
        page.evaluate(MEASURE, {"sel": sel, "attr": attr, "expect": expect})
        page.mouse.click(x, y)
        res = page.evaluate("window.__p")
        lat.append(res["visible"] - res["down"])
        time.sleep(gap_ms / 1000)
    time.sleep(0.5)
    return lat, (server.cpu_seconds() - cpu0) * 1000 / len(targets)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clicks", type=int, default=80)
    ap.add_argument("--gap-ms", type=float, default=120)
    ap.add_argument("--page", choices=["participant", "harness"], default="participant")
    a = ap.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ds_root, db_file, sid, ids = prepare(tmp, 1)
        if a.page == "participant":
            app = Server(tmp / "app.log", {"ROSE_DATASET_DIR": str(ds_root), "ROSE_DB": str(db_file)}).start()
            url = f"{app.url}/?study={sid}&PROLIFIC_PID={ids[0]}"
        else:
            app = Server(tmp / "app.log", {"ROSE_DATASET_DIR": str(ds_root), "ROSE_GRID_LOG": str(tmp / "grid.jsonl")},
                         script="tests/e2e/grid_app.py").start()
            url = f"{app.url}/?rows=8&cols=8&mode=click&view=bench"
        floor = Server(tmp / "floor.log", script="bench/floor_app.py").start()
        try:
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                pg = b.new_page(viewport={"width": 1200, "height": 1000})
                pg.goto(url)
                pg.wait_for_selector(".rg-cell")
                time.sleep(1)
                cells = pg.locator(".rg-cell").all()
                boxes = [(c.get_attribute("data-r"), c.get_attribute("data-c"), c.bounding_box()) for c in cells]
                state: dict[tuple, bool] = {}
                targets = []
                for _ in range(a.clicks):
                    r, c, bb = rng.choice(boxes)
                    state[(r, c)] = not state.get((r, c), False)
                    targets.append((f'.rg-cell[data-r="{r}"][data-c="{c}"]', "aria-pressed",
                                    "true" if state[(r, c)] else "false",
                                    (bb["x"] + bb["width"] / 2, bb["y"] + bb["height"] / 2)))
                grid_lat, grid_cpu = measure(pg, targets, app, a.gap_ms)
                pf = b.new_page(viewport={"width": 1200, "height": 1000})
                pf.goto(floor.url)
                pf.wait_for_selector("[data-testid=stText]")
                time.sleep(1)
                bb = pf.locator("button").first.bounding_box()
                xy = (bb["x"] + bb["width"] / 2, bb["y"] + bb["height"] / 2)
                ftargets = [("[data-testid=stText]", None, f"ack={i + 1}", xy) for i in range(a.clicks)]
                floor_lat, floor_cpu = measure(pf, ftargets, floor, a.gap_ms)
                b.close()
        finally:
            app.stop()
            floor.stop()
    gm, g95 = statistics.median(grid_lat), q(grid_lat, 95)
    fm, f95 = statistics.median(floor_lat), q(floor_lat, 95)
    print(f"click -> visible, {a.clicks} clicks each, {a.gap_ms:.0f} ms apart, headless Chromium, page: {a.page}")
    print(f"  grid ({a.page[:11]:11}) median {gm:6.1f} ms  p95 {g95:6.1f} ms  max {max(grid_lat):6.1f} ms  "
          f"server CPU {grid_cpu:5.1f} ms/click")
    print(f"  floor (1 button)   median {fm:6.1f} ms  p95 {f95:6.1f} ms  max {max(floor_lat):6.1f} ms  "
          f"server CPU {floor_cpu:5.1f} ms/click")
    print(f"  ratio grid/floor   median {gm / fm:6.2f}   p95 {g95 / f95:6.2f}")
    print(f"  target median <= 16 ms, p95 <= 33 ms: {'met' if gm <= 16 and g95 <= 33 else 'NOT met'}")


if __name__ == "__main__":
    main()
