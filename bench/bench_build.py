"""Full v0.1 build time against a floor measured in the same run.

Floor: a bare Pillow loop that pastes one real asset tile (an emoji from the pack,
so PNG compression sees comparable content) per cell onto a canvas of the same
size and encodes it as PNG, for the same number of images, with the same number
of processes. The ratio says how much the generator, JSON and layout work add.
It also times the visibility measurement alone (`measure_items` on every 4th scene's
items, one process) so its share of the build is visible. Build and floor alternate
`--repeat` times (default 3); the medians are reported with the load average beside them,
and the CPU seconds of each (all its processes), whose ratio a busy machine disturbs least.

`--against DIR` compares every file of the first build (each PNG, the records, the manifest)
by sha256 with a dataset folder built earlier, e.g. by the commit before a speed-up
(`python -m rose_core build --out DIR`), and exits 1 when one differs. `--profile N` prints
where a worker's time goes: cProfile over every Nth scene's worker job, in this process.

    python bench/bench_build.py [--scale 1.0] [--workers N] [--repeat 3] [--against DIR] [--profile 8]
"""
from __future__ import annotations

import argparse
import cProfile
import functools
import hashlib
import io
import multiprocessing as mp
import os
import pstats
import resource
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image  # noqa: E402

from rose_core import Dataset, build_dataset, load_assets  # noqa: E402
from rose_core.benchmarks.rose import composition as comp  # noqa: E402
from rose_core.benchmarks.rose import dataset as rose_dataset  # noqa: E402
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


def folder_digests(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under `root`."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def compare_folders(built: Path, reference: Path) -> list[str]:
    """What differs between two dataset folders, file by file (empty: byte-identical)."""
    a, b = folder_digests(built), folder_digests(reference)
    out = [f"only in the new build: {rel}" for rel in sorted(set(a) - set(b))]
    out += [f"only in {reference}: {rel}" for rel in sorted(set(b) - set(a))]
    out += [f"differs: {rel}" for rel in sorted(set(a) & set(b)) if a[rel] != b[rel]]
    return out


def profile_worker(scale: float, every: int) -> None:
    """cProfile of the build's per-scene worker job over every `every`th scene, in this process."""
    plans = comp.plan(scale)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "images").mkdir()
        jobs = [(p.subset, i, comp.DEFAULT_SEED, split, tmp) for p in plans
                for i, split in enumerate(rose_dataset._split_of(comp.DEFAULT_SEED, p))][::every]
        load_assets()
        prof = cProfile.Profile()
        prof.enable()
        for job in jobs:
            rose_dataset._build_one(job)
        prof.disable()
    print(f"profile: the worker job of {len(jobs)} scenes (every {every}th), one process")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)


def cpu_s() -> float:
    """CPU seconds (user + system) of this process and its reaped children: the build's and the floor's own
    work, which a busy machine stretches far less than their wall time."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=3, help="build and floor runs, alternating; medians reported")
    ap.add_argument("--against", type=Path, help="a dataset folder built earlier: every file must be identical")
    ap.add_argument("--profile", type=int, metavar="N", help="also profile every Nth scene's worker job")
    a = ap.parse_args()
    print(f"start: {load()}")
    builds, floors, build_cpu, floor_cpu, mismatch = [], [], [], [], None
    for run in range(a.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "ds"
            t0, c0 = time.perf_counter(), cpu_s()
            build_dataset(out, scale=a.scale, workers=a.workers)
            builds.append(time.perf_counter() - t0)
            build_cpu.append(cpu_s() - c0)
            if run == 0:
                ds = Dataset.load(out)
                sizes = [(s.layout.width, s.layout.height, s.rows, s.cols) for s in ds.scenes.values() for _ in (0, 1)]
                n_images = len(sizes)
                if a.against is not None:
                    mismatch = compare_folders(out, a.against)
        t0, c0 = time.perf_counter(), cpu_s()
        with ProcessPoolExecutor(a.workers, mp_context=mp.get_context("fork")) as pool:
            list(pool.map(_floor_one, sizes, chunksize=32))
        floors.append(time.perf_counter() - t0)
        floor_cpu.append(cpu_s() - c0)
        print(f"  run {run + 1}: build {builds[-1]:.2f} s ({build_cpu[-1]:.2f} s CPU), floor {floors[-1]:.2f} s "
              f"({floor_cpu[-1]:.2f} s CPU) ({load()})")
    build_s, floor_s = statistics.median(builds), statistics.median(floors)
    pack = load_assets()
    sample = list(ds.scenes.values())[::4]
    t0 = time.process_time()
    for s in sample:
        measure_items(pack, s.params["majority"], s.params["exception"])
    vis_ms = (time.process_time() - t0) / len(sample) * 1000
    print(f"build: scale {a.scale}, {len(ds.scenes)} scenes, {n_images} images, {a.workers} processes, "
          f"median of {a.repeat}")
    print(f"  full build        {build_s:7.2f} s   ({n_images / build_s:7.1f} images/s)")
    print(f"  floor (paste+PNG) {floor_s:7.2f} s   ({n_images / floor_s:7.1f} images/s)")
    print(f"  ratio build/floor {build_s / floor_s:7.2f}x  (per run: "
          f"{', '.join(f'{b / f:.2f}' for b, f in zip(builds, floors))})")
    cpu_b, cpu_f = statistics.median(build_cpu), statistics.median(floor_cpu)
    print(f"  CPU, all processes: build {cpu_b:.2f} s, floor {cpu_f:.2f} s, ratio {cpu_b / cpu_f:.2f}x")
    print(f"  visibility        {vis_ms:7.2f} ms CPU per scene ({vis_ms * len(ds.scenes) / 1000:.2f} s CPU for "
          f"the build, measured on {len(sample)} scenes in one process)")
    if a.scale == 1.0:
        print(f"  target <= {TARGET_S:.0f} s: {'met' if build_s <= TARGET_S else 'NOT met'}")
    print(f"end: {load()}")
    if a.profile:
        profile_worker(a.scale, a.profile)
    if mismatch is not None:
        print(f"against {a.against}: " + ("every file byte-identical" if not mismatch else
                                           f"{len(mismatch)} differences, e.g.\n  " + "\n  ".join(mismatch[:10])))
        if mismatch:
            sys.exit(1)


if __name__ == "__main__":
    main()
