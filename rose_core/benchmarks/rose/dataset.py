"""Build a ROSE dataset folder and load it back.

A dataset folder holds `manifest.json`, `scenes.jsonl`, `instances.jsonl` and
`images/`. It is written to a temporary sibling folder and renamed into place
at the end, so a failed or interrupted build never leaves a half-made dataset
where a reader would find it. The manifest carries no timestamp: the same seed
and asset pack give byte-identical files.
"""
from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing as mp
import os
import shutil
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
from . import composition as comp
from .assets import load_assets
from .instances import derive_instances
from .records import MAIN_TEMPLATES, TEMPLATES, Instance, Scene
from .render import encode_png, layout_for, render_scene, sha256_hex
from .scenes import generate_scene, rng_for
from .scoring import ScoreKey
from .visibility import VISIBILITY_SCHEME

FORMAT_VERSION = 1
DEFAULT_DATASET_DIR = Path(__file__).resolve().parents[3] / "data" / "datasets" / "rose-v0.1"
DATASET_ENV = "ROSE_DATASET_DIR"
Progress = Callable[[int, int], None]


class DatasetError(RuntimeError):
    """A dataset folder is missing, incomplete or does not match its manifest."""


def _split_of(seed: int, plan: comp.SubsetPlan) -> list[str]:
    dev = set(rng_for(seed, plan.subset, "split").sample(range(plan.scenes), plan.dev_scenes))
    return ["dev" if i in dev else "test" for i in range(plan.scenes)]


def _build_one(args: tuple[str, int, int, str, str]) -> dict:
    """Worker: generate, render and write one scene; returns its JSON record."""
    subset, index, seed, split, out = args
    pack = load_assets()
    scene = generate_scene(pack, seed, subset, index, split)  # type: ignore[arg-type]
    scene.layout = layout_for(scene.rows, scene.cols)
    for kind, hl in (("base", False), ("highlight", True)):
        rel = f"images/{scene.scene_id}{'' if kind == 'base' else '-hl'}.png"
        data = encode_png(render_scene(pack, scene, highlight=hl))
        Path(out, rel).write_bytes(data)
        scene.images[kind] = rel
        scene.image_sha256[kind] = sha256_hex(data)
    return scene.to_json()


def visibility_distribution(scenes: Iterable[Scene]) -> dict[str, dict]:
    """Per subset: min / p5 / median / max of the per-scene figure (`visible_px`) and how many were redrawn."""
    by: dict[str, list[dict]] = {}
    for s in scenes:
        by.setdefault(s.subset, []).append(s.params["visibility"])
    out = {}
    for subset, vs in by.items():
        px = np.array([v["visible_px"] for v in vs])
        out[subset] = {"scenes": len(vs), "min": int(px.min()), "p5": round(float(np.percentile(px, 5)), 1),
                       "median": round(float(np.median(px)), 1), "max": int(px.max()),
                       "redrawn": sum(v["redraws"] > 0 for v in vs), "redraws": sum(v["redraws"] for v in vs),
                       "floor": vs[0]["floor"]}
    return out


def visibility_lines(manifest: dict) -> list[str]:
    """The build's per-subset visibility table, as `build` prints it."""
    v = manifest["visibility"]
    lines = [f"visibility ({v['scheme']}): visibly different display pixels (CIEDE2000 > {v['threshold_de00']:g}) "
             "in the hardest odd cell",
             f"{'subset':<14}{'floor':>6}{'min':>7}{'p5':>8}{'median':>8}{'max':>7}{'redrawn':>9}{'redraws':>9}"]
    for s, d in v["distribution"].items():
        lines.append(f"{s:<14}{d['floor']:>6}{d['min']:>7}{d['p5']:>8.1f}{d['median']:>8.1f}{d['max']:>7}"
                     f"{d['redrawn']:>9}{d['redraws']:>9}")
    return lines


def _jsonl(rows: Iterable[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode()


def build_dataset(out: Path, seed: int = comp.DEFAULT_SEED, scale: float = 1.0, workers: int | None = None,
                  progress: Progress | None = None, replace: bool = False) -> dict:
    """Build the dataset into `out` (atomically) and return its manifest."""
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not replace:
        what = ("no manifest.json: an incomplete or damaged dataset, or not a dataset at all"
                if not (out / "manifest.json").exists() else "it already holds a dataset")
        raise DatasetError(f"{out} exists and is not empty ({what}); nothing was built over it. Move the folder "
                           f"away, or rebuild it on purpose with `python -m rose_core build --out {out} --force`")
    plans = comp.plan(scale)
    pack = load_assets()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        (tmp / "images").mkdir()
        jobs = [(p.subset, i, seed, split, str(tmp)) for p in plans for i, split in enumerate(_split_of(seed, p))]
        workers = workers or min(len(jobs), os.cpu_count() or 1)
        # Each record is parsed, its instances derived and both turned into JSON lines as it arrives, while the
        # workers go on rendering: the parent's share then overlaps theirs instead of following it.
        scenes: list[Scene] = []
        instances: list[Instance] = []
        scene_lines: list[bytes] = []
        instance_lines: list[bytes] = []
        if workers <= 1:
            results = map(_build_one, jobs)
            pool = None
        else:
            pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"))
            results = pool.map(_build_one, jobs, chunksize=4)
        try:
            for k, rec in enumerate(results, 1):
                scene = Scene.from_json(rec)
                derived = derive_instances(scene)
                scenes.append(scene)
                instances += derived
                scene_lines.append(_jsonl([rec]))
                instance_lines.append(_jsonl(i.to_json() for i in derived))
                if progress:
                    progress(k, len(jobs))
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        scenes_bytes = b"".join(scene_lines)
        instances_bytes = b"".join(instance_lines)
        (tmp / "scenes.jsonl").write_bytes(scenes_bytes)
        (tmp / "instances.jsonl").write_bytes(instances_bytes)
        manifest = _manifest(seed, scale, pack.fingerprint(), plans, scenes, instances,
                             sha256_hex(scenes_bytes), sha256_hex(instances_bytes))
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        move_into_place(tmp, out)
        return manifest
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def move_into_place(tmp: Path, out: Path) -> None:
    """Put a finished build folder where readers look: a rename, the previous folder moved aside first."""
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, old / out.name)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)


def _manifest(seed: int, scale: float, assets: str, plans: list[comp.SubsetPlan], scenes: list[Scene],
              instances: list[Instance], scenes_sha: str, instances_sha: str) -> dict:
    main = [i for i in instances if i.template in MAIN_TEMPLATES]
    by_split = Counter(i.split for i in main)
    by_subset_split = Counter((i.subset, i.split) for i in main)
    empty = Counter(i.template for i in instances if i.gold.count == 0 or i.gold.cells == [])
    manifest = {
        "name": "ROSE v0.1 (regenerated by ROSE Studio)", "format_version": FORMAT_VERSION,
        "seed": seed, "scale": scale, "asset_pack": assets,
        "composition": {
            "scenes": len(scenes), "images": 2 * len(scenes), "instances": len(main),
            "bridge_instances": len(instances) - len(main),
            "by_split": {s: by_split.get(s, 0) for s in ("dev", "test")},
            "by_subset": {p.subset: {"scenes": p.scenes, "dev": by_subset_split.get((p.subset, "dev"), 0),
                                     "test": by_subset_split.get((p.subset, "test"), 0)} for p in plans},
            "by_template": dict(Counter(i.template for i in instances)),
            "zero_target_instances": {t: empty.get(t, 0) for t in TEMPLATES},
        },
        "ranges": {
            "grid_rows": comp.GRID_ROWS, "grid_cols": comp.GRID_COLS, "targets": [comp.TARGETS_MIN, comp.TARGETS_MAX],
            "target_share_max": comp.TARGET_SHARE_MAX, "rect_max_share": comp.RECT_MAX_SHARE,
            "excluded_share": comp.EXCLUDED_SHARE, "empty_share": comp.EMPTY_SHARE,
            "edit_k": comp.EDIT_K, "edit_window": comp.EDIT_WINDOW, "cell_px": comp.CELL_PX,
        },
        "visibility": {
            "scheme": VISIBILITY_SCHEME, "threshold_de00": comp.VISIBLE_DE00, "floors": comp.VISIBILITY_FLOORS,
            "figure": "visible_px of the hardest odd cell (minimum over target cells and both renderings)",
            "distribution": visibility_distribution(scenes),
        },
        "files": {"scenes.jsonl": scenes_sha, "instances.jsonl": instances_sha},
    }
    manifest["dataset_hash"] = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()[:16]
    return manifest


@dataclass
class Dataset:
    """A loaded dataset: scenes and instances by id, and a score key per instance."""

    root: Path
    manifest: dict
    scenes: dict[str, Scene]
    instances: dict[str, Instance]
    _keys: dict[str, ScoreKey] = field(default_factory=dict, repr=False)
    # image path (relative to root) -> what is wrong with it; items on these images are never shown
    damaged_images: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def load(root: Path | str, verify: bool = True) -> Dataset:
        """Load and check a dataset folder; with `verify`, the two record files and every image are checked
        against the hashes stored at build time (a missing or changed image is listed in `damaged_images`)."""
        root = Path(root)
        manifest, blobs = read_build(root, ("scenes.jsonl", "instances.jsonl"), verify, DatasetError,
                                     "no manifest.json (is this a dataset folder? build one with "
                                     "`python -m rose_core build --out DIR`)")
        scenes = {}
        for line in blobs["scenes.jsonl"].decode().splitlines():
            s = Scene.from_json(json.loads(line))
            scenes[s.scene_id] = s
        instances = {}
        for line in blobs["instances.jsonl"].decode().splitlines():
            i = Instance.from_json(json.loads(line))
            instances[i.instance_id] = i
        ds = Dataset(root, manifest, scenes, instances)
        if verify:
            for rel in ds.image_hashes:
                ds.image_problem(rel, check=True)
        return ds

    @functools.cached_property
    def image_hashes(self) -> dict[str, str]:
        """Relative image path -> the sha256 stored for it at build time."""
        return {rel: s.image_sha256.get(kind, "") for s in self.scenes.values() for kind, rel in s.images.items()}

    def image_problem(self, rel: str, check: bool = False) -> str | None:
        """What is wrong with an image (None: fine). `check` reads and hashes the file now; otherwise only what a
        check or a failed read already found is reported."""
        if rel in self.damaged_images or not check:
            return self.damaged_images.get(rel)
        try:
            self.read_image(rel)
        except DatasetError:
            pass
        return self.damaged_images.get(rel)

    def mark_damaged(self, rel: str, why: str) -> None:
        self.damaged_images.setdefault(rel, why)

    def read_image(self, rel: str) -> bytes:
        """An image's bytes, checked against the stored hash; a missing or changed file is recorded in
        `damaged_images` and raises DatasetError naming the file."""
        path = self.root / rel
        want = self.image_hashes.get(rel)
        try:
            data = path.read_bytes()
        except OSError as e:
            self.mark_damaged(rel, f"cannot be read ({e.strerror or e})")
            raise DatasetError(f"{path}: {self.damaged_images[rel]}") from e
        if want is None or sha256_hex(data) != want:
            self.mark_damaged(rel, "content does not match the hash stored at build time" if want
                              else "not an image of this dataset")
            raise DatasetError(f"{path}: {self.damaged_images[rel]}")
        return data

    @property
    def dataset_hash(self) -> str:
        return self.manifest["dataset_hash"]

    @functools.cached_property
    def index(self) -> dict[str, int]:
        """instance_id -> its position in instances.jsonl: the integer `index` every export carries."""
        return {iid: k for k, iid in enumerate(self.instances)}

    @functools.cached_property
    def by_index(self) -> list[str]:
        return list(self.instances)

    def key(self, instance_id: str) -> ScoreKey:
        k = self._keys.get(instance_id)
        if k is None:
            inst = self.instances[instance_id]
            k = self._keys[instance_id] = ScoreKey.build(inst, self.scenes[inst.scene_id])
        return k

    def image_path(self, instance_or_scene: Instance | Scene, kind: str = "base") -> Path:
        if isinstance(instance_or_scene, Instance):
            return self.root / instance_or_scene.image
        return self.root / instance_or_scene.images[kind]

    def select(self, split: str | None = None, subsets: Iterable[str] | None = None,
               templates: Iterable[str] | None = None) -> list[Instance]:
        subs = set(subsets) if subsets else None
        tmpl = set(templates) if templates else None
        return [i for i in self.instances.values()
                if (split is None or i.split == split) and (subs is None or i.subset in subs)
                and (tmpl is None or i.template in tmpl)]


def _read_manifest(path: Path, files: tuple[str, ...], error: type[Exception], benchmark: str | None) -> dict:
    """manifest.json, refused with the file's name when it is not a dataset manifest (of `benchmark`, when given)
    naming these files."""
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise error(f"{path}: not a readable dataset manifest ({e}); rebuild the dataset or restore the "
                    "file") from None
    if benchmark is not None and (not isinstance(manifest, dict) or manifest.get("benchmark") != benchmark):
        theirs = manifest.get("benchmark") if isinstance(manifest, dict) else None
        raise error(f"{path}: not an {benchmark.upper()} dataset (its benchmark is {theirs!r})")
    missing = [k for k in ("dataset_hash", "files") if not isinstance(manifest, dict) or k not in manifest]
    if not missing and not all(isinstance(manifest["files"], dict) and n in manifest["files"] for n in files):
        missing = [" / ".join(f"files.{n}" for n in files)]
    if missing:
        raise error(f"{path}: not a dataset manifest (missing {', '.join(missing)})")
    return manifest


def read_build(root: Path, files: tuple[str, ...], verify: bool, error: type[Exception], no_manifest: str,
               benchmark: str | None = None) -> tuple[dict, dict[str, bytes]]:
    """A built folder's manifest and record files (every benchmark's loader): the manifest must name each file
    (and, given `benchmark`, say it is that benchmark's), each file must exist and, with `verify`, match the hash
    stored at build time. Every refusal is an `error` naming the file."""
    man_path = root / "manifest.json"
    if not man_path.exists():
        raise error(f"{root}: {no_manifest}")
    manifest = _read_manifest(man_path, files, error, benchmark)
    blobs = {}
    for name in files:
        p = root / name
        if not p.exists():
            raise error(f"{root}: {name} is missing")
        blobs[name] = p.read_bytes()
        if verify and sha256_hex(blobs[name]) != manifest["files"][name]:
            raise error(f"{p}: content does not match manifest.json (file changed after the build)")
    return manifest, blobs


def dataset_dir() -> Path:
    """The app's dataset: $ROSE_DATASET_DIR, else data/datasets/rose-v0.1."""
    return Path(os.environ.get(DATASET_ENV) or DEFAULT_DATASET_DIR)

