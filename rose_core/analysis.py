"""The ROSE paper's tables rebuilt from data, plus what the paper could not show: agreement, difficulty,
participants and exclusions. Plain functions over pandas frames; the dashboard pages only lay them out.

Conventions: rates are percentages; a solver is "Human" (participants pooled over the selected studies),
a model run's name, or "<name> (agent)"; published reference rows are labelled "(published)".
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .dataset import Dataset
from .metrics import ACTION, COUNTING, Summary, mean_of_rates, rate
from .records import GROUPS, MAIN_TEMPLATES, SUBSET_GROUP, TEMPLATE_LABEL, Cell
from .store import Store

REFERENCE_DIR = Path(__file__).resolve().parent.parent / "data" / "reference"
LABELS = [TEMPLATE_LABEL[t] for t in MAIN_TEMPLATES]

_SQL = """
SELECT r.response_id, r.run_id, runs.solver_kind, runs.solver_name, runs.study_id, r.participant_id, r.instance_id,
       r.template, r.subset, r.split, r.scene_id, r.valid, r.passed, r.failure, r.protocol, r.parsed,
       r.total_ms, r.first_action_ms
FROM responses r JOIN runs USING (run_id)
WHERE r.kind = 'main'
"""


# --------------------------------------------------------------------------- frames, filters, exclusions

def responses_frame(store: Store, after_id: int = 0) -> pd.DataFrame:
    """Every main response (participants' practice and attention items excluded), one row each; with
    after_id, only the responses stored after that one (for incremental refreshes)."""
    with store.connect() as conn:
        df = pd.read_sql_query(_SQL + " AND r.response_id > ? ORDER BY r.response_id", conn, params=(after_id,))
    # Fixed dtypes, whatever this batch holds: an appended batch must look like a full reload.
    df["study_id"] = df["study_id"].fillna("").astype(object)
    for col in ("total_ms", "first_action_ms"):
        df[col] = df[col].astype(float)
    df["solver"] = np.where(df["solver_kind"] == "human", "Human",
                            np.where(df["solver_kind"] == "agent", df["solver_name"] + " (agent)", df["solver_name"]))
    df["unit"] = np.where(df["solver_kind"] == "human", df["participant_id"], df["scene_id"])
    return df


class FrameCache:
    """The responses frame of one database, refreshed by appending what is new (responses only grow; a
    removed or replaced run changes the row count differently, and then everything is reloaded).

    A Parquet snapshot beside the database (`<db>.frame.parquet`) makes the first load after a server start
    a file read plus the rows stored since, instead of a full SQLite scan.
    """

    def __init__(self, store: Store, snapshot: bool = True):
        import threading

        self.store = store
        self.lock = threading.Lock()
        self.frame: pd.DataFrame | None = None
        self.state: tuple[int, int] = (0, 0)   # (rows, max response_id) of what the frame holds
        self.snapshot = Path(f"{store.path}.frame.parquet") if snapshot else None
        self.snapshot_rows = 0

    def _current(self) -> tuple[int, int]:
        with self.store.connect() as conn:
            rows, last = conn.execute("SELECT count(*), coalesce(max(response_id), 0) FROM responses "
                                      "WHERE kind = 'main'").fetchone()
        return int(rows), int(last)

    def _load_snapshot(self) -> None:
        if self.snapshot is None or not self.snapshot.exists():
            return
        try:
            import pyarrow.parquet as pq

            table = pq.read_table(self.snapshot)
            meta = json.loads(table.schema.metadata[b"rose_state"])
            self.frame = table.to_pandas()
            self.state = (int(meta["rows"]), int(meta["last"]))
            self.snapshot_rows = self.state[0]
        except Exception:  # a torn or foreign file: ignore it, the database is the truth
            self.frame, self.state = None, (0, 0)

    def _save_snapshot(self) -> None:
        if self.snapshot is None or self.frame is None:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(self.frame, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"rose_state": json.dumps(
            {"rows": self.state[0], "last": self.state[1]}).encode()})
        tmp = self.snapshot.with_name(self.snapshot.name + ".part")
        pq.write_table(table, tmp)
        tmp.replace(self.snapshot)
        self.snapshot_rows = self.state[0]

    def get(self) -> tuple[pd.DataFrame, tuple[int, int]]:
        with self.lock:
            rows, last = self._current()
            if self.frame is None:
                self._load_snapshot()
            if self.frame is not None and (rows, last) == self.state:
                return self.frame, self.state
            if self.frame is not None and last >= self.state[1]:
                new = responses_frame(self.store, after_id=self.state[1])
                if self.state[0] + len(new) == rows:
                    if len(new):
                        self.frame = pd.concat([self.frame, new], ignore_index=True)
                    self.state = (rows, last)
                    if rows - self.snapshot_rows > max(1000, rows // 20):  # amortised rewrites
                        self._save_snapshot()
                    return self.frame, self.state
            self.frame = responses_frame(self.store)
            self.state = (rows, last)
            self._save_snapshot()
            return self.frame, self.state


def human_version(store: Store) -> tuple[int, int]:
    """Changes only when participants' responses change (what the participant table depends on)."""
    with store.connect() as conn:
        rows, last = conn.execute("SELECT count(*), coalesce(max(response_id), 0) FROM responses "
                                  "WHERE participant_id != ''").fetchone()
    return int(rows), int(last)


@dataclass(frozen=True)
class Filters:
    split: str | None = None
    subsets: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    studies: tuple[str, ...] = ()      # human responses only from these studies (empty: all)
    solvers: tuple[str, ...] = ()

    def apply(self, df: pd.DataFrame) -> pd.DataFrame:
        m = pd.Series(True, index=df.index)
        if self.split:
            m &= df["split"] == self.split
        if self.subsets:
            m &= df["subset"].isin(self.subsets)
        if self.templates:
            m &= df["template"].isin(self.templates)
        if self.studies:
            m &= (df["solver_kind"] != "human") | df["study_id"].isin(self.studies)
        if self.solvers:
            m &= df["solver"].isin(self.solvers)
        return df[m]


@dataclass(frozen=True)
class ExclusionRules:
    """Pre-registrable participant exclusions; each can be switched off."""

    failed_attention: bool = True
    too_fast_ms: float | None = 1500.0   # median time per main item below this
    streak: int | None = 10              # this many answers in a row that say the same (same clicks and count)

    def describe(self) -> str:
        parts = []
        if self.failed_attention:
            parts.append("failed an attention check")
        if self.too_fast_ms:
            parts.append(f"median time per item < {self.too_fast_ms / 1000:g} s")
        if self.streak:
            parts.append(f"≥ {self.streak} answers in a row saying the same")
        return "; ".join(parts) if parts else "none"


def _answer_key(parsed: str | None) -> tuple:
    """What an answer says, whatever its terminal: DONE, COUNT(0) and SUBMIT(0) all say "nothing"."""
    try:
        p = json.loads(parsed) if parsed else {}
    except ValueError:
        return ("?",)
    clicks = tuple(sorted(tuple(c) for c in p.get("clicks") or []))
    count = p.get("count")
    return clicks, len(clicks) if count is None else count


def _longest_streak(values: list) -> int:
    best = run = 0
    prev = object()
    for v in values:
        run = run + 1 if v == prev else 1
        prev = v
        best = max(best, run)
    return best


def participant_table(store: Store, rules: ExclusionRules) -> pd.DataFrame:
    """One row per participant: timing, practice, attention, streaks, and why (if) excluded."""
    parts = pd.DataFrame(store.query(
        "SELECT p.participant_id, p.study_id, s.name AS study, p.external_id, p.source, p.practice_attempts, "
        "p.practice_passed, p.end_reason FROM participants p JOIN studies s USING (study_id)"))
    if parts.empty:
        return parts
    with store.connect() as conn:
        resp = pd.read_sql_query(
            "SELECT participant_id, kind, passed, parsed, total_ms, first_action_ms FROM responses "
            "WHERE participant_id != '' ORDER BY participant_id, submitted_at, response_id", conn)
    main = resp[resp["kind"] == "main"]
    g = main.groupby("participant_id")
    stats = pd.DataFrame({
        "main_items": g.size(), "main_pass_rate": 100 * g["passed"].mean(),
        "median_item_s": g["total_ms"].median() / 1000, "median_first_action_s": g["first_action_ms"].median() / 1000,
        "longest_streak": g["parsed"].agg(lambda x: _longest_streak([_answer_key(v) for v in x])),
    })
    att = resp[resp["kind"] == "attention"].groupby("participant_id")["passed"].agg(["size", "sum"])
    att.columns = ["attention_checks", "attention_passed"]
    prac = resp[resp["kind"] == "practice"].groupby("participant_id")["passed"].mean().mul(100).rename(
        "practice_pass_rate")
    out = parts.set_index("participant_id").join(stats).join(att).join(prac).reset_index()
    out["main_items"] = out["main_items"].fillna(0).astype(int)
    out["longest_streak"] = out["longest_streak"].fillna(0).astype(int)
    out["attention_checks"] = out["attention_checks"].fillna(0).astype(int)
    out["attention_passed"] = out["attention_passed"].fillna(0).astype(int)
    reasons = []
    for r in out.itertuples(index=False):
        why = []
        if rules.failed_attention and r.attention_passed < r.attention_checks:
            why.append("attention")
        if rules.too_fast_ms and not pd.isna(r.median_item_s) and r.median_item_s * 1000 < rules.too_fast_ms:
            why.append("too fast")
        if rules.streak and r.longest_streak >= rules.streak:
            why.append("streak")
        reasons.append(", ".join(why))
    out["excluded"] = reasons
    return out


def apply_exclusions(df: pd.DataFrame, participants: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Drop excluded participants' responses; returns (frame, number of participants excluded)."""
    if participants.empty:
        return df, 0
    out = set(participants.loc[participants["excluded"] != "", "participant_id"])
    return df[~df["participant_id"].isin(out)], len(out)


# --------------------------------------------------------------------------- the main table

def wilson(k: int, n: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return (np.nan, np.nan)
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return 100 * lo, 100 * hi


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


def published_rows() -> pd.DataFrame:
    """The paper's published rows (data/reference), with the Avg recomputed beside the printed one."""
    pub = pd.read_csv(REFERENCE_DIR / "rose_v0_1_published.csv")
    pub["solver"] = pub["model"] + " (published)"
    pub["kind"] = "published"
    pub["Avg (mean of templates)"] = pub[LABELS].mean(axis=1)
    return pub.drop(columns=["model"])


def main_table(df: pd.DataFrame, n_boot: int = 1000, seed: int = 0, published: bool = True) -> pd.DataFrame:
    """Per solver: the five template PASS rates, Glyph/Emoji/Pixel, Avg, pooled rate and VALID, each with a
    95% interval: Wilson for rates over instances; a bootstrap over participants (humans) or scenes (models,
    agents) for the means of template rates."""
    rng = np.random.default_rng(seed)
    rows = []
    for solver, g in df.groupby("solver", sort=False):
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
        for name, (lo, hi) in _bootstrap_means(g, n_boot, rng).items():
            row[f"{name} lo"], row[f"{name} hi"] = lo, hi
        rows.append(row)
    out = pd.DataFrame(rows)
    if published:
        out = pd.concat([out, published_rows()], ignore_index=True)
    return out


def table_columns(table: pd.DataFrame, with_intervals: bool = True) -> pd.DataFrame:
    """The main table as shown: 'value [lo, hi]' strings per metric (one decimal)."""
    metrics = LABELS + list(GROUPS) + ["Avg", "pooled", "VALID"]
    out = table[["solver", "kind"]].copy()
    for m in metrics:
        def fmt(r, m=m):
            v = r.get(m)
            if v is None or pd.isna(v):
                return ""
            lo, hi = r.get(f"{m} lo"), r.get(f"{m} hi")
            if with_intervals and lo is not None and not pd.isna(lo):
                return f"{v:.1f} [{lo:.1f}, {hi:.1f}]"
            return f"{v:.1f}"
        out[m] = table.apply(fmt, axis=1)
    if "Avg (mean of templates)" in table:
        out["Avg (mean of templates)"] = table["Avg (mean of templates)"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    return out


# --------------------------------------------------------------------------- the gap

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


def published_gap() -> pd.DataFrame:
    pub = published_rows()
    c = pub[[TEMPLATE_LABEL[t] for t in COUNTING]].mean(axis=1)
    a = pub[[TEMPLATE_LABEL[t] for t in ACTION]].mean(axis=1)
    return pd.DataFrame({"solver": pub["solver"], "kind": "published", "scenes": np.nan,
                         "Counting Avg": c, "Action Avg": a, "gap": c - a})


# --------------------------------------------------------------------------- bridges

def _paired(g: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Pairs of responses to templates a and b by the same solver unit on the same scene."""
    key = ["participant_id", "scene_id"]
    x = g[g["template"] == a].drop_duplicates(key)[key + ["passed"]]
    y = g[g["template"] == b].drop_duplicates(key)[key + ["passed"]]
    return x.merge(y, on=key, suffixes=("_a", "_b"))


def mcnemar_p(pairs: pd.DataFrame) -> float | None:
    from statsmodels.stats.contingency_tables import mcnemar

    if pairs.empty:
        return None
    a, b = pairs["passed_a"].astype(bool), pairs["passed_b"].astype(bool)
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    discordant = table[0][1] + table[1][0]
    if discordant == 0:
        return 1.0
    return float(mcnemar(table, exact=discordant < 25, correction=True).pvalue)


def bridge_table(df: pd.DataFrame) -> pd.DataFrame:
    """G-Cnt -> G-Clk -> V-Clk and matched local count-to-click, with McNemar p-values of paired differences."""
    rows = []
    for solver, g in df.groupby("solver", sort=False):
        def pass_of(t: str, g: pd.DataFrame = g) -> float:
            return 100 * g.loc[g["template"] == t, "passed"].mean() if (g["template"] == t).any() else np.nan

        ml = _paired(g, "mL-Cnt", "T3")
        given = ml[ml["passed_a"] == 1]
        rows.append({
            "solver": solver, "kind": g["solver_kind"].iloc[0],
            "G-Cnt": pass_of("T1"), "G-Clk": pass_of("G-Clk"), "V-Clk": pass_of("T4"),
            "p(G-Cnt vs G-Clk)": mcnemar_p(_paired(g, "T1", "G-Clk")),
            "p(G-Clk vs V-Clk)": mcnemar_p(_paired(g, "G-Clk", "T4")),
            "mL-Cnt": pass_of("mL-Cnt"), "L-Clk": pass_of("T3"),
            "L-Clk†": 100 * given["passed_b"].mean() if len(given) else np.nan,
            "Fail†": 100 * (1 - given["passed_b"].mean()) if len(given) else np.nan,
            "pairs": len(ml), "p(mL-Cnt vs L-Clk)": mcnemar_p(ml),
        })
    return pd.DataFrame(rows)


def published_bridges() -> pd.DataFrame:
    pub = pd.read_csv(REFERENCE_DIR / "rose_v0_1_bridges.csv")
    return pub.rename(columns={"model": "solver", "L-Clk-given-mL-Cnt-correct": "L-Clk†",
                               "Fail-given-mL-Cnt-correct": "Fail†"}).assign(
        solver=lambda d: d["solver"] + " (published)", kind="published")


# --------------------------------------------------------------------------- failure kinds

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


# --------------------------------------------------------------------------- agreement

def _clicks(parsed: str) -> set[Cell]:
    try:
        return {tuple(c) for c in json.loads(parsed)["clicks"]}  # type: ignore[misc]
    except (TypeError, ValueError, KeyError):
        return set()


def _count(parsed: str) -> int | None:
    try:
        return json.loads(parsed)["count"]
    except (TypeError, ValueError, KeyError):
        return None


@dataclass
class HumanAgreement:
    alpha_cells: float | None          # Krippendorff's alpha, nominal, per-cell click decisions
    alpha_counts: float | None         # Krippendorff's alpha, ratio, counts
    click_units: int
    count_units: int
    raters_per_item: dict[int, int]    # number of raters -> number of instances
    panel_accuracy: float | None       # majority vote per instance, against gold
    individual_accuracy: float | None  # mean individual accuracy on the same instances
    panel_items: int = 0
    notes: list[str] = field(default_factory=list)


def _context_cells(ds: Dataset) -> pd.DataFrame:
    """(instance_id, r, c, gold) for every cell in every click instance's context."""
    rows = []
    for inst in ds.instances.values():
        if inst.gold.cells is None:
            continue
        scene = ds.scenes[inst.scene_id]
        gold = set(inst.gold.cells)
        rows += [(inst.instance_id, r, c, (r, c) in gold) for r in range(1, scene.rows + 1)
                 for c in range(1, scene.cols + 1) if inst.in_context((r, c))]
    return pd.DataFrame(rows, columns=["instance_id", "r", "c", "gold"])


_CONTEXT_CACHE: dict[str, pd.DataFrame] = {}


def human_agreement(df: pd.DataFrame, ds: Dataset) -> HumanAgreement:
    """Krippendorff's alpha (per-cell clicks, nominal; counts, ratio), raters per item, and the panel's
    majority-vote accuracy next to the mean individual accuracy, on instances with two or more raters."""
    import krippendorff

    h = df[df["solver_kind"] == "human"]
    raters = h.groupby("instance_id")["participant_id"].nunique()
    multi = raters[raters >= 2]
    h = h[h["instance_id"].isin(multi.index)]
    notes = []
    if h.empty:
        return HumanAgreement(None, None, 0, 0, {int(k): int(v) for k, v in raters.value_counts().sort_index().items()},
                              None, None, 0, ["no instance has two or more human raters yet"])
    # The canonical protocol string holds the answer's clicks and count; vectorized regex over it is far
    # cheaper than decoding every parsed-JSON record.
    proto = h["protocol"].fillna("").astype(str)
    n_per = h.groupby("instance_id").size()
    # Clicks: per (instance, cell) how many raters clicked it, against every context cell.
    if ds.dataset_hash not in _CONTEXT_CACHE:
        _CONTEXT_CACHE[ds.dataset_hash] = _context_cells(ds)
    ctx = _CONTEXT_CACHE[ds.dataset_hash]
    ctx = ctx[ctx["instance_id"].isin(n_per.index)]
    found = pd.DataFrame({"instance_id": h["instance_id"].to_numpy(), "rc": proto.str.findall(
        r"CLICK\(R(\d+),C(\d+)\)").to_numpy()}).reset_index(names="response").explode("rc").dropna(subset=["rc"])
    clicks = pd.DataFrame({"response": found["response"], "instance_id": found["instance_id"],
                           "r": found["rc"].str[0].astype(int), "c": found["rc"].str[1].astype(int)})
    clicks = clicks.drop_duplicates(["response", "r", "c"]).drop(columns="response")  # a repeat counts once
    k = clicks.groupby(["instance_id", "r", "c"]).size().rename("k") if len(clicks) else pd.Series(dtype=int, name="k")
    cells = ctx.merge(k.reset_index(), on=["instance_id", "r", "c"], how="left") if len(clicks) else ctx.assign(k=0)
    cells["k"] = cells["k"].fillna(0)
    cells["n"] = cells["instance_id"].map(n_per)
    alpha_cells = None
    vc = np.stack([cells["n"] - cells["k"], cells["k"]], axis=1).astype(float)
    if len(vc) >= 2 and vc[:, 0].sum() and vc[:, 1].sum():
        alpha_cells = float(krippendorff.alpha(value_counts=vc, level_of_measurement="nominal"))
    cells["wrong"] = (cells["k"] * 2 > cells["n"]) != cells["gold"]
    click_ok = ~cells.groupby("instance_id")["wrong"].any()
    # Counts: per instance the answers' distribution; the panel answer is the unique mode.
    counted = proto.str.extract(r"(?:COUNT|SUBMIT)\((\d+)\)")[0]
    counts = pd.DataFrame({"instance_id": h["instance_id"].to_numpy(), "count": counted.to_numpy()}).dropna()
    counts["count"] = counts["count"].astype(int)
    alpha_counts = None
    count_ok = pd.Series(dtype=bool)
    if len(counts):
        tab = counts.groupby(["instance_id", "count"]).size().unstack(fill_value=0)
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
        gold_count = pd.Series({iid: ds.instances[iid].gold.count for iid in tab.index})
        count_ok = unique_mode & (mode == gold_count)
    panel = pd.concat([click_ok.rename("click"), count_ok.rename("count")], axis=1)
    panel_pass = panel.fillna(True).all(axis=1)
    indiv = h.groupby("instance_id")["passed"].mean()
    return HumanAgreement(alpha_cells, alpha_counts, len(vc), int(len(count_ok)),
                          {int(a): int(b) for a, b in raters.value_counts().sort_index().items()},
                          100 * float(panel_pass.mean()) if len(panel_pass) else None,
                          100 * float(indiv.loc[panel_pass.index].mean()) if len(panel_pass) else None,
                          len(panel_pass), notes)


def human_model_agreement(df: pd.DataFrame) -> pd.DataFrame:
    """Per model or agent: error consistency kappa, Cohen's kappa and the correlation of per-instance human
    accuracy with the model's correctness, on the instances both answered."""
    from scipy.stats import pearsonr
    from sklearn.metrics import cohen_kappa_score

    h = df[df["solver_kind"] == "human"].groupby("instance_id")["passed"].mean()
    rows = []
    for solver, g in df[df["solver_kind"] != "human"].groupby("solver", sort=False):
        m = g.drop_duplicates("instance_id").set_index("instance_id")["passed"]
        shared = h.index.intersection(m.index)
        if len(shared) < 2:
            rows.append({"solver": solver, "shared items": len(shared)})
            continue
        acc_h = h.loc[shared].to_numpy()
        hum = (acc_h >= 0.5).astype(int)
        mod = m.loc[shared].to_numpy().astype(int)
        p1, p2 = hum.mean(), mod.mean()
        c_obs = float((hum == mod).mean())
        c_exp = p1 * p2 + (1 - p1) * (1 - p2)
        kappa_ec = (c_obs - c_exp) / (1 - c_exp) if c_exp < 1 else np.nan
        both_constant = len(set(hum)) < 2 and len(set(mod)) < 2
        ck = np.nan if both_constant else float(cohen_kappa_score(hum, mod))
        r = np.nan
        if acc_h.std() > 0 and mod.std() > 0:
            r = float(pearsonr(acc_h, mod).statistic)
        rows.append({"solver": solver, "shared items": len(shared), "human acc": 100 * p1, "model acc": 100 * p2,
                     "observed consistency": c_obs, "expected consistency": c_exp,
                     "error consistency κ": kappa_ec, "Cohen's κ": ck, "r(human acc, model correct)": r})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- difficulty

DIFFICULTY_PARAMS = {
    "grid cells": "n_cells", "targets in grid": "n_targets", "context size (cells)": "context_size",
    "subset": "subset", "EmojiStyle provider pair": "provider_pair", "PixelEdit changed pixels": "edit_k",
    "ChineseGlyph similarity": "similarity_bin", "template": "label",
}


def instance_params(ds: Dataset) -> pd.DataFrame:
    rows = []
    for inst in ds.instances.values():
        scene = ds.scenes[inst.scene_id]
        p = scene.params
        area = inst.context.area if inst.context_mode == "inside" else scene.rows * scene.cols - inst.context.area
        rows.append({"instance_id": inst.instance_id, "n_cells": scene.rows * scene.cols,
                     "n_targets": len(scene.targets), "context_size": area, "label": TEMPLATE_LABEL[inst.template],
                     "provider_pair": " vs ".join(p["providers"]) if "providers" in p else None,
                     "edit_k": p.get("edit_k"),
                     "similarity_bin": f"{int(p['similarity'] * 20) / 20:.2f}" if "similarity" in p else None})
    return pd.DataFrame(rows)


def difficulty_table(df: pd.DataFrame, params: pd.DataFrame, param: str) -> pd.DataFrame:
    """PASS per value of a generation parameter, per solver (with n)."""
    col = DIFFICULTY_PARAMS[param]
    merged = df.merge(params, on="instance_id", how="left", suffixes=("", "_p"))
    merged = merged[merged[col].notna()]
    out = merged.groupby(["solver", col])["passed"].agg(["mean", "size"]).reset_index()
    out["PASS"] = 100 * out["mean"]
    return out.rename(columns={col: "value", "size": "n"}).drop(columns=["mean"])


# --------------------------------------------------------------------------- drill-down

def drill_down(df: pd.DataFrame, ds: Dataset, instance_id: str) -> dict:
    """Everything about one instance: every response, the human click heatmap, each model's clicks."""
    inst = ds.instances[instance_id]
    scene = ds.scenes[inst.scene_id]
    rows = df[df["instance_id"] == instance_id]
    humans = rows[rows["solver_kind"] == "human"]
    heat = np.zeros((scene.rows, scene.cols))
    for p in humans["parsed"]:
        for r, c in _clicks(p):
            if 1 <= r <= scene.rows and 1 <= c <= scene.cols:
                heat[r - 1, c - 1] += 1
    models = {s: sorted(_clicks(p)) for s, p in zip(rows.loc[rows["solver_kind"] != "human", "solver"],
                                                     rows.loc[rows["solver_kind"] != "human", "parsed"])}
    return {"instance": inst, "scene": scene, "responses": rows, "heat": heat, "n_humans": len(humans),
            "model_clicks": models}


def replay(store: Store, participant_id: str, instance_id: str) -> pd.DataFrame:
    """A participant's events on an instance in order, with the selection after each step."""
    ev = pd.DataFrame(store.query(
        "SELECT view_id, seq, type, row, col, value, client_ts, server_ts FROM events WHERE participant_id = ? "
        "AND instance_id = ? ORDER BY server_ts, seq", (participant_id, instance_id)))
    if ev.empty:
        return ev
    state: list[tuple[int, int]] = []
    after = []
    for e in ev.itertuples(index=False):
        cell = (e.row, e.col)
        if e.type == "click":
            state = state + [cell]
        elif e.type == "unclick" or (e.type == "undo" and cell in state):
            state = [x for x in state if x != cell]
        elif e.type == "undo":
            state = state + [cell]
        elif e.type == "clear":
            state = []
        after.append("; ".join(f"R{r}C{c}" for r, c in state))
    ev["selection after"] = after
    t0 = ev["client_ts"].dropna().min()
    ev["t (s)"] = (ev["client_ts"] - t0) / 1000
    return ev


# --------------------------------------------------------------------------- per run

def run_summaries(store: Store) -> pd.DataFrame:
    """One row per run: solver, kind, n, per-template PASS, Glyph/Emoji/Pixel, Avg, pooled, VALID, gap."""
    df = responses_frame(store)
    rows = []
    for (run_id, kind, name), g in df.groupby(["run_id", "solver_kind", "solver_name"], sort=False):
        s = summarize_frame(g)
        rows.append({"run": run_id, "solver": name, "kind": kind, "responses": len(g), **s.pass_rate, **s.groups,
                     "Avg": s.avg, "pooled": s.pooled, "VALID": s.valid, "Counting Avg": s.counting_avg,
                     "Action Avg": s.action_avg, "gap": s.gap})
    return pd.DataFrame(rows)
