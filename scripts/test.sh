#!/usr/bin/env bash
# Set up (.venv + requirements-dev.txt + Debian's chromium for the browser tests and pdflatex for the paper
# bundle's LaTeX) and run the whole test suite.
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" requirements-dev.txt
source "$(dirname "${BASH_SOURCE[0]}")/_chromium.sh"
ensure_chromium
source "$(dirname "${BASH_SOURCE[0]}")/_latex.sh"
ensure_latex
exec python -m pytest -q "$@"
