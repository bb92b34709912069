"""Arguments a sub-command does not take are refused by that sub-command (its usage, its name), and a location it
does not read (`--db`, `--dataset`, `--episodes`) is named as such; argparse alone refused them with the top level's
usage, which names no sub-command, while sibling commands took the same option."""
import argparse

from rose_core.cli import build_parser
from tests.command_line import run_cli as run

PROG = "python -m rose_core"


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, {o for a in parser._actions for o in a.option_strings}
        return
    for name, sub in subs[0].choices.items():
        yield from _leaves(sub, (*path, name))


def test_a_location_a_command_does_not_read_is_refused_naming_the_command():
    r = run("runs", "--dataset", "X")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"usage: {PROG} runs [-h] [--db DB]\n")
    assert r.stderr.splitlines()[-1] == (f"{PROG} runs: error: unrecognized arguments: --dataset X; runs reads no "
                                         "ROSE dataset build: it takes no --dataset")
    r = run("study", "approvals", "S1", "--out", "a.csv", "--dataset", "X")
    assert r.returncode == 2 and r.stderr.startswith(f"usage: {PROG} study approvals ")
    assert r.stderr.splitlines()[-1] == (f"{PROG} study approvals: error: unrecognized arguments: --dataset X; "
                                         "study approvals reads no ROSE dataset build: it takes no --dataset")
    r = run("sgp", "agent", "optimal", "--out", "o", "--dataset", "X")
    assert r.stderr.splitlines()[-1].endswith("sgp agent reads no ROSE dataset build: it takes no --dataset (an SGP "
                                              "build is given as --episodes)")
    r = run("build", "--db=x.db", "--episodes", "E")
    assert r.stderr.splitlines()[-1] == (f"{PROG} build: error: unrecognized arguments: --db=x.db --episodes E; "
                                         "build opens no database: it takes no --db; build reads no SGP dataset "
                                         "build: it takes no --episodes")


def test_any_unrecognized_argument_is_refused_by_the_sub_command():
    r = run("study", "show", "S1", "--bogus")
    assert r.returncode == 2 and r.stderr.startswith(f"usage: {PROG} study show ")
    assert r.stderr.splitlines()[-1] == f"{PROG} study show: error: unrecognized arguments: --bogus"


def test_no_command_refuses_a_location_with_the_top_level_usage():
    """Every sub-command, given each location it does not declare: refused by itself (2), never by the top level."""
    tried = 0
    for path, takes in _leaves(build_parser()):
        for opt in ("--db", "--dataset", "--episodes"):
            if opt in takes:
                continue
            r = run(*path, opt, "X")
            assert r.returncode == 2, (path, opt)
            last = r.stderr.splitlines()[-1]
            assert last.startswith(f"{PROG} {' '.join(path)}: error: "), (path, opt, last)
            tried += 1
    assert tried > 40


def test_runs_refuses_a_missing_database_and_creates_none(tmp_path):
    r = run("runs", "--db", str(tmp_path / "missing.db"))
    assert (r.returncode, r.stderr) == (2, f"error: no database at {tmp_path / 'missing.db'}\n")
    assert list(tmp_path.iterdir()) == []
