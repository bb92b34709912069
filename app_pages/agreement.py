"""Agreement and difficulty (experimenters): human–human reliability, human–model consistency, PASS by parameter."""
import streamlit as st

from rose_core.analysis import DIFFICULTY_PARAMS, MIN_SHARED_TRIALS
from rose_core.analysis.charts import bar_figure, line_figure
from rose_core.analysis.display import fmt_rate, fmt_stat
from rose_core.analysis.majority import TIE_RULE
from ui.dash import View, chart, table

v = View()
st.title("Agreement and difficulty")
v.header()

st.markdown("#### Human – human")
ha = v.compute("human_agreement")
c1, c2, c3, c4 = st.columns(4)
pct = lambda x: fmt_rate(x) + ("" if x is None else " %")  # noqa: E731
undefined = "undefined: " + "; ".join(ha.notes) if ha.notes else ""
c1.metric("Krippendorff α, cell clicks (nominal)", fmt_stat(ha.alpha_cells),
          help=f"{ha.click_units} cell units" + (f" ({undefined})" if ha.alpha_cells is None else ""))
c2.metric("Krippendorff α, counts (ratio)", fmt_stat(ha.alpha_counts),
          help=f"{ha.count_units} count units" + (f" ({undefined})" if ha.alpha_counts is None else ""))
c3.metric("Panel (majority vote) accuracy", pct(ha.panel_accuracy))
c4.metric("Mean individual accuracy", pct(ha.individual_accuracy))
st.caption(f"Over {ha.panel_items} instances with two or more human raters and a majority answer "
           f"({ha.panel_tied} more without one left out: {TIE_RULE}; the individual accuracy is over the same "
           "instances). Raters per instance: "
           + ", ".join(f"{k} raters: {n} instances" for k, n in ha.raters_per_item.items()))
for note in ha.notes:   # why a statistic shows "–": undefined, never 0
    st.warning(f"Undefined: {note}.")

st.markdown("#### Human – model")
hm = v.shown(v.compute("human_model"))
if hm.empty:
    st.info("No model or agent shares instances with the humans in this selection.")
else:
    first = ["solver", "error consistency κ (mean over humans)", "κ SD", "κ Q1", "κ Q3", "humans", "humans skipped",
             "κ undefined because", "κ vs majority panel", "Cohen's κ vs majority panel", "panel κ undefined because"]
    hm = hm[[c for c in first if c in hm] + [c for c in hm.columns if c not in first]]   # κ and n in view at 1440 px
    table(hm, "rose_human_model_agreement", "agree_hm", v.note(),
          kinds={"panel: shared items": "count", "panel: tied items": "count", "panel: human acc": "rate", "panel: model acc": "rate",
                 "shared trials per human (median)": "number"})
    st.caption(f"Error consistency (Geirhos, Meding & Wichmann 2020): κ = (c_obs − c_exp) / (1 − c_exp), "
               "c_exp = p₁·p₂ + (1−p₁)(1−p₂), computed between the model and each individual participant on the "
               "instances both answered, then averaged over participants; spread across participants as SD "
               f"(ddof 1) and interquartile range (Q1–Q3). Pairs with fewer than {MIN_SHARED_TRIALS} shared trials, "
               "or where either side never erred or was never right (κ is then 0 by construction, or 0/0), get no "
               "κ and are counted under 'humans skipped'; 'κ undefined because' says why a solver has none. The 'vs majority panel' "
               "columns compare the model with the humans' majority vote per instance (correct when more than half "
               f"were, wrong when fewer; {TIE_RULE}, in 'panel: tied items'): the same formula and Cohen's κ (scikit-learn), and r = Pearson correlation of per-instance "
               "human accuracy with the model's correctness (SciPy).")
    ec = "error consistency κ (mean over humans)"
    if ec in hm and hm[ec].notna().any():
        bars = [(ec, hm[ec].tolist(), hm["κ SD"].tolist())] + [
            (col, hm[col].tolist(), None) for col in ("κ vs majority panel", "Cohen's κ vs majority panel") if col in hm]
        fig = bar_figure(hm["solver"].astype(str).tolist(), bars,
                         "Human–model agreement (error bars: SD across participants)", "κ")
        chart(fig, "rose_human_model_agreement", "agree_fig_hm", v.note())

st.markdown("#### Difficulty")
param = st.selectbox("Generation parameter", list(DIFFICULTY_PARAMS), key="agree_param")
diff = v.shown(v.compute("difficulty", param))
if diff.empty:
    st.info("No response has this parameter in the selection.")
else:
    table(diff, f"rose_difficulty_{DIFFICULTY_PARAMS[param]}", "agree_diff", v.note(),
          kinds={"value": "text", "n": "count", "PASS": "rate"})
    diff["value"] = diff["value"].astype(str)
    fig = line_figure(diff.sort_values("value"), "value", "PASS", "solver", f"PASS by {param}", param, "PASS (%)",
                      hover="n")
    chart(fig, f"rose_difficulty_{DIFFICULTY_PARAMS[param]}", "agree_fig_diff", v.note())
