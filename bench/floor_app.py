"""The floor: a one-button Streamlit app. A click is visible only after the server's rerun returns."""
import streamlit as st

n = st.session_state.get("floor_n", 0)
if st.button("click", key="floor_btn"):
    n += 1
    st.session_state["floor_n"] = n
st.text(f"ack={n}")
