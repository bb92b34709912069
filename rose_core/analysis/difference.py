"""Human − model: per template (and Avg) the difference of PASS rates with its 95% interval, and the paired exact
test on the items both answered. What a reader asks of a human baseline ("are the humans better on this template,
and by how much?") answered with the same resampling as the main table."""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..benchmarks.rose.records import MAIN_TEMPLATES, TEMPLATE_LABEL
from ..common.stats import difference_interval, solver_rng
from .answers import AnalysisInputError
from .bridges import _mcnemar
from .majority import majority_outcome
from .tables import BOOT, SEED, Cores, RowResamples, Summary, core_of, row_resamples, summarize_frame, with_n_types

DIFFERENCE_COLUMNS = ["solver", "kind", "template", "human", "model", "human − model", "human − model lo",
                      "human − model hi", "human items", "model items", "items both answered",
                      "human (same items)", "model (same items)", "human − model (same items)",
                      "human − model (same items) lo", "human − model (same items) hi",
                      "participants", "human responses", "model responses", "shared items",
                      "tied items", "p (McNemar exact)", "p undefined because"]
ITEM_NOTE = ("human: PASS over the instances the participants answered (the study's sample: 'human items'); model: "
             "over every instance the run answered ('model items'), so the two rates can rest on different items; "
             "'same items': both sides restricted to the instances both answered ('items both answered'), the "
             "items McNemar's test pairs on ('shared items', those with a human majority, plus 'tied items')")


def _difference(humans: pd.DataFrame, model: pd.DataFrame, n_boot: int, seed: int, solver: str,
                known: dict[int, tuple[Summary, RowResamples]] | None = None) -> dict[str, dict[str, float | None]]:
    """Per template label (and Avg) the humans' and the model's PASS on the frames given (the items both
    answered) and their difference with its interval, by the same resampling as the full-item columns.

    `known`: summaries and resamples already computed, by `id` of the frame they were computed from; a side whose
    rows are all of that frame's (the items both answered are all of its items) reuses them: the same rows and
    stream give the same values, and at 100,000 human rows resampling them again costs most of a model's row."""
    keys = ("human (same items)", "model (same items)", "human − model (same items)",
            "human − model (same items) lo", "human − model (same items) hi")
    labels = [TEMPLATE_LABEL.get(t, t) for t in [*MAIN_TEMPLATES, "Avg"]]
    if humans.empty or model.empty:
        return {lab: dict.fromkeys(keys, None) for lab in labels}
    known = known or {}
    hs, h_rs = known.get(id(humans)) or (summarize_frame(humans), row_resamples(
        humans, n_boot, solver_rng(seed, str(humans["solver"].iloc[0]))))
    ms, m_rs = known.get(id(model)) or (summarize_frame(model), row_resamples(model, n_boot, solver_rng(seed, solver)))
    out = {}
    for lab in labels:
        hv = hs.avg if lab == "Avg" else hs.pass_rate.get(lab)
        mv = ms.avg if lab == "Avg" else ms.pass_rate.get(lab)
        diff = None if hv is None or mv is None else hv - mv
        lo, hi = difference_interval(h_rs.stats[lab] - m_rs.stats[lab], hv, mv, h_rs.n_units, m_rs.n_units) \
            if h_rs.stats and m_rs.stats and diff is not None else (np.nan, np.nan)
        out[lab] = dict(zip(keys, (hv, mv, diff, lo, hi)))
    return out


SAME_ITEMS_KEPT = 8   # sets of items both answered whose humans' rows a `HumanSide` keeps (a copy each)


@dataclass(frozen=True)
class HumanSide:
    """The humans' half of every row of the table, the same for each model: prepared once per human data (the
    dashboards cache it by the humans' data version), so a model's row does not redo it (its 'same items' columns
    still resample the humans on the items both answered)."""
    humans: pd.DataFrame           # the human responses to the main templates
    h_sum: Summary
    h_rs: RowResamples
    h_n: dict[str, int | None]
    n_boot: int
    seed: int
    responses: dict[str, int]      # per main template: the human responses,
    items: dict[str, int]          # per main template and Avg: the instances they answered,
    item_index: pd.Index           # and those instances

    def humans_on(self, items: pd.Index) -> tuple[pd.DataFrame, tuple[Summary, RowResamples]]:
        """The humans' rows on `items` with their summary and resamples (the stream of their whole frame's), once
        per set of items."""
        key = hashlib.sha256("\n".join(sorted(map(str, items))).encode()).hexdigest()
        with self.same_items_lock:   # shared by the sessions and the warm-up (`ui.dash._human_difference_side`)
            got = self.same_items.get(key)
        if got is None:   # two threads may both compute it (the same values): the first one kept
            rows = self.humans[self.humans["instance_id"].isin(items)]
            got = (rows, (summarize_frame(rows), row_resamples(
                rows, self.n_boot, solver_rng(self.seed, str(self.humans["solver"].iloc[0])))))
            with self.same_items_lock:
                if key in self.same_items:
                    return self.same_items[key]
                while len(self.same_items) >= SAME_ITEMS_KEPT:     # the oldest set of items goes first
                    self.same_items.pop(next(iter(self.same_items)))
                self.same_items[key] = got
        return got
    majority: dict[str, tuple[pd.Series, pd.Index]]  # the humans' majority answer per instance and the tied
                                                      # instances (`majority.majority_outcome`)
    # items both answered (a digest) -> the humans' rows on them, their summary and resamples: runs over the same
    # items share them (filled as models' rows are computed, the last SAME_ITEMS_KEPT sets kept)
    same_items: dict = field(default_factory=dict, compare=False)
    same_items_lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)


def human_side(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED, cores: Cores | None = None) -> HumanSide | None:
    """The humans' summary, resamples and counts of `df`'s human rows (None: no human answered a main template).
    `cores`: where the humans' `SolverCore` comes from (default: computed here)."""
    main = df[df["template"].isin(MAIN_TEMPLATES)]
    humans = main[main["solver_kind"].to_numpy(dtype=object) == "human"]
    if humans.empty:
        return None
    solver = str(humans["solver"].iloc[0])
    core = core_of(cores, solver, humans, n_boot, seed)
    h_sum, h_rs, h_n = core.summary, core.resamples, core.n
    answers = humans.groupby(["participant_id", "instance_id"]).size()
    for (p, i), n in answers[answers.to_numpy() > 1].items():   # (not every pair: their tuples cost 0.25 s)
        raise AnalysisInputError(f"human − model: participant {p!r} answers instance {i!r} {n} times; each "
                                 "observer must answer a trial once")
    of = {t: humans[humans["template"] == t] for t in MAIN_TEMPLATES}
    items = {t: int(h["instance_id"].nunique()) for t, h in of.items()}
    items["Avg"] = int(humans["instance_id"].nunique())
    return HumanSide(humans, h_sum, h_rs, h_n, n_boot, seed, responses={t: len(h) for t, h in of.items()},
                     items=items, item_index=pd.Index(humans["instance_id"].unique()),
                     majority={t: _object_indexed(*majority_outcome(h)) for t, h in of.items()})


def _object_indexed(panel: pd.Series, tied: pd.Index) -> tuple[pd.Series, pd.Index]:
    """The majority's instance ids as plain strings: pandas infers its Arrow text type for a group-by's keys, whose
    `isin` against every model's instances looped in Python (0.04 s a model at 100,000 human rows)."""
    return panel.set_axis(pd.Index(panel.index, dtype=object)), pd.Index(tied, dtype=object)


def human_model_difference(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED,
                           side: HumanSide | None = None, cores: Cores | None = None) -> pd.DataFrame:
    """Per model or agent and template (then Avg): human PASS − model PASS in percentage points, a 95% percentile
    interval of the difference from independent resamples of each side (participants for the humans, scenes for
    the run: each side's own main-table resamples, same streams), and McNemar's exact test (McNemar 1947: a
    two-sided binomial test of the discordant pairs) of the humans' majority answer against the model's on the
    instances both answered. Avg has no paired test (it is a mean of five rates, not one paired outcome).
    The humans answered the study's sample, a run usually every instance: `ITEM_NOTE` says which items each rate
    is over, and the 'same items' columns give both rates and their difference on the instances both answered,
    the items the test pairs on.

    `side`: the humans' half already prepared (`human_side`, same n_boot and seed); `df`'s own human rows are
    then not read. The dashboards pass one model's rows at a time: its rows are what a model's row depends on.
    `cores`: where a model's `SolverCore` comes from (default: computed here)."""
    main = df[df["template"].isin(MAIN_TEMPLATES)]
    kind = main["solver_kind"].to_numpy(dtype=object)
    if (kind != "human").sum() == 0:
        return pd.DataFrame(columns=DIFFERENCE_COLUMNS)
    if side is None:
        side = human_side(main, n_boot, seed)
    elif (side.n_boot, side.seed) != (n_boot, seed):
        raise ValueError(f"human − model: the humans' side was prepared with n_boot={side.n_boot}, seed={side.seed}; "
                         f"asked for n_boot={n_boot}, seed={seed}")
    if side is None:
        return pd.DataFrame(columns=DIFFERENCE_COLUMNS)
    h_sum, h_rs, h_n = side.h_sum, side.h_rs, side.h_n
    rows = []
    for solver, g in main[kind != "human"].groupby("solver", sort=False):
        if g["instance_id"].duplicated().any():
            raise AnalysisInputError(f"human − model ({solver}): instance "
                                     f"{g.loc[g['instance_id'].duplicated(), 'instance_id'].iloc[0]!r} answered twice")
        core = core_of(cores, str(solver), g, n_boot, seed)
        m_sum, m_rs = core.summary, core.resamples
        humans = side.humans
        both_items = side.item_index.intersection(pd.Index(g["instance_id"]))
        # a side whose every item the other answered is its whole frame, whose summary and resamples are known
        known = {id(g): (m_sum, m_rs)}
        if len(both_items) == len(side.item_index):
            h_same = humans
            known[id(humans)] = (h_sum, h_rs)
        elif len(both_items):
            h_same, h_known = side.humans_on(both_items)
            known[id(h_same)] = h_known
        else:
            h_same = humans.iloc[:0]
        g_in = g["instance_id"].isin(both_items)
        g_same = g if bool(g_in.all()) else g[g_in]
        same = _difference(h_same, g_same, n_boot, seed, str(solver), known=known)
        # per template, the model's rows as masks over plain arrays (a frame filtered per template and column
        # costs more than the rest of a model's row)
        tmpl, inst = g["template"].to_numpy(dtype=object), g["instance_id"].to_numpy(dtype=object)
        passed, in_both = g["passed"].to_numpy(), g_in.to_numpy()
        for t in [*MAIN_TEMPLATES, "Avg"]:
            lab = TEMPLATE_LABEL.get(t, t)
            hv = h_sum.avg if t == "Avg" else h_sum.pass_rate[lab]
            mv = m_sum.avg if t == "Avg" else m_sum.pass_rate[lab]
            both = bool(h_rs.stats) and bool(m_rs.stats)
            diff = None if hv is None or mv is None else hv - mv
            lo, hi = difference_interval(h_rs.stats[lab] - m_rs.stats[lab], hv, mv, h_rs.n_units, m_rs.n_units) \
                if both and diff is not None else (np.nan, np.nan)
            at = np.ones(len(g), dtype=bool) if t == "Avg" else tmpl == t
            row = {"solver": solver, "kind": g["solver_kind"].iloc[0], "template": lab, "human": hv, "model": mv,
                   "human − model": diff, "human − model lo": lo, "human − model hi": hi,
                   "human items": side.items[t], "model items": len(pd.unique(inst[at])),
                   "items both answered": int(in_both[at].sum()), **same[lab],
                   "participants": h_n["participants"],
                   "human responses": side.responses[t] if t != "Avg" else h_n["responses"],
                   "model responses": int(at.sum())}
            if t == "Avg":
                row.update({"shared items": None, "tied items": None, "p (McNemar exact)": None,
                            "p undefined because": "a mean of five template rates has no paired outcome"})
            else:
                panel, tied_at = side.majority[t]
                mine = pd.Index(inst[at], dtype=object)   # (pandas would convert the ids to its Arrow text first)
                where = panel.index.get_indexer(mine)     # each of the model's instances in the majority (-1: none)
                shared = where >= 0
                tied = int(tied_at.isin(mine).sum())
                p = _mcnemar(panel.to_numpy()[where[shared]], passed[at][shared]) if shared.any() else None
                row.update({"shared items": int(shared.sum()), "tied items": tied, "p (McNemar exact)": p,
                            "p undefined because": "" if p is not None else "no instance answered by both with a "
                                                                            "human majority"})
            rows.append(row)
    out = pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)
    for col in ("human items", "model items", "items both answered", "human responses", "model responses",
                "shared items", "tied items"):
        out[col] = out[col].astype("Int64")
    return with_n_types(out)


