#!/usr/bin/env bash
# Set up (.venv + requirements.txt) and start ROSE Studio on http://localhost:${PORT:-8501}.
# The default dataset (data/datasets/rose-v0.1, or ROSE_DATASET_DIR) is built first, with a progress bar here.
# Needs no browser: the paper bundle's figures are drawn by Matplotlib (Chromium is for the browser tests only).
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" requirements.txt
# Whose X-Forwarded-For is believed is the app's decision (ROSE_TRUSTED_PROXIES; docs/running-a-study.md: The experimenter
# password): the app server's own rule, which trusts the header from any loopback peer, is switched off.
export FORWARDED_ALLOW_IPS=""
source "$(dirname "${BASH_SOURCE[0]}")/_dataset.sh"
ensure_dataset_built
exec streamlit run app.py --server.port "${PORT:-8501}" --server.address "${ADDRESS:-0.0.0.0}" "$@"
