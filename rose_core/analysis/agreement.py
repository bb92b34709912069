"""Agreement: human-human reliability (Krippendorff's alpha, the majority-vote panel) and human-model
trial-by-trial consistency (error consistency after Geirhos, Meding & Wichmann 2020, per individual human;
and, under its own name, the model against the humans' majority-vote panel)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..benchmarks.rose.dataset import Dataset
from .answers import AnalysisInputError
from .majority import majority

MIN_SHARED_TRIALS = 10   # a model-human pair with fewer shared trials gets no κ (reported as skipped)


def _refuse_repeats(df: pd.DataFrame, key: list[str], what: str) -> None:
    dup = df.duplicated(key, keep=False)
    if dup.any():
        first = df.loc[dup, key].iloc[0].to_dict()
        raise AnalysisInputError(f"{what}: {int(dup.sum())} responses repeat a trial {key}, e.g. {first}; "
                                 "each observer must answer a trial once")


@dataclass
class HumanAgreement:
    alpha_cells: float | None          # Krippendorff's alpha, nominal, per-cell click decisions
    alpha_counts: float | None         # Krippendorff's alpha, ratio, counts
    click_units: int
    count_units: int
    raters_per_item: dict[int, int]    # number of raters -> number of instances
    panel_accuracy: float | None       # majority vote per instance, against gold (tied instances left out)
    individual_accuracy: float | None  # mean individual accuracy on the same instances
    panel_items: int = 0               # instances with two or more raters and a majority answer
    notes: list[str] = field(default_factory=list)
    panel_tied: int = 0                # instances with two or more raters and no majority (`majority.TIE_RULE`)


_CLICK = re.compile(r"CLICK\(R(\d+),C(\d+)\)")
_COUNT = re.compile(r"(?:COUNT|SUBMIT)\((\d+)\)")
_CELL = 100       # cell key r * _CELL + c (grids are at most 8 x 8; clicks outside 1..99 are outside every grid)
_INST = _CELL * _CELL
_TIED = -1.0      # a panel part without a majority answer (`majority.TIE_RULE`)


@dataclass(frozen=True)
class _Context:
    """Every click instance's context cells as arrays, once per dataset: the instance's position in `ids`, the
    cell key (r * 100 + c) and whether the cell is a gold cell."""

    ids: pd.Index
    inst: np.ndarray
    key: np.ndarray
    gold: np.ndarray


def _context_arrays(ds: Dataset) -> _Context:
    """Every click instance's context cells, in instance order and row-major within each: one boolean grid per
    instance (the largest scene's size) masked at once, instead of a few small array operations per instance."""
    ks, dims, boxes, inside, gold_keys = [], [], [], [], []
    for k, inst in enumerate(ds.instances.values()):
        if inst.gold.cells is None:
            continue
        scene = ds.scenes[inst.scene_id]
        box = inst.context
        ks.append(k)
        dims.append((scene.rows, scene.cols))
        boxes.append((box.r0, box.r1, box.c0, box.c1))
        inside.append(inst.context_mode == "inside")
        gold_keys.extend((len(ks) - 1) * _INST + r * _CELL + c for r, c in inst.gold.cells)
    if not ks:
        empty = np.zeros(0, dtype=np.int64)
        return _Context(pd.Index(list(ds.instances)), empty, empty, np.zeros(0, dtype=bool))
    dims_a, boxes_a = np.array(dims, dtype=np.int64), np.array(boxes, dtype=np.int64)
    side_r, side_c = int(dims_a[:, 0].max()), int(dims_a[:, 1].max())
    rr = np.arange(1, side_r + 1)[None, :, None]
    cc = np.arange(1, side_c + 1)[None, None, :]
    col = (lambda a: a[:, None, None])
    in_grid = (rr <= col(dims_a[:, 0])) & (cc <= col(dims_a[:, 1]))
    in_box = (col(boxes_a[:, 0]) <= rr) & (rr <= col(boxes_a[:, 1])) & (col(boxes_a[:, 2]) <= cc) & \
        (cc <= col(boxes_a[:, 3]))
    mask = in_grid & np.where(col(np.array(inside)), in_box, ~in_box)
    pos, r, c = np.nonzero(mask)                     # instance-major, then row, then column
    key = (r + 1) * _CELL + (c + 1)
    gold = np.isin(pos * _INST + key, np.array(gold_keys, dtype=np.int64))
    return _Context(pd.Index(list(ds.instances)), np.array(ks, dtype=np.int64)[pos], key.astype(np.int64), gold)


_CONTEXT_CACHE: dict[str, _Context] = {}


def _parse_protocols(proto: pd.Series) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Per response: the code of its distinct protocol string; per distinct string: its clicked cell keys (a
    repeat counts once) and its count (NaN for DONE). Each distinct string is parsed once: 100,000 answers
    hold a few thousand."""
    codes, uniques = pd.factorize(proto.fillna("").astype(str))
    cells, counts = [], np.full(len(uniques), np.nan)
    for u, text in enumerate(uniques):
        found = {int(r) * _CELL + int(c) for r, c in _CLICK.findall(text) if 0 < int(r) < _CELL and 0 < int(c) < _CELL}
        cells.append(np.array(sorted(found), dtype=np.int64))
        m = _COUNT.search(text)
        if m:
            counts[u] = int(m.group(1))
    return codes, cells, counts


def human_agreement(df: pd.DataFrame, ds: Dataset) -> HumanAgreement:
    """Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"; Hayes &
    Krippendorff 2007) over per-cell click decisions (nominal) and counts (ratio), raters per item, and the
    panel's majority-vote accuracy next to the mean individual accuracy, on instances with two or more raters.
    Refuses a participant who answered one instance twice (one rater, one value per unit).

    Computed on integer codes (instance position, cell key r * 100 + c), each distinct protocol string parsed
    once: the same figures as the per-cell tables of the definition (the tests build them independently)."""
    import krippendorff

    h = df[df["solver_kind"] == "human"]
    if ds.dataset_hash not in _CONTEXT_CACHE:
        _CONTEXT_CACHE[ds.dataset_hash] = _context_arrays(ds)
    ctx = _CONTEXT_CACHE[ds.dataset_hash]
    inst = ctx.ids.get_indexer(h["instance_id"])
    if (inst < 0).any():
        raise AnalysisInputError(f"Krippendorff's alpha: instance {h['instance_id'].iloc[int(np.argmax(inst < 0))]!r} "
                                 "is not in this dataset")
    people = pd.factorize(h["participant_id"])[0].astype(np.int64)
    if len(np.unique(people * len(ctx.ids) + inst)) < len(inst):
        _refuse_repeats(h, ["participant_id", "instance_id"], "Krippendorff's alpha")
    n_all = np.bincount(inst, minlength=len(ctx.ids))             # raters per instance (each answers once)
    raters = pd.Series(n_all[n_all > 0])
    raters_per_item = {int(k): int(v) for k, v in raters.value_counts().sort_index().items()}
    keep = n_all[inst] >= 2
    notes = []
    if not keep.any():
        return HumanAgreement(None, None, 0, 0, raters_per_item, None, None, 0,
                              ["one rater per instance: Krippendorff's α (cell clicks and counts) and the panel are "
                               "undefined until an instance has two or more human raters"])
    inst = inst[keep]
    passed = h["passed"].to_numpy()[keep].astype(float)
    codes, cells_of, count_of = _parse_protocols(h["protocol"][keep])
    # Clicks: per (instance, cell) how many raters clicked it, against every context cell.
    lens = np.array([len(c) for c in cells_of], dtype=np.int64)[codes]
    flat = np.concatenate(cells_of) if cells_of else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum([len(c) for c in cells_of])])[:-1].astype(np.int64)
    within = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
    clicked = np.repeat(inst, lens) * _INST + flat[np.repeat(starts[codes], lens) + within]
    keys, k_of = np.unique(clicked, return_counts=True)
    in_panel = (n_all >= 2)[ctx.inst]
    c_inst, gold = ctx.inst[in_panel], ctx.gold[in_panel]
    c_key = c_inst * _INST + ctx.key[in_panel]
    if len(keys):
        pos = np.minimum(np.searchsorted(keys, c_key), len(keys) - 1)
        k = np.where(keys[pos] == c_key, k_of[pos], 0)
    else:
        k = np.zeros(len(c_key), dtype=np.int64)
    n = n_all[c_inst].astype(float)
    alpha_cells = None
    vc = np.stack([n - k, k], axis=1).astype(float)
    if len(vc) >= 2 and vc[:, 0].sum() and vc[:, 1].sum():
        alpha_cells = float(krippendorff.alpha(value_counts=vc, level_of_measurement="nominal"))
    else:
        notes.append("every cell decision was the same for every rater (no variation): α for cell clicks is "
                     "undefined")
    # The panel's answer, cell by cell: clicked by a majority, not clicked, or tied (`majority`: no majority).
    vote = majority(k, n)
    wrong = ~np.isnan(vote) & (vote != gold)
    click_insts = np.unique(c_inst)
    wrong_per_inst = np.bincount(c_inst, weights=wrong, minlength=len(ctx.ids))
    tied_per_inst = np.bincount(c_inst, weights=np.isnan(vote), minlength=len(ctx.ids))
    # A cell outside the context that a majority clicked is a wrong panel answer too (region ignored): it is
    # not among the context cells above, and every answer holding it fails; one that half clicked is a tie.
    out_vote = majority(k_of, n_all[keys // _INST])
    outside = ~np.isin(keys, c_key)
    np.add.at(wrong_per_inst, keys[outside & (out_vote == 1)] // _INST, 1)
    np.add.at(tied_per_inst, keys[outside & np.isnan(out_vote)] // _INST, 1)
    # per instance 1 (right), 0 (wrong however the ties are broken) or TIED (right or wrong as a tie is broken)
    click_ok = pd.Series(np.where(wrong_per_inst[click_insts] > 0, 0.0,
                                  np.where(tied_per_inst[click_insts] > 0, _TIED, 1.0)), index=click_insts)
    # Counts: per instance the answers' distribution; the panel answer is the unique mode.
    said = count_of[codes]
    has = ~np.isnan(said)
    alpha_counts = None
    count_ok = pd.Series(dtype=bool)
    if has.any():
        tab = pd.DataFrame({"inst": inst[has], "count": said[has].astype(np.int64)}).groupby(
            ["inst", "count"]).size().unstack(fill_value=0)
        tab = tab[tab.sum(axis=1) >= 2]
        if tab.shape[1] > 1 and len(tab) >= 2:
            alpha_counts = float(krippendorff.alpha(value_counts=tab.to_numpy(float),
                                                    value_domain=[int(c) for c in tab.columns],
                                                    level_of_measurement="ratio"))
        elif len(tab):
            notes.append("every count answer was identical: alpha for counts is undefined")
        top = tab.max(axis=1)
        unique_mode = (tab.eq(top, axis=0)).sum(axis=1) == 1
        mode = tab.idxmax(axis=1)
        gold_count = pd.Series([ds.instances[ctx.ids[i]].gold.count for i in tab.index], index=tab.index)
        # no unique mode: tied when the gold count is among the modes, else wrong however the tie is broken
        gold_is_mode = np.array([g in tab.columns and tab.at[i, g] == top[i] for i, g in gold_count.items()],
                                dtype=bool)
        count_ok = pd.Series(np.where(unique_mode, (mode == gold_count).astype(float),
                                      np.where(gold_is_mode, _TIED, 0.0)), index=tab.index)
    panel = pd.concat([click_ok.rename("click"), count_ok.rename("count")], axis=1)   # NaN: no such part
    # wrong when a part is wrong; else tied when a part is (left out of the panel, counted); else right
    wrong_any = (panel == 0).any(axis=1)
    tied = ~wrong_any & (panel == _TIED).any(axis=1)
    panel_pass = (~wrong_any)[~tied]
    answered = np.bincount(inst, minlength=len(ctx.ids))
    indiv = np.bincount(inst, weights=passed, minlength=len(ctx.ids))[panel_pass.index] / answered[panel_pass.index]
    return HumanAgreement(alpha_cells, alpha_counts, len(vc), int(len(count_ok)), raters_per_item,
                          100 * float(panel_pass.mean()) if len(panel_pass) else None,
                          100 * float(indiv.mean()) if len(panel_pass) else None,
                          len(panel_pass), notes, int(tied.sum()))


# --------------------------------------------------------------------------- error consistency

@dataclass(frozen=True)
class ErrorConsistency:
    kappa: float | None     # None when c_exp = 1 (both observers always right, or always wrong): undefined
    c_obs: float
    c_exp: float
    trials: int
    p1: float               # accuracy of the first observer on these trials
    p2: float


def error_consistency(a: pd.Series, b: pd.Series) -> ErrorConsistency:
    """Error consistency κ of two observers on the same trials (Geirhos, Meding & Wichmann 2020, "Beyond
    accuracy: quantifying trial-by-trial behaviour of CNNs and humans by measuring error consistency",
    NeurIPS): κ = (c_obs − c_exp) / (1 − c_exp), c_obs the share of trials both got right or both got wrong,
    c_exp = p1·p2 + (1 − p1)(1 − p2) what two independent observers with these accuracies would share.

    `a` and `b` are 0/1 correctness indexed by trial (instance id). Refuses (AnalysisInputError) unless they
    hold exactly the same trials, each once, with 0/1 values: κ over misaligned trials is a wrong number."""
    for name, s in (("first", a), ("second", b)):
        if s.index.has_duplicates:
            raise AnalysisInputError(f"error consistency: the {name} observer answers trial "
                                     f"{s.index[s.index.duplicated()][0]!r} more than once")
        if s.isna().any() or not s.isin([0, 1, True, False]).all():
            raise AnalysisInputError(f"error consistency: the {name} observer's outcomes must be 0/1")
    if set(a.index) != set(b.index):
        only_a, only_b = sorted(set(a.index) - set(b.index)), sorted(set(b.index) - set(a.index))
        raise AnalysisInputError(f"error consistency: the observers' trials differ ({len(only_a)} only in the "
                                 f"first, e.g. {only_a[:3]}; {len(only_b)} only in the second, e.g. {only_b[:3]})")
    if len(a) == 0:
        raise AnalysisInputError("error consistency: no shared trial")
    x = a.sort_index().to_numpy().astype(int)
    y = b.loc[a.sort_index().index].to_numpy().astype(int)
    return _consistency(x, y)


def _consistency(x: np.ndarray, y: np.ndarray) -> ErrorConsistency:
    """`error_consistency` of two aligned 0/1 vectors (same trial at the same position)."""
    p1, p2 = float(x.mean()), float(y.mean())
    c_obs = float((x == y).mean())
    c_exp = p1 * p2 + (1 - p1) * (1 - p2)
    kappa = None if c_exp >= 1 else (c_obs - c_exp) / (1 - c_exp)
    return ErrorConsistency(kappa, c_obs, c_exp, len(x), p1, p2)


@dataclass(frozen=True)
class HumanTrials:
    """The humans' side of every human–model comparison, prepared once: each human response as (participant
    code, instance code, 0/1) and each instance's human accuracy. The dashboards cache it per human data
    version, so a model's agreement is computed from that model's rows alone (not from a copy of every human
    response per model)."""

    instances: pd.Index            # instances answered by humans, sorted
    inst_codes: np.ndarray         # per human response: its instance's position in `instances`
    people: np.ndarray             # participant ids, sorted
    p_codes: np.ndarray            # per human response: its participant's position in `people`
    passed: np.ndarray             # per human response: 0/1
    accuracy: pd.Series            # per instance: share of its participants who were right (majority panel)


def human_trials(df: pd.DataFrame) -> HumanTrials:
    """The humans' trials of `df` (its human rows); refuses a participant answering one instance twice."""
    h = df[df["solver_kind"] == "human"] if "solver_kind" in df else df
    inst_codes, instances = pd.factorize(h["instance_id"], sort=True)
    p_codes, people = pd.factorize(h["participant_id"], sort=True)
    if len(h):
        pairs_key = p_codes.astype(np.int64) * max(1, len(instances)) + inst_codes
        if len(np.unique(pairs_key)) < len(pairs_key):
            _refuse_repeats(h, ["participant_id", "instance_id"], "error consistency")
    passed = h["passed"].to_numpy().astype(np.int64)
    acc = pd.Series(np.bincount(inst_codes, weights=passed, minlength=len(instances))
                    / np.maximum(np.bincount(inst_codes, minlength=len(instances)), 1), index=pd.Index(instances))
    return HumanTrials(pd.Index(instances), inst_codes, np.asarray(people), p_codes, passed, acc)


def _model_pairs(ht: HumanTrials, solver: str, g: pd.DataFrame, min_trials: int) -> pd.DataFrame:
    """One model's κ with each individual human (rows of `error_consistency_pairs`)."""
    if g["instance_id"].duplicated().any():
        _refuse_repeats(g, ["instance_id"], f"error consistency ({solver})")
    codes = ht.instances.get_indexer(g["instance_id"])
    known = codes >= 0                                       # instances no human answered play no part
    outcome = np.full(len(ht.instances), -1, dtype=np.int64)  # -1: the model did not answer this instance
    outcome[codes[known]] = g["passed"].to_numpy()[known].astype(np.int64)
    m = outcome[ht.inst_codes]
    shared = m >= 0
    who = ht.p_codes[shared]
    n_people = len(ht.people)
    h_pass = ht.passed[shared]
    n = np.bincount(who, minlength=n_people).astype(float)
    a = np.bincount(who, weights=h_pass, minlength=n_people)
    b = np.bincount(who, weights=m[shared], minlength=n_people)
    same = np.bincount(who, weights=(h_pass == m[shared]), minlength=n_people)
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2, c_obs = a / n, b / n, same / n
        c_exp = p1 * p2 + (1 - p1) * (1 - p2)
        kappa = (c_obs - c_exp) / (1 - c_exp)
    few = n < min_trials
    undefined = ~few & (((a == n) & (b == n)) | ((a == 0) & (b == 0)))
    # One observer constant (never wrong, or never right): c_obs = c_exp whatever the other does, so κ would be
    # 0 by construction, a number that measures nothing (it would print as 0.000 ± 0.000). Undefined, said why.
    skipped = np.select(
        [few, undefined, ~few & (b == n), ~few & (b == 0), ~few & (a == n), ~few & (a == 0)],
        [f"fewer than {min_trials} shared trials", "c_exp = 1 (both always right or both always wrong): κ undefined",
         "the solver made no error on the shared trials: κ undefined (no errors to agree on)",
         "the solver was never right on the shared trials: κ undefined",
         "the participant made no error on the shared trials: κ undefined (no errors to agree on)",
         "the participant was never right on the shared trials: κ undefined"], "")
    return pd.DataFrame({
        "solver": solver, "participant_id": ht.people, "shared trials": n.astype(int),
        "κ": np.where(skipped == "", kappa, np.nan), "c_obs": np.where(few, np.nan, c_obs),
        "c_exp": np.where(few, np.nan, c_exp), "human acc": np.where(few, np.nan, 100 * p1),
        "model acc": np.where(few, np.nan, 100 * p2), "skipped": skipped})


PAIR_COLUMNS = ["solver", "participant_id", "shared trials", "κ", "c_obs", "c_exp", "human acc", "model acc",
                "skipped"]


def error_consistency_pairs(df: pd.DataFrame, min_trials: int = MIN_SHARED_TRIALS,
                            humans: HumanTrials | None = None) -> pd.DataFrame:
    """κ between each model (or agent) and each individual human on their shared trials, one row per pair
    (participants in id order). Computed from per-pair counts over integer codes, so 2,000 participants x 10
    runs stay fast (a test checks it equals `error_consistency` pair by pair). A pair with fewer than
    `min_trials` shared trials, or with c_exp = 1, gets no κ and says why in `skipped` (never a silent NaN).
    `humans`: the humans' side already prepared (`human_trials`); then `df` needs only the models' rows."""
    ht = humans if humans is not None else human_trials(df)
    models = df[df["solver_kind"] != "human"]
    if len(ht.people) == 0 or models.empty:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    parts = [_model_pairs(ht, str(solver), models.iloc[idx], min_trials)
             for solver, idx in models.groupby("solver", sort=False).indices.items()]
    return pd.concat(parts, ignore_index=True)[PAIR_COLUMNS]


def error_consistency_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per model: κ averaged over the individual humans (mean), its spread across humans (SD with ddof = 1,
    median and interquartile range Q1–Q3), how many humans entered and how many were skipped (and why), and
    the shared trials (total and median per human)."""
    rows = []
    for solver, g in pairs.groupby("solver", sort=False):
        ok = g[g["skipped"] == ""]
        k = ok["κ"].to_numpy(float)
        why = g.loc[g["skipped"] != "", "skipped"].value_counts().sort_index()
        rows.append({
            "solver": solver, "humans": len(ok), "humans skipped": int(len(g) - len(ok)),
            "skipped because": "; ".join(f"{n}: {r}" for r, n in why.items()),
            "shared trials": int(ok["shared trials"].sum()),
            "shared trials per human (median)": float(ok["shared trials"].median()) if len(ok) else np.nan,
            "error consistency κ (mean over humans)": float(k.mean()) if len(k) else np.nan,
            "κ SD": float(k.std(ddof=1)) if len(k) >= 2 else np.nan,
            "κ median": float(np.median(k)) if len(k) else np.nan,
            "κ Q1": float(np.percentile(k, 25)) if len(k) else np.nan,
            "κ Q3": float(np.percentile(k, 75)) if len(k) else np.nan,
            "κ undefined because": "" if len(k) else (
                "no participant shares trials with it" if g.empty else "no pair has a κ: " + "; ".join(why.index)),
        })
    return pd.DataFrame(rows)


def panel_consistency(df: pd.DataFrame, humans: HumanTrials | None = None) -> pd.DataFrame:
    """Per model or agent, against the humans' majority-vote panel (an instance counts as right for the
    humans when more than half of its participants were right, wrong when fewer; one split exactly in half has
    no majority and is left out, counted in `panel: tied items`: `majority.TIE_RULE`): consistency with the panel (same κ formula,
    but the panel is not an individual observer, so this is not Geirhos et al.'s error consistency), Cohen's
    κ (Cohen 1960) on the same vectors, and Pearson's r of per-instance human accuracy with the model's
    correctness."""
    from scipy.stats import pearsonr
    from sklearn.metrics import cohen_kappa_score

    ht = humans if humans is not None else human_trials(df)
    acc = ht.accuracy.to_numpy()
    rows = []
    for solver, g in df[df["solver_kind"] != "human"].groupby("solver", sort=False):
        _refuse_repeats(g, ["instance_id"], f"panel consistency ({solver})")
        codes = ht.instances.get_indexer(g["instance_id"])   # positions in the sorted human instances
        known = codes >= 0
        order = np.argsort(codes[known], kind="stable")       # shared instances in id order
        shared = codes[known][order]
        if len(shared) < 2:
            rows.append({"solver": solver, "panel: shared items": len(shared), "panel: tied items": 0})
            continue
        passed = g["passed"].to_numpy()[known][order]
        if pd.isna(passed).any() or not np.isin(passed, [0, 1]).all():
            raise AnalysisInputError(f"panel consistency ({solver}): outcomes must be 0/1")
        acc_h = acc[shared]
        vote = majority(acc_h, np.ones(len(acc_h)))          # the humans' majority; NaN: tied (`TIE_RULE`)
        has = ~np.isnan(vote)
        if has.sum() < 2:
            rows.append({"solver": solver, "panel: shared items": int(has.sum()), "panel: tied items": int((~has).sum())})
            continue
        hum = vote[has].astype(int)
        mod = passed[has].astype(int)
        ec = _consistency(hum, mod)
        # either side constant: both κs are 0 by construction (or 0/0), not a measured agreement
        why = ("the solver made no error on the shared instances" if mod.min() == 1 else
               "the solver was never right on the shared instances" if mod.max() == 0 else
               "the majority panel made no error on the shared instances" if hum.min() == 1 else
               "the majority panel was never right on the shared instances" if hum.max() == 0 else "")
        ck = np.nan if why else float(cohen_kappa_score(hum, mod))
        r = np.nan                       # per-instance accuracy, no majority: over every shared instance
        if acc_h.std() > 0 and passed.astype(float).std() > 0:
            r = float(pearsonr(acc_h, passed.astype(float)).statistic)
        rows.append({"solver": solver, "panel: shared items": int(has.sum()), "panel: tied items": int((~has).sum()),
                     "panel: human acc": 100 * ec.p1,
                     "panel: model acc": 100 * ec.p2, "panel: observed consistency": ec.c_obs,
                     "panel: expected consistency": ec.c_exp,
                     "κ vs majority panel": np.nan if ec.kappa is None or why else ec.kappa,
                     "panel κ undefined because": f"{why}: κ undefined" if why else "",
                     "Cohen's κ vs majority panel": ck, "r(human acc, model correct)": r})
    return pd.DataFrame(rows)


def human_model_agreement(df: pd.DataFrame, min_trials: int = MIN_SHARED_TRIALS,
                          humans: HumanTrials | None = None) -> pd.DataFrame:
    """Per model or agent: error consistency with each individual human (mean over humans and its spread,
    `error_consistency_summary`), then the majority-panel figures (`panel_consistency`). With `humans`
    prepared (`human_trials`), `df` needs only the models' rows."""
    ht = humans if humans is not None else human_trials(df)
    per_human = error_consistency_summary(error_consistency_pairs(df, min_trials, ht))
    panel = panel_consistency(df, ht)
    if per_human.empty:
        return panel
    return per_human.merge(panel, on="solver", how="outer", sort=False)
