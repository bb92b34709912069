"""The main table for scripts (`python -m rose_core report --json`), through the dashboards' own selection path
(`select`) and per-solver seeded bootstrap, so the Results page and the report show the same numbers."""
from __future__ import annotations

import pandas as pd

from ..storage.connection import Store
from .display import json_rows
from .frame import scorer_note, scorer_versions
from .selection import (ExclusionRules, Filters, Selection, repeated_people_note, select_from_store,
                        simulated_note)
from .tables import BOOT, SEED, main_table


def report_data(store: Store, split: str | None = None, exclusions: bool = True, published: bool = True,
                n_boot: int | None = None, seed: int | None = None,
                include_simulated: bool = False) -> tuple[dict, pd.DataFrame]:
    """(the JSON report, the main table). Defaults are the dashboards': standard exclusions, BOOT resamples,
    base seed SEED, real participants only (`include_simulated`: a dry run's simulated ones too, said loudly in
    "simulated_warning")."""
    rules = ExclusionRules() if exclusions else ExclusionRules.off()
    origins = ("participant", "simulated") if include_simulated else ("participant",)
    sel = select_from_store(store, Filters(split=split, origins=origins), rules)
    report, table = report_from_selection(sel, published, n_boot, seed)
    report = {**report, "simulated_warning": simulated_note(sel.participants, sel.filters)}
    return with_sgp(with_runs_warning(report, store, sel), store), table


def with_runs_warning(report: dict, store: Store, sel: Selection) -> dict:
    """The report with "runs_warning": the runs of the selection whose import left samples out (`--errored
    skip`), whose rates are then over fewer samples than the dataset holds; None when none did."""
    from ..runs.importer import skipped_note, skipped_samples

    return {**report, "runs_warning": skipped_note(skipped_samples(store, set(sel.df["run_id"])))}


def with_sgp(report: dict, store: Store, results=None) -> dict:
    """The report with SGP's board-state inference table ("sgp_inference", per build, solver and modality; the
    SGP results page's numbers) and the SGP results' human row beside the agents ("sgp_results": its rows and
    a note on what it covers, or why there is none; `results`: `sgp_results_for_bundle`'s, when already made),
    under the same resamples and seed: `report --json` and the paper bundle's report.json both carry them."""
    from .sgp import inference_report, sgp_results_for_bundle

    if results is None:
        results = sgp_results_for_bundle(store, report["boot"], report["seed"])
    rows = [] if results.summary is None else json_rows(results.summary)
    return {**report, "sgp_inference": inference_report(store, report["boot"], report["seed"]),
            "sgp_results": {"note": results.note, "rows": rows}}


def report_from_selection(sel: Selection, published: bool = True, n_boot: int | None = None,
                          seed: int | None = None) -> tuple[dict, pd.DataFrame]:
    """`report_data` over a selection already made (the paper bundle builds every table from one selection)."""
    rules, split = sel.rules, sel.filters.split
    n_boot, seed = BOOT if n_boot is None else n_boot, SEED if seed is None else seed
    table = main_table(sel.df, n_boot=n_boot, seed=seed, published=published)
    rows = json_rows(table)
    versions = scorer_versions(sel.df)
    return {"scorer_versions": versions, "scorer_warning": scorer_note(versions),
            "people_warning": repeated_people_note(sel.df, sel.participants),
            "avg_definition": "mean of the five template PASS rates (T1..T5); 'pooled' is the instance rate",
            "intervals": "95% for every cell of a row from one rule: an expanded percentile bootstrap (Hesterberg "
                         "2015) over whole participants (humans) or whole scenes (models, agents), "
                         f"{n_boot} resamples, each solver's stream seeded from (seed {seed}, solver name); a rate "
                         "or mean at 0 or 100% with no spread gets Wilson's interval over those units",
            "n": "participants (humans; null for a model or agent), scenes and responses: integers, null for a "
                 "published row",
            "exclusions": rules.describe(), "participants_excluded": sel.n_excluded, "split": split or "all",
            "boot": n_boot, "seed": seed, "rows": rows}, table
