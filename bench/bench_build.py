"""Full v0.1 build time against a floor measured in the same run.

Floor: a bare Pillow loop that pastes one real asset tile (an emoji from the pack,
so PNG compression sees comparable content) per cell onto a canvas of the same
size and encodes it as PNG, for the same number of images, with the same number
of processes. The ratio says how much the generator, JSON and layout work add.
It also times the visibility measurement alone (`measure_items` on every 4th scene's
items, one process) so its share of the build is visible.

    python bench/bench_build.py [--scale 1.0] [--workers N]
"""
from __future__ import annotations

import argparse
import functools
import io
import multiprocessing as mp
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image  # noqa: E402

from rose_core import Dataset, build_dataset, load_assets  # noqa: E402
from rose_core.benchmarks.rose.composition import CELL_PX  # noqa: E402
from rose_core.benchmarks.rose.visibility import measure_items  # noqa: E402

TARGET_S = 20.0


def _floor_one(args: tuple[int, int, int, int]) -> int:
    w, h, rows, cols = args
    tile = _tile()
    im = Image.new("RGB", (w, h), (255, 255, 255))
    for r in range(rows):
        for c in range(cols):
            im.paste(tile, (44 + c * CELL_PX + 6, 32 + r * CELL_PX + 6), tile)
    buf = io.BytesIO()
    im.save(buf, format="PNG", compress_level=6)
    return len(buf.getvalue())


@functools.lru_cache(maxsize=1)
def _tile() -> Image.Image:
    pack = load_assets()
    return pack.emoji_tile("noto", next(iter(pack.emoji_slots))).resize((CELL_PX - 12, CELL_PX - 12))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ds"
        t0 = time.perf_counter()
        build_dataset(out, scale=a.scale, workers=a.workers)
        build_s = time.perf_counter() - t0
        ds = Dataset.load(out)
        sizes = [(s.layout.width, s.layout.height, s.rows, s.cols) for s in ds.scenes.values() for _ in (0, 1)]
        n_images = len(sizes)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers, mp_context=mp.get_context("fork")) as pool:
        list(pool.map(_floor_one, sizes, chunksize=32))
    floor_s = time.perf_counter() - t0
    pack = load_assets()
    sample = list(ds.scenes.values())[::4]
    t0 = time.process_time()
    for s in sample:
        measure_items(pack, s.params["majority"], s.params["exception"])
    vis_ms = (time.process_time() - t0) / len(sample) * 1000
    print(f"build: scale {a.scale}, {len(ds.scenes)} scenes, {n_images} images, {a.workers} processes")
    print(f"  full build        {build_s:7.2f} s   ({n_images / build_s:7.1f} images/s)")
    print(f"  floor (paste+PNG) {floor_s:7.2f} s   ({n_images / floor_s:7.1f} images/s)")
    print(f"  ratio build/floor {build_s / floor_s:7.2f}x")
    print(f"  visibility        {vis_ms:7.2f} ms CPU per scene ({vis_ms * len(ds.scenes) / 1000:.2f} s CPU for "
          f"the build, measured on {len(sample)} scenes in one process)")
    if a.scale == 1.0:
        print(f"  target <= {TARGET_S:.0f} s: {'met' if build_s <= TARGET_S else 'NOT met'}")


if __name__ == "__main__":
    main()
