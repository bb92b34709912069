# Sourced by run.sh and test.sh: a project virtualenv in .venv with the given requirements installed, and the
# project itself in editable mode (pyproject.toml: the `rose` command beside `python -m rose_core`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
req="$1"
stamp=".venv/.installed-$(basename "$req")"
if [ ! -f "$stamp" ] || [ "$req" -nt "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "_venv.sh: installing $req into .venv (pip; about 1.4 GB the first time)" >&2
  python -m pip install --quiet --disable-pip-version-check -r "$req"
  python -m pip install --quiet --disable-pip-version-check --no-deps -e .
  touch "$stamp"
fi
