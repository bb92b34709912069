"""The scorer's hot modules compiled to C with mypyc, used only while they match their sources.

Why: `protocol` and `scoring` read and score every stored and imported response; as plain Python they
run at ~145k responses/s, compiled at ~1.4x that (README, Figures). The compiled modules are the same
source files, so their verdicts are the same (tests/rose_core/test_native.py checks them against the
plain modules on the realistic corpus and on generated texts).

How: `build()` compiles copies of the sources into `build/native/<python tag>/` (never beside the
sources: a compiled module left there would shadow its source after an edit) and writes, last, a
manifest with each source's SHA-256. `activate()` (called by `rose_core.benchmarks.rose` before its
modules are imported) puts that folder first on the package's search path only when every source still
has the hash it was compiled from, for this Python; otherwise the plain modules are used and `STATUS`
says why. `ROSE_NATIVE=0` forces the plain modules (any value but 0, 1 or empty is refused).

    python -m rose_core build-native [--force]   build (or say it is current); exit 1 if it cannot be built
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PACKAGE = ("rose_core", "benchmarks", "rose")
MODULES = ("protocol", "scoring")
ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIR = ROOT.joinpath(*PACKAGE)
BUILD_DIR = ROOT / "build" / "native" / sys.implementation.cache_tag
MANIFEST = "native.json"
GROUP = "scorer"  # the compiled group's runtime library: rose_core/benchmarks/rose/scorer__mypyc.*.so


@dataclass(frozen=True)
class NativeStatus:
    """Whether the compiled modules are in use, and why (not)."""

    compiled: bool
    reason: str
    folder: Path | None = None


STATUS = NativeStatus(False, "not activated")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


class CompiledBesideSources(ImportError):
    """A compiled module beside the sources: Python imports it before the source of the same name, whatever
    `ROSE_NATIVE` says and whether or not the source was edited since, so it is refused, never run."""


def _beside_sources(source_dir: Path) -> list[Path]:
    """Compiled modules of ours left beside the sources (a hand-run `mypyc .../protocol.py` writes them there)."""
    names = (*MODULES, f"{GROUP}__mypyc")
    return sorted({source_dir / f"{name}{suffix}" for name in names for suffix in importlib.machinery.EXTENSION_SUFFIXES
                   if (source_dir / f"{name}{suffix}").exists()})


def check(build_dir: Path = BUILD_DIR, source_dir: Path = SOURCE_DIR) -> NativeStatus:
    """Whether the build in `build_dir` was compiled from the sources as they are now, for this Python.
    Raises `CompiledBesideSources` when a compiled module sits beside the sources (it would shadow them)."""
    stray = _beside_sources(source_dir)
    if stray:
        raise CompiledBesideSources(
            f"compiled module(s) beside the sources, which Python would run instead of them (stale verdicts): "
            f"{', '.join(map(str, stray))}; delete them (the build belongs in {build_dir}: python -m rose_core "
            "build-native)")
    wanted = os.environ.get("ROSE_NATIVE", "")
    if wanted not in ("", "0", "1"):
        raise ValueError(f"ROSE_NATIVE={wanted!r}: expected 0 (the plain Python modules) or 1 (compiled when current)")
    if wanted == "0":
        return NativeStatus(False, "ROSE_NATIVE=0: plain Python modules")
    folder = build_dir.joinpath(*PACKAGE)
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        return NativeStatus(False, f"not built ({folder / MANIFEST} missing; python -m rose_core build-native)")
    except (OSError, ValueError) as e:
        return NativeStatus(False, f"unreadable build manifest {folder / MANIFEST}: {e}")
    if manifest.get("suffix") != _suffix():
        return NativeStatus(False, f"built for another Python ({manifest.get('suffix')}, this one {_suffix()})")
    sources = manifest.get("sources", {})
    for name in MODULES:
        if sources.get(f"{name}.py") != _sha256(source_dir / f"{name}.py"):
            return NativeStatus(False, f"{name}.py changed since it was compiled: plain Python modules "
                                       "(python -m rose_core build-native rebuilds)")
        if not (folder / f"{name}{_suffix()}").is_file():
            return NativeStatus(False, f"compiled {name} missing in {folder}")
    if not (folder / f"{GROUP}__mypyc{_suffix()}").is_file():
        return NativeStatus(False, f"compiled runtime library {GROUP}__mypyc missing in {folder}")
    return NativeStatus(True, f"compiled with mypyc {manifest.get('mypy', '?')}", folder)


def activate(package_path: list[str]) -> NativeStatus:
    """Put a current build first on the package's search path and import it; if it will not load (a damaged
    library, another runtime), take it off again: the plain modules are used and `STATUS` says why."""
    global STATUS
    STATUS = check()
    if STATUS.compiled and STATUS.folder is not None:
        package_path.insert(0, str(STATUS.folder))
        names = [".".join((*PACKAGE, name)) for name in (f"{GROUP}__mypyc", *MODULES)]
        try:
            for name in names[1:]:
                importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - any failure to load means: not this build
            package_path.remove(str(STATUS.folder))
            for name in names:
                sys.modules.pop(name, None)
            STATUS = NativeStatus(False, f"the build in {STATUS.folder} does not load ({e!r}): plain Python modules")
    return STATUS


def build(build_dir: Path = BUILD_DIR, source_dir: Path = SOURCE_DIR) -> Path:
    """Compile the modules into `build_dir` (replaced whole: a failed build leaves the old one or none)."""
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=build_dir.parent) as tmp:
        stage = Path(tmp) / "stage"
        pkg = stage.joinpath(*PACKAGE)
        pkg.mkdir(parents=True)
        for i in range(len(PACKAGE)):
            stage.joinpath(*PACKAGE[:i + 1], "__init__.py").touch()
        hashes = {}
        for name in MODULES:
            data = (source_dir / f"{name}.py").read_bytes()
            (pkg / f"{name}.py").write_bytes(data)
            hashes[f"{name}.py"] = hashlib.sha256(data).hexdigest()
        out = Path(tmp) / "out"
        dest = out.joinpath(*PACKAGE)
        dest.mkdir(parents=True)
        # One group: the scorer calls the parser natively; its runtime library stays inside the package.
        names = [str(Path(*PACKAGE, f"{name}.py")) for name in MODULES]
        (stage / "setup.py").write_text(
            "from setuptools import setup\nfrom mypyc.build import mypycify\n"
            f"setup(name='rose_native', ext_modules=mypycify({['--follow-imports=skip', '--ignore-missing-imports', *names]!r}, "
            f"opt_level='3', group_name={'.'.join((*PACKAGE, GROUP))!r}))\n")
        done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=stage,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"mypyc could not compile {', '.join(names)}:\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
        for lib in pkg.glob(f"*{_suffix()}"):
            shutil.move(str(lib), dest / lib.name)
        import mypy.version

        (dest / MANIFEST).write_text(json.dumps({"sources": hashes, "suffix": _suffix(),
                                                 "mypy": mypy.version.__version__, "python": sys.version}))
        old = Path(tmp) / "old"
        if build_dir.exists():
            build_dir.rename(old)
        out.rename(build_dir)
    return build_dir


def main(argv: list[str] | None = None) -> int:
    force = "--force" in (argv if argv is not None else sys.argv[1:])
    now = check()
    if now.compiled and not force:
        print(f"rose_core.native: current ({now.reason}, {now.folder})")
        return 0
    try:
        folder = build()
    except (RuntimeError, OSError, ImportError) as e:
        print(f"rose_core.native: NOT built, the scorer runs as plain Python (same verdicts, ~1.4x slower): {e}",
              file=sys.stderr)
        return 1
    print(f"rose_core.native: built {', '.join(MODULES)} in {folder}")
    return 0
