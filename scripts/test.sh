#!/usr/bin/env bash
# Set up (.venv + requirements-dev.txt) and run the whole test suite.
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" requirements-dev.txt
exec python -m pytest -q "$@"
