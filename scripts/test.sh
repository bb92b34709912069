#!/usr/bin/env bash
# Set up and run the tests, by tier (pytest markers, pytest.ini; tests/conftest.py classifies every test).
#   bash scripts/test.sh          every tier (what CI runs, .ci/run). Sets up .venv + requirements-dev.txt, and
#                                 installs with apt-get when missing, saying what and how big first: Debian's chromium
#                                 (the browser tests), haproxy (the cluster test), pdflatex
#                                 (the paper bundle's LaTeX); starts a throwaway PostgreSQL server, Debian's postgresql
#                                 (the PostgreSQL variant of every backend-parametrized test).
#   bash scripts/test.sh --fast   the tests that need none of those (no browser, no PostgreSQL, no HAProxy, no LaTeX)
#                                 and are not `slow`: .venv + requirements-dev.txt only, nothing installed with apt;
#                                 one pytest worker per core (pytest-xdist; ROSE_TEST_WORKERS=N sets how many, 0 none),
#                                 each test file on one worker (--dist loadfile).
# Other arguments go to pytest (`-k name`, a test's path or node id, `-x`); the 25 slowest tests are listed.
#   bash scripts/test.sh --help   this text (pytest's own: .venv/bin/python -m pytest --help)
# ROSE_TEST_PG_URL=postgresql://… uses a server you started instead; ROSE_TEST_PG=0 starts none (the PostgreSQL
# tests are then skipped, and the run says so). Bytecode is cached in ~/.cache/rose-studio/pycache
# (PYTHONPYCACHEPREFIX; one set beforehand is kept), even where PYTHONDONTWRITEBYTECODE is set.
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"   # this header, before anything is installed
  exit 0
fi
fast=0
args=()
for a in "$@"; do
  if [ "$a" = "--fast" ]; then fast=1; else args+=("$a"); fi
done
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" requirements-dev.txt
if [ "$fast" = 1 ]; then
  # A test the fast tier reaches that needs Chromium, HAProxy or PostgreSQL fails, naming the mark it lacks.
  export ROSE_TEST_TIER=fast
  args=(-m "not (browser or postgres or cluster or latex or slow)" "${args[@]}")
  workers="${ROSE_TEST_WORKERS:-auto}"
  # A file's tests on one worker: what a module builds once (its fixtures, the layer check's parsed sources, the
  # libraries only its tests import) is built once per run, not once on each worker its tests were spread over.
  if [ "$workers" != "0" ]; then args=(-n "$workers" --dist loadfile "${args[@]}"); fi
else
  source "$(dirname "${BASH_SOURCE[0]}")/_chromium.sh"
  source "$(dirname "${BASH_SOURCE[0]}")/_haproxy.sh"
  source "$(dirname "${BASH_SOURCE[0]}")/_latex.sh"
  ensure_chromium
  ensure_haproxy
  ensure_latex
fi
if [ "$fast" = 0 ] && [ "${ROSE_TEST_PG:-1}" != "0" ]; then
  source "$(dirname "${BASH_SOURCE[0]}")/_pg.sh"
  if [ -z "${ROSE_TEST_PG_URL:-}" ]; then
    pg_dir="$(mktemp -d /tmp/rose-test-pg.XXXXXX)"
    chmod 755 "$pg_dir"
    trap 'pg_stop "$pg_dir"; rm -rf "$pg_dir"' EXIT
    # A test server: durability off (its data is thrown away), so creating a database per test is fast.
    pg_start "$pg_dir" "$(pg_free_port)" fsync=off synchronous_commit=off full_page_writes=off >/dev/null
    export ROSE_TEST_PG_URL="$ROSE_PG_URL"
  fi
  export ROSE_TEST_PG_REQUIRED=1   # from here on a missing server fails the PostgreSQL tests, never skips them
fi
# Bytecode is cached, outside the work tree: with PYTHONDONTWRITEBYTECODE set (some machines set it for everyone)
# every pytest worker recompiled the project and re-rewrote the assertions of every test module on every run, about
# half of the 13 s of CPU each worker spent collecting the tests. PYTHONPYCACHEPREFIX set beforehand is kept.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/rose-studio/pycache}"
rc=0
python -m pytest -q --durations=25 "${args[@]}" || rc=$?
if [ "$rc" = 5 ]; then
  # pytest's "no tests collected": a selection that matches nothing is a failure here, never a quiet pass
  echo "test.sh: no test ran (pytest exit 5): the selection matched nothing$([ "$fast" = 1 ] && echo " (--fast leaves \
out tests/e2e and the browser, postgres, cluster, latex and slow tiers)")" >&2
  exit 1
fi
exit "$rc"
