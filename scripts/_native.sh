# Sourced by run.sh, run-cluster.sh and test.sh: the parser and scorer compiled with mypyc (rose_core/native.py;
# same verdicts, ~1.5x faster, rebuilt only when their sources changed; needs gcc and the Python headers).
# ensure_native            build, or warn that the plain modules will be used
# ensure_native --required build, or fail
# ROSE_NATIVE=0 skips it (the plain modules are used).
ensure_native() {
  if [ "${ROSE_NATIVE:-1}" = "0" ]; then return 0; fi
  if python -m rose_core build-native; then return 0; fi
  if [ "${1:-}" = "--required" ]; then return 1; fi
  echo "warning: the scorer runs as plain Python (slower, same verdicts)" >&2
}
