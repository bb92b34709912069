#!/usr/bin/env bash
# Set up (.venv + requirements-dev.txt + Debian's chromium and haproxy for the browser and cluster tests) and run
# the whole test suite.
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" requirements-dev.txt
source "$(dirname "${BASH_SOURCE[0]}")/_chromium.sh"
source "$(dirname "${BASH_SOURCE[0]}")/_haproxy.sh"
ensure_chromium
ensure_haproxy
exec python -m pytest -q "$@"
