# Sourced: a throwaway PostgreSQL server on a loopback port, for the tests (scripts/test.sh), the cluster script
# and benchmarks. Debian's `postgresql` is installed with apt-get when no server binaries are found (root or sudo).
#
# Functions (names and arguments are stable; other scripts rely on them):
#   pg_start DIR PORT [NAME=VALUE ...]
#       Start a server whose data, log and pid live in DIR (created; initialised on first use), listening on
#       127.0.0.1:PORT only (no Unix socket), trust authentication for the loopback address, superuser `rose`,
#       database `rose`. Extra NAME=VALUE pairs are server settings (`fsync=off`, `max_connections=300`; the
#       default max_connections is 200). Exports ROSE_PG_URL=postgresql://rose@127.0.0.1:PORT/rose and prints it.
#       Already running: reuses it (on the port it was started with).
#       Run as root, the server runs as the `postgres` system user (PostgreSQL refuses to run as root) and DIR
#       is handed to that user.
#   pg_stop DIR
#       Stop the server of DIR (fast shutdown: open sessions are ended). Nothing running: does nothing.
#   pg_free_port
#       Print a TCP port free on 127.0.0.1 now.
#   pg_ensure_installed
#       Install Debian's postgresql when initdb/pg_ctl are missing (scripts/_apt.sh: --no-install-recommends, and it
#       says what and how big first; 25 packages, ~73 MB to download, ~310 MB on disk on a bare Debian 12).
#
# Not for production data: trust authentication means anyone on this machine can connect to the port.

_pg_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return 0
  fi
  return 1
}

source "$(dirname "${BASH_SOURCE[0]}")/_apt.sh"

pg_ensure_installed() {
  if _pg_bindir >/dev/null; then return 0; fi
  apt_install "a PostgreSQL server (run as a throwaway server of this script's, never Debian's service); \
~73 MB to download, ~310 MB on disk" postgresql
  _pg_bindir >/dev/null || { echo "_pg.sh: postgresql installed but initdb/pg_ctl not found" >&2; return 1; }
}

# Run a server binary as the user that owns the data: `postgres` when we are root, else ourselves.
_pg_as() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

pg_start() {
  local dir="${1:?pg_start DIR PORT [NAME=VALUE ...]}" port="${2:?pg_start DIR PORT [NAME=VALUE ...]}"
  shift 2
  pg_ensure_installed || return 1
  local bin; bin="$(_pg_bindir)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "_pg.sh: no 'postgres' system user to run the server as" >&2; return 1; }
    chown postgres: "$dir"
    # The server user must be able to reach DIR (a folder under /root or a 700 tmp dir is not reachable).
    _pg_as test -x "$dir" || { echo "_pg.sh: user postgres cannot reach $dir; use a folder it can (e.g. under /tmp)" >&2; return 1; }
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    _pg_as "$bin/initdb" -D "$dir/data" -U rose --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; return 1; }
  fi
  if _pg_as "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    port="$(cat "$dir/port")"  # already running: on the port it was started with
    export ROSE_PG_URL="postgresql://rose@127.0.0.1:$port/rose"; echo "$ROSE_PG_URL"; return 0
  fi
  local opts="-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories= -c max_connections=200"
  local kv
  for kv in "$@"; do opts="$opts -c $kv"; done
  _pg_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w -t 60 start >/dev/null \
    || { echo "_pg.sh: the server did not start (port $port taken?); its log:" >&2; tail -20 "$dir/server.log" >&2; return 1; }
  echo "$port" >"$dir/port"
  local have
  have="$("$bin/psql" -h 127.0.0.1 -p "$port" -U rose -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'rose'")"
  if [ "$have" != "1" ]; then
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U rose rose || return 1
  fi
  export ROSE_PG_URL="postgresql://rose@127.0.0.1:$port/rose"
  echo "$ROSE_PG_URL"
}

pg_stop() {
  local dir="${1:?pg_stop DIR}"
  local bin; bin="$(_pg_bindir)" || return 0
  [ -f "$dir/data/postmaster.pid" ] || return 0
  _pg_as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}
