"""Results (experimenters): the ROSE main table, the perception-to-action gap, the bridges, failure kinds."""
import pandas as pd
import streamlit as st

from rose_core.analysis import LABELS, published_bridges, published_gap, table_columns
from rose_core.analysis.bridges import BRIDGE_RATES
from rose_core.analysis.difference import ITEM_NOTE
from rose_core.analysis.display import format_frame
from rose_core.analysis.majority import TIE_RULE
from rose_core.analysis.tables import INTERVALS_NOTE, N_NOTE, SHOWN_FIRST, SHOWN_MORE, with_n
from rose_core.common.csv_safety import frame_bytes
from rose_core.common.stats import N_COLUMNS
from ui.dash import View, _suffix as file_suffix, dots, failures, table


def static_table(shown: pd.DataFrame, name: str, key: str, in_view: list[str] | None = None) -> None:
    """A table already in the one format, as a static table whose cells wrap after the value ("93.3" over "[79.9,
    100.0]"): solver, n and the intervals fit 1440 px beside the sidebar, where a one-line grid needs ~1,500 px;
    with its CSV (every column of `shown`; `in_view`: the columns the page shows, when not all fit)."""
    st.table(shown[in_view or list(shown.columns)].set_index(shown.columns[0]).map(wrap_after_value))
    st.download_button("CSV" if in_view is None else "CSV (every column)", lambda: frame_bytes(shown, "csv"),
                       f"{name}{file_suffix(v.note())}.csv", "text/csv", key=f"{key}_csv", on_click="ignore")


def wrap_after_value(text: str) -> str:
    """A shown cell that may break only between the value and its interval (non-breaking inside the interval)."""
    if isinstance(text, str) and "·" in text:          # n: "5 ppl · 215" in one piece
        return text.replace(" ", "\u00a0")
    return text.replace(", ", ",\u00a0") if isinstance(text, str) and "[" in text else text


def paper_bundle() -> bytes:
    """The paper bundle of this page's selection, figures by Matplotlib on the server; built only when clicked.
    Imported then too: Matplotlib's import costs a first Results page 0.4 s."""
    from rose_core.analysis.bundle import bundle_zip
    return bundle_zip(v.db, v.ds, filters=v.filters, rules=v.rules)


v = View()
st.title("Results")
v.header()

st.download_button("Download the paper bundle", paper_bundle,
                   "rose_paper_bundle.zip", "application/zip", key="results_bundle", on_click="ignore",
                   help="Every table (Markdown, LaTeX, CSV), the figures (SVG, PDF, PNG), the human-baseline "
                        "reporting checklist, a methods paragraph and a manifest, for this page's selection.")

st.markdown("#### Main table")
main = v.shown(v.compute("main"))
static_table(table_columns(main, metrics=SHOWN_FIRST).drop(columns=["kind"]), "rose_main_table", "results_main")
st.caption(f"{N_NOTE} Avg = mean of the five template PASS rates (G-Cnt, L-Cnt, L-Clk, V-Clk, Excl-CS), as the ROSE "
           f"spec defines it. {INTERVALS_NOTE} Published rows come from the paper as printed (no intervals).")
st.markdown("##### Subset groups, pooled rate and validity")
static_table(table_columns(main, metrics=SHOWN_MORE).drop(columns=["kind"]), "rose_main_table_groups",
             "results_main_groups")
st.caption("Glyph / Emoji / Pixel: the mean of the five template rates within the group; 'pooled' is the share of "
           "all T1–T5 responses that pass; VALID the share that follow the answer grammar. The published rows' "
           "Avg is shown beside the mean of their own template columns (the published Human Avg 98.8 is not the "
           "mean of its columns, 98.4).")
dots(main, [(m, m) for m in LABELS], "PASS per template and solver", "rose_pass_by_template", "results_fig_main",
     v.note(), connect=False)

# What fits 1440 px: both differences with their intervals, each side's items (its n) and the paired test; the
# rest (the same-items rates, responses, participants, shared and tied items) in the CSV.
DIFFERENCE_IN_VIEW = ["solver", "template", "human", "model", "human − model", "human − model (same items)",
                      "human items", "model items", "items both answered", "p (McNemar exact)"]
st.markdown("#### Human − model")
diff = v.shown(v.compute("difference"))   # per-model cached rows: new responses of one run recompute its row
if diff.empty:
    st.info("No model or agent beside the humans in this selection.")
else:
    static_table(format_frame(diff, {"human": "rate", "model": "rate", "participants": "count",
                                     "human items": "count", "model items": "count", "items both answered": "count",
                                     "human (same items)": "rate", "model (same items)": "rate",
                                     "human responses": "count", "model responses": "count", "shared items": "count",
                                     "tied items": "count", "p undefined because": "text"},
                              intervals=("human − model", "human − model (same items)"), drop=("kind",)),
                 "rose_human_model_difference", "results_difference", in_view=DIFFERENCE_IN_VIEW)
    st.caption("Human PASS − solver PASS in percentage points, with a 95 % interval from independent resamples of "
               f"each side (the main table's: participants for the humans, scenes for the solver). {ITEM_NOTE}. "
               "p: McNemar's exact test (McNemar 1947) of the humans' majority answer against the solver's on the "
               f"instances both answered ({TIE_RULE}: 'tied items').")

st.markdown("#### Perception-to-action gap")
cond = st.toggle("Only scenes whose T1 (global count) answer was correct", key="results_conditioned")
gap = v.shown(v.compute("gap", cond))
if not cond:
    gap = pd.concat([gap, published_gap()], ignore_index=True)
table(with_n(gap), "rose_gap" + ("_conditioned" if cond else ""), "results_gap", v.note(),
      intervals=("Counting Avg", "Action Avg", "gap"), drop=N_COLUMNS)
st.caption(f"{N_NOTE} {INTERVALS_NOTE} The gap's interval comes from the same resamples as its two means.")
dots(gap, [("Counting Avg", "Counting Avg"), ("Action Avg", "Action Avg")],
     "Perception-to-action gap: counting vs action" + (" (scenes with a correct T1)" if cond else ""),
     "rose_gap" + ("_conditioned" if cond else ""), "results_fig_gap", v.note())

st.markdown("#### Bridges")
br = pd.concat([v.shown(v.compute("bridges")), published_bridges()], ignore_index=True)
table(with_n(br), "rose_bridges", "results_bridges", v.note(),
      kinds={"pairs": "count", "pairs(G-Cnt, G-Clk)": "count", "pairs(G-Clk, V-Clk)": "count"},
      intervals=BRIDGE_RATES, drop=N_COLUMNS)
st.caption("mL-Cnt and L-Clk: PASS on the pairs (same solver unit, same scene) that answered both; "
           "L-Clk† = L-Clk on the pairs whose mL-Cnt was correct; Fail† = 100 − L-Clk†. "
           "p-values: McNemar's exact test on the paired answers (two-sided binomial test of the discordant pairs; "
           f"McNemar 1947). {INTERVALS_NOTE}")
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
