"""ROSE Studio: one Streamlit app, pages chosen by who arrives.

A study link (`?study=…`) leads to the participant flow and nothing else. Experimenter
pages show gold answers, so they join the navigation only after the experimenter
password is entered (docs/running-a-study.md: the experimenter password).
"""
import logging
import secrets

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from rose_core import dataset_dir
from rose_core.instrument.auth import PasswordUnavailable, attempt_sign_in, policy_from_env, resolve_password
from rose_core.instrument.client_address import ProxyConfigError
from rose_core.storage.columns import prepare_reads
from ui.client import address as client_address, trusted_proxies
from ui.preload import dashboards_warmed, dataset_loaded, statistics_libraries
from ui.resources import dataset, load_dataset, store
from ui import uploads

st.set_page_config(page_title="ROSE Studio", page_icon="🌹", layout="wide")
uploads.install()  # Streamlit's upload endpoint: signed-in experimenters' sessions only (ui/uploads.py)
log = logging.getLogger("rose_studio.sign_in")


def _configured_password() -> object:
    try:
        return st.secrets.get("experimenter_password")
    except Exception:  # no secrets.toml: Streamlit raises rather than returning None
        return None


def _session_id() -> str:
    ctx = get_script_run_ctx()
    sid = getattr(ctx, "session_id", None)
    return sid if isinstance(sid, str) and sid else "unknown"


def sign_in() -> None:
    statistics_libraries()  # experimenters only: imported while the password is typed (ui/preload.py)
    try:  # the dashboards' column reader (SQLite's is a process of its own) starts meanwhile too
        prepare_reads(store())
    except Exception:  # a database that cannot be opened is reported by the sign-in itself, never a traceback here
        log.exception("starting the dashboards' column reader failed")
    st.title("ROSE Studio")
    # scripts/run.sh builds the dataset before the server starts; started without one, it is built here, before
    # the form (not after signing in, behind a form left on the screen for the build's 30-90 s)
    if not (dataset_dir() / "manifest.json").exists():
        dataset()
    dataset_loaded(str(dataset_dir()), load_dataset)   # loaded while the password is typed (ui/preload.py)
    try:
        dashboards_warmed(store(), str(dataset_dir()), load_dataset)   # once per process (ui/preload.py)
    except Exception:  # a database that cannot be opened is reported by the sign-in itself, never a traceback here
        log.exception("starting the dashboards' warm-up failed")
    st.write("Experimenter sign-in. Participants arrive through a study link.")
    try:
        password, source = resolve_password(_configured_password())
        policy = policy_from_env()
    except PasswordUnavailable as e:  # anyone can open this page: the server's paths only in its terminal
        log.error("sign-in is unavailable: %s", e)
        st.error(f"Sign-in is unavailable: {e.public}")
        return
    except Exception:  # never a traceback on this page: the details go to the server's terminal
        log.exception("resolving the experimenter password failed")
        st.error("Sign-in is unavailable because of a server error; the details are in the server's terminal.")
        return
    with st.form("auth_form"):
        given = st.text_input("Experimenter password", type="password", key="auth_given")
        if st.form_submit_button("Sign in"):
            if not given.strip():
                st.error("Enter the password.")
            else:
                try:
                    res = attempt_sign_in(store(), given, password, client=client_address(),
                                          session=_session_id(), policy=policy)
                except Exception:
                    log.exception("recording a sign-in attempt failed")
                    st.error("Sign-in is unavailable because the database cannot record the attempt; the details "
                             "are in the server's terminal.")
                    res = None
                if res is not None and res.ok:
                    st.session_state["auth_experimenter"] = True
                    st.rerun()
                elif res is not None:
                    st.error(res.message())
    if source.startswith("generated"):
        st.caption("No password is configured: the one generated at first start is printed in the server's "
                   "terminal and kept in a file on the server (docs/running-a-study.md: The experimenter password), or set "
                   "ROSE_EXPERIMENTER_PASSWORD.")


try:
    trusted_proxies()  # a setting that cannot be read stops every page, loudly, instead of guessing addresses
except ProxyConfigError as e:
    st.error(f"ROSE Studio cannot serve pages: {e}. The operator must fix the setting and restart the server.")
    st.stop()

participant = "study" in st.query_params or "part_pid" in st.session_state
if participant:
    nav = st.navigation([st.Page("app_pages/participant.py", title="ROSE study", icon="🌹")], position="hidden")
elif st.session_state.get("auth_experimenter"):
    nav = st.navigation({
        "Collect": [
            st.Page("app_pages/studies.py", title="Studies", icon="🧪", default=True),
            st.Page("app_pages/model_runs.py", title="Model runs", icon="🤖"),
            st.Page("app_pages/scene_explorer.py", title="Scene explorer", icon="🔎"),
        ],
        "Analyse": [
            st.Page("app_pages/results.py", title="Results", icon="📊"),
            st.Page("app_pages/agreement.py", title="Agreement and difficulty", icon="🤝"),
            st.Page("app_pages/participants_overview.py", title="Participants", icon="👥"),
            st.Page("app_pages/drilldown.py", title="Drill-down", icon="🔬"),
            st.Page("app_pages/sgp_results.py", title="SGP results", icon="🧩"),
            st.Page("app_pages/sgp_replay.py", title="SGP episode replay", icon="⏯️"),
        ],
    })
else:
    nav = st.navigation([st.Page(sign_in, title="Sign in", icon="🔑")])


def fault_page(e: Exception) -> None:
    """A fault a participant's or a visitor's page did not handle (a database file that is corrupt or cannot be
    created at start, a damaged dataset): a calm page with a reference, the details in the server's log under the
    same reference; never a traceback or a server path. Experimenter pages keep Streamlit's own handling, which
    `client.showErrorDetails = "none"` reduces to a short notice with the details in the log (and page tests keep
    seeing their exceptions)."""
    ref = secrets.token_hex(4)
    log.error("page fault %s (%s): %s", ref, "participant" if participant else "sign-in", type(e).__name__,
              exc_info=e)
    st.error("The study cannot be shown right now because of a problem on our side. Please reload the page in "
             "a minute, or come back later with the same link: what you answered so far is kept. "
             f"(Reference {ref})" if participant else
             f"ROSE Studio cannot show this page because of a server error (reference {ref}); the operator finds "
             "the details in the server's terminal under that reference.")


if not participant and st.session_state.get("auth_experimenter"):
    uploads.allow(_session_id())
    from ui.dash import PRIORITY   # every experimenter page imports it anyway; participants never do

    # the dashboards' background warm-up computes its analyses between experimenter reruns, not during one (the
    # Studies page shown at sign-in included); it reads the rows every page needs meanwhile
    with PRIORITY.page(background=False):
        nav.run()
else:
    try:
        nav.run()
    except Exception as e:  # st.stop and st.rerun are not Exceptions: they pass through
        fault_page(e)
