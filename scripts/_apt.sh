# Sourced by the scripts that install Debian packages (scripts/_chromium.sh, _haproxy.sh, _latex.sh, _pg.sh).
# apt_install WHY PACKAGE...
#   Says what it installs and why before installing it, then how big once apt knows (the packages apt will add
#   with their dependencies, download and disk), then installs with apt-get, never the recommended extras
#   (--no-install-recommends), as root or through sudo. Needs Debian or Ubuntu.
apt_install() {
  local why="$1"; shift
  local SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$(basename "$0"): needs Debian's $* ($why), and this system has no apt-get: install them yourself" >&2
    return 1
  fi
  echo "$(basename "$0"): installing Debian's $* with apt-get: $why" >&2
  $SUDO apt-get update -qq
  local plan
  plan="$(apt-get install -s --no-install-recommends "$@" 2>/dev/null | awk '/^Inst /{print $2}')"
  if [ -n "$plan" ]; then
    # shellcheck disable=SC2086  # one package name a word
    apt-cache show --no-all-versions $plan 2>/dev/null | awk -v n="$(echo "$plan" | wc -l)" \
      '/^Size:/{d+=$2} /^Installed-Size:/{i+=$2}
       END{printf "  %d packages with their dependencies, ~%.0f MB to download, ~%.0f MB on disk\n", n, d/1e6, i/1e3}' >&2
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
