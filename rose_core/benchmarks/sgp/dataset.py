"""Build an SGP dataset folder and load it back.

A folder holds `manifest.json`, `episodes.jsonl` (one episode per line, with its images' paths and SHA-256)
and `images/` (start and goal of every episode, 2D and 3D). It is written into a temporary sibling folder and
renamed into place at the end: a failed build leaves nothing where a reader would look. An existing folder
is only ever replaced (`replace=True`) when it is itself an SGP dataset; anything else is refused. The
manifest has no timestamp: the same parameters give byte-identical files and the same dataset hash.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
import shutil
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace as dc_replace
from pathlib import Path
from typing import Callable

from ..rose.render import sha256_hex
from .generate import BuildParams, generate_episodes
from .records import IMAGE_KEYS, Episode
from .render import render_png

FORMAT_VERSION = 1
RENDERER_VERSION = 1     # bump when an image's pixels change for the same state
BENCHMARK = "sgp"
DEFAULT_SGP_DIR = Path(__file__).resolve().parents[3] / "data" / "datasets" / "sgp"
SGP_DATASET_ENV = "ROSE_SGP_DATASET_DIR"
Progress = Callable[[int, int], None]


class SgpDatasetError(ValueError):
    """An SGP dataset folder that is missing, not an SGP dataset, or does not match its manifest."""


def _images_of(args: tuple[dict, str]) -> dict:
    """Worker: render and write one episode's four images; returns the episode's JSON with paths and hashes."""
    ep_json, out = args
    ep = Episode.from_json(ep_json)
    states = {"start": (ep.start_state(), "active"), "goal": (ep.goal_state(), "goal")}
    images, hashes = {}, {}
    for key in IMAGE_KEYS:
        which, modality = key.split("_")
        state, kind = states[which]
        data = render_png(state, modality, kind)  # type: ignore[arg-type]
        rel = f"images/{ep.episode_id}-{which}-{modality}.png"
        Path(out, rel).write_bytes(data)
        images[key], hashes[key] = rel, sha256_hex(data)
    return dc_replace(ep, images=images, image_sha256=hashes).to_json()


def sgp_dataset_dir() -> Path:
    """The app's SGP dataset: $ROSE_SGP_DATASET_DIR, else data/datasets/sgp."""
    return Path(os.environ.get(SGP_DATASET_ENV) or DEFAULT_SGP_DIR)


def is_sgp_dataset(folder: Path) -> bool:
    try:
        return json.loads((Path(folder) / "manifest.json").read_text()).get("benchmark") == BENCHMARK
    except (OSError, ValueError, AttributeError):
        return False


def build_sgp_dataset(out: Path | str, params: BuildParams = BuildParams(), workers: int | None = None,
                      progress: Progress | None = None, replace: bool = False) -> dict:
    """Generate, render and write the dataset into `out` atomically; returns the manifest."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        if not is_sgp_dataset(out):
            raise SgpDatasetError(f"{out} exists and is not an SGP dataset folder: refusing to overwrite it")
        if not replace:
            raise SgpDatasetError(f"{out} already holds an SGP dataset (pass replace=True / --force to rebuild it)")
    episodes = generate_episodes(params)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        (tmp / "images").mkdir()
        jobs = [(e.to_json(), str(tmp)) for e in episodes]
        workers = workers or min(len(jobs), os.cpu_count() or 1)
        pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) if workers > 1 else None
        records = []
        try:
            results = pool.map(_images_of, jobs, chunksize=8) if pool else map(_images_of, jobs)
            for k, rec in enumerate(results, 1):
                records.append(rec)
                if progress:
                    progress(k, len(jobs))
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        body = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode()
        (tmp / "episodes.jsonl").write_bytes(body)
        manifest = _manifest(params, [Episode.from_json(r) for r in records], sha256_hex(body))
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, old / out.name)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
        return manifest
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _manifest(params: BuildParams, episodes: list[Episode], episodes_sha: str) -> dict:
    cells = Counter(f"{e.n_geoms}x{e.c1}" for e in episodes)
    manifest = {
        "name": "iVISPAR Sliding Geom Puzzle (generated by ROSE Studio)", "benchmark": BENCHMARK,
        "format_version": FORMAT_VERSION, "renderer_version": RENDERER_VERSION, "params": params.to_json(),
        "composition": {"episodes": len(episodes), "images": sum(len(e.images) for e in episodes),
                        "by_geoms_c1": dict(sorted(cells.items())),
                        "by_c2": {str(k): v for k, v in sorted(Counter(e.c2 for e in episodes).items())}},
        "files": {"episodes.jsonl": episodes_sha},
    }
    manifest["dataset_hash"] = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()[:16]
    return manifest


@dataclass
class SgpDataset:
    """A loaded SGP dataset: episodes by id, in file order."""

    root: Path
    manifest: dict
    episodes: dict[str, Episode]

    @staticmethod
    def load(root: Path | str, verify: bool = True, verify_images: bool = False) -> SgpDataset:
        root = Path(root)
        if not is_sgp_dataset(root):
            raise SgpDatasetError(f"{root}: no SGP manifest.json (build one with `python -m rose_core sgp build --out DIR`)")
        manifest = json.loads((root / "manifest.json").read_text())
        p = root / "episodes.jsonl"
        if not p.exists():
            raise SgpDatasetError(f"{root}: episodes.jsonl is missing")
        body = p.read_bytes()
        if verify and sha256_hex(body) != manifest["files"]["episodes.jsonl"]:
            raise SgpDatasetError(f"{p}: content does not match manifest.json (file changed after the build)")
        episodes = {}
        for line in body.decode().splitlines():
            e = Episode.from_json(json.loads(line))
            episodes[e.episode_id] = e
        ds = SgpDataset(root, manifest, episodes)
        if verify_images:
            for e in episodes.values():
                for key, rel in e.images.items():
                    f = root / rel
                    if not f.exists() or sha256_hex(f.read_bytes()) != e.image_sha256[key]:
                        raise SgpDatasetError(f"{f}: missing or not the image the build wrote")
        return ds

    @property
    def dataset_hash(self) -> str:
        return self.manifest["dataset_hash"]

    def image_path(self, episode_id: str, key: str) -> Path:
        return self.root / self.episodes[episode_id].images[key]
