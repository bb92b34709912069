"""Shared fixtures: one small dataset per test session, built by the real build path; the storage backends; the
test tiers.

`backend` is "sqlite" or "postgresql" (session-scoped and parametrized, so a test that asks for `store`,
`make_store` or `populated_db` runs once on each, and all of its stores are on the same one). tests/app and
tests/e2e pin it to SQLite in their own conftest.py. PostgreSQL needs ROSE_TEST_PG_URL (scripts/test.sh starts
a throwaway server and sets it, with ROSE_TEST_PG_REQUIRED=1: then a missing URL fails every PostgreSQL test
instead of skipping it).

Tiers (markers, registered in pytest.ini; `scripts/test.sh --fast` leaves out all five, the default runs them all).
A test is classified here from what it uses, so a new one needs no mark of its own:
  browser   it lives in tests/e2e (the real Streamlit server, Chromium through Playwright), or uses a fixture of
            BROWSER_FIXTURES (`chromium`: the system Chromium that Playwright drives)
  postgres  it uses `pg_server`, or runs with a parameter "postgresql" (the `backend` parametrization's
            PostgreSQL variant, or a fixture of its own that picks the backend by parameter)
  cluster   it uses `haproxy` (HAProxy in front of app processes, tools/cluster.py)
  latex     marked by hand: it compiles LaTeX with a TeX engine (pdflatex)
  slow      marked by hand: it takes more than ~10 s alone on a quiet machine
Under `--fast` (ROSE_TEST_TIER=fast) reaching PostgreSQL, Chromium or HAProxy fails the test, naming the marker
it lacks, instead of silently needing what the fast tier does not install.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest
from hypothesis import settings

from .backends import BACKENDS, PG_MISSING, PG_REQUIRED_ENV, PG_URL_ENV, PgServer

if TYPE_CHECKING:   # the project is imported where a fixture needs it: pytest-xdist's controller runs no test
    from rose_core import Dataset
    from rose_core.storage.connection import Store

SMALL_SCALE = 0.05

# Property tests draw the same examples on every run and every worker (a seed from each test's own source), and keep
# no example database in the work tree: a run's verdict never depends on an earlier run or on luck.
settings.register_profile("rose", derandomize=True, database=None)
settings.load_profile("rose")

TIERS = ("browser", "postgres", "cluster", "latex", "slow")
BROWSER_FIXTURES = {"chromium", "browser", "page", "server", "live"}
E2E = Path(__file__).resolve().parent / "e2e"
TIER_ENV = "ROSE_TEST_TIER"


def pytest_collection_modifyitems(config, items) -> None:
    """Each test's tiers, from the fixtures it uses, its parameters and its folder (module docstring)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        params = getattr(getattr(item, "callspec", None), "params", {})
        if E2E in Path(item.path).parents or names & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if "pg_server" in names or any(isinstance(v, str) and v == "postgresql" for v in params.values()):
            item.add_marker(pytest.mark.postgres)
        if "haproxy" in names:
            item.add_marker(pytest.mark.cluster)


# Python's cyclic garbage collector, as the tests run: every collection of the oldest generation walked every object
# the process held (the imported libraries, the collected tests, the layer check's parsed sources), and the youngest
# one ran every 700 new container objects (pandas and the AST walks make them by the million). Measured on
# tests/rose_core/analysis and tests/test_layers.py (365 tests, one process): 4.2 s of 59 s of CPU in 3,468
# collections; with what exists after collection frozen out of them (`gc.freeze`) and collections every 7,000,
# 1.6 s in 580. Only when garbage is collected changes: no object a test can still reach is ever freed.
GC_THRESHOLD = (7000, 10, 10)


def pytest_collection_finish(session) -> None:
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


def pytest_ignore_collect(collection_path, config):
    """The fast tier does not even import tests/e2e (every test there is `browser`): ~1 s of imports per process."""
    if os.environ.get(TIER_ENV) == "fast" and collection_path == E2E:
        return True
    return None


def not_in_fast_tier(what: str, marker: str) -> None:
    """The fast tier promised not to need `what`: a test that reaches it is misclassified, and fails saying so."""
    if os.environ.get(TIER_ENV) == "fast":
        pytest.fail(f"this test needs {what}, which the fast tier (scripts/test.sh --fast) does not have: mark it "
                    f"`@pytest.mark.{marker}`, or use the fixture that classifies it (tests/conftest.py)", pytrace=False)


@pytest.fixture(scope="session")
def chromium() -> str:
    """The system Chromium (Debian's; scripts/test.sh installs it), which Playwright drives."""
    from tools.serve import CHROMIUM

    not_in_fast_tier("Chromium", "browser")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (scripts/test.sh does)", pytrace=False)
    return CHROMIUM


@pytest.fixture(scope="session")
def haproxy() -> str:
    """Debian's HAProxy (scripts/test.sh installs it), for tools/cluster.py."""
    from tools.cluster import HAPROXY

    not_in_fast_tier("HAProxy", "cluster")
    if not Path(HAPROXY).exists():
        pytest.fail(f"{HAPROXY} is missing: install Debian's haproxy package (scripts/test.sh does)", pytrace=False)
    return HAPROXY


@pytest.fixture(scope="session", autouse=True)
def cache_folder(tmp_path_factory) -> Iterator[str]:
    """The dashboards' files about a PostgreSQL database go to a folder of the session's (never the work tree's
    data/cache); the servers the tests start inherit it."""
    from rose_core.analysis.persist import CACHE_ENV

    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(tmp_path_factory.mktemp("cache"))
    yield os.environ[CACHE_ENV]
    if before is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = before


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    not_in_fast_tier("a PostgreSQL server", "postgres")
    url = os.environ.get(PG_URL_ENV)
    if not url:
        if os.environ.get(PG_REQUIRED_ENV) or os.environ.get("CI"):
            pytest.fail(f"{PG_URL_ENV} is not set, but the PostgreSQL tests are required here "
                        f"({PG_REQUIRED_ENV} or CI is set): scripts/test.sh should have started a server", pytrace=False)
        pytest.skip(PG_MISSING)
    server = PgServer(url)
    yield server
    server.close()


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request) -> str:
    if request.param == "postgresql":
        request.getfixturevalue("pg_server")
    return request.param


@pytest.fixture
def fresh_location(backend, tmp_path, request) -> Iterator[Callable[[], str]]:
    """Locations of fresh, empty, migrated databases on the test's backend (a new file, or a new database on the
    test server), for code that opens the store itself (the CLI, a copy); databases dropped after the test."""
    server: list[PgServer] = []
    n = iter(range(1_000_000))

    def location() -> str:
        if backend == "sqlite":
            return str(tmp_path / f"rose{next(n) or ''}.db")
        if not server:
            server.append(request.getfixturevalue("pg_server"))
        return server[0].fresh()

    yield location
    for name in list(server[0].made) if server else []:
        if not name.endswith("_populated"):
            server[0].drop(name)


@pytest.fixture
def make_store(fresh_location) -> Iterator[Callable[[], Store]]:
    """Fresh stores on the test's backend, closed after the test (before their databases are dropped)."""
    from rose_core.storage import open_store

    made: list[Store] = []

    def make() -> Store:
        made.append(open_store(fresh_location()))
        return made[-1]

    yield make
    for s in made:
        s.close()


@pytest.fixture
def store(make_store) -> Store:
    return make_store()


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """How many tests ran on each backend, and a loud line when the PostgreSQL ones were skipped."""
    per: dict[str, int] = {}
    for rep in terminalreporter.stats.get("passed", []):
        m = re.search(r"\[(?:.*-)?(sqlite|postgresql)(?:-.*)?\]", rep.nodeid)
        if m:
            per[m.group(1)] = per.get(m.group(1), 0) + 1
    if per:
        terminalreporter.write_line("passed per storage backend: " + ", ".join(f"{k} {v}" for k, v in sorted(per.items())))
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if PG_URL_ENV in str(getattr(r, "longrepr", ""))]
    if skipped:
        terminalreporter.write_line(f"WARNING: {len(skipped)} tests skipped: {PG_MISSING}", red=True, bold=True)


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `build` once per test run: under pytest-xdist by whichever worker gets there
    first while the others wait on a lock, then read by all (each worker used to build its own: the same
    deterministic bytes, CPU spent twice). `build` fills a temporary folder renamed into place when it returns, so
    a failed build leaves nothing a later caller would take for done."""
    import fcntl
    import shutil
    import tempfile

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    done = shared / f"built-{name}"
    with open(shared / f"built-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_dir():
            tmp = Path(tempfile.mkdtemp(prefix=f".built-{name}-", dir=shared))
            try:
                build(tmp)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            tmp.rename(done)
    return done


@pytest.fixture(scope="session")
def small_dataset(tmp_path_factory) -> Dataset:
    """The small dataset (seed 7, scale SMALL_SCALE), built once per test run (`built_once`): tests read it and
    copy it before changing anything."""
    from rose_core import Dataset, build_dataset

    return Dataset.load(built_once(tmp_path_factory, "small-dataset",
                                   lambda tmp: build_dataset(tmp / "small", seed=7, scale=SMALL_SCALE)) / "small")


@pytest.fixture(scope="session")
def agent_runs(small_dataset, tmp_path_factory) -> Path:
    """A folder of every reference agent's run over the small dataset (`NAME.jsonl`, run_agent's defaults),
    written once per test run: the pixel agent reads every image, and the populated database and the agents' own
    tests used to run it each per worker."""
    return _agent_runs(small_dataset, tmp_path_factory)


def _agent_runs(small_dataset, tmp_path_factory) -> Path:
    from rose_core.benchmarks.rose.agents import AGENTS, run_agent

    def build(tmp: Path) -> None:
        for name in AGENTS:
            run_agent(name, small_dataset, tmp / f"{name}.jsonl")

    return built_once(tmp_path_factory, "small-agent-runs", build)


@pytest.fixture(scope="session")
def populated_stores(small_dataset, tmp_path_factory, request) -> Iterator[Callable[[str], Store]]:
    """The populated database of each storage backend, built once per backend and session.

    Keyed by the backend's name on purpose: tests/app and tests/e2e override `backend` with a fixture of their own,
    and a session fixture that depended on `backend` directly was built once under the first override it met and
    then handed to the other backend's tests too (a SQLite store to a [postgresql] test)."""
    stores: dict[str, Store] = {}

    def get(backend: str) -> Store:
        if backend not in stores:
            stores[backend] = _populate(small_dataset, backend, tmp_path_factory, request)
        return stores[backend]

    yield get
    for store in stores.values():
        store.close()


@pytest.fixture(scope="module")
def populated_db(populated_stores, backend) -> Store:
    """A database filled through the real paths, deterministically (sequential ids, a fake server clock): a
    study with eight participants who answer through ParticipantSession (one fails the attention check, one
    answers in a streak, one is too fast), plus three reference agents imported as runs. Shared by every test
    on the same backend: tests that change it work on a copy (backends.clone)."""
    return populated_stores(backend)


def _populate(small_dataset, backend: str, tmp_path_factory, request) -> Store:
    """On SQLite the database is filled once per test run (`built_once`: deterministic, so every worker's would be
    the same bytes) and each worker opens a copy of its own; on PostgreSQL each worker fills its own database."""
    import shutil

    from rose_core.storage import open_store

    runs = _agent_runs(small_dataset, tmp_path_factory)
    if backend != "sqlite":
        return _fill(small_dataset, open_store(request.getfixturevalue("pg_server").fresh("_populated")), runs)

    def build(tmp: Path) -> None:
        _fill(small_dataset, open_store(tmp / "rose.db"), runs).close()

    built = built_once(tmp_path_factory, "populated-sqlite", build)
    root = tmp_path_factory.mktemp("populated")
    shutil.copyfile(built / "rose.db", root / "rose.db")
    return open_store(root / "rose.db")


def _fill(small_dataset, store: Store, runs: Path) -> Store:
    import random as _random

    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.config import ItemSample
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study
    from rose_core.instrument.screens import End
    from rose_core.runs.importer import import_run

    from .participants import new_session, submit_payload

    ds = small_dataset
    ids, clock = SequentialIds("pop"), FakeClock()
    study = create_study(store, ds, StudyConfig(
        name="pilot", split="all", templates=["T1", "T2", "T3", "T4", "T5", "G-Clk", "mL-Cnt"],
        items_per_participant=60, target_per_instance=3, practice_items=0, attention_every=20,
        same_scene_multiple_templates=True, seed=2,
        # a designed sample (35 cells × 5), so the eight participants give items several raters, as a pilot does
        sample=ItemSample(per_cell=5, seed=2, scenes="shared")), ids=ids, clock=clock)
    rng = _random.Random(4)
    for k in range(8):
        session = new_session(store, ds, study, f"H{k}", ids=ids, clock=clock)
        while not isinstance(screen := session.screen(), End):
            key = screen.item.key
            right = k != 1 if screen.kind == "attention" else rng.random() < 0.9
            if k == 2:  # always the same answer: a streak
                cells, count = [], 0
            elif right:
                cells, count = sorted(key.gold_cells), key.gold_count
            else:
                cells, count = [(1, 1), (2, 2)], key.gold_count + 1
            clock.advance(0.5 if k == 3 else rng.uniform(2.5, 9.0))  # server time: assigned -> answered
            session.submit(screen, submit_payload(screen, cells if screen.item.mode != "count" else [],
                                                  count if screen.item.mode != "click" else None))
    for name in ("oracle", "region-ignoring", "pixel"):
        import_run(store, ds, runs / f"{name}.jsonl", name, kind="agent")
    store.checkpoint()  # tests copy the file: put everything in it
    return store


@pytest.fixture(scope="session")
def sgp_small(tmp_path_factory):
    """A small real SGP build (2–3 geoms × c1 2–3 × 3 episodes = 12), on disk for the app to serve; built once per
    test run (`built_once`), read only."""
    from rose_core.benchmarks.sgp.dataset import SgpDataset, build_sgp_dataset
    from rose_core.benchmarks.sgp.generate import BuildParams

    root = built_once(tmp_path_factory, "sgp-small", lambda tmp: build_sgp_dataset(
        tmp / "small", BuildParams(seed=1, geoms=(2, 3), c1=(2, 3), per_cell=3), workers=1))
    return SgpDataset.load(root / "small")
