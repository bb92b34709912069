"""The statistics libraries imported in the background from the moment the experimenter sign-in form is shown.

Importing SciPy's statistics, statsmodels and scikit-learn takes about a second of CPU per process, and every
analysis page needs them: imported by the warm-up that signing in starts, they shared the CPU with the first page
opened at sign-in. The sign-in form is shown only to experimenters (participants arrive through a study link and
never import them); the imports read no data and compute nothing.

The same thread keeps the BLAS library numpy uses (OpenBLAS) to one thread: the analyses' matrix products are
small (the bootstrap's 1,000 resamples × a few thousand units), and its worker threads, which spin between
products, took the CPU from the page computing on a 2-core machine (a cold Results page 2.5–2.8 s → 2.3 s).
Results are the same: the products are of integer counts, exact in floating point whatever the summation order."""
from __future__ import annotations

import threading

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
