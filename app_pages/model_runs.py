"""Model runs (experimenters): import a harness's output, run the reference agents, see and remove runs."""
import tempfile
from pathlib import Path

import streamlit as st

from rose_core.benchmarks.rose.agents import AGENTS, run_agent
from rose_core.analysis import run_summaries
from rose_core.runs.formats import expected, file_extensions, run_formats
from rose_core.runs.importer import (
    ERRORED_POLICIES, RunImportError, delete_run, import_run, import_upload,
)
from rose_core.storage.runs import list_runs
from ui.dash import responses, table
from ui.plain import md_text
from ui.resources import dataset, store

db, ds = store(), dataset()
st.title("Model runs")
st.caption(f"Dataset hash `{ds.dataset_hash}`: runs are scored against these instances with the same scorer "
           "as participants.")

with st.expander("Import a run", expanded=True):
    with st.form("runs_import"):
        # the formats' own words (the registry's): what detection looks for, the names they are written under
        up = st.file_uploader(f"Run file: {md_text(expected())}", type=list(file_extensions()), key="runs_file")
        c1, c2, c3 = st.columns(3)
        solver = c1.text_input("Solver name", key="runs_solver")
        fmt = c2.selectbox("Format", ["auto", *run_formats()], key="runs_format")
        kind = c3.selectbox("Solver kind", ["model", "agent"], key="runs_kind")
        c1, c2 = st.columns(2)
        replace = c1.checkbox("Replace an earlier run of this solver", key="runs_replace")
        trust = c1.checkbox("Trust the ids (the file carries no dataset hash and nothing to verify it by)",
                            key="runs_trust_ids")
        errored = c2.selectbox("Errored samples (API failures, samples a stopped eval never ran, cut predictions)",
                               ERRORED_POLICIES,
                               key="runs_errored", help="skip: not stored, counted and shown; invalid: stored as "
                                                        "invalid answers")
        if st.form_submit_button("Import", type="primary"):
            if up is None:
                st.error("Choose a file first.")
            else:
                try:  # messages name the file as uploaded, never the server's temporary copy
                    res = import_upload(db, ds, up.name, up.getvalue(), solver, fmt=fmt, kind=kind,
                                        replace=replace, trust_ids=trust, errored=errored)
                    # what the file wrote (solver name, detected format, notes quoting its error texts) is
                    # shown as text, never rendered as Markdown (ui/plain.py)
                    st.success(f"Imported {res.responses} responses as {md_text(res.run_id)} "
                               f"(format {md_text(res.format)}: {md_text(res.detected)})"
                               + (" - replaced the earlier run." if res.replaced else "."))
                    if res.counts:
                        st.caption("Counted: " + md_text(", ".join(f"{k.replace('_', ' ')} {v}"
                                                                   for k, v in res.counts.items())))
                    for note in res.notes:
                        st.info(md_text(note))
                except RunImportError as e:
                    st.error("Import refused; nothing was stored.")
                    st.code("\n".join(e.problems[:50]), language=None)

with st.expander("Reference agents"):
    c1, c2 = st.columns([3, 1])
    names = c1.multiselect("Agents", AGENTS, default=list(AGENTS), key="runs_agents")
    split = c2.selectbox("Split", ["dev", "test", "all"], key="runs_agent_split")
    if st.button("Run and import", key="runs_agents_btn"):
        bar = st.progress(0.0)
        for k, name in enumerate(names):
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / f"{name}.jsonl"
                run_agent(name, ds, out, split=None if split == "all" else split)
                import_run(db, ds, out, name, kind="agent", replace=True, meta={"split": split})
            bar.progress((k + 1) / len(names), text=f"{name} done")
        st.success(f"Imported {len(names)} agent runs.")

st.markdown("#### Runs")
summary = run_summaries(db, responses(db))   # the frame the dashboards hold, not a new read
if summary.empty:
    st.info("No run yet.")
    st.stop()
table(summary, "rose_runs", "runs_summary",
      kinds={c: "rate" for c in summary.columns if c not in ("run", "solver", "kind", "responses")})
st.caption("Avg = mean of the five template PASS rates (T1..T5); pooled = share of all T1..T5 responses passed. "
           "Human rows pool the study's participants (main items only).")
meta = {r["run_id"]: r for r in list_runs(db)}
removable = [r for r, m in meta.items() if m["solver_kind"] != "human"]


def delete_section(removable: list[str]) -> None:
    """Remove a model or agent run, only after its id is typed (a click alone never deletes)."""
    with st.expander("Remove a run"):
        victim = st.selectbox("Run", removable, key="runs_delete_pick")
        typed = st.text_input(f"Type the run's id ({victim}) to confirm", key="runs_delete_confirm")
        if st.button("Remove the run", type="primary", disabled=typed != victim, key="runs_delete_btn"):
            try:  # another tab may have removed it since this page was drawn
                delete_run(db, victim)
            except RunImportError as e:
                st.error("Nothing removed: " + md_text("; ".join(e.problems)))
                return
            st.session_state.pop("runs_delete_confirm", None)
            st.rerun()


if removable:
    delete_section(removable)
