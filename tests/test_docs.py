"""The docs stay true to the code: the site builds, and every command, environment variable and study setting the
code has is documented (found from the code, not from a hand-kept list)."""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# Where the code that reads environment variables lives (the app, its pages and components, the core, the scripts).
ENV_SOURCES = ["rose_core", "app.py", "app_pages", "ui", "scripts"]
ENV_NAME = re.compile(r"\bROSE_[A-Z0-9_]*[A-Z0-9]\b")


def _gen_cli():
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")))


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser) of every command and sub-command, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _commands(sub, (*path, name))


def _env_names() -> set[str]:
    names: set[str] = set()
    for entry in ENV_SOURCES:
        root = ROOT / entry
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()
                                                and p.suffix in (".py", ".sh", ".js", ".toml", "")]
        for f in files:
            if "__pycache__" in f.parts:
                continue
            names |= set(ENV_NAME.findall(f.read_text(encoding="utf-8", errors="replace")))
    return names


def test_mkdocs_build_strict(tmp_path):
    site = tmp_path / "site"
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                          str(ROOT / "mkdocs.yml"), "--site-dir", str(site)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    # Every page in the nav is rendered, and a page holds its text (not an empty theme shell).
    for page in sorted(DOCS.glob("*.md")):
        html = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert html.is_file(), f"{page.name} was not rendered"
    cli_html = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert "--max-expanded-mb" in cli_html and "<table>" in cli_html


def test_cli_reference_is_current():
    current = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert current == _gen_cli().generate(), (
        "docs/cli.md is stale: run `python docs/gen_cli.py > docs/cli.md`")


def test_every_command_and_option_is_documented():
    from rose_core.cli import build_parser

    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    sections = re.split(r"^#+ ", text, flags=re.MULTILINE)
    by_heading = {s.split("\n", 1)[0].strip().strip("`"): s for s in sections}
    commands = list(_commands(build_parser()))
    assert len(commands) > 15
    missing = []
    for path, parser in commands:
        name = " ".join(path)
        section = by_heading.get(name)
        if section is None:
            missing.append(name)
            continue
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            for option in action.option_strings or [action.dest]:
                if f"`{option}`" not in section:
                    missing.append(f"{name} {option}")
    assert not missing, f"not in docs/cli.md: {missing}"


def test_every_option_says_what_it_is_and_its_default():
    """`--help` and docs/cli.md show each argument's help: an empty one leaves a bare name, and a default the
    help does not state is one the reader of `--help` cannot see."""
    from rose_core.cli import build_parser

    bare, silent_default = [], []
    for path, parser in _commands(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            where = f"{' '.join(path)} {(action.option_strings or [action.dest])[0]}"
            if not (action.help or "").strip():
                bare.append(where)
            elif (action.nargs != 0 and not action.required and action.default is not None
                  and action.default is not False and action.default != "" and "default" not in action.help):
                silent_default.append(where)
    assert not bare, f"arguments without a help text: {bare}"
    assert not silent_default, f"arguments whose help does not state their default: {silent_default}"


def test_every_module_is_named_in_the_architecture_page():
    """docs/architecture.md names each module of `rose_core` in its folder's list, so a reader finds where a job
    lives; a module added without a line there (or renamed) fails here. The harness templates are files an
    export copies, not modules of the package."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    package = ROOT / "rose_core"
    unnamed = sorted(str(f.relative_to(package)) for f in package.rglob("*.py")
                     if not f.name.startswith("__") and "harness" not in f.parent.name
                     and f"`{f.stem}`" not in text)
    assert not unnamed, f"modules docs/architecture.md does not name: {unnamed}"


def test_code_and_docs_cite_no_issue_numbers():
    """History lives in git and CHANGELOG.md: a docstring or a page says the rule and its reason, and an issue
    number there tells a reader nothing they can follow."""
    cited = []
    for folder, pattern in (("rose_core", "*.py"), ("ui", "*.py"), ("app_pages", "*.py"), ("docs", "*.md")):
        for f in sorted((ROOT / folder).rglob(pattern)):
            for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"\bissue #?\d", line, flags=re.IGNORECASE):
                    cited.append(f"{f.relative_to(ROOT)}:{n}")
    assert not cited, f"issue numbers cited: {cited}"


def test_every_environment_variable_is_documented():
    names = _env_names()
    assert {"ROSE_DB", "ROSE_TRUSTED_PROXIES", "ROSE_EXPERIMENTER_PASSWORD"} <= names  # the scan finds them
    docs = _docs_text()
    missing = sorted(n for n in names if not re.search(rf"`{n}`", docs))
    assert not missing, f"environment variables read by the code but not documented in docs/: {missing}"


def test_every_study_setting_is_documented():
    from rose_core.instrument.config import StudyConfig

    page = (DOCS / "running-a-study.md").read_text(encoding="utf-8")
    fields = [f.name for f in dataclasses.fields(StudyConfig)]
    assert len(fields) > 20
    missing = [f for f in fields if not re.search(rf"^\| `{f}` \|", page, flags=re.MULTILINE)]
    assert not missing, f"StudyConfig fields missing from the study settings table: {missing}"


def test_readme_is_short_and_has_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    for command in ("bash scripts/run.sh", "bash scripts/test.sh", "bash scripts/test.sh --fast"):
        assert command in text, f"README lacks `{command}`"
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), f"README links to a missing {link}"


def _schema_version() -> int:
    from rose_core.storage.schema import SCHEMA_VERSION

    return SCHEMA_VERSION


def test_changelog_names_the_current_scorer_and_schema():
    from rose_core.benchmarks.rose.scoring import SCORER_VERSION

    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    scorers = text.split("## Scorer versions", 1)[1].split("\n## ", 1)[0]
    migrations = text.split("## Schema migrations", 1)[1].split("\n## ", 1)[0]
    assert f"- **{SCORER_VERSION}** (" in scorers, f"CHANGELOG.md has no line for scorer {SCORER_VERSION}"
    for version in range(1, _schema_version() + 1):
        assert f"- **{version}** (" in migrations, f"CHANGELOG.md has no line for migration {version}"
