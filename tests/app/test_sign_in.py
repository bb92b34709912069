"""The sign-in page through AppTest: no traceback and no open door when the password is unusable, guesses
slowed and logged."""
from __future__ import annotations

import os

import pytest
from streamlit.testing.v1 import AppTest

from rose_core.instrument.client_address import LOOPBACK
from rose_core.instrument.auth import HIDDEN_PATH, PASSWORD_ENV, PASSWORD_FILE_ENV, POLICY_ENV
from rose_core.storage import open_store

from .conftest import PASSWORD, ROOT


def app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)


def attempt(at: AppTest, password: str) -> AppTest:
    at.text_input(key="auth_given").input(password)
    at.button[0].click()
    return at.run()


def assert_closed(at: AppTest, says: str) -> None:
    assert not at.exception, at.exception
    assert at.error and says in at.error[0].value, [e.value for e in at.error]
    assert len(at.text_input) == 0  # no form to submit at all
    assert "auth_experimenter" not in at.session_state
    with pytest.raises(ValueError, match="Known pages: \\['Sign in'\\]"):
        at.switch_page("app_pages/studies.py")


def test_a_blank_configured_password_closes_sign_in(app_env, monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, "   ")
    assert_closed(app().run(), f"{PASSWORD_ENV} is blank")


def test_an_empty_stored_password_closes_sign_in_without_showing_the_file(app_env, monkeypatch, tmp_path, caplog):
    """Anyone can open the sign-in page: the file's path goes to the server's terminal, not to the page."""
    monkeypatch.delenv(PASSWORD_ENV)
    stored = tmp_path / "pw"
    stored.write_text("\n")
    monkeypatch.setenv(PASSWORD_FILE_ENV, str(stored))
    at = app().run()
    assert_closed(at, f"the stored password {HIDDEN_PATH} is blank")
    assert f"Delete {HIDDEN_PATH}" in at.error[0].value
    assert str(tmp_path) not in at.error[0].value
    assert f"the stored password {stored} is blank" in caplog.text


def test_a_password_that_cannot_be_stored_closes_sign_in(app_env, monkeypatch, tmp_path):
    monkeypatch.delenv(PASSWORD_ENV)
    (tmp_path / "data").write_text("not a folder")
    monkeypatch.setenv(PASSWORD_FILE_ENV, str(tmp_path / "data" / "pw"))
    at = app().run()
    assert_closed(at, "cannot be stored in")
    assert str(tmp_path) not in at.error[0].value


def test_the_generated_password_signs_in(app_env, monkeypatch, tmp_path):
    monkeypatch.delenv(PASSWORD_ENV)
    stored = tmp_path / "pw"
    monkeypatch.setenv(PASSWORD_FILE_ENV, str(stored))
    at = app().run()
    assert not at.exception and "generated at first start" in at.caption[0].value
    at = attempt(at, stored.read_text().strip())
    assert at.session_state["auth_experimenter"] is True and not at.exception


def test_a_malformed_lockout_setting_closes_sign_in(app_env, monkeypatch):
    monkeypatch.setenv(POLICY_ENV, "5,0,900")
    assert_closed(app().run(), f"{POLICY_ENV}='5,0,900': expected FREE,BASE_S,CAP_S")


def test_guesses_are_slowed_refused_and_logged(app_env, tmp_path, monkeypatch):
    monkeypatch.setenv(POLICY_ENV, "5,600,900")  # a lockout long enough that no machine is slow enough to outlast it
    at = app().run()
    at = attempt(at, "   ")
    assert at.error[0].value == "Enter the password."
    for k in range(5):
        at = attempt(at, f"guess-{k}")
        assert not at.exception and at.error[0].value.startswith("Wrong password.")
    assert "next attempt is possible in 10 min" in at.error[0].value
    at = attempt(at, PASSWORD)  # the right one, but inside the lockout
    assert at.error[0].value.startswith("Too many failed sign-ins from this address or for this account: try again in")
    assert "auth_experimenter" not in at.session_state
    rows = open_store(os.environ["ROSE_DB"]).query("SELECT client, session_id, outcome FROM sign_in_attempts "
                                              "ORDER BY attempted_at")
    assert [r["outcome"] for r in rows] == ["wrong"] * 5 + ["refused"]  # the blank entry is not an attempt
    assert {r["client"] for r in rows} == {LOOPBACK} and all(r["session_id"] for r in rows)


def test_a_dataset_that_cannot_be_built_is_said_on_the_sign_in_page_without_a_path(app_env, monkeypatch, tmp_path,
                                                                                   caplog):
    """Started without scripts/run.sh (which builds the dataset first), the sign-in page builds a missing dataset
    before its form; a folder the build refuses (not a finished dataset) is said on the page, which anyone can open:
    the folder and the reason only in the server's terminal."""
    root = tmp_path / "rose-v0.1"
    root.mkdir()
    (root / "notes.txt").write_text("not a dataset")
    monkeypatch.setenv("ROSE_DATASET_DIR", str(root))
    at = app().run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] and "The dataset could not be built" in at.error[0].value
    assert str(root) not in at.error[0].value and str(tmp_path) not in at.error[0].value
    assert f"{root} exists and is not empty" in caplog.text and f"build --out {root}" in caplog.text
    assert len(at.text_input) == 0  # no form under it
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt"]  # nothing built over it


def test_a_corrupt_manifest_shows_the_experimenter_no_path_and_no_trace(app_env, monkeypatch, tmp_path):
    """Experimenter pages keep Streamlit's error handling, with `client.showErrorDetails = "none"`: a short
    notice, no exception text (it named the manifest's server path), no stack; the details go to the log."""
    import shutil

    root = tmp_path / "ds"
    shutil.copytree(app_env.root, root)
    (root / "manifest.json").write_text('{"name": "rose", "instances": [')
    monkeypatch.setenv("ROSE_DATASET_DIR", str(root))
    at = attempt(app().run(), PASSWORD)
    at.switch_page("app_pages/studies.py")
    at = at.run()
    shown = [e.message for e in at.exception] + [e.value for e in [*at.error, *at.markdown, *at.caption]]
    assert at.exception and all(not e.stack_trace for e in at.exception)
    assert not any(str(tmp_path) in text or "manifest.json" in text for text in shown), shown
