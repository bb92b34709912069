#!/usr/bin/env bash
# Set up (.venv + requirements-dev.txt + Debian's chromium and haproxy for the browser and cluster tests, pdflatex
# for the paper bundle's LaTeX, and a throwaway PostgreSQL server, Debian's postgresql, for the tests that run on
# both storage backends) and run the whole test suite.
# ROSE_TEST_PG_URL=postgresql://… uses a server you started instead; ROSE_TEST_PG=0 starts none (the PostgreSQL
# tests are then skipped, and the run says so).
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" requirements-dev.txt
source "$(dirname "${BASH_SOURCE[0]}")/_chromium.sh"
source "$(dirname "${BASH_SOURCE[0]}")/_haproxy.sh"
source "$(dirname "${BASH_SOURCE[0]}")/_pg.sh"
source "$(dirname "${BASH_SOURCE[0]}")/_latex.sh"
ensure_chromium
ensure_haproxy
ensure_latex
if [ "${ROSE_TEST_PG:-1}" != "0" ]; then
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
python -m pytest -q "$@"
