"""The project as a package and its lint: `pip install -e .` gives the `rose` command, and ruff's checks pass."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _console_scripts() -> dict[str, str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def test_the_rose_command_points_at_the_cli():
    module, _, name = _console_scripts()["rose"].partition(":")
    assert getattr(importlib.import_module(module), name) is importlib.import_module("rose_core.cli").main


def test_the_installed_rose_command_is_python_m_rose_core():
    """scripts/_venv.sh installs the project; CI must have the command (a missing install fails there)."""
    rose = Path(sys.executable).parent / "rose"
    if not rose.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{rose} is missing: scripts/_venv.sh should have run `pip install -e .`")
        pytest.skip("the project is not installed in this environment (scripts/_venv.sh installs it)")
    env = {**os.environ, "COLUMNS": "100"}
    by_command = subprocess.run([str(rose), "--help"], capture_output=True, text=True, env=env, cwd=ROOT)
    by_module = subprocess.run([sys.executable, "-m", "rose_core", "--help"], capture_output=True, text=True,
                               env=env, cwd=ROOT)
    assert by_command.returncode == 0, by_command.stderr
    assert by_command.stdout.startswith("usage: rose ")
    # the usage block names the command as it was run (and wraps by its length); the rest is the same text
    assert by_command.stdout.split("\n\n", 1)[1] == by_module.stdout.split("\n\n", 1)[1]


def test_ruff_finds_nothing():
    """The rules in pyproject.toml ([tool.ruff.lint]): undefined and unused names, redefinitions, syntax,
    mutable defaults."""
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
