"""The experimenter password: configured, or generated once and kept under data/.

Participants never get it; experimenter pages (which show gold answers) are only
added to the app's navigation after it is entered.
"""
from __future__ import annotations

import hmac
import os
import secrets
import sys
from pathlib import Path

PASSWORD_ENV = "ROSE_EXPERIMENTER_PASSWORD"
GENERATED_PASSWORD_FILE = Path(__file__).resolve().parent.parent / "data" / ".experimenter_password"


def resolve_password(configured: str | None = None, generated_file: Path = GENERATED_PASSWORD_FILE) -> tuple[str, str]:
    """(password, where it came from): the argument (Streamlit secrets), the environment, or a generated file."""
    if configured:
        return configured, "secrets"
    env = os.environ.get(PASSWORD_ENV)
    if env:
        return env, f"environment variable {PASSWORD_ENV}"
    if not generated_file.exists():
        generated_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(generated_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        password = secrets.token_urlsafe(12)
        with os.fdopen(fd, "w") as f:
            f.write(password + "\n")
        print(f"ROSE Studio: generated the experimenter password {password} (kept in {generated_file}; "
              f"set {PASSWORD_ENV} to choose your own)", file=sys.stderr, flush=True)
    return generated_file.read_text().strip(), f"generated file {generated_file}"


def check_password(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())
