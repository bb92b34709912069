#!/usr/bin/env bash
# ROSE Studio for a crowd: APPS app processes (default 3) behind HAProxy on the public PORT (default 8501, on
# ADDRESS, default 0.0.0.0), with sticky sessions (a cookie pins each browser to one process), websocket proxying
# and health checks on /_stcore/health. Ctrl-C stops everything this script started.
#
# The database: ROSE_DB when given (a postgresql:// URL, or a SQLite file shared by the processes of this host);
# otherwise a PostgreSQL server under data/pg/ (scripts/_pg.sh, started here and stopped on exit) when this
# checkout has the PostgreSQL backend, else data/rose.db (SQLite: every process on this one host).
# Every process gets the same cookie secret (data/.cookie_secret, or STREAMLIT_SERVER_COOKIE_SECRET) and the same
# experimenter password (docs/running-a-study.md: The experimenter password; generated once here when none is configured).
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" requirements.txt   # also: cd to the project, set -euo pipefail
source scripts/_haproxy.sh
ensure_haproxy
APPS=${APPS:-3}
PORT=${PORT:-8501}
ADDRESS=${ADDRESS:-0.0.0.0}
mkdir -p data

PG_DIR=""
cleanup() {
  if [ -n "$PG_DIR" ]; then pg_stop "$PG_DIR"; echo "run-cluster: stopped PostgreSQL ($PG_DIR)"; fi
}
trap cleanup EXIT

if [ -z "${ROSE_DB:-}" ]; then
  if [ -f scripts/_pg.sh ] && python -c "import rose_core.storage.pg" 2>/dev/null; then
    source scripts/_pg.sh
    PG_DIR="$PWD/data/pg"
    pg_start "$PG_DIR" "${PG_PORT:-$(pg_free_port)}" "max_connections=${PG_MAX_CONNECTIONS:-300}" >/dev/null
    export ROSE_DB="$ROSE_PG_URL"
    echo "run-cluster: PostgreSQL in $PG_DIR at $ROSE_DB"
  else
    export ROSE_DB="$PWD/data/rose.db"
    echo "run-cluster: SQLite at $ROSE_DB (this checkout has no PostgreSQL backend: every app process must run on this host)"
  fi
fi

# One cookie secret, kept like the generated password (mode 600), given to the processes by environment.
if [ -z "${STREAMLIT_SERVER_COOKIE_SECRET:-}" ]; then
  if [ ! -s data/.cookie_secret ]; then
    (umask 077 && python -c 'import secrets; print(secrets.token_hex(32))' > data/.cookie_secret.tmp \
      && mv data/.cookie_secret.tmp data/.cookie_secret)
  fi
  STREAMLIT_SERVER_COOKIE_SECRET="$(cat data/.cookie_secret)"
  export STREAMLIT_SERVER_COOKIE_SECRET
fi

# The experimenter password: configured (secrets.toml, ROSE_EXPERIMENTER_PASSWORD), or generated once now (printed
# here) into the file every process reads, before any of them starts.
if [ -z "${ROSE_EXPERIMENTER_PASSWORD:-}" ] && ! grep -qs '^ *experimenter_password' .streamlit/secrets.toml; then
  python -c 'from rose_core.instrument.auth import password_file, stored_or_generated; stored_or_generated(password_file())'
fi

# The dataset, built once before the processes start (they would wait on one another's build otherwise).
source scripts/_dataset.sh
ensure_dataset_built

# Whose X-Forwarded-For is believed is the app's decision (ROSE_TRUSTED_PROXIES, default here: this host's HAProxy).
export FORWARDED_ALLOW_IPS=""
python -m tools.cluster --apps "$APPS" --port "$PORT" --address "$ADDRESS" --folder data/cluster \
  ${APP_PORT_BASE:+--app-port-base "$APP_PORT_BASE"}
