"""The human-baseline reporting checklist of Wei et al. (ICML 2025, "Position: Human Baselines in Model
Evaluations Need Rigor and Transparency (With Recommendations & Reporting Checklist)", arXiv 2506.13776), filled
from the database and the studies' configuration, and a methods paragraph with every number in it.

What the data cannot tell (compensation, ethics review, how the sample size was chosen, who the participants
were) is left as an explicit blank, `BLANK`, for the authors to fill: never guessed."""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

import pandas as pd

from ...benchmarks.rose.dataset import Dataset
from ...benchmarks.rose.records import TEMPLATE_LABEL
from ...instrument.sample import describe as describe_sample
from ...instrument.study import get_study
from ...instrument.texts import MARKER, questionnaire_line, questionnaire_summary, stored_texts
from ...storage.participants import participant_times
from ...storage.connection import Store
from ...storage.runs import imported_run_metas
from ..agreement import MIN_SHARED_TRIALS
from ..devices import device_mix, device_sentence
from ..display import fmt_count, fmt_interval, fmt_rate, fmt_stat, is_missing
from .paper import PaperReport

BLANK = "**[TO FILL: not recorded in the database]**"


@dataclass(frozen=True)
class Item:
    section: str
    item: str
    answer: str          # filled from data, or containing BLANK
    source: str          # where the answer comes from ("database", "study configuration", "—" for a blank)

    @property
    def blank(self) -> bool:
        return BLANK in self.answer


@dataclass(frozen=True)
class HumanFacts:
    """What the database says about the human baseline of a selection."""

    studies: list[dict]            # study_id, name, dataset_hash, config (dict)
    participants: pd.DataFrame     # participant_table rows of those studies, with created/consent/finished times
    analysed: int                  # participants whose responses the tables use
    responses: int                 # human main responses analysed
    instances: int                 # instances humans answered (analysed)
    per_instance: pd.Series        # participants per answered instance


def human_facts(store: Store, paper: PaperReport) -> HumanFacts:
    sel = paper.selection
    parts = sel.participants
    if sel.filters.studies and len(parts):
        parts = parts[parts["study_id"].isin(sel.filters.studies)]
    study_ids = sorted(parts["study_id"].unique()) if len(parts) else []
    studies = []
    for sid in study_ids:
        s = get_study(store, sid)
        if s is not None:
            studies.append({"study_id": s.study_id, "name": s.name, "dataset_hash": s.dataset_hash,
                            "config": {k: v for k, v in s.config.__dict__.items()
                                       if k not in ("practice_rounds", "practice_scene_ids", "sample_ids")},
                            "sample": describe_sample(s.config)})
    if len(parts):
        with store.connect() as conn:
            times = participant_times(conn)
        parts = parts.merge(times, on="participant_id", how="left")
    h = sel.df[sel.df["solver_kind"] == "human"]
    per = h.groupby("instance_id")["participant_id"].nunique()
    return HumanFacts(studies, parts, int(h["participant_id"].nunique()), len(h), int(h["instance_id"].nunique()), per)


def _date(ts: float | None) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%d") if ts and pd.notna(ts) else "?"


def _counts(series: pd.Series) -> str:
    vc = series.fillna("unfinished").value_counts().sort_index()
    return ", ".join(f"{k}: {v}" for k, v in vc.items()) or "none"


def _cfg(facts: HumanFacts, key: str) -> str:
    vals = sorted({f"{v:.3g}" if isinstance(v := s["config"].get(key), float) else str(v) for s in facts.studies})
    return " / ".join(vals) if vals else "?"


def _exclusion_counts(parts: pd.DataFrame) -> str:
    if parts.empty:
        return "none"
    reasons = parts.loc[parts["excluded"] != "", "excluded"].str.split(", ").explode().value_counts().sort_index()
    return ", ".join(f"{r}: {n}" for r, n in reasons.items()) or "none"


def _interval(row: pd.Series, metric: str, none: str) -> str:
    """"[lo, hi]" of `metric` in the one number format, or `none` when the row has no interval."""
    lo, hi = row.get(f"{metric} lo"), row.get(f"{metric} hi")
    return none if is_missing(lo) and is_missing(hi) else fmt_interval(lo, hi)


def _human_row(paper: PaperReport) -> pd.Series | None:
    main = paper.table("main").frame
    h = main[main["solver"] == "Human"]
    return h.iloc[0] if len(h) else None


def _item_sets(paper: PaperReport) -> tuple[int, list[str]]:
    """Which instances each side is measured on: the humans' count (the study's sample), and per run its own
    count and how many of the humans' it answered. Humans and runs rarely answer the same set, so no text may
    say they were scored "on the same instances"."""
    df = paper.selection.df
    hum = set(df.loc[df["solver_kind"] == "human", "instance_id"])
    bits = []
    for solver, g in df[df["solver_kind"] != "human"].groupby("solver", sort=False):
        own = set(g["instance_id"])
        both = len(hum & own)
        share = f" ({fmt_rate(100 * both / len(hum))}%)" if hum else ""
        bits.append(f"{solver} on {len(own):,} instances, {both:,} of the {len(hum):,} human-answered among them{share}")
    return len(hum), bits


def _same_test_set(paper: PaperReport) -> str:
    n_hum, bits = _item_sets(paper)
    if not n_hum:
        return "no human responses in this selection"
    return (f"the same ROSE dataset (same images, same gold answers, same scorer), not the same items: the humans "
            f"on the study's sample of {n_hum:,} instances; " + "; ".join(bits) + "; the human − model table gives "
            "each rate's items and both rates on the instances both answered ('Same items')") if bits \
        else f"no model or agent run in this selection ({n_hum:,} human-answered instances)"


def checklist_items(store: Store, ds: Dataset, paper: PaperReport) -> tuple[list[Item], HumanFacts]:
    f = human_facts(store, paper)
    p = f.participants
    rep = paper.report
    hr = _human_row(paper)
    avg = "no human row" if hr is None else f"Human Avg {fmt_rate(hr['Avg'])} {_interval(hr, 'Avg', '(no interval)')}"
    templates = sorted({t for s in f.studies for t in s["config"]["templates"]}, key=str)
    per = f.per_instance
    per_txt = (f"{per.min()}–{per.max()} (median {per.median():g})" if len(per) else "none")
    completed = int((p["end_reason"] == "completed").sum()) if len(p) else 0
    consented = int(p["consent_at"].notna().sum()) if len(p) else 0
    med_item = (p["median_item_s"].median() if len(p) else float("nan"))
    att_n = int(p["attention_checks"].sum()) if len(p) else 0
    att_ok = int(p["attention_passed"].sum()) if len(p) else 0
    study_txt = "; ".join(f"{s['name']} ({s['study_id']})" for s in f.studies) or "none"
    items = [
        Item("Baseline and metrics", "Which human baseline is reported and how it is scored",
             f"Participants pooled over the studies {study_txt}; every answer is turned into the protocol string a "
             "model writes and scored by the same scorer (versions: " +
             (", ".join(f"scorer {v}: {n:,} responses" for v, n in rep["scorer_versions"].items()) or "none") + ")",
             "database"),
        Item("Baseline and metrics", "Same metrics for humans and models",
             "yes: template PASS, Avg (mean of the five template rates), VALID, the gap and the bridges are computed "
             "by the same functions for every solver", "code"),
        Item("Tasks", "Same test set for humans and models", _same_test_set(paper), "database"),
        Item("Tasks", "Test items, split and templates shown to humans",
             f"split {_cfg(f, 'split')}; templates {', '.join(TEMPLATE_LABEL.get(t, t) for t in templates) or '?'}; "
             f"{f.instances} instances answered (dataset hash {ds.dataset_hash})", "study configuration, database"),
        Item("Tasks", "Equivalent instructions and interface",
             "humans see the instance's own PNG (the bytes a model gets) with a short instruction naming the region "
             "and answer by clicking cells and typing a number; models get the same PNG with a prompt that explains "
             "coordinates and the protocol; each run's prompt variant and sampling settings: see \"Model run "
             "settings\"", "instrument"),
        Item("Tasks", "Practice, feedback and training",
             f"practice items per round {_cfg(f, 'practice_items')}, pass fraction {_cfg(f, 'practice_pass_fraction')}, "
             f"attempts {_cfg(f, 'practice_max_attempts')}; feedback after every practice answer, none on main items",
             "study configuration"),
        Item("Baseliner population", "Sample size (recruited, completed, analysed)",
             f"{len(p)} joined, {consented} consented, {completed} completed, {rep['participants_excluded']} "
             f"excluded, {f.analysed} analysed ({f.responses:,} main responses); end states: "
             f"{_counts(p['end_reason']) if len(p) else 'none'}", "database"),
        Item("Baseliner population", "Sample size justification",
             f"design: {_cfg(f, 'target_per_instance')} participants per instance, {_cfg(f, 'items_per_participant')} "
             f"items per participant; achieved {per_txt} participants per instance; precision: {avg}. Why this N: "
             + BLANK, "study configuration, database; blank"),
        Item("Baseliner population", "Recruitment (platform, criteria)",
             f"sources: {_counts(p['source']) if len(p) else 'none'}; eligibility criteria and platform filters: "
             + BLANK, "database; blank"),
        Item("Baseliner population", "Demographics and expertise", BLANK, "—"),
        Item("Ethics and compensation", "Compensation (amount, basis, effective hourly rate)",
             f"{BLANK} (median time per main item {fmt_stat(med_item)} s on the server's clock)", "blank"),
        Item("Ethics and compensation", "Informed consent", f"consent screen before any item; {consented} of "
             f"{len(p)} participants consented", "database"),
        Item("Ethics and compensation", "Ethics review (IRB) and approval number", BLANK, "—"),
        Item("Data collection", "Collection period and mode",
             f"online, unsupervised, in the participant's browser; first join {_date(p['created_at'].min() if len(p) else None)}"
             f", last finish {_date(p['finished_at'].max() if len(p) else None)} (UTC)", "database"),
        _device_item(store, f),
        Item("Data collection", "Time limits and item order",
             f"time limit {_cfg(f, 'time_limit_minutes')} min (0 = none); ordering {_cfg(f, 'ordering')} (seed "
             f"{_cfg(f, 'seed')}); a held item is released after {_cfg(f, 'release_after_minutes')} silent minutes",
             "study configuration"),
        Item("Quality control", "Attention checks",
             f"one after every {_cfg(f, 'attention_every')} main items (0 = none); {att_ok} of {att_n} passed",
             "study configuration, database"),
        Item("Quality control", "Exclusion rules (pre-registered?)",
             f"rules: {rep['exclusions']}; excluded by reason: {_exclusion_counts(p)}. Pre-registration: " + BLANK,
             "database; blank"),
        Item("Analysis", "Uncertainty",
             f"{rep['intervals']}; McNemar's exact test for the bridges; Krippendorff's α for agreement; error "
             f"consistency per participant (pairs with < {MIN_SHARED_TRIALS} shared trials skipped)", "code"),
        Item("Analysis", "Human–human agreement", _agreement_txt(paper), "database"),
        Item("Documentation", "Data and code availability",
             "this bundle (tables as CSV, manifest with file hashes, dataset hash, code version); public URL: " + BLANK,
             "bundle; blank"),
    ]
    items += completion_items(f, paper) + selection_items(paper) + model_settings_items(store, paper)
    mine = text_items(store, f, items)
    return in_sections([mine.get(it.item, it) for it in items]), f


def _fact(facts: HumanFacts, key: str) -> str | None:
    """A fact the studies' texts state (`info`), per study when they differ; None when any study lacks it."""
    vals = {s["name"]: (s["config"].get("info") or {}).get(key, "").strip() for s in facts.studies}
    if not vals or any(not v or MARKER.search(v) for v in vals.values()):
        return None
    if len(set(vals.values())) == 1:
        return next(iter(vals.values()))
    return "; ".join(f"{name}: {v}" for name, v in vals.items())


def text_items(store: Store, facts: HumanFacts, items: list[Item]) -> dict[str, Item]:
    """The rows the studies' own texts and end questionnaire answer (compensation, ethics approval, the consent
    shown, demographics), by item name, replacing the blanks of `checklist_items`."""
    old = {it.item: it for it in items}
    ids = [s["study_id"] for s in facts.studies]
    versions = sorted({(t.study_id, t.version) for t in stored_texts(store, ids)})
    out = {}
    pay = _fact(facts, "payment")
    if pay is not None:
        item = old["Compensation (amount, basis, effective hourly rate)"]
        out[item.item] = Item(item.section, item.item, f"{pay} (as the consent text states; "
                              + item.answer.split("(", 1)[1], "study texts (info.payment), database")
    ethics = _fact(facts, "ethics_reference")
    if ethics is not None:
        out["Ethics review (IRB) and approval number"] = Item("Ethics and compensation",
                                                              "Ethics review (IRB) and approval number", ethics,
                                                              "study texts (info.ethics_reference)")
    if versions:
        item = old["Informed consent"]
        where = ", ".join(f"texts/{sid}/v{v}/consent.md" for sid, v in versions)
        out[item.item] = Item(item.section, item.item, f"{item.answer}; the consent text shown: {where}",
                              "database, study texts")
    counts, _ = questionnaire_summary(store, ids)
    if counts:
        out["Demographics and expertise"] = Item(
            "Baseliner population", "Demographics and expertise",
            f"end questionnaire (real participants who reached it): {questionnaire_line(counts)}. Expertise and "
            "anything not asked: " + BLANK, "database (end questionnaire); blank")
    return out


def _device_item(store: Store, f: HumanFacts) -> Item:
    """The device policy each study set and the devices its participants' browsers claimed before consent."""
    policies = sorted({"phones allowed (no minimum window)" if s["config"].get("allow_phones") else
                       f"a window of at least {s['config'].get('min_viewport_width', 1024)} × "
                       f"{s['config'].get('min_viewport_height', 640)} CSS pixels" for s in f.studies})
    ids = list(f.participants["participant_id"]) if len(f.participants) else []
    mix = device_mix(store, [s["study_id"] for s in f.studies], ids)
    return Item("Data collection", "Devices and display size",
                f"device policy: {' / '.join(policies) or '?'} (checked before consent on the window the browser "
                f"claims); {device_sentence(mix)}", "study configuration, database")



def in_sections(items: list[Item]) -> list[Item]:
    """The items grouped by section, sections in the order they first appear, items in theirs (rows added by
    separate functions land in their section, not in a second one of the same name)."""
    order = list(dict.fromkeys(it.section for it in items))
    return sorted(items, key=lambda it: order.index(it.section))


def _analysed(f: HumanFacts, paper: PaperReport) -> pd.DataFrame:
    """The participants whose responses the tables use."""
    df = paper.selection.df
    ids = set(df.loc[df["solver_kind"] == "human", "participant_id"])
    p = f.participants
    return p[p["participant_id"].isin(ids)] if len(p) else p


def completion_facts(f: HumanFacts, paper: PaperReport) -> dict:
    """How the analysed participants ended and how their practice went, from the participants table."""
    a = _analysed(f, paper)
    ended = a["end_reason"].fillna("left before the end") if len(a) else pd.Series(dtype=object)
    passed = a["practice_passed"] if len(a) else pd.Series(dtype=object)
    attempts = a["practice_attempts"] if len(a) else pd.Series(dtype=int)
    first = int(((passed == True) & (attempts == 0)).sum())   # noqa: E712 (None is "no practice")
    later = a[(passed == True) & (attempts > 0)] if len(a) else a   # noqa: E712
    return {"analysed": len(a), "completed": int((ended == "completed").sum()),
            "not_finished": {k: int(v) for k, v in ended[ended != "completed"].value_counts().sort_index().items()},
            "practice_first": first,
            "practice_repeats": {int(k): int(v) for k, v in later["practice_attempts"].value_counts().sort_index().items()}
            if len(later) else {},
            "practice_failed": int((passed == False).sum()),   # noqa: E712
            "practice_none": int(passed.isna().sum())}


def completion_text(c: dict) -> str:
    """"N analysed participants: C completed, K did not finish (reasons)"."""
    gone = sum(c["not_finished"].values())
    why = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in c["not_finished"].items())
    return (f"{c['analysed']} analysed participants: {c['completed']} completed the study, {gone} did not finish"
            + (f" ({why}); their answers up to then are analysed" if gone else ""))


def practice_text(c: dict) -> str:
    parts = []
    if c["practice_first"]:
        parts.append(f"{c['practice_first']} passed the first practice round")
    for k, n in c["practice_repeats"].items():
        parts.append(f"{n} passed after {k} repeated round{'s' if k > 1 else ''}")
    if c["practice_failed"]:
        parts.append(f"{c['practice_failed']} did not pass")
    if c["practice_none"]:
        parts.append(f"{c['practice_none']} had no practice (none configured or not reached)")
    return "; ".join(parts) or "no participant"


def completion_items(f: HumanFacts, paper: PaperReport | None = None) -> list[Item]:
    """Completion and practice outcomes of the participants the tables analyse: one who left early is
    counted among the analysed, and the checklist says so."""
    if paper is None:
        return []
    c = completion_facts(f, paper)
    return [Item("Baseliner population", "Completion of the analysed participants", completion_text(c), "database"),
            Item("Tasks", "Practice outcomes (analysed participants)", practice_text(c), "database")]


def selection_used(paper: PaperReport) -> str:
    """The split, subsets and templates the tables really rest on: the filter when one was set, else what the
    selected responses hold (a test-only study is "test", not "all")."""
    sel, df = paper.selection, paper.selection.df
    bits = []
    for what, key, chosen in (("split", "split", (sel.filters.split,) if sel.filters.split else ()),
                              ("subsets", "subset", sel.filters.subsets), ("templates", "template", sel.filters.templates)):
        if chosen:
            bits.append(f"{what} {', '.join(TEMPLATE_LABEL.get(str(v), str(v)) for v in chosen)} (selected)")
            continue
        rank = {t: k for k, t in enumerate(TEMPLATE_LABEL)}   # templates in the benchmark's order, as labelled

        def shown(vals: set[str]) -> list[str]:
            return [TEMPLATE_LABEL.get(v, v) for v in sorted(vals, key=lambda v: (rank.get(v, len(rank)), v))]

        per = {kind: shown(set(g[key].astype(str))) for kind, g in df.groupby("solver_kind", sort=True)}
        values = shown({v for g in (df[key].astype(str),) for v in g})
        if not values:
            bits.append(f"{what}: none (no responses)")
        elif len({tuple(v) for v in per.values()}) == 1:
            bits.append(f"{what} {', '.join(values)}")
        else:
            bits.append(f"{what} " + "; ".join(f"{kind}s {', '.join(v)}" for kind, v in per.items()))
    if sel.filters.studies:
        bits.append("studies " + ", ".join(sel.filters.studies) + " (selected)")
    if sel.filters.solvers:
        bits.append("solvers " + ", ".join(sel.filters.solvers) + " (selected)")
    return "; ".join(bits)


def selection_items(paper: PaperReport) -> list[Item]:
    return [Item("Tasks", "Selection analysed (split, subsets, templates)", selection_used(paper), "database")]


SETTING_ORDER = ("model", "prompt_variant", "system_prompt", "temperature", "top_p", "max_tokens", "seed", "date",
                 "endpoint", "notes")


def run_settings(store: Store, paper: PaperReport) -> dict[str, dict | None]:
    """Per model or agent solver of the selection, the settings stored with its run (None: none recorded)."""
    df = paper.selection.df
    runs = df.loc[df["solver_kind"] != "human", ["solver", "run_id", "solver_kind"]].drop_duplicates()
    metas = {r["run_id"]: json.loads(r["meta"] or "{}") for r in imported_run_metas(store)}
    return {str(r.solver): (metas.get(r.run_id) or {}).get("settings") for r in runs.itertuples()}


def settings_text(solver: str, settings: dict | None, blank: bool = True) -> str:
    """One run's settings in words; a run without any is "not recorded" (with the checklist's blank)."""
    if settings is None:
        return f"{solver}: not recorded" + (f" {BLANK} (import-run --settings FILE.toml stores them)" if blank else "")
    return f"{solver}: " + ", ".join(f"{k} {settings[k]}" for k in SETTING_ORDER if k in settings)


def model_settings_items(store: Store, paper: PaperReport) -> list[Item]:
    """The settings each model or agent run was made with (`runs.settings`, stored at import)."""
    per = run_settings(store, paper)
    if not per:
        return [Item("Tasks", "Model run settings (prompt, sampling, token limit, date, endpoint)",
                     "no model or agent run in this selection", "database")]
    return [Item("Tasks", "Model run settings (prompt, sampling, token limit, date, endpoint)",
                 "; ".join(settings_text(s, v) for s, v in per.items()),
                 "database" + ("; blank" if any(v is None for v in per.values()) else ""))]


def _agreement_txt(paper: PaperReport) -> str:
    r = paper.table("agreement_human").frame.iloc[0]
    return (f"Krippendorff's α {fmt_stat(r['alpha_cells'])} (cell clicks, {fmt_count(r['click_units'])} "
            f"units), {fmt_stat(r['alpha_counts'])} (counts, {fmt_count(r['count_units'])} units), over "
            f"{fmt_count(r['panel_items'] + r['panel_tied'])} instances with two or more participants (the "
            f"majority-vote panel on the {fmt_count(r['panel_items'])} with a majority answer, "
            f"{fmt_count(r['panel_tied'])} split exactly in half left out)")


def _sample_txt(f: HumanFacts) -> str:
    """The item sample of each study, in the methods text (one sentence when the studies share it)."""
    texts = {s["sample"] for s in f.studies}
    if len(texts) == 1:
        return next(iter(texts)) + " "
    return "".join(f"In {s['name']} ({s['study_id']}): {s['sample'][0].lower()}{s['sample'][1:]} " for s in f.studies)


def checklist_markdown(items: list[Item]) -> str:
    lines = ["# Human-baseline reporting checklist", "",
             "After Wei et al., \"Position: Human Baselines in Model Evaluations Need Rigor and Transparency (With "
             "Recommendations & Reporting Checklist)\", ICML 2025 (arXiv 2506.13776); items paraphrased and grouped "
             "by their stages. Filled by ROSE Studio from the database and the study configuration. "
             f"{BLANK} marks what the data cannot tell: fill it before publishing.", ""]
    section = None
    for it in items:
        if it.section != section:
            lines += ["", f"## {it.section}", "", "| Item | Answer | Source |", "|---|---|---|"]
            section = it.section
        lines.append(f"| {it.item} | {it.answer.replace('|', '/')} | {it.source} |")
    n_blank = sum(it.blank for it in items)
    lines += ["", f"{n_blank} of {len(items)} items hold a blank to fill."]
    return "\n".join(lines) + "\n"


def methods_paragraph(paper: PaperReport, facts: HumanFacts, ds: Dataset, store: Store) -> str:
    """One paragraph for the paper's methods section, every number filled in from the data."""
    rep, p, f = paper.report, facts.participants, facts
    settings = run_settings(store, paper)
    done = completion_facts(f, paper)
    if not len(p):
        return (f"No human baseline in this selection (dataset hash {ds.dataset_hash}; {selection_used(paper)}): no "
                "participant of any study; the tables hold only runs and published rows.")
    hr = _human_row(paper)
    completed = int((p["end_reason"] == "completed").sum()) if len(p) else 0
    solvers = [s for s in paper.table("main").frame.query("kind != 'published' and kind != 'human'")["solver"]]
    n_hum, item_bits = _item_sets(paper)
    human = ("No human responses were analysed" if hr is None else
             f"Humans reached an Avg of {fmt_rate(hr['Avg'])}% "
             f"(95% bootstrap interval {_interval(hr, 'Avg', 'not available')})")
    per = f.per_instance
    return (
        f"We collected a human baseline on ROSE (dataset hash {ds.dataset_hash}) in "
        f"{len(f.studies)} {'study' if len(f.studies) == 1 else 'studies'} "
        f"({', '.join(s['study_id'] for s in f.studies) or 'none'}). {len(p)} participants joined and {completed} "
        f"completed; applying the exclusion rules ({rep['exclusions']}) removed {rep['participants_excluded']}, leaving "
        f"{f.analysed} participants and {f.responses:,} main responses on {f.instances} instances "
        f"({per.min() if len(per) else 0}–{per.max() if len(per) else 0} participants per instance; design target "
        f"{_cfg(f, 'target_per_instance')}). {_sample_txt(f)}Completion: {completion_text(done)}. Practice: "
        f"{practice_text(done)}. Participants answered on the same images as the models, through a click "
        f"grid whose answers are converted to the models' protocol and scored by the same scorer (scorer versions: "
        f"{', '.join(rep['scorer_versions']) or 'none'}). Selection: {selection_used(paper)}. {human}; "
        f"{len(solvers)} model or agent runs were scored ({', '.join(solvers) or 'none'}): the humans on "
        f"{n_hum:,} instances, {'; '.join(item_bits) or 'no run'} (human − model "
        "differences are also given on the instances both answered); "
        f"their settings: {'; '.join(settings_text(s, v, blank=False) for s, v in settings.items()) or 'none'}. "
        f"Intervals: {rep['intervals']}. {_agreement_txt(paper)}.")
