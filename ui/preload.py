"""What every experimenter page needs, made ready in the background from the moment the sign-in form is shown:
the statistics libraries imported, the dataset loaded, and once per process the dashboards' warm-up started.

Importing SciPy's statistics, statsmodels and scikit-learn takes about a second of CPU per process, and every
analysis page needs them: imported by the warm-up that signing in starts, they shared the CPU with the first page
opened at sign-in. The sign-in form is shown only to experimenters (participants arrive through a study link and
never import them); the imports read no data and compute nothing.

The same thread keeps the BLAS library numpy uses (OpenBLAS) to one thread: the analyses' matrix products are
small (the bootstrap's 1,000 resamples × a few thousand units), and its worker threads, which spin between
products, took the CPU from the page computing on a 2-core machine (a cold Results page 2.5–2.8 s → 2.3 s).
Results are the same: the products are of integer counts, exact in floating point whatever the summation order.

Loading the dataset (every record parsed, every image's bytes checked against its hash) takes ~1.4 s of a new
process at v0.1; the first page after signing in waited for it, behind the password just sent.

The dashboards' warm-up (`ui.dash.warm_up`: the responses read, the participants' statistics, the default
analyses) starts at the first sign-in form a process shows, not at every one: after a restart the experimenter's
first page no longer waits for it (a new database's Results page computes about a second of analyses), and a
visitor reloading the form can start it once per process at most. It reads into the server's memory only; the
pages stay behind the password."""
from __future__ import annotations

import threading
from typing import Callable

_LOCK = threading.Lock()
_THREAD: threading.Thread | None = None


def _import() -> None:
    import krippendorff  # noqa: F401
    import scipy.stats  # noqa: F401
    import sklearn.metrics  # noqa: F401
    import statsmodels.stats.contingency_tables  # noqa: F401
    import statsmodels.stats.proportion  # noqa: F401
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def statistics_libraries() -> threading.Thread:
    """Start importing them once per process (a daemon thread); later callers get the same thread."""
    global _THREAD
    with _LOCK:
        if _THREAD is None:
            _THREAD = threading.Thread(target=_import, name="rose-import-statistics", daemon=True)
            _THREAD.start()
        return _THREAD


_LOADS: dict[str, threading.Thread] = {}


def dataset_loaded(root: str, load: Callable[[str], object]) -> threading.Thread:
    """Start `load(root)` once per process and dataset folder (a daemon thread; `load` is the cached loader the
    pages call, so they wait for this load or find its result). `root` is resolved by the caller: a thread that
    looked it up later could meet another environment (a test's) and load, or build, another folder."""
    with _LOCK:
        thread = _LOADS.get(root)
        if thread is None:
            thread = _LOADS[root] = threading.Thread(target=_quietly, args=(load, root), name="rose-load-dataset",
                                                     daemon=True)
            thread.start()
        return thread


def _quietly(load: Callable[[str], object], root: str) -> None:
    """A dataset that cannot be loaded is the page's to explain (it loads it again and says why, without a path);
    here it is only logged, never an unhandled exception of a background thread."""
    import logging

    try:
        load(root)
    except Exception:  # noqa: BLE001  logged for the server's terminal; the page reports it to the experimenter
        logging.getLogger("rose_studio").warning("loading the dataset in the background failed", exc_info=True)


_EARLY: threading.Thread | None = None


def dashboards_warmed(db: object, root: str, load: Callable[[str], object]) -> threading.Thread:
    """Start the dashboards' warm-up once per process (a daemon thread), on the store and dataset folder the form
    resolved (`load(root)`: the cached loader `dataset_loaded` runs)."""
    global _EARLY
    with _LOCK:
        if _EARLY is None:
            _EARLY = threading.Thread(target=_warm_quietly, args=(db, root, load), name="rose-warm-up-early",
                                      daemon=True)
            _EARLY.start()
        return _EARLY


def _warm_quietly(db: object, root: str, load: Callable[[str], object]) -> None:
    """A warm-up that cannot start (a database that cannot be read, a dataset that cannot be loaded) is the pages'
    to explain after the sign-in; here it is only logged."""
    import logging

    try:
        from .dash import warm_up_on

        warm_up_on(db, lambda: load(root))
    except Exception:  # noqa: BLE001  logged for the server's terminal; the pages report it to the experimenter
        logging.getLogger("rose_studio").warning("starting the dashboards' warm-up before sign-in failed",
                                                 exc_info=True)
