"""The review of a Prolific study: one row per Prolific participant, saying what to do with their submission.

The decision follows the study's end state and the same exclusion rules the analyses apply
(`selection.ExclusionRules`, the experimenter's own exclusions among them), so who is rejected and who is left
out of the numbers never disagree:

- still working: no end yet (nothing to decide);
- screened out: failed the practice (or an attention check, when the study screens out on it); paid through the
  screen-out code, never rejected;
- return: the time limit ran out, or no item was left for them: ask them to return the submission;
- reject: completed, but an exclusion rule holds (reason and Prolific's rejection category given);
- approve: completed, and no rule holds.

The columns are those Prolific's review takes: `participant_id` (paste the approve rows' ids into "Bulk approve"),
`submission_id`, the action, the rejection category and message for a reject; then `completion_code`, the code a
completed participant was shown (their own with per-participant codes, `instrument.completion`), and
`code_check`, when the codes the submissions reported are given: ok, wrong (a completed participant reporting
another code, e.g. one from another participant, is rejected: BAD_CODE) or missing; and `flags`, the kinds of the
participant's flags (participant_flags: the behaviour check's, refused answers, takeover attempts), so a flagged
`approve` row is seen in the file the experimenter acts on (the details are on the Participants page).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd

from ..instrument.behaviour import EXCLUDED_BY
from ..instrument.completion import code_matches, expected_codes
from ..instrument.config import Study
from ..storage.connection import Store
from ..storage.exclusions import standing_reasons
from ..storage.participants import flags, review_rows
from .selection import ExclusionRules, participant_table

Status = Literal["approve", "reject", "return", "screened_out", "still_working"]
COLUMNS = ("participant_id", "submission_id", "status", "reason", "rejection_category", "time_taken_s",
           "main_items", "end_reason", "started_at_utc", "finished_at_utc", "completion_code", "code_check",
           "flags")
CodeCheck = Literal["", "ok", "wrong", "missing"]
# Prolific's rejection categories, per exclusion rule (`selection.participant_table`'s reason names).
CATEGORY = {"attention": "FAILED_CHECK", "too fast": "TOO_QUICKLY", "streak": "LOW_EFFORT", "by hand": "OTHER"}


@dataclass(frozen=True)
class Review:
    rows: pd.DataFrame       # COLUMNS, one row per Prolific participant, by arrival
    left_out: int            # counted participants who did not come from Prolific (no submission to review)

    def counts(self) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.rows["status"].value_counts().sort_index().items()}


def _rule_text(name: str, row: pd.Series, rules: ExclusionRules, manual: str) -> str:
    if name == "attention":
        return (f"failed {int(row['attention_checks'] - row['attention_passed'])} of {int(row['attention_checks'])} "
                "attention checks")
    if name == "too fast":
        return (f"median time per item {row['median_item_s']:.2f} s, below the study's "
                f"{(rules.too_fast_ms or 0) / 1000:g} s minimum")
    if name == "streak":
        return f"{int(row['longest_streak'])} answers in a row said the same (limit {rules.streak})"
    if manual.startswith(f"{EXCLUDED_BY}:"):   # the behaviour check's own exclusion, not the experimenter's
        return manual
    return f"excluded by the experimenter: {manual}"


def review(store: Store, study: Study, rules: ExclusionRules | None = None,
           reported: dict[str, str] | None = None) -> Review:
    """The approvals of one study (`rules`: the analyses' exclusion rules, by default the standard ones; the
    completed-only rule is not a reason to reject: an unfinished participant is returned, screened out or still
    working). `reported`: Prolific id -> the completion code their submission reported (`read_reported_codes`);
    each is checked against the participant's own code."""
    rules = rules or ExclusionRules()
    with store.connect() as conn:
        people = pd.DataFrame(review_rows(conn, study.study_id))
        manual = standing_reasons(conn)
        flagged: dict[str, set[str]] = {}
        for f in flags(conn, study.study_id):
            flagged.setdefault(f["participant_id"], set()).add(f["kind"])
    if people.empty:
        return Review(pd.DataFrame(columns=list(COLUMNS)), 0)
    prolific = people[people["source"] == "prolific"]
    left_out = len(people) - len(prolific)
    table = participant_table(store, rules) if study.config.benchmark == "rose" else pd.DataFrame()
    codes = expected_codes(store, study, [str(e) for e in prolific["external_id"]])
    facts = table.set_index("participant_id") if len(table) else pd.DataFrame()
    out = []
    for _, p in prolific.iterrows():
        pid, end = p["participant_id"], p["end_reason"]
        end = None if end is None or pd.isna(end) else str(end)
        f = facts.loc[pid] if pid in facts.index else None
        reasons = [r for r in (f["excluded"].split(", ") if f is not None and f["excluded"] else [])
                   if r != "unfinished"]
        if f is None and rules.by_hand and pid in manual:   # an SGP study: only the experimenter's own exclusions
            reasons = ["by hand"]
        category = ""
        if end is None:
            status: Status = "still_working"
            reason = "has not finished yet"
        elif end == "screened_out":
            status = "screened_out"
            attention = bool(p["practice_passed"]) or not study.config.practice_rounds
            reason = "failed an attention check" if attention else "did not pass the practice"
        elif end == "timed_out":
            status = "return"
            reason = f"the study's time limit of {study.config.time_limit_minutes} minutes ran out"
        elif end == "pool_exhausted":
            status = "return"
            reason = "no item was left for them (every item already had enough answers)"
        elif reasons:
            status = "reject"
            reason = "; ".join(_rule_text(r, f, rules, manual.get(pid, "")) for r in reasons)
            category = CATEGORY[reasons[0]]
            if reasons[0] == "by hand" and manual.get(pid, "").startswith(f"{EXCLUDED_BY}:"):
                category = "LOW_EFFORT"
        else:
            status, reason = "approve", ""
        expected = codes.get(str(p["external_id"]), "") if end == "completed" else ""
        check: CodeCheck = ""
        if reported is not None and end == "completed" and expected:
            given = reported.get(str(p["external_id"]))
            check = "missing" if not given else "ok" if code_matches(expected, given) else "wrong"
            if check == "wrong":
                status, category = "reject", "BAD_CODE"
                reason = "; ".join(x for x in ("the completion code reported is not this participant's", reason) if x)
        started = p["created_at"]
        done = p["finished_at"]
        out.append({"participant_id": p["external_id"], "submission_id": "" if pd.isna(p["prolific_session_id"]) else p["prolific_session_id"],
                    "status": status, "reason": reason, "rejection_category": category,
                    "time_taken_s": None if done is None or pd.isna(done) else round(float(done - started), 1),
                    "main_items": int(f["main_items"]) if f is not None else None, "end_reason": end or "",
                    "started_at_utc": pd.to_datetime(started, unit="s", utc=True),
                    "finished_at_utc": None if done is None or pd.isna(done) else pd.to_datetime(done, unit="s",
                                                                                                   utc=True),
                    "completion_code": expected, "code_check": check,
                    "flags": ", ".join(sorted(flagged.get(pid, ())))})
    return Review(pd.DataFrame(out, columns=list(COLUMNS)), left_out)


ID_COLUMNS = ("participant_id", "participant id", "prolific_pid", "prolific id")
CODE_COLUMNS = ("completion_code", "completion code", "code", "entered code")


def read_reported_codes(path: str | Path) -> dict[str, str]:
    """Prolific id -> the completion code it reported, from a CSV (e.g. Prolific's submissions export) with a
    participant id column and a completion code column (names matched without case: `Participant id` /
    `participant_id` / `PROLIFIC_PID`, and `Completion code` / `code`). ValueError naming the file and what is
    missing or repeated."""
    path = Path(path)
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot be read as CSV ({e})") from e
    names = {str(c).strip().lower(): c for c in df.columns}
    pid = next((names[n] for n in ID_COLUMNS if n in names), None)
    code = next((names[n] for n in CODE_COLUMNS if n in names), None)
    if pid is None or code is None:
        raise ValueError(f"{path}: expected a participant id column ({', '.join(ID_COLUMNS)}) and a completion code "
                         f"column ({', '.join(CODE_COLUMNS)}); found {', '.join(map(str, df.columns)) or 'none'}")
    out: dict[str, str] = {}
    for line, (who, given) in enumerate(zip(df[pid], df[code]), start=2):
        who = who.strip()
        if not who:
            continue
        if who in out and out[who] != given.strip():
            raise ValueError(f"{path}, line {line}: participant {who!r} is listed twice with different codes")
        out[who] = given.strip()
    return out
