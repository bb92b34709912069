"""SGP board-state inference answers into the database: a file written by `sgp infer-run` or by any other harness,
checked whole (`inference.read_answers`, problems by file:line), stored in one transaction with each board's
truth, so the SGP results page and `report --json` score them (`analysis.sgp.inference_results`)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..benchmarks.sgp.dataset import SgpDataset
from ..benchmarks.sgp.inference import inference_item, read_answers
from ..storage.connection import Store, now
from ..storage import inference


class InferenceImportError(ValueError):
    """An import refused: nothing was stored."""


@dataclass(frozen=True)
class InferenceImport:
    groups: dict[tuple[str, str], int]    # (solver, modality) -> answers stored
    replaced: tuple[tuple[str, str], ...]  # groups that replaced earlier answers


def import_inference(store: Store, ds: SgpDataset, path: Path | str, solver: str | None = None,
                     modality: str | None = None, kind: Literal["model", "agent"] = "model",
                     replace: bool = False, source_name: str | None = None) -> InferenceImport:
    """Read and check the whole file, then store every answer in one transaction. A (solver, modality) that
    already has answers on this build is refused unless `replace` (then its earlier answers are all replaced)."""
    answers = read_answers(path, ds, solver, modality)
    t = now()
    rows = []
    for a in answers:
        item = inference_item(ds, a.episode_id, a.board)
        rows.append(inference.InferenceRow(ds.dataset_hash, a.solver, kind, a.modality, a.item_id, a.episode_id, a.board,
                                    a.sample, item.n_geoms, json.dumps(item.state, sort_keys=True), a.response,
                                    a.ms, source_name or str(path), t))
    groups = sorted({(r.dataset_hash, r.solver, r.modality) for r in rows})
    with store.write() as c:
        there = inference.stored_groups(c, groups)
        if there and not replace:
            raise InferenceImportError("; ".join(
                f"{s!r} ({m}) already has {n} answers on this build: choose another solver name or replace them "
                "explicitly (--replace)" for (_, s, m), n in there.items()))
        inference.replace_groups(c, rows)
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        counts[(r.solver, r.modality)] = counts.get((r.solver, r.modality), 0) + 1
    return InferenceImport(counts, tuple((s, m) for (_, s, m) in there))
