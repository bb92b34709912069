"""The statistics libraries imported in the background at the experimenter sign-in form (ui/preload.py)."""
import sys

from threadpoolctl import threadpool_info

from ui.preload import statistics_libraries


def test_the_imports_finish_and_keep_blas_to_one_thread():
    thread = statistics_libraries()
    assert statistics_libraries() is thread          # one import per process
    thread.join(120)
    assert not thread.is_alive()
    for name in ("scipy.stats", "statsmodels.stats.proportion", "sklearn.metrics", "krippendorff"):
        assert name in sys.modules
    blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
    assert blas and all(i["num_threads"] == 1 for i in blas)
