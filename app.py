"""ROSE Studio: one Streamlit app, pages chosen by who arrives.

A study link (`?study=…`) leads to the participant flow and nothing else. Experimenter
pages show gold answers, so they join the navigation only after the experimenter
password is entered (see README: ROSE_EXPERIMENTER_PASSWORD).
"""
import streamlit as st

from rose_core.auth import check_password, resolve_password
from ui.theme_options import cache_theme_options

cache_theme_options()  # ~1 ms less work in every rerun (see ui/theme_options.py)
st.set_page_config(page_title="ROSE Studio", page_icon="🌹", layout="wide")


def _configured_password() -> str | None:
    try:
        return st.secrets.get("experimenter_password")
    except Exception:  # no secrets.toml: Streamlit raises rather than returning None
        return None


def sign_in() -> None:
    st.title("ROSE Studio")
    st.write("Experimenter sign-in. Participants arrive through a study link.")
    password, source = resolve_password(_configured_password())
    with st.form("auth_form"):
        given = st.text_input("Experimenter password", type="password", key="auth_given")
        if st.form_submit_button("Sign in"):
            if check_password(given, password):
                st.session_state["auth_experimenter"] = True
                st.rerun()
            else:
                st.error("Wrong password.")
    if source.startswith("generated"):
        st.caption("No password is configured: the one generated at first start is printed in the server's "
                   "terminal and kept in data/.experimenter_password (or set ROSE_EXPERIMENTER_PASSWORD).")


participant = "study" in st.query_params or "part_pid" in st.session_state
if participant:
    nav = st.navigation([st.Page("pages/participant.py", title="ROSE study", icon="🌹")], position="hidden")
elif st.session_state.get("auth_experimenter"):
    nav = st.navigation({
        "Collect": [
            st.Page("pages/studies.py", title="Studies", icon="🧪", default=True),
            st.Page("pages/model_runs.py", title="Model runs", icon="🤖"),
            st.Page("pages/scene_explorer.py", title="Scene explorer", icon="🔎"),
        ],
        "Analyse": [
            st.Page("pages/results.py", title="Results", icon="📊"),
            st.Page("pages/agreement.py", title="Agreement and difficulty", icon="🤝"),
            st.Page("pages/participants_overview.py", title="Participants", icon="👥"),
            st.Page("pages/drilldown.py", title="Drill-down", icon="🔬"),
        ],
    })
else:
    nav = st.navigation([st.Page(sign_in, title="Sign in", icon="🔑")])
nav.run()
