"""The command line run in the test's own process: `rose_core.cli.main(argv)` with its output captured.

A real `python -m rose_core` process costs ~1.4 s of CPU in imports alone, and the CLI tests start dozens of them;
in-process they check the same parsing, dispatch, output and exit codes (argparse's usage errors included: its
SystemExit is caught here) at none of that cost. Only where the process boundary itself is the point (the module
entry point's exit code, the console script) does a test start a real process: `run_process`, kept to one smoke
test per command family."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class CliResult:
    """What a finished command left: the fields of subprocess.CompletedProcess the tests read."""
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str, env: dict[str, str] | None = None) -> CliResult:
    """`python -m rose_core ARGS…` in this process: the exit code `__main__` would give, stdout and stderr.

    `env` is set in os.environ for the command's duration only (restored after, as it was). An exception the CLI
    does not turn into an exit code propagates (a subprocess would print it and exit 1): the test fails showing it."""
    from rose_core.cli import main

    out, err = io.StringIO(), io.StringIO()
    before = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:  # argparse's usage errors (2) and --help (0), as `raise SystemExit(main())`
                code = e.code
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if code is None:
        code = 0
    elif not isinstance(code, int):  # SystemExit("message"): Python prints it and exits 1
        err.write(f"{code}\n")
        code = 1
    return CliResult(code, out.getvalue(), err.getvalue())


def run_process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """A real `python -m rose_core ARGS…` process, from the work tree: for the smoke tests of the entry point."""
    return subprocess.run([sys.executable, "-m", "rose_core", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
