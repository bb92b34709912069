#!/usr/bin/env bash
# Set up (.venv + requirements.txt) and start ROSE Studio on http://localhost:${PORT:-8501}.
# The default dataset (data/datasets/rose-v0.1, or ROSE_DATASET_DIR) is built first, with a progress bar here.
# Installs Debian's chromium with apt-get when missing (root or sudo; it says what and how big first), for the
# paper bundle's figures.
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" requirements.txt
# The paper bundle (`report --out`, the Results page's download) renders its figures in the system Chromium.
source "$(dirname "${BASH_SOURCE[0]}")/_chromium.sh"
ensure_chromium || echo "warning: could not install chromium: the paper bundle will have no figures" >&2
# Whose X-Forwarded-For is believed is the app's decision (ROSE_TRUSTED_PROXIES; docs/running-a-study.md: The experimenter
# password): the app server's own rule, which trusts the header from any loopback peer, is switched off.
export FORWARDED_ALLOW_IPS=""
source "$(dirname "${BASH_SOURCE[0]}")/_dataset.sh"
ensure_dataset_built
exec streamlit run app.py --server.port "${PORT:-8501}" --server.address "${ADDRESS:-0.0.0.0}" "$@"
