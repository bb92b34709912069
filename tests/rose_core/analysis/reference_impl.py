"""The analyses as they were computed before the cold-start pass (pandas group-bys over whole frames), kept
verbatim as the reference the vectorised versions are checked against (`test_vectorised.py`): every number must
come out identical."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from rose_core.analysis.agreement import _CELL, _Context
from rose_core.analysis.answers import AnalysisInputError
from rose_core.analysis.frame import _COLUMNS, _FLOATS, _INTS
from rose_core.common.solver_labels import label_of
from rose_core.analysis.selection import _longest_streaks
from rose_core.storage.connection import Store
from rose_core.storage.columns import read_frame
from rose_core.storage.responses import responses_query
from rose_core.common.stats import solver_rng, wilson
from rose_core.benchmarks.rose.metrics import ACTION, COUNTING, Summary, mean_of_rates, rate
from rose_core.benchmarks.rose.records import GROUPS, MAIN_TEMPLATES, SUBSET_GROUP, TEMPLATE_LABEL

if TYPE_CHECKING:
    from rose_core import Dataset

BOOT, SEED = 1000, 0

def _bootstrap_means(g: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    """95% percentile intervals of Avg and Glyph/Emoji/Pixel, resampling units (participants or scenes)."""
    main = g[g["template"].isin(MAIN_TEMPLATES)]
    units = main["unit"].astype("category")
    cols = [(grp, t) for grp in (None, *GROUPS) for t in MAIN_TEMPLATES]
    codes = units.cat.codes.to_numpy().astype(np.int64)  # int8 for few units: would overflow below
    n_units = len(units.cat.categories)
    if n_units < 2:
        return {}
    t_idx = main["template"].map({t: k for k, t in enumerate(MAIN_TEMPLATES)}).to_numpy()
    g_idx = main["subset"].map({s: 1 + GROUPS.index(g) for s, g in SUBSET_GROUP.items()}).to_numpy()
    passed = main["passed"].to_numpy().astype(float)
    width = len(cols)
    flat = np.concatenate([codes * width + t_idx, codes * width + g_idx * 5 + t_idx])  # overall and per group
    P = np.bincount(flat, weights=np.concatenate([passed, passed]), minlength=n_units * width).reshape(n_units, width)
    N = np.bincount(flat, minlength=n_units * width).reshape(n_units, width).astype(float)
    # Each resample draws units with replacement: how often each unit is drawn is multinomial, so the
    # resampled sums are one matrix product (memory n_boot x units, not n_boot x units x metrics).
    draws = rng.integers(0, n_units, size=(n_boot, n_units)) + (np.arange(n_boot) * n_units)[:, None]
    W = np.bincount(draws.ravel(), minlength=n_boot * n_units).reshape(n_boot, n_units).astype(float)
    Ps = W @ P
    Ns = W @ N
    with np.errstate(invalid="ignore", divide="ignore"):
        R = 100 * Ps / Ns
    out = {}
    for k, gname in enumerate((None, *GROUPS)):
        block = R[:, k * 5:(k + 1) * 5]
        ok = ~np.isnan(block).any(axis=1)
        if ok.sum() >= n_boot // 2:
            means = block[ok].mean(axis=1)
            out["Avg" if gname is None else gname] = (float(np.percentile(means, 2.5)),
                                                     float(np.percentile(means, 97.5)))
    return out


PAIR_KEY = ["participant_id", "scene_id"]


def paired(g: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Pairs of answers to templates a and b by the same unit (participant; '' for a run) on the same scene.

    Refuses (AnalysisInputError) when a unit answered one scene's template twice: a pair must be one trial
    against one trial, never a silently chosen one of several."""
    sides = []
    for t in (a, b):
        side = g[g["template"] == t]
        dup = side.duplicated(PAIR_KEY, keep=False)
        if dup.any():
            first = side.loc[dup, PAIR_KEY].iloc[0]
            raise AnalysisInputError(
                f"McNemar pairs {a} vs {b}: {int(dup.sum())} answers to {t} repeat a (unit, scene), e.g. unit "
                f"{first['participant_id']!r} on scene {first['scene_id']!r} (solver {g['solver'].iloc[0]!r}); "
                "each unit must answer a scene's template once")
        sides.append(side[PAIR_KEY + ["passed"]])
    return sides[0].merge(sides[1], on=PAIR_KEY, suffixes=("_a", "_b"))


def mcnemar_p(pairs: pd.DataFrame) -> float | None:
    """McNemar's test (McNemar 1947) of paired binary outcomes, always in its exact form: a two-sided binomial
    test of the discordant pairs against p = 1/2 (statsmodels `mcnemar(exact=True)`). No difference at all
    (b = c) gives p = 1.0; the chi-square approximation, with or without continuity correction, does not.
    None when there is no pair; refuses outcomes that are not 0/1 or are missing."""
    from statsmodels.stats.contingency_tables import mcnemar

    if pairs.empty:
        return None
    for col in ("passed_a", "passed_b"):
        v = pairs[col]
        if v.isna().any() or not v.isin([0, 1, True, False]).all():
            got = sorted(map(str, v.unique()))[:5]
            raise AnalysisInputError(f"McNemar: {col} must be 0/1 for every pair (got {got})")
    a, b = pairs["passed_a"].astype(bool), pairs["passed_b"].astype(bool)
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    return float(mcnemar(table, exact=True).pvalue)



def summarize_frame(df: pd.DataFrame) -> Summary:
    """`metrics.summarize` for a frame, by group sums instead of a Python loop (same definitions; a test
    checks both agree)."""
    by_t = df.groupby("template", observed=True).agg(n=("passed", "size"), p=("passed", "sum"), v=("valid", "sum"))
    cnt = {t: (int(by_t.at[t, "n"]), int(by_t.at[t, "p"]), int(by_t.at[t, "v"])) if t in by_t.index else (0, 0, 0)
           for t in TEMPLATE_LABEL}
    rates = {t: rate(p, n) for t, (n, p, _) in cnt.items()}
    main = df[df["template"].isin(MAIN_TEMPLATES)]
    grp = main.assign(group=main["subset"].map(SUBSET_GROUP)).groupby(["group", "template"], observed=True)["passed"]
    gsum, gn = grp.sum(), grp.size()
    groups = {}
    for gname in GROUPS:
        present = [t for t in MAIN_TEMPLATES if (gname, t) in gn.index]
        groups[gname] = mean_of_rates(rate(int(gsum.get((gname, t), 0)), int(gn.get((gname, t), 0)))
                              for t in MAIN_TEMPLATES) if present else None
    main_n = sum(cnt[t][0] for t in MAIN_TEMPLATES)
    counting, action = mean_of_rates(rates[t] for t in COUNTING), mean_of_rates(rates[t] for t in ACTION)
    return Summary(
        n={TEMPLATE_LABEL[t]: cnt[t][0] for t in TEMPLATE_LABEL},
        pass_rate={TEMPLATE_LABEL[t]: rates[t] for t in TEMPLATE_LABEL},
        valid_rate={TEMPLATE_LABEL[t]: rate(cnt[t][2], cnt[t][0]) for t in TEMPLATE_LABEL},
        groups=groups, avg=mean_of_rates(rates[t] for t in MAIN_TEMPLATES),
        pooled=rate(sum(cnt[t][1] for t in MAIN_TEMPLATES), main_n),
        valid=rate(sum(cnt[t][2] for t in MAIN_TEMPLATES), main_n),
        counting_avg=counting, action_avg=action, gap=None if counting is None or action is None else counting - action)


def solver_row(solver: str, g: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> dict:
    """One solver's main-table row from that solver's responses only (see `main_table`)."""
    s = summarize_frame(g)
    main = g[g["template"].isin(MAIN_TEMPLATES)]
    row: dict = {"solver": solver, "kind": g["solver_kind"].iloc[0], "responses": len(main),
                 "units": main["unit"].nunique()}
    for t in MAIN_TEMPLATES:
        lab = TEMPLATE_LABEL[t]
        sub = main[main["template"] == t]
        row[lab] = s.pass_rate[lab]
        row[f"{lab} lo"], row[f"{lab} hi"] = wilson(int(sub["passed"].sum()), len(sub))
    for gname in GROUPS:
        row[gname] = s.groups[gname]
    row["Avg"] = s.avg
    row["Avg (mean of templates)"] = s.avg
    row["pooled"] = s.pooled
    row["pooled lo"], row["pooled hi"] = wilson(int(main["passed"].sum()), len(main))
    row["VALID"] = s.valid
    row["VALID lo"], row["VALID hi"] = wilson(int(main["valid"].sum()), len(main))
    for name, (lo, hi) in _bootstrap_means(g, n_boot, solver_rng(seed, solver)).items():
        row[f"{name} lo"], row[f"{name} hi"] = lo, hi
    return row


def main_rows(df: pd.DataFrame, n_boot: int = BOOT, seed: int = SEED) -> pd.DataFrame:
    """The measured solvers' rows, in order of first appearance (the frame's response order)."""
    return pd.DataFrame([solver_row(str(solver), g, n_boot, seed) for solver, g in df.groupby("solver", sort=False)])


def _majority_correct_scenes(df: pd.DataFrame) -> set[str]:
    t1 = df[df["template"] == "T1"].groupby("scene_id")["passed"].mean()
    return set(t1[t1 >= 0.5].index)


def gap_table(df: pd.DataFrame, conditioned: bool = False) -> pd.DataFrame:
    """Counting Avg, Action Avg and their gap per solver; conditioned=True keeps only scenes whose T1
    answer was correct (for pooled humans: answered correctly by at least half of them)."""
    rows = []
    for solver, g in df.groupby("solver", sort=False):
        if conditioned:
            keep = _majority_correct_scenes(g)
            g = g[g["scene_id"].isin(keep)]
        s = summarize_frame(g)
        rows.append({"solver": solver, "kind": g["solver_kind"].iloc[0] if len(g) else "",
                     "scenes": g["scene_id"].nunique(), "Counting Avg": s.counting_avg,
                     "Action Avg": s.action_avg, "gap": s.gap})
    return pd.DataFrame(rows)


def bridge_table(df: pd.DataFrame) -> pd.DataFrame:
    """G-Cnt -> G-Clk -> V-Clk (each template's PASS over all its answers) and matched local count-to-click
    (mL-Cnt and L-Clk over the pairs: same unit, same scene), with exact McNemar p-values of the paired differences
    (ROSE spec, bridge controls)."""
    rows = []
    for solver, g in df.groupby("solver", sort=False):
        def pass_of(t: str, g: pd.DataFrame = g) -> float:
            return 100 * g.loc[g["template"] == t, "passed"].mean() if (g["template"] == t).any() else np.nan

        ml = paired(g, "mL-Cnt", "T3")
        given = ml[ml["passed_a"] == 1]
        cnt_clk, clk_v = paired(g, "T1", "G-Clk"), paired(g, "G-Clk", "T4")
        rows.append({
            "solver": solver, "kind": g["solver_kind"].iloc[0],
            "G-Cnt": pass_of("T1"), "G-Clk": pass_of("G-Clk"), "V-Clk": pass_of("T4"),
            # each p beside the pairs it rests on: the rates are over every answer, a p over the pairs only
            "p(G-Cnt vs G-Clk)": mcnemar_p(cnt_clk), "pairs(G-Cnt, G-Clk)": len(cnt_clk),
            "p(G-Clk vs V-Clk)": mcnemar_p(clk_v), "pairs(G-Clk, V-Clk)": len(clk_v),
            # matched: both sides on the same (unit, scene) pairs, the trials of L-Clk† and the McNemar p
            "mL-Cnt": 100 * ml["passed_a"].mean() if len(ml) else np.nan,
            "L-Clk": 100 * ml["passed_b"].mean() if len(ml) else np.nan,
            "L-Clk†": 100 * given["passed_b"].mean() if len(given) else np.nan,
            "Fail†": 100 * (1 - given["passed_b"].mean()) if len(given) else np.nan,
            "pairs": len(ml), "p(mL-Cnt vs L-Clk)": mcnemar_p(ml),
        })
    return pd.DataFrame(rows)


def failure_table(df: pd.DataFrame) -> pd.DataFrame:
    """Share of responses (%) per solver, template and primary failure kind."""
    g = df.copy()
    g["failure"] = g["failure"].fillna("pass")
    counts = g.groupby(["solver", "template", "failure"]).size().rename("n").reset_index()
    totals = g.groupby(["solver", "template"]).size().rename("total").reset_index()
    out = counts.merge(totals, on=["solver", "template"])
    out["share"] = 100 * out["n"] / out["total"]
    out["label"] = out["template"].map(TEMPLATE_LABEL)
    return out[out["failure"] != "pass"]




def responses_frame(store: Store, after_id: int = 0) -> pd.DataFrame:
    """Every main response (participants' practice and attention items excluded), one row each; with
    after_id, only the responses stored after that one (for incremental refreshes)."""
    with store.connect() as conn:
        # plain DB-API on either backend (read_frame would type the text as Arrow strings: see `_plain_text`)
        cur = conn.execute(*responses_query(_COLUMNS, kind="main", after_id=after_id))
        cols = [d[0] for d in cur.description]
        rows = [tuple(r) for r in cur.fetchall()]
    # Built as Python objects, then the numbers typed: fixed dtypes whatever this batch holds (an appended batch
    # must look like a full reload), and text stays plain strings (`_plain_text`).
    df = pd.DataFrame(rows, columns=cols, dtype=object) if rows else pd.DataFrame(
        {c: pd.Series(dtype=object) for c in cols})
    for col in _INTS:
        df[col] = df[col].astype(np.int64)
    for col in _FLOATS:
        df[col] = df[col].astype(float)
    df["study_id"] = df["study_id"].where(df["study_id"].notna(), "")
    codes, runs = pd.factorize(df["solver_kind"] + "\x1f" + df["solver_name"])  # one label per distinct run
    df["solver"] = np.array([label_of(*r.split("\x1f", 1)) for r in runs] + [""], dtype=object)[codes]
    df["unit"] = np.where(df["solver_kind"] == "human", df["participant_id"], df["scene_id"])
    for col in ("solver", "unit"):
        df[col] = df[col].astype(object)
    return df


def participant_stats(store: Store) -> pd.DataFrame:
    """Per participant (the index), from their responses: main items and PASS rate, median time per item and to
    first action, the longest streak, attention checks (and passed), practice PASS rate. The costly half of
    `participant_table` (it reads every participant response); it changes only when those change
    (`storage.version.DataVersion.people_part`), so the dashboards cache it by that."""
    with store.connect() as conn:
        resp = read_frame(
            conn, "SELECT participant_id, kind, passed, parsed, total_ms, first_action_ms FROM responses "
            "WHERE participant_id != '' ORDER BY participant_id, submitted_at, response_id")
    main = resp[resp["kind"] == "main"]
    g = main.groupby("participant_id")
    stats = pd.DataFrame({
        "main_items": g.size(), "main_pass_rate": 100 * g["passed"].mean(),
        "median_item_s": g["total_ms"].median() / 1000, "median_first_action_s": g["first_action_ms"].median() / 1000,
        "longest_streak": _longest_streaks(main),
    })
    att = resp[resp["kind"] == "attention"].groupby("participant_id")["passed"].agg(["size", "sum"])
    att.columns = ["attention_checks", "attention_passed"]
    prac = resp[resp["kind"] == "practice"].groupby("participant_id")["passed"].mean().mul(100).rename(
        "practice_pass_rate")
    return pd.concat([stats, att, prac], axis=1)


def _context_arrays(ds: Dataset) -> _Context:
    insts, keys, golds = [], [], []
    for k, inst in enumerate(ds.instances.values()):
        if inst.gold.cells is None:
            continue
        scene = ds.scenes[inst.scene_id]
        rr, cc = np.meshgrid(np.arange(1, scene.rows + 1), np.arange(1, scene.cols + 1), indexing="ij")
        box = inst.context
        inside = (box.r0 <= rr) & (rr <= box.r1) & (box.c0 <= cc) & (cc <= box.c1)
        mask = inside if inst.context_mode == "inside" else ~inside
        key = (rr * _CELL + cc)[mask]
        insts.append(np.full(len(key), k, dtype=np.int64))
        keys.append(key.astype(np.int64))
        golds.append(np.isin(key, [r * _CELL + c for r, c in inst.gold.cells]))
    cat = (lambda xs, t: np.concatenate(xs) if xs else np.zeros(0, dtype=t))
    return _Context(pd.Index(list(ds.instances)), cat(insts, np.int64), cat(keys, np.int64), cat(golds, bool))
