"""The experimenter password and the guard in front of it.

Experimenter pages show gold answers, so they join the app's navigation only after sign-in. The password is
configured (Streamlit secrets, then $ROSE_EXPERIMENTER_PASSWORD) or generated once and kept in a file. Every
way to get it either yields a non-blank password or raises `PasswordUnavailable` with a message for the
operator: a blank, unreadable or corrupt password never becomes an open door.

Sign-in attempts go through `attempt_sign_in`, which logs every attempt in the database and refuses attempts
from a client address or session that failed too often (exponential lockout), and every attempt once the
account itself failed too often from any addresses (a guesser who forges a new address per try), in one
transaction so that a burst of concurrent guesses cannot slip between the check and the log.
"""
from __future__ import annotations

import fcntl
import hmac
import logging
import os
import secrets
import sys
import tempfile
import time
import unicodedata
import uuid
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Literal

from ..storage.connection import Store
from ..storage.sign_ins import Outcome, account_failures_since, failures_since, record_sign_in

PASSWORD_ENV = "ROSE_EXPERIMENTER_PASSWORD"
PASSWORD_FILE_ENV = "ROSE_EXPERIMENTER_PASSWORD_FILE"
GENERATED_PASSWORD_FILE = Path(__file__).resolve().parent.parent.parent / "data" / ".experimenter_password"
WEAK_BELOW = 12  # characters; a configured password shorter than this gets a warning in the server's terminal

log = logging.getLogger("rose_core.auth")
_warned: set[str] = set()


HIDDEN_PATH = "[path in the server's terminal]"


class PasswordUnavailable(Exception):
    """No usable password: the message says why and what the operator can do. Nobody can sign in meanwhile.
    `public` is the same message for the sign-in page, which anyone can open: the server's paths replaced."""

    def __init__(self, message: str, paths: tuple[Path, ...] = ()) -> None:
        super().__init__(message)
        public = message
        for p in sorted({str(p) for p in paths}, key=len, reverse=True):  # a file before its folder
            public = public.replace(p, HIDDEN_PATH)
        self.public = public


def password_file() -> Path:
    """Where a generated password is kept: $ROSE_EXPERIMENTER_PASSWORD_FILE, else data/.experimenter_password."""
    return Path(os.environ.get(PASSWORD_FILE_ENV) or GENERATED_PASSWORD_FILE)


def _usable(value: object, where: str) -> str:
    """The password as given, if it can be one: a non-blank string on one line without control characters or
    invisible ones only (a zero-width space is not blank to `str.strip` but is no password either)."""
    if not isinstance(value, str):
        raise PasswordUnavailable(f"{where} is not text ({type(value).__name__}): write it as a quoted string.")
    if not value.strip() or not visible_length(value.strip()):
        raise PasswordUnavailable(f"{where} is blank. A blank password would let anyone in: set a real one.")
    if any(not ch.isprintable() for ch in value.strip()):
        raise PasswordUnavailable(f"{where} holds control characters or more than one line: it looks corrupt.")
    return value.strip()


def visible_length(password: str) -> int:
    """Characters that show: format characters (zero-width spaces, joiners, BOM) and spaces add nothing a
    guesser has to find."""
    return sum(1 for ch in password if not ch.isspace() and unicodedata.category(ch) not in ("Cf", "Zs"))


def _warn_if_weak(password: str, source: str) -> None:
    """A short password (counted in visible characters) gets a warning once per source, in the server's terminal
    and the log, wherever it came from: secrets, the environment or a password file written by hand."""
    n = visible_length(password)
    if n < WEAK_BELOW and source not in _warned:
        _warned.add(source)
        log.warning("the experimenter password from %s has %d visible characters (fewer than %d)", source, n,
                    WEAK_BELOW)
        print(f"ROSE Studio: the experimenter password from {source} has {n} visible characters; use at least "
              f"{WEAK_BELOW} random ones (see docs/running-a-study.md: The experimenter password)", file=sys.stderr, flush=True)


def _read_stored(path: Path) -> str | None:
    """The stored password, None when there is no file; PasswordUnavailable when it cannot be used."""
    fix = (f"Delete {path} to have a new one generated at the next page load, or set {PASSWORD_ENV}.")
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # no file (its folder may not even be a folder)
        return None
    except OSError as e:
        raise PasswordUnavailable(f"cannot read the stored password {path} ({e.strerror or e}). {fix}",
                                  (path,)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PasswordUnavailable(f"the stored password {path} is not text: it looks corrupt. {fix}", (path,)) from None
    try:
        password = _usable(text, f"the stored password {path}")
    except PasswordUnavailable as e:
        raise PasswordUnavailable(f"{e} {fix}", (path,)) from None
    _warn_if_weak(password, f"the stored password file {path}")
    return password


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """One generator at a time across threads and processes (flock is released if the holder dies)."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _write_atomically(path: Path, text: str) -> None:
    """A temporary file beside `path`, synced, then renamed over it: readers see no file or the whole file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    with suppress(OSError):  # make the rename itself durable (best effort: not every file system allows it)
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def stored_or_generated(path: Path) -> str:
    """The password kept in `path`, generating and storing one first if there is none.

    Concurrent first loads (threads or processes) all get the same non-blank password: generation happens
    under an exclusive lock and the file appears by an atomic rename, complete. If it cannot be stored (disk
    full, read-only folder) nothing is left behind and PasswordUnavailable says so.
    """
    found = _read_stored(path)
    if found is not None:
        return found
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _exclusive(path.with_name(path.name + ".lock")):
            found = _read_stored(path)  # another thread or process may have generated it while we waited
            if found is not None:
                return found
            password = secrets.token_urlsafe(18)  # 24 characters, 144 random bits
            _write_atomically(path, password + "\n")
    except OSError as e:
        raise PasswordUnavailable(
            f"no password is configured and a generated one cannot be stored in {path} ({e.strerror or e}). "
            f"Free disk space or make {path.parent} writable, or set {PASSWORD_ENV}.", (path, path.parent)) from None
    print(f"ROSE Studio: generated the experimenter password {password} (kept in {path}; "
          f"set {PASSWORD_ENV} to choose your own)", file=sys.stderr, flush=True)
    return password


def resolve_password(configured: object = None, generated_file: Path | None = None) -> tuple[str, str]:
    """(password, where it came from): Streamlit secrets (`configured`, None when absent), the environment, or
    the generated file. Raises PasswordUnavailable instead of ever returning a blank password."""
    if configured is not None:
        source = "experimenter_password in .streamlit/secrets.toml"
        password = _usable(configured, source)
        _warn_if_weak(password, source)
        return password, "secrets"
    env = os.environ.get(PASSWORD_ENV)
    if env is not None and env != "":  # set to the empty string = not set; set to blanks = a mistake, refused
        source = f"environment variable {PASSWORD_ENV}"
        password = _usable(env, source)
        _warn_if_weak(password, source)
        return password, source
    path = Path(generated_file) if generated_file is not None else password_file()
    return stored_or_generated(path), f"generated file {path}"


def check_password(given: str, expected: str) -> bool:
    """Constant-time comparison; a blank password (given or expected) never matches."""
    if not isinstance(given, str) or not given.strip() or not expected.strip():
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


# --- guessing ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GuessPolicy:
    """How failed sign-ins slow the next ones: after the n-th failure in a row (n ≥ `free`) the client address
    and the session are locked out for base·2^(n−free) seconds, at most `cap`; fewer failures cost nothing.
    Failures count since the last successful sign-in of that address (or session) and within `window` seconds."""

    free: int = 5
    base_s: float = 2.0
    cap_s: float = 900.0
    window_s: float = 86_400.0
    # The account as a whole (every address and session together) gets this many times `free` failures before
    # its own lockout: wide enough that one guesser's address lockout comes first, and a guesser who forges a
    # new address per try is held to the same exponential pace (at most ~100 comparisons a day at the cap).
    account_factor: int = 4

    def account(self) -> "GuessPolicy":
        """The policy for the account-wide count."""
        return GuessPolicy(self.free * self.account_factor, self.base_s, self.cap_s, self.window_s, 1)

    def lockout_s(self, failures: int) -> float:
        if failures < self.free:
            return 0.0
        return min(self.base_s * 2.0 ** min(failures - self.free, 64), self.cap_s)


DEFAULT_POLICY = GuessPolicy()
POLICY_ENV = "ROSE_SIGN_IN_LOCKOUT"


def policy_from_env() -> GuessPolicy:
    """$ROSE_SIGN_IN_LOCKOUT = "FREE,BASE_S,CAP_S" (default "5,2,900"); anything else is refused with a message."""
    raw = os.environ.get(POLICY_ENV, "").strip()
    if not raw:
        return DEFAULT_POLICY
    try:
        free, base, cap = (float(x) for x in raw.split(","))
        if free != int(free) or free < 1 or not 0 < base <= cap <= 86_400:
            raise ValueError
    except (ValueError, OverflowError):
        raise PasswordUnavailable(f"{POLICY_ENV}={raw!r}: expected FREE,BASE_S,CAP_S, e.g. 5,2,900 (at least one free "
                                  "failure, 0 < base ≤ cap ≤ 86400 seconds)") from None
    return GuessPolicy(free=int(free), base_s=base, cap_s=cap)


@dataclass(frozen=True)
class SignInResult:
    outcome: Outcome                 # ok, wrong or refused (locked out: the password was not even compared)
    retry_after_s: float             # seconds until the next attempt is accepted from this address/session
    failures: int                    # recent failures of the stricter of the two (address, session)

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def message(self) -> str | None:
        """What the sign-in page says (None when signed in)."""
        if self.outcome == "refused":
            return (f"Too many failed sign-ins from this address or for this account: try again in "
                    f"{wait_text(self.retry_after_s)}.")
        if self.outcome == "wrong":
            return "Wrong password." + (f" The next attempt is possible in {wait_text(self.retry_after_s)}."
                                        if self.retry_after_s > 0 else "")
        return None


def _wait(conn, who: Literal["client", "session_id", "account"], key: str, t: float,
          policy: GuessPolicy) -> tuple[float, int]:
    n, last = (account_failures_since(conn, t - policy.window_s) if who == "account"
               else failures_since(conn, who, key, t - policy.window_s))
    if not n or last is None:
        return 0.0, n
    return max(0.0, last + policy.lockout_s(n) - t), n


def attempt_sign_in(store: Store, given: str, expected: str, *, client: str, session: str,
                    now: float | None = None, policy: GuessPolicy | None = None) -> SignInResult:
    """Check one sign-in attempt and log it (outcome, time, client address, session) in one transaction.

    While the address, the session or the account is locked out the attempt is refused without looking at the
    password (so the right password is refused too until the lockout expires) and logged as `refused`; refused
    attempts do not lengthen the lockout. `now` is injectable so tests need no sleeps.
    """
    t = time.time() if now is None else now
    policy = policy or policy_from_env()
    account = policy.account()
    with store.write() as conn:
        (w1, n1), (w2, n2) = _wait(conn, "client", client, t, policy), _wait(conn, "session_id", session, t, policy)
        w3, n3 = _wait(conn, "account", "", t, account)
        wait, failures = max(w1, w2, w3), max(n1, n2)
        if wait > 0:
            outcome: Outcome = "refused"
        else:
            outcome = "ok" if check_password(given, expected) else "wrong"
            if outcome == "wrong":
                failures += 1
                wait = max(policy.lockout_s(failures), account.lockout_s(n3 + 1))
            else:
                failures, wait = 0, 0.0
        record_sign_in(conn, uuid.uuid4().hex, t, client, session, outcome)
    if outcome != "ok":
        log.warning("experimenter sign-in %s from client %s, session %s (%d recent failures; next in %.0f s)",
                    outcome, client, session, failures, wait)
    return SignInResult(outcome, wait, failures)


def wait_text(seconds: float) -> str:
    """'2 s', '1 min 4 s', '15 min' (rounded up to whole seconds)."""
    s = max(1, int(-(-seconds // 1)))
    m, s = divmod(s, 60)
    return f"{m} min {s} s" if m and s else f"{m} min" if m else f"{s} s"
