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


def test_the_sign_in_form_loads_the_dataset_in_the_background(app_env, monkeypatch):
    """The form starts loading the dataset the pages use (the folder resolved when the form is shown), so the first
    page after signing in finds it loaded instead of waiting for it."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import ui.preload as preload
    import ui.resources as resources

    from .conftest import ROOT

    monkeypatch.setattr(preload, "_LOADS", {})       # this process may have loaded it for an earlier test
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception and at.text_input(key="auth_given")        # the form, not yet signed in
    loading = preload._LOADS.get(str(app_env.root))
    assert loading is not None, f"the form started no load of {app_env.root} (started: {list(preload._LOADS)})"
    loading.join(60)
    assert not loading.is_alive()

    def not_again(root):
        raise AssertionError(f"{root} loaded a second time")

    monkeypatch.setattr(resources.Dataset, "load", staticmethod(not_again))
    assert resources.load_dataset(str(app_env.root)).dataset_hash == app_env.dataset_hash   # the loaded one


def test_the_first_sign_in_form_of_a_process_starts_the_dashboards_warm_up(app_env, monkeypatch):
    """Once per process, the form starts the warm-up signing in would start (`ui.dash.warm_up`), on the form's store
    and dataset: the experimenter's first page after a restart does not wait for it. Signing in then finds that
    warm-up (one per data version, not a second); a second form starts none."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import ui.dash as dash
    import ui.preload as preload
    from ui.resources import store

    from .conftest import ROOT

    monkeypatch.setattr(preload, "_EARLY", None)      # this process may have shown a form for an earlier test
    st.cache_resource.clear()
    started, real = [], dash._warm
    monkeypatch.setattr(dash, "_warm", lambda w, db, generation: (started.append(db.location), real(w, db, generation)))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception and at.text_input(key="auth_given")        # the form, nobody signed in
    early = preload._EARLY
    assert early is not None and early.name == "rose-warm-up-early"
    early.join(60)
    assert not early.is_alive() and started == [store().location]
    assert dash.warm_up().wait(120)                   # what signing in calls: the same warm-up, done
    assert started == [store().location]
    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not again.exception and preload._EARLY is early and started == [store().location]


def test_the_end_of_a_test_waits_for_the_warm_up_the_early_one_starts_meanwhile():
    """The sign-in form's early warm-up starts the warm-up thread itself, once it has read the data version: a test
    that ends before it did (a form shown last) must still wait for that thread, or it runs on into the next test
    (tests/app/conftest.py: `finish_background_work`)."""
    import threading
    import time

    from .conftest import finish_background_work

    finished = threading.Event()

    def warm() -> None:
        time.sleep(0.3)
        finished.set()

    def early() -> None:
        time.sleep(0.2)                                      # the data version read first
        threading.Thread(target=warm, name="rose-dashboard-warm-up", daemon=True).start()

    threading.Thread(target=early, name="rose-warm-up-early", daemon=True).start()
    finish_background_work()
    assert finished.is_set()


def _page_text(at) -> str:
    return " ".join(str(getattr(e, "value", "")) for kind in ("title", "markdown", "error", "caption", "warning",
                                                              "exception", "text") for e in at.get(kind))


def test_an_early_warm_up_that_cannot_start_is_logged_and_the_form_still_signs_in(app_env, monkeypatch, caplog):
    """Shown to anyone, the form's early warm-up on a dataset that cannot be loaded (here: refused, naming its
    path) puts no traceback and no path on the page: it goes to the server's log, and signing in still works."""
    import logging

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import ui.preload as preload
    import ui.resources as resources

    from .conftest import PASSWORD, ROOT

    secret = "/srv/secret/place/manifest.json"

    def damaged(root):
        raise ValueError(f"the dataset at {secret} is damaged")

    monkeypatch.setattr(preload, "_EARLY", None)
    monkeypatch.setattr(preload, "_LOADS", {})
    monkeypatch.setattr(resources.Dataset, "load", staticmethod(damaged))
    st.cache_resource.clear()
    with caplog.at_level(logging.WARNING, logger="rose_studio"):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
        assert not at.exception and at.text_input(key="auth_given")
        preload._EARLY.join(60)
        assert not preload._EARLY.is_alive()
    assert secret not in _page_text(at) and "Traceback" not in _page_text(at)
    assert any("warm-up before sign-in failed" in r.getMessage() and r.exc_info for r in caplog.records)
    at.text_input(key="auth_given").input(PASSWORD)
    at.button[0].click()
    at.run()
    assert at.session_state["auth_experimenter"] is True
    assert secret not in _page_text(at) and "Traceback" not in _page_text(at)


def test_a_database_that_cannot_be_opened_starts_no_early_warm_up_and_shows_no_path(app_env, monkeypatch, tmp_path):
    """A database the server cannot open (here: a folder) leaves the form up without a path or a traceback, and no
    warm-up thread: each visit tries the store again, none starts work behind it."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import ui.preload as preload

    from .conftest import ROOT

    folder = tmp_path / "not-a-database-file"
    folder.mkdir()
    monkeypatch.setenv("ROSE_DB", str(folder))
    monkeypatch.setattr(preload, "_EARLY", None)
    st.cache_resource.clear()
    for _ in range(2):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
        assert not at.exception and at.text_input(key="auth_given")
        assert str(folder) not in _page_text(at) and "Traceback" not in _page_text(at)
    assert preload._EARLY is None
