# Sourced by run.sh and test.sh: a project virtualenv in .venv with the given requirements installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
req="$1"
stamp=".venv/.installed-$(basename "$req")"
if [ ! -f "$stamp" ] || [ "$req" -nt "$stamp" ] || [ requirements.txt -nt "$stamp" ]; then
  python -m pip install --quiet --disable-pip-version-check -r "$req"
  touch "$stamp"
fi
