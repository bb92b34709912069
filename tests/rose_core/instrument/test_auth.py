"""The experimenter password and the sign-in guard, on real files, real processes and a real SQLite store."""
from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rose_core.instrument.auth import (
    PASSWORD_ENV, GuessPolicy, PasswordUnavailable, attempt_sign_in, check_password, resolve_password, stored_or_generated, wait_text,
)
from rose_core.storage.connection import Store

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _no_configured_password(monkeypatch):
    monkeypatch.delenv(PASSWORD_ENV, raising=False)


def _first_loads_threads(path: Path, n: int = 4) -> list[object]:
    out: list[object] = []
    gate = threading.Barrier(n)

    def load():
        gate.wait()
        try:
            out.append(resolve_password(None, path)[0])
        except Exception as e:  # noqa: BLE001 - the test counts every kind of failure
            out.append(e)

    threads = [threading.Thread(target=load) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _load_in_process(path, gate, q):
    gate.wait()
    try:
        q.put(resolve_password(None, Path(path))[0])
    except Exception as e:  # noqa: BLE001
        q.put(f"{type(e).__name__}: {e}")


def _trial_ok(results: list[object]) -> bool:
    return (all(isinstance(r, str) and r.strip() for r in results) and len(set(results)) == 1
            and len(results[0]) >= 20)


def test_200_trials_of_4_concurrent_first_loads_all_get_one_password(tmp_path):
    bad = []
    for k in range(200):
        path = tmp_path / f"t{k}" / ".experimenter_password"
        results = _first_loads_threads(path)
        if not _trial_ok(results) or path.read_text().strip() != results[0]:
            bad.append((k, results))
    assert bad == [], f"{len(bad)} of 200 trials failed, first: {bad[:3]}"
    assert not [p for p in tmp_path.rglob("*.tmp")]  # no temporary file left behind


@pytest.mark.slow  # 200 processes forked from the test process (~9 s of CPU); the thread trials stay fast
def test_concurrent_first_loads_in_separate_processes(tmp_path):
    ctx = mp.get_context("fork")
    bad = []
    for k in range(50):
        path = tmp_path / f"p{k}" / ".experimenter_password"
        q, gate = ctx.Queue(), ctx.Barrier(4)
        procs = [ctx.Process(target=_load_in_process, args=(str(path), gate, q)) for _ in range(4)]
        for p in procs:
            p.start()
        results = [q.get(timeout=60) for _ in procs]
        for p in procs:
            p.join()
        if not _trial_ok(results):
            bad.append((k, results))
    assert bad == []


def test_a_stored_password_is_kept_and_reread(tmp_path):
    path = tmp_path / "pw"
    first, source = resolve_password(None, path)
    assert source == f"generated file {path}" and (path.stat().st_mode & 0o777) == 0o600
    assert resolve_password(None, path)[0] == first == path.read_text().strip()


@pytest.mark.parametrize("content, says", [
    (b"", "is blank"), (b"  \n\t\n", "is blank"), (b"\xff\xfe\x00garbage", "is not text"),
    (b"one\ntwo\n", "control characters or more than one line"),
])
def test_an_empty_or_corrupt_stored_file_is_refused_not_replaced(tmp_path, content, says):
    path = tmp_path / ".experimenter_password"
    path.write_bytes(content)
    with pytest.raises(PasswordUnavailable, match=says) as e:
        resolve_password(None, path)
    assert str(path) in str(e.value) and "Delete" in str(e.value)
    assert path.read_bytes() == content  # left for the operator to look at


@pytest.mark.parametrize("value", [" ", "\t\n", "   "])
def test_a_blank_configured_password_is_refused(tmp_path, monkeypatch, value):
    with pytest.raises(PasswordUnavailable, match="secrets.toml is blank"):
        resolve_password(value, tmp_path / "pw")
    with pytest.raises(PasswordUnavailable, match="secrets.toml is blank"):
        resolve_password("", tmp_path / "pw")
    with pytest.raises(PasswordUnavailable, match="not text"):
        resolve_password(1234, tmp_path / "pw")
    monkeypatch.setenv(PASSWORD_ENV, value)
    with pytest.raises(PasswordUnavailable, match=f"{PASSWORD_ENV} is blank"):
        resolve_password(None, tmp_path / "pw")
    assert not (tmp_path / "pw").exists()


def test_an_empty_environment_variable_means_not_set(tmp_path, monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, "")
    pw, source = resolve_password(None, tmp_path / "pw")
    assert source.startswith("generated") and pw.strip()
    monkeypatch.setenv(PASSWORD_ENV, "  a-long-enough-password  ")
    assert resolve_password(None, tmp_path / "pw") == ("a-long-enough-password", f"environment variable {PASSWORD_ENV}")


_DISK_FULL = """
import resource, signal, sys
from pathlib import Path
from rose_core.instrument.auth import PasswordUnavailable, stored_or_generated
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)           # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))       # no file may hold a single byte: a full disk
try:
    stored_or_generated(Path(sys.argv[1]))
except PasswordUnavailable as e:
    print("UNAVAILABLE", e)
"""


def test_a_full_disk_at_first_start_leaves_no_empty_file_and_says_so(tmp_path):
    path = tmp_path / "data" / ".experimenter_password"
    r = subprocess.run([sys.executable, "-c", _DISK_FULL, str(path)], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("UNAVAILABLE") and "cannot be stored" in r.stdout and "File too large" in r.stdout
    assert not path.exists() and not list(path.parent.glob("*.tmp"))  # nothing half-written
    pw = stored_or_generated(path)  # once there is room, the first load generates it
    assert pw.strip() and path.read_text() == pw + "\n"


def test_an_unwritable_folder_is_reported(tmp_path):
    blocker = tmp_path / "data"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(PasswordUnavailable, match="cannot be stored in .*(File exists|Not a directory)"):
        resolve_password(None, blocker / ".experimenter_password")



@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders; the full-disk test covers this")
def test_a_read_only_folder_is_reported(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(PasswordUnavailable, match="cannot be stored in .*Permission denied"):
            resolve_password(None, folder / ".experimenter_password")
    finally:
        folder.chmod(0o700)


def test_blank_passwords_never_match():
    assert not check_password("", "")
    assert not check_password(" ", " ")
    assert not check_password("", "secret")
    assert check_password("secret", "secret") and not check_password("secret ", "secret")


# --- guessing -----------------------------------------------------------------------------------------------

PW = "the-right-password"
T0 = 1_800_000_000.0


def _log(store: Store) -> list[dict]:
    return store.query("SELECT attempted_at AS at, client, session_id, outcome FROM sign_in_attempts "
                       "ORDER BY attempted_at, outcome")


def test_a_burst_of_200_concurrent_wrong_guesses_is_refused_and_logged(store):
    policy = GuessPolicy()
    results, gate = [], threading.Barrier(8)

    def guess(k):
        gate.wait()
        for j in range(25):
            results.append(attempt_sign_in(store, f"guess-{k}-{j}", PW, client="203.0.113.9",
                                           session=f"sess-{k}", now=T0 + j * 0.05))

    threads = [threading.Thread(target=guess, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outcomes = [r.outcome for r in results]
    assert len(outcomes) == 200 and outcomes.count("wrong") == policy.free and outcomes.count("refused") == 195
    logged = _log(store)
    assert len(logged) == 200 and {r["client"] for r in logged} == {"203.0.113.9"}
    assert {r["session_id"] for r in logged} == {f"sess-{k}" for k in range(8)}
    # The right password is refused while locked out, and accepted once the lockout has expired.
    locked = attempt_sign_in(store, PW, PW, client="203.0.113.9", session="sess-new", now=T0 + 1.3)
    assert locked.outcome == "refused" and locked.retry_after_s > 0
    later = attempt_sign_in(store, PW, PW, client="203.0.113.9", session="sess-new",
                            now=T0 + 1.3 + locked.retry_after_s)
    assert later.ok
    # Another address was never affected.
    assert attempt_sign_in(store, PW, PW, client="198.51.100.7", session="other", now=T0 + 1).ok


def test_lockouts_grow_exponentially_up_to_the_cap_and_a_success_resets(store):
    policy = GuessPolicy(free=3, base_s=2.0, cap_s=60.0)
    t, waits = T0, []
    for _ in range(10):  # each guess made the moment the previous lockout ends
        r = attempt_sign_in(store, "nope", PW, client="c", session="s", now=t, policy=policy)
        assert r.outcome == "wrong"
        waits.append(r.retry_after_s)
        t += r.retry_after_s
    assert waits == [0, 0, 2, 4, 8, 16, 32, 60, 60, 60]
    early = attempt_sign_in(store, PW, PW, client="c", session="s", now=t - 0.5, policy=policy)
    assert early.outcome == "refused" and early.retry_after_s == pytest.approx(0.5)
    assert attempt_sign_in(store, PW, PW, client="c", session="s", now=t, policy=policy).ok
    fresh = attempt_sign_in(store, "nope", PW, client="c", session="s", now=t + 1, policy=policy)
    assert fresh.outcome == "wrong" and fresh.failures == 1 and fresh.retry_after_s == 0  # counted afresh
    assert [r["outcome"] for r in _log(store)].count("refused") == 1


def test_the_session_is_locked_too_and_old_failures_are_forgotten(store):
    policy = GuessPolicy(free=2, base_s=10.0, window_s=3600.0)
    for k in range(2):
        attempt_sign_in(store, "nope", PW, client=f"10.0.0.{k}", session="one-session", now=T0, policy=policy)
    # Two addresses, one session: the session has failed twice and is locked whichever address it uses now.
    assert attempt_sign_in(store, PW, PW, client="10.0.0.9", session="one-session", now=T0 + 1,
                           policy=policy).outcome == "refused"
    # A day later the failures are out of the window.
    assert attempt_sign_in(store, PW, PW, client="10.0.0.9", session="one-session", now=T0 + 3601,
                           policy=policy).ok


@pytest.mark.parametrize("raw", ["5,0,900", "5,2", "x,2,900", "inf,2,900", "0,2,900", "5,900,2", "5,nan,900"])
def test_a_malformed_lockout_setting_is_refused(monkeypatch, raw):
    from rose_core.instrument.auth import POLICY_ENV, policy_from_env

    monkeypatch.setenv(POLICY_ENV, raw)
    with pytest.raises(PasswordUnavailable, match="expected FREE,BASE_S,CAP_S"):
        policy_from_env()
    monkeypatch.setenv(POLICY_ENV, " 3, 10 ,60 ")
    assert policy_from_env() == GuessPolicy(free=3, base_s=10.0, cap_s=60.0)


def test_a_password_with_unpaired_surrogates_is_compared_not_crashed():
    assert not check_password("\ud800x", "secret") and check_password("\ud800x", "\ud800x")


def test_wait_text():
    assert [wait_text(s) for s in (0.2, 2, 59.5, 60, 64, 900)] == ["1 s", "2 s", "1 min", "1 min", "1 min 4 s",
                                                                  "15 min"]


def test_a_guesser_who_changes_address_every_try_is_held_by_the_account_lockout(store):
    """The cluster attack: a forged X-Forwarded-For and a new session on every try. Each address fails once, so
    only the account-wide count can slow it: after free·account_factor failures every try waits, whatever the
    address, and the real experimenter's right password is refused too until the wait is over."""
    policy = GuessPolicy(free=3, base_s=2.0, cap_s=60.0)
    allowed = policy.free * policy.account_factor
    t, outcomes = T0, []
    for k in range(200):  # 200 tries in 20 s, each from its own address and session
        r = attempt_sign_in(store, f"guess-{k}", PW, client=f"198.51.{k // 250}.{k % 250}", session=f"s{k}",
                            now=t, policy=policy)
        outcomes.append(r.outcome)
        t += 0.1
    # the free failures, then one after each wait of 2, 4 and 8 s (the next, 16 s, runs past the 20 s)
    assert outcomes.count("wrong") == allowed + 3
    assert outcomes.count("refused") == 200 - allowed - 3
    last = attempt_sign_in(store, PW, PW, client="192.0.2.1", session="experimenter", now=t, policy=policy)
    assert last.outcome == "refused" and last.retry_after_s > 0
    assert "for this account" in last.message()
    assert attempt_sign_in(store, PW, PW, client="192.0.2.1", session="experimenter", now=t + 60,
                           policy=policy).ok


@pytest.mark.parametrize("content", ["x", "é", "\u3164", "\u2800"])  # visible; Hangul filler, Braille blank
def test_a_one_character_password_file_gets_the_length_warning(tmp_path, capsys, content):
    from rose_core.instrument import auth

    path = tmp_path / "pw"
    path.write_text(content + "\n", encoding="utf-8")
    auth._warned.clear()
    assert resolve_password(None, path)[0] == content
    err = capsys.readouterr().err
    assert "visible characters; use at least 12" in err and str(path) in err
