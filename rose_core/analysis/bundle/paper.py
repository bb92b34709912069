"""Every table the paper needs, from ONE selection of the database: the numbers the bundle's Markdown, LaTeX
and CSV files, its figures, its checklist and `report --json --tables` all show."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...benchmarks.rose.dataset import Dataset
from ...benchmarks.rose.records import GROUPS
from ...storage.runs import other_dataset_builds
from ...storage.studies import study_names as stored_study_names
from ...storage.connection import Store
from ..agreement import human_agreement, human_model_agreement
from ..bridges import bridge_table, published_bridges
from ..difficulty import DIFFICULTY_PARAMS, difficulty_table, instance_params
from ..failures import failure_table, with_share_intervals
from ..display import Kind
from ..majority import TIE_RULE
from ..gap import gap_table, published_gap
from ..report import report_from_selection, with_runs_warning, with_sgp
from ..sgp import SUMMARY_DEFINITION, SgpBundleTable, sgp_results_for_bundle
from ...instrument.config import load_studies
from ..selection import ExclusionRules, Filters, Selection, select_from_store, simulated_note
from ..difference import human_model_difference
from ..tables import INTERVALS_NOTE as tables_intervals_note, LABELS, N_NOTE as tables_n_note, with_n, with_n_types

GAP_COLUMNS = ["solver", "kind", "participants", "scenes", "responses", "Counting Avg", "Counting Avg lo",
               "Counting Avg hi", "Action Avg", "Action Avg lo", "Action Avg hi", "gap", "gap lo", "gap hi"]
N_NOTE, INTERVALS = tables_n_note, tables_intervals_note   # the pages' words: one definition of n and intervals


class BundleError(ValueError):
    """A bundle that cannot be made right (another dataset's database, a figure whose legend does not fit, …)."""


@dataclass(frozen=True)
class Column:
    key: str                   # the frame's column
    head: str                  # the header as printed
    kind: Kind = "rate"        # how `display` prints it (the one number format)
    lo: str | None = None      # columns holding the interval, when there is one
    hi: str | None = None
    best: bool = False         # the best model's value is set in bold


@dataclass(frozen=True)
class PaperTable:
    name: str                  # file stem: tables/<name>.md|.tex|.csv
    title: str
    caption: str
    frame: pd.DataFrame        # every number, at full precision (the CSV and the JSON)
    columns: tuple[Column, ...]  # what the Markdown and LaTeX show

    def records(self) -> list[dict]:
        return json_records(self.frame)


def _plain(v: object) -> object:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return None if math.isnan(float(v)) else float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if v is pd.NA or v is pd.NaT:
        return None
    return v


def json_records(df: pd.DataFrame) -> list[dict]:
    """Rows as JSON-ready dicts: numpy scalars as Python numbers at full precision, NaN as null."""
    return [{str(k): _plain(v) for k, v in r.items()} for r in df.to_dict(orient="records")]


def _rate(key: str, head: str | None = None, interval: bool = False, best: bool = True) -> Column:
    return Column(key, head or key, "rate", f"{key} lo" if interval else None, f"{key} hi" if interval else None, best)


def _main(table: pd.DataFrame) -> PaperTable:
    cols = (Column("solver", "Solver", "text"), Column("n", "n", "text"),
            *(_rate(m, interval=True) for m in (*LABELS, *GROUPS, "Avg")),
            _rate("VALID", interval=True, best=False))
    return PaperTable(
        "main", "ROSE main table",
        "PASS (%) per template, per subset group (mean of the five template rates within Glyph, Emoji, Pixel), "
        f"Avg (mean of the five template rates) and VALID. {INTERVALS} {N_NOTE} Published rows are the paper's "
        "printed numbers (no intervals). Bold: the best model (models only, never an agent or a human).",
        with_n(table), cols)


def _gap(df: pd.DataFrame, published: bool, conditioned: bool, n_boot: int, seed: int) -> PaperTable:
    g = gap_table(df, conditioned=conditioned, n_boot=n_boot, seed=seed).reindex(columns=GAP_COLUMNS)
    if published and not conditioned:
        g = pd.concat([g, published_gap().reindex(columns=GAP_COLUMNS)], ignore_index=True)
    cols = (Column("solver", "Solver", "text"), Column("n", "n", "text"),
            _rate("Counting Avg", "Counting", interval=True), _rate("Action Avg", "Action", interval=True),
            _rate("gap", "Gap", interval=True, best=False))
    what = ("Counting Avg = mean(G-Cnt, L-Cnt), Action Avg = mean(L-Clk, V-Clk, Excl-CS), gap = Counting − Action "
            "(percentage points)")
    if conditioned:
        return PaperTable("gap_conditioned", "Perception-to-action gap on scenes with a correct global count",
                          f"{what}, only on scenes whose T1 (global count) answer was correct (pooled humans: correct "
                          f"for at least half of them). {INTERVALS} {N_NOTE} Bold: the best model (models only).",
                          with_n(with_n_types(g)), cols)
    return PaperTable("gap", "Perception-to-action gap",
                      f"{what}. {INTERVALS} {N_NOTE} Bold: the best model (models only).", with_n(with_n_types(g)), cols)


def _bridges(df: pd.DataFrame, published: bool, n_boot: int, seed: int) -> tuple[PaperTable, PaperTable]:
    def iv(*names: str) -> list[str]:
        return [f"{n} {b}" for n in names for b in ("lo", "hi")]

    n_cols = ["solver", "kind", "participants", "scenes", "responses"]
    glob_cols = [*n_cols, "G-Cnt", "G-Clk", "V-Clk", *iv("G-Cnt", "G-Clk", "V-Clk"), "p(G-Cnt vs G-Clk)",
                 "pairs(G-Cnt, G-Clk)", "p(G-Clk vs V-Clk)", "pairs(G-Clk, V-Clk)"]
    matched_cols = [*n_cols, "mL-Cnt", "L-Clk", "L-Clk†", "Fail†", *iv("mL-Cnt", "L-Clk", "L-Clk†", "Fail†"), "pairs",
                    "p(mL-Cnt vs L-Clk)"]
    br = bridge_table(df, n_boot, seed).reindex(columns=list(dict.fromkeys(glob_cols + matched_cols)))
    if published:
        br = pd.concat([br, published_bridges()], ignore_index=True)
    glob, matched = with_n(with_n_types(br.reindex(columns=glob_cols))), with_n(with_n_types(br.reindex(columns=matched_cols)))
    g = PaperTable(
        "bridge_global", "Global-click bridge: G-Cnt → G-Clk → V-Clk",
        "PASS (%) of the global count (G-Cnt), clicking every target in the whole grid (G-Clk) and in the "
        "highlighted region (V-Clk), each over all its answers; p: McNemar's exact test on the paired answers (same "
        f"solver unit, same scene), beside the number of pairs it rests on. {INTERVALS} {N_NOTE}",
        glob.reset_index(drop=True),
        (Column("solver", "Solver", "text"), Column("n", "n", "text"), _rate("G-Cnt", interval=True),
         _rate("G-Clk", interval=True), _rate("V-Clk", interval=True),
         Column("p(G-Cnt vs G-Clk)", "p (G-Cnt vs G-Clk)", "p"), Column("pairs(G-Cnt, G-Clk)", "Pairs (G-Cnt, G-Clk)", "count"),
         Column("p(G-Clk vs V-Clk)", "p (G-Clk vs V-Clk)", "p"), Column("pairs(G-Clk, V-Clk)", "Pairs (G-Clk, V-Clk)", "count")))
    m = PaperTable(
        "bridge_matched", "Matched local count-to-click",
        "mL-Cnt: counting the targets of the L-Clk region; mL-Cnt and L-Clk: PASS on the pairs (same unit, same "
        "scene) that answered both; L-Clk†: L-Clk on the pairs whose mL-Cnt was correct; Fail† = 100 − L-Clk†; p: "
        f"McNemar's exact test of mL-Cnt vs L-Clk on those pairs. {INTERVALS} {N_NOTE}",
        matched.reset_index(drop=True),
        (Column("solver", "Solver", "text"), Column("n", "n", "text"), _rate("mL-Cnt", interval=True),
         _rate("L-Clk", interval=True), _rate("L-Clk†", interval=True),
         _rate("Fail†", interval=True, best=False), Column("pairs", "Pairs", "count"),
         Column("p(mL-Cnt vs L-Clk)", "p (mL-Cnt vs L-Clk)", "p")))
    return g, m


def _difference(df: pd.DataFrame, n_boot: int, seed: int) -> PaperTable:
    d = human_model_difference(df, n_boot, seed)
    d.insert(d.columns.get_loc("human items"), "items",
             [f"{h}/{m}" for h, m in zip(d["human items"].astype(object), d["model items"].astype(object))])
    return PaperTable(
        "human_model_difference", "Human − model difference per template",
        "Human PASS − solver PASS (percentage points) per template and for Avg, with a 95% interval from independent "
        "resamples of each side (the main table's: participants for the humans, scenes for the solver). The humans' "
        "rate is over the instances they answered (the study's sample), the solver's over every instance it "
        "answered ('Items H/S': the two counts); 'Same items': both rates restricted to the instances both answered, "
        "the difference and its interval on the items the test pairs on. p: "
        "McNemar's exact test (two-sided binomial test of the discordant pairs) of the humans' majority answer "
        f"({TIE_RULE}: 'Tied') against the solver's, on the instances both answered; '–' where p is undefined: for Avg (a mean of five template rates has no paired "
        "outcome) or without a shared, untied instance (the CSV's 'p undefined because' says which).", d,
        (Column("solver", "Solver", "text"), Column("template", "Template", "text"), _rate("human", "Human", best=False),
         _rate("model", "Solver", best=False), Column("human − model", "Human − solver", "rate", "human − model lo",
                                          "human − model hi"),
         Column("items", "Items H/S", "text"),
         Column("human − model (same items)", "Same items", "rate", "human − model (same items) lo",
                "human − model (same items) hi"),
         Column("participants", "People", "count"), Column("shared items", "Shared", "count"),
         Column("tied items", "Tied", "count"), Column("p (McNemar exact)", "p", "p")))


def _failures(df: pd.DataFrame, n_boot: int, seed: int) -> PaperTable:
    cols = ["solver", "template", "label", "failure", "n", "total", "share", "share lo", "share hi"]
    fk = with_share_intervals(df, failure_table(df), n_boot, seed).reindex(columns=cols).reset_index(drop=True) \
        if len(df) else pd.DataFrame(columns=cols)
    return PaperTable("failure_kinds", "Failure kinds",
                      "Share (%) of a solver's responses to a template whose primary failure kind (the scorer's "
                      "precedence: invalid, failure to abstain, region ignored, count anchoring, false click, missed "
                      f"target, repeated click, miscount) is the one named. {INTERVALS}", fk,
                      (Column("solver", "Solver", "text"), Column("label", "Template", "text"),
                       Column("failure", "Failure kind", "text"), Column("n", "n", "count"),
                       Column("total", "Responses", "count"), _rate("share", "Share", interval=True, best=False)))


def _agreement(df: pd.DataFrame, ds: Dataset) -> tuple[PaperTable, PaperTable]:
    humans = df[df["solver_kind"] == "human"]
    ha = human_agreement(humans, ds)
    hh = pd.DataFrame([{
        "alpha_cells": ha.alpha_cells, "alpha_counts": ha.alpha_counts, "click_units": ha.click_units,
        "count_units": ha.count_units, "panel_items": ha.panel_items, "panel_tied": ha.panel_tied,
        "panel_accuracy": ha.panel_accuracy,
        "individual_accuracy": ha.individual_accuracy,
        "raters_per_item": "; ".join(f"{k} raters: {n}" for k, n in ha.raters_per_item.items()),
        "notes": "; ".join(ha.notes) or ""}])
    h = PaperTable("agreement_human", "Human–human agreement",
                   "Krippendorff's α over per-cell click decisions (nominal) and counts (ratio), on instances with "
                   "two or more participants; the majority-vote panel's accuracy next to the mean individual's, "
                   f"both on the instances with a majority answer ({TIE_RULE}: 'Tied')."
                   + (f" Undefined ('–'): {hh['notes'].iloc[0]}." if len(hh) and hh["notes"].iloc[0] else ""), hh,
                   (Column("alpha_cells", "α (cell clicks)", "stat"), Column("alpha_counts", "α (counts)", "stat"),
                    Column("click_units", "Cell units", "count"), Column("count_units", "Count units", "count"),
                    Column("panel_items", "Instances", "count"), Column("panel_tied", "Tied", "count"),
                    _rate("panel_accuracy", "Panel acc.", best=False),
                    _rate("individual_accuracy", "Individual acc.", best=False),
                    Column("raters_per_item", "Raters per instance", "text")))
    hm = human_model_agreement(df) if len(humans) else pd.DataFrame()
    ec = "error consistency κ (mean over humans)"
    if hm.empty:
        hm = pd.DataFrame(columns=["solver", ec])
    for col in (ec, "κ SD", "κ Q1", "κ Q3", "humans", "humans skipped", "shared trials", "panel: tied items",
                "κ vs majority panel", "Cohen's κ vs majority panel", "r(human acc, model correct)"):
        if col not in hm:
            hm[col] = np.nan
    for col in ("κ undefined because", "panel κ undefined because"):
        hm[col] = hm[col].fillna("") if col in hm else ""
    m = PaperTable("agreement_model", "Human–model error consistency",
                   "Error consistency κ (Geirhos, Meding & Wichmann 2020) between the solver and each individual "
                   "participant on the instances both answered, averaged over participants (SD and quartiles across "
                   "them); pairs with fewer than 10 shared trials or c_exp = 1 are skipped. Then κ and Cohen's κ "
                   f"against the humans' majority vote ({TIE_RULE}: 'Tied'), and Pearson's r of per-instance human accuracy with the "
                   "solver's correctness. A κ with an observer who never erred (or was never right) is 0 by construction and "
                   "measures nothing: undefined ('–'), the reason in the CSV's 'κ undefined because' and 'panel κ undefined "
                   "because' columns.", hm.reset_index(drop=True),
                   (Column("solver", "Solver", "text"), Column(ec, "κ (mean)", "stat"), Column("κ SD", "SD", "stat"),
                    Column("κ Q1", "Q1", "stat"), Column("κ Q3", "Q3", "stat"), Column("humans", "Humans", "count"),
                    Column("humans skipped", "Skipped", "count"), Column("shared trials", "Trials", "count"),
                    Column("panel: tied items", "Tied", "count"), Column("κ vs majority panel", "κ (panel)", "stat"),
                    Column("Cohen's κ vs majority panel", "Cohen's κ (panel)", "stat"),
                    Column("r(human acc, model correct)", "r", "stat")))
    return h, m


def _difficulty(df: pd.DataFrame, ds: Dataset) -> PaperTable:
    params = instance_params(ds)
    parts = []
    for name in DIFFICULTY_PARAMS:
        d = difficulty_table(df, params, name)
        if len(d):
            d.insert(0, "parameter", name)
            d["value"] = d["value"].astype(str)
            parts.append(d[["parameter", "value", "solver", "n", "PASS"]])
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["parameter", "value", "solver", "n", "PASS"])
    return PaperTable("difficulty", "Difficulty by generation parameter",
                      "PASS (%) per value of each generation parameter of the scene (grid cells, targets, context "
                      "size, subset, EmojiStyle provider pair, PixelEdit changed pixels, ChineseGlyph similarity, "
                      "template), per solver, with the number of responses.", out,
                      (Column("parameter", "Parameter", "text"), Column("value", "Value", "text"),
                       Column("solver", "Solver", "text"), Column("n", "n", "count"), _rate("PASS", best=False)))


def _sgp(t: SgpBundleTable) -> tuple[PaperTable, ...]:
    """The SGP results table (the human row per modality beside the agents), when there is one."""
    if t.summary is None:
        return ()
    return (PaperTable(
        "sgp_results", "SGP (iVISPAR): participants beside the reference agents",
        f"{SUMMARY_DEFINITION}; the outcome columns: mean moves of each class per play. {t.note}. Model rows: the "
        "SGP results page, from the runs' episode logs.", t.summary,
        (Column("solver", "Solver", "text"), Column("modality", "Modality", "text"),
         Column("participants", "Participants", "count"), Column("plays", "Plays", "count"),
         Column("episodes", "Episodes", "count"),
         Column("solved_pct", "Solved", "rate", "solved_pct lo", "solved_pct hi"),
         Column("deviation", "Deviation", "number", "deviation lo", "deviation hi"),
         *(Column(k, k.replace("_", " ").capitalize(), "number")
           for k in ("effective", "ineffective", "occupied", "out_of_bounds", "illegal")))),)


def study_names(store: Store, study_ids: list[str]) -> list[dict]:
    with store.connect() as conn:
        rows = stored_study_names(conn, study_ids)
    return [{"study_id": sid, "name": name} for sid, name in rows]


def check_dataset(store: Store, ds: Dataset) -> None:
    """Refuse a dataset other than the one every run and study of the database was scored against (SGP studies
    are scored against their own episode build: their table is `sgp_results`)."""
    with store.connect() as conn:
        sgp = tuple(sorted({s.dataset_hash for s in load_studies(conn) if s.config.benchmark == "sgp"}))
        other = other_dataset_builds(conn, ds.dataset_hash, skip_hashes=sgp)
    if other:
        names = ", ".join(f"{w} ({h})" for w, h in other)
        raise BundleError(f"the database holds data of another dataset build than {ds.root} (hash {ds.dataset_hash}): "
                          f"{names}; pass --dataset with the build these were scored against")


@dataclass(frozen=True)
class PaperReport:
    report: dict               # `report --json` (the main table's report), plus "tables"
    tables: tuple[PaperTable, ...]
    selection: Selection

    def table(self, name: str) -> PaperTable:
        return next(t for t in self.tables if t.name == name)


def paper_report(store: Store, ds: Dataset, split: str | None = None, exclusions: bool = True,
                 published: bool = True, n_boot: int | None = None, seed: int | None = None, *,
                 filters: Filters | None = None, rules: ExclusionRules | None = None) -> PaperReport:
    """Every paper table from one selection (the dashboards' `select`; by default their default filters and
    exclusion rules, or a page's own `filters` and `rules`). `report["tables"]` holds each table's rows at full
    precision: what `report --json --tables` prints."""
    check_dataset(store, ds)
    if rules is None:
        rules = ExclusionRules() if exclusions else ExclusionRules.off()
    sel = select_from_store(store, filters or Filters(split=split), rules)
    report, main = report_from_selection(sel, published, n_boot, seed)
    df = sel.df
    studies = sorted(set(df.loc[df["solver_kind"] == "human", "study_id"]))
    main_t = _main(main)
    if studies:  # the human row names its studies
        main_t = replace(main_t, caption=main_t.caption + " Human: the participants of " + ", ".join(
            f"{s['name']} ({s['study_id']})" for s in study_names(store, studies)) + ", pooled.")
    n_boot, seed = report["boot"], report["seed"]
    sgp = sgp_results_for_bundle(store, n_boot, seed)
    tables = (main_t, _gap(df, published, False, n_boot, seed), _gap(df, published, True, n_boot, seed),
              *_bridges(df, published, n_boot, seed), _difference(df, n_boot, seed), _failures(df, n_boot, seed),
              *_agreement(df, ds), _difficulty(df, ds), *_sgp(sgp))
    report = {**report, "simulated_warning": simulated_note(sel.participants, sel.filters)}   # as report --json
    report = {**with_sgp(with_runs_warning(report, store, sel), store, sgp), "dataset_hash": ds.dataset_hash,
              "tables": {t.name: {"title": t.title, "rows": t.records()} for t in tables}}
    return PaperReport(report, tables, sel)
