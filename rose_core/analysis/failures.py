"""Share of responses per solver, template and primary failure kind (the scorer's precedence)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..benchmarks.rose.records import TEMPLATE_LABEL
from ..common.stats import interval, resampled, solver_rng, unit_codes, unit_sums
from .tables import BOOT, SEED, units_of

_KEYS = ["solver", "template", "failure"]


def failure_table(df: pd.DataFrame) -> pd.DataFrame:
    """Share of responses (%) per solver, template and primary failure kind (a missing failure is a pass; passes
    are left out of the table).

    Each distinct (solver, template, failure) is counted over integer codes, then the group-by runs over one row per
    distinct triple with its count: a group-by and merge over 100,000 rows of text cost a cold page more than the
    table, and grouping the few distinct rows keeps its rows, order and column types those of a group-by over all."""
    failure = df["failure"]
    if failure.dtype.kind == "f":   # no failure text at all (every value missing): typed as a float, not text
        failure = failure.astype(object)
    # Codes of the columns as they are (a missing failure is a code of its own, filled as a pass in the few rows
    # below; a failure stored as the text "pass" is a second row of the same triple, summed by the group-by).
    codes = [pd.factorize(col, use_na_sentinel=False)[0].astype(np.int64) for col in (df["solver"], df["template"],
                                                                                    failure)]
    sizes = [int(c.max()) + 1 if len(c) else 0 for c in codes]
    flat = (codes[0] * sizes[1] + codes[1]) * sizes[2] + codes[2]
    _, first, n = np.unique(flat, return_index=True, return_counts=True)
    few = df[["solver", "template"]].iloc[first].assign(failure=failure.iloc[first].fillna("pass"),
                                                           n=n.astype(np.int64))
    out = few.groupby(_KEYS)["n"].sum().reset_index()
    out["total"] = out.groupby(["solver", "template"])["n"].transform("sum")
    out["share"] = 100 * out["n"] / out["total"]
    out["label"] = out["template"].map(TEMPLATE_LABEL)
    return out[out["failure"] != "pass"]


def with_share_intervals(df: pd.DataFrame, table: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """`failure_table`'s rows with a 95% interval of each share ("share lo", "share hi") by the main table's rule:
    a bootstrap of the solver's whole units (participants for humans, scenes for a run; `tables.units_of`) on the
    solver's own seeded stream, each share recomputed from the resampled units' counts (`stats.interval`)."""
    out = table.assign(**{"share lo": np.nan, "share hi": np.nan})
    if table.empty:
        return out
    for solver, g in df.groupby("solver", sort=False):
        mine = np.flatnonzero((table["solver"] == solver).to_numpy())
        if not len(mine):
            continue
        codes, n_units = unit_codes(units_of(g))
        if n_units < 2:
            continue
        template = g["template"].to_numpy(dtype=object)
        failure = g["failure"].to_numpy(dtype=object)
        rows = table.iloc[mine]
        cols, vals, unit = [], [], []
        for j, (t, k) in enumerate(zip(rows["template"], rows["failure"])):
            on_t = template == t
            hit = on_t & (failure == k)
            cols += [np.full(int(hit.sum()), 2 * j), np.full(int(on_t.sum()), 2 * j + 1)]
            unit += [codes[hit], codes[on_t]]
            vals += [np.ones(int(hit.sum())), np.ones(int(on_t.sum()))]
        sums = unit_sums(np.concatenate(unit), n_units, np.concatenate(cols).astype(np.int64), 2 * len(rows),
                         np.concatenate(vals))
        S = resampled(sums, n_boot, solver_rng(seed, str(solver)))
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = 100 * S[:, 0::2] / S[:, 1::2]
        for j, pos in enumerate(mine):
            value = float(table["share"].iloc[pos])
            out.iloc[pos, out.columns.get_loc("share lo")], out.iloc[pos, out.columns.get_loc("share hi")] = \
                interval(shares[:, j], value, n_units)
    return out
