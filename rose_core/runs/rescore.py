"""Re-score every stored response with the current scorer, and say exactly what changed.

A stored verdict is only as good as the scorer that produced it (`responses.scorer_version`).
When the scorer's reading of answers changes, old rows keep old verdicts until they are
re-scored; mixing the two would put numbers from two different rulers in one table. So
`rescore` re-reads the stored raw `response` text of every row (models' raw output; for
humans the protocol string their clicks produced) against the current dataset's gold, and
writes the new verdicts in ONE `BEGIN IMMEDIATE` transaction: all rows or none.

Refused (nothing written) when a stored response's instance is not in the dataset or a run
was stored against another dataset build: its gold would not be the gold it was scored on.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.scoring import SCORER_VERSION, ScoreKey, score
from ..instrument.items import attention_item
from ..storage.connection import Store
from ..storage.responses import read_response_rows, rescore_responses
from ..storage.schema import bump_verdicts_generation

# What re-scoring reads of every response (and its run), in response id order.
_COLUMNS = ("response_id", "run_id", "instance_id", "template", "response", "protocol", "parsed", "valid", "passed",
            "failure", "errors", "scorer_version", "solver_kind", "solver_name", "dataset_hash")
CHANGE_KINDS = ("pass_to_fail", "fail_to_pass", "valid_to_invalid", "invalid_to_valid", "failure_changed")


class RescoreError(ValueError):
    """The stored responses cannot be re-scored against this dataset; nothing was changed."""


@dataclass
class RescoreReport:
    """What re-scoring changed, per template and solver (`kind:name`)."""

    scorer_version: str
    responses: int = 0
    changed: int = 0          # rows whose verdict (valid, pass, failure kind or errors) changed
    rewritten: int = 0        # rows written (verdict, parsed answer or scorer version differed)
    from_versions: Counter = field(default_factory=Counter)      # stored scorer versions before
    counts: dict[tuple[str, str], Counter] = field(default_factory=dict)  # (template, solver) -> change kind -> n
    failure_moves: Counter = field(default_factory=Counter)     # (old failure, new failure) -> n
    applied: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "scorer_version": self.scorer_version, "responses": self.responses, "changed": self.changed,
            "rewritten": self.rewritten, "applied": self.applied, "from_versions": dict(sorted(self.from_versions.items())),
            "by_template_solver": [{"template": t, "solver": s, **{k: c[k] for k in CHANGE_KINDS}}
                                   for (t, s), c in sorted(self.counts.items())],
            "failure_moves": [{"from": a, "to": b, "n": n} for (a, b), n in sorted(
                self.failure_moves.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1])))],
        }

    def format(self) -> str:
        head = (f"scorer {self.scorer_version}: {self.responses} responses re-scored "
                f"(stored by scorer {', '.join(f'{v}: {n}' for v, n in sorted(self.from_versions.items())) or '-'}), "
                f"{self.changed} verdicts changed, {self.rewritten} rows "
                f"{'updated' if self.applied else 'would be updated (dry run)'}")
        if not self.counts:
            return head
        lines = [head, f"{'template':<9}{'solver':<32}" + "".join(f"{k:>18}" for k in CHANGE_KINDS)]
        for (t, s), c in sorted(self.counts.items()):
            lines.append(f"{t:<9}{s:<32}" + "".join(f"{c[k]:>18}" for k in CHANGE_KINDS))
        lines.append("failure kind moves: " + ", ".join(f"{a} -> {b}: {n}" for (a, b), n in sorted(
            self.failure_moves.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1])))))
        return "\n".join(lines)


def _key(ds: Dataset, instance_id: str) -> ScoreKey | None:
    """The gold of a stored response: a benchmark instance, or a study's attention check (`ATT:scene:seed`)."""
    if instance_id in ds.instances:
        return ds.key(instance_id)
    parts = instance_id.split(":", 2)
    if len(parts) == 3 and parts[0] == "ATT" and parts[1] in ds.scenes:
        return attention_item(ds, instance_id).key
    return None


def rescore_rows(rows: Iterable[dict[str, Any]], ds: Dataset) -> tuple[RescoreReport, list[tuple]]:
    """Pure: the change report and the UPDATE parameters for the rows that differ from the current scorer."""
    report = RescoreReport(SCORER_VERSION)
    updates: list[tuple] = []
    problems: list[str] = []
    keys: dict[str, Any] = {}
    for row in rows:
        iid = row["instance_id"]
        if row["dataset_hash"] != ds.dataset_hash:
            problems.append(f"run {row['run_id']!r} was stored against dataset {row['dataset_hash']}, "
                            f"not {ds.dataset_hash}")
            continue
        key = keys.get(iid) or keys.setdefault(iid, _key(ds, iid))
        if key is None:
            problems.append(f"response {row['response_id']}: instance {iid!r} is not in the dataset")
            continue
        s = score(key, row["response"])
        report.responses += 1
        report.from_versions[row["scorer_version"]] += 1
        new = (s.parsed.canonical, json.dumps(s.parsed.to_json()), int(s.valid), int(s.passed), s.failure,
               json.dumps(list(s.errors)), SCORER_VERSION)
        old = (row["protocol"], row["parsed"], int(row["valid"]), int(row["passed"]), row["failure"], row["errors"],
               row["scorer_version"])
        if new == old:
            continue
        updates.append((*new, row["response_id"]))
        verdict_changed = old[2:6] != new[2:6]
        if not verdict_changed:
            continue
        report.changed += 1
        c = report.counts.setdefault((row["template"], f"{row['solver_kind']}:{row['solver_name']}"), Counter())
        if old[3] and not new[3]:
            c["pass_to_fail"] += 1
        elif new[3] and not old[3]:
            c["fail_to_pass"] += 1
        if old[2] and not new[2]:
            c["valid_to_invalid"] += 1
        elif new[2] and not old[2]:
            c["invalid_to_valid"] += 1
        if old[4] != new[4]:
            c["failure_changed"] += 1
            report.failure_moves[(old[4], new[4])] += 1
    if problems:
        shown = sorted(set(problems))
        raise RescoreError(f"{len(problems)} stored responses cannot be re-scored with this dataset, nothing changed: "
                           + "; ".join(shown[:5]) + (f"; … {len(shown) - 5} more" if len(shown) > 5 else ""))
    report.rewritten = len(updates)
    for c in report.counts.values():
        for k in CHANGE_KINDS:
            c.setdefault(k, 0)
    return report, updates


def _stored(conn: Any) -> Iterator[dict[str, Any]]:
    """Every stored response, previews', simulated and test participants' too: `report --include-simulated`
    counts a dry run's rows, and a test participant un-marked counts again, so none may keep a stale verdict."""
    names, rows = read_response_rows(conn, _COLUMNS, every_row=True)
    return (dict(zip(names, r)) for r in rows)


def rescore(store: Store, ds: Dataset, dry_run: bool = False) -> RescoreReport:
    """Re-score every stored response in one transaction (or only report, with dry_run)."""
    if dry_run:
        with store.connect() as c:
            report, _ = rescore_rows(_stored(c), ds)
        return report
    with store.write() as c:
        report, updates = rescore_rows(_stored(c), ds)
        rescore_responses(c, updates)
        if updates:
            bump_verdicts_generation(c)
    report.applied = True
    return report
