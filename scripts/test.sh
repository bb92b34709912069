#!/usr/bin/env bash
# Set up (.venv + requirements-dev.txt + Debian's chromium for the browser tests) and run the whole test suite.
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" requirements-dev.txt
if [ ! -x /usr/bin/chromium ]; then
  # Browser tests drive Debian's Chromium through Playwright; no test tool downloads a browser of its own.
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
exec python -m pytest -q "$@"
