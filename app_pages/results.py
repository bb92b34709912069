"""Results (experimenters): the ROSE main table, the perception-to-action gap, the bridges, failure kinds."""
import pandas as pd
import streamlit as st

from rose_core.analysis import LABELS, published_bridges, published_gap, table_columns
from rose_core.analysis.bundle import BundleError, bundle_zip
from rose_core.analysis.bundle.figures import chromium_path
from ui.dash import View, dots, failures, table

BRIDGE_RATES = ["G-Cnt", "G-Clk", "V-Clk", "mL-Cnt", "L-Clk", "L-Clk†", "Fail†"]

v = View()
st.title("Results")
v.header()

try:  # the paper bundle of this page's selection; built (figures in the system Chromium) only when clicked
    chromium_path()
    with_figures = True
except BundleError as e:
    with_figures = False
    st.warning(f"The paper bundle will have no figures: {e}")
st.download_button("Download the paper bundle", lambda: bundle_zip(v.db, v.ds, filters=v.filters, rules=v.rules,
                                                                   figures=with_figures),
                   "rose_paper_bundle.zip", "application/zip", key="results_bundle", on_click="ignore",
                   help="Every table (Markdown, LaTeX, CSV), the figures (SVG, PDF, PNG), the human-baseline "
                        "reporting checklist, a methods paragraph and a manifest, for this page's selection.")

st.markdown("#### Main table")
main = v.shown(v.compute("main"))
table(table_columns(main), "rose_main_table", "results_main", v.note())
st.caption("Avg = mean of the five template PASS rates (G-Cnt, L-Cnt, L-Clk, V-Clk, Excl-CS), as the ROSE spec "
           "defines it; 'pooled' is the share of all T1–T5 responses that pass. Intervals: Wilson (95 %) for rates "
           "over instances; bootstrap over participants (humans) or scenes (models, agents) for Avg and "
           "Glyph/Emoji/Pixel. Published rows come from the paper as printed: their Avg is shown beside the mean "
           "of their own template columns (the published Human Avg 98.8 is not the mean of its columns, 98.4).")
dots(main, [(m, m) for m in LABELS], "PASS per template and solver", "rose_pass_by_template", "results_fig_main",
     v.note(), connect=False)

st.markdown("#### Perception-to-action gap")
cond = st.toggle("Only scenes whose T1 (global count) answer was correct", key="results_conditioned")
gap = v.shown(v.compute("gap", cond))
if not cond:
    gap = pd.concat([gap, published_gap()], ignore_index=True)
table(gap, "rose_gap" + ("_conditioned" if cond else ""), "results_gap", v.note(),
      kinds={"scenes": "count", "Counting Avg": "rate", "Action Avg": "rate", "gap": "rate"})
dots(gap, [("Counting Avg", "Counting Avg"), ("Action Avg", "Action Avg")],
     "Perception-to-action gap: counting vs action" + (" (scenes with a correct T1)" if cond else ""),
     "rose_gap" + ("_conditioned" if cond else ""), "results_fig_gap", v.note())

st.markdown("#### Bridges")
br = pd.concat([v.shown(v.compute("bridges")), published_bridges()], ignore_index=True)
table(br, "rose_bridges", "results_bridges", v.note(),
      kinds={**{c: "rate" for c in BRIDGE_RATES}, "pairs": "count", "pairs(G-Cnt, G-Clk)": "count",
             "pairs(G-Clk, V-Clk)": "count"})
st.caption("mL-Cnt and L-Clk: PASS on the pairs (same solver unit, same scene) that answered both; "
           "L-Clk† = L-Clk on the pairs whose mL-Cnt was correct; Fail† = 100 − L-Clk†. "
           "p-values: McNemar's exact test on the paired answers (two-sided binomial test of the discordant pairs; "
           "McNemar 1947).")
dots(br, [("G-Cnt", "G-Cnt"), ("G-Clk", "G-Clk"), ("V-Clk", "V-Clk")], "Global-click bridge: G-Cnt → G-Clk → V-Clk",
     "rose_bridge_global", "results_fig_bridge", v.note())

st.markdown("#### Failure kinds")
fk = v.shown(v.compute("failures"))
if fk.empty:
    st.info("No failing response in this selection.")
else:
    table(fk, "rose_failure_kinds", "results_failures", v.note(), kinds={"n": "count", "total": "count", "share": "rate"})
    failures(fk, "Share of responses by failure kind, per solver and template", "rose_failure_kinds",
             "results_fig_failures", v.note())
