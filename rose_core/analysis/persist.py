"""The one on-disk cache: analyses of unchanged data kept beside the database, so that the first dashboard page
after a server restart reads what the last process computed instead of computing it again (a cold page: ≤ 1.5 s).
Each solver's share of an analysis is its own entry, so new responses of one run recompute only that run's part.

Where: beside a SQLite file (`<db>.analyses/`); for a PostgreSQL database, in this machine's cache folder
(`data/cache/`, or `$ROSE_CACHE_DIR`) under a name drawn from the server, port, database, user and schema a live
connection resolved (`local_prefix`). Several app processes on one machine then share the files (each written under
a name of its own, then renamed into place: `write_whole`); on several machines each keeps its own.

An entry is found by a key that names every input of the value: the data's version (a solver's share of
`storage.version.DataVersion`: its rows, the verdicts generation, its runs' import times, which also tell one
database from another made at the same path), the selection (filters, exclusion rules), the dataset, and this code
(`analysis_code_digest()`: the analysis, benchmark and storage sources and the statistics libraries' versions).
Entries are therefore never invalidated, only evicted (least recently used beyond `max_files`); a changed input is a new key.

The files are pickles written by this server process into the data folder, beside the database; like it, they
are trusted as the server's own files (see docs/threat-model.md: someone who can write to `data/` is not
defended against)."""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

MISS = object()
CACHE_ENV = "ROSE_CACHE_DIR"


def local_prefix(store: Any) -> Path:
    """The path prefix of this server's own files about `store`'s data (`<prefix>.analyses/`): the SQLite file
    itself, or `<cache folder>/pg-<digest>` for a PostgreSQL database: the digest of its server, port, database, user and schema as a live connection resolved them
    (`PgStore.identity`; a URL may leave any of them to libpq's PG* variables, a service file or `options`, so its
    text does not tell two databases apart), never its password. Two databases never share a prefix by accident,
    and a database made anew under the same name is told apart by the data versions in every key."""
    if store.path is not None:
        return Path(store.path)
    from ..storage.connection import DEFAULT_DB

    who = store.identity()
    root = Path(os.environ.get(CACHE_ENV) or DEFAULT_DB.parent / "cache")
    return root / f"pg-{hashlib.sha256(who.encode()).hexdigest()[:16]}"


def write_whole(target: Path, write: Callable[[str], None]) -> bool:
    """`write(path)` a file under a name of its own beside `target`, then rename it into place: a reader never
    sees a torn file, and processes sharing the folder never write into each other's. False (nothing left
    behind) when the disk or the folder refuses: that only costs the next restart a computation."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f"{target.name}.part-", dir=target.parent)
        os.close(fd)
        try:
            write(tmp)
            os.replace(tmp, target)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError:
        return False
    return True


@lru_cache(maxsize=1)
def analysis_code_digest() -> str:
    """A digest of what computes the analyses and the response frame they start from: every source file of
    `rose_core/analysis` and of the ROSE benchmark (metrics, records, scoring), the storage layer that reads the
    frame's columns (`storage/`) and the solver labels, and the versions of the libraries the statistics
    come from. A fix to a statistic, or to how the frame is read or labelled, therefore never meets an entry made
    before it."""
    import importlib.metadata as md

    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    files = [root / "common" / "solver_labels.py", root / "common" / "stats.py"]
    for folder in (root / "analysis", root / "benchmarks" / "rose", root / "storage"):
        files += sorted(folder.rglob("*.py"))
    for f in files:
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    for lib in ("numpy", "pandas", "scipy", "statsmodels", "scikit-learn", "krippendorff"):
        try:
            h.update(f"{lib}={md.version(lib)}".encode())
        except md.PackageNotFoundError:
            h.update(f"{lib}=none".encode())
    return h.hexdigest()[:16]


class DiskCache:
    """Values by key in `folder` (one pickle per key, written whole then renamed into place)."""

    def __init__(self, folder: Path | str, max_files: int = 4096):
        self.folder = Path(folder)
        self.max_files = max_files

    def _path(self, key: tuple) -> Path:
        digest = hashlib.sha256(repr((analysis_code_digest(), key)).encode()).hexdigest()
        return self.folder / f"{digest}.pkl"

    def get(self, key: tuple) -> Any:
        """The stored value, or MISS (also for an unreadable file: the caller computes it again)."""
        path = self._path(key)
        try:
            with path.open("rb") as f:
                value = pickle.load(f)
            os.utime(path)  # recently used: evicted last
            return value
        except FileNotFoundError:
            return MISS
        except Exception:  # noqa: BLE001  a torn or foreign file: ignore it, the data is the truth
            return MISS

    def put(self, key: tuple, value: Any) -> None:
        """Store `value`; a full disk or a read-only folder only costs the next restart the computation."""
        def dump(path: str) -> None:
            with open(path, "wb") as f:
                pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)

        if write_whole(self._path(key), dump):
            try:
                self._evict()
            except OSError:   # a file another process evicted first
                return

    def fetch(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """The stored value for `key`, else `compute()`, stored."""
        value = self.get(key)
        if value is MISS:
            value = compute()
            self.put(key, value)
        return value

    def _evict(self) -> None:
        files = list(self.folder.glob("*.pkl"))
        if len(files) <= self.max_files:
            return
        files.sort(key=lambda p: p.stat().st_mtime)
        for p in files[: len(files) - self.max_files * 9 // 10]:
            p.unlink(missing_ok=True)
