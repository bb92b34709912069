"""Reading episode-log files (ours, or written elsewhere), with every claim checked by replaying it.

One JSON object per line: `episode_id`, `steps` (a list of `{"action": text, …}` or of plain texts) and
optionally `solver`, `sample` (default 0), `step_cap` (default 20), `modality`, `dataset_hash`, `solved`, and
per step `command`, `outcome`, `d`, `state`, `ms` (and `moves` under the ivispar reader); a `protocol` object
(written by `sgp run-model`) is kept in the log's meta, and its `reader` must be the one scoring; a line
without one holds commands, not model replies, and is replayed by the strict reader. Nothing a file says is believed: the actions are replayed
from the episode's start through the same engine the agents use, and every field the line does carry must
agree with the replay. A log must be complete (solved, or exactly at its step cap) and must not go on after
the goal. Every problem is reported as `FILE:LINE: …` (`problems.checked_records`: lines read with a length
cap, the first 25 shown), and nothing is returned unless the whole file passed.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ...common.problems import ProblemsError, checked_records
from .dataset import SgpDataset
from .play import STEP_CAP, EpisodeLog, Replay
from .readers import READERS, Reader



class SgpLogError(ProblemsError):
    """An episode-log file that does not hold valid, complete, consistent episodes (problems by file:line)."""


def _check_line(obj: Any, ds: SgpDataset, default_solver: str | None,
                reader: Reader | None = "strict") -> tuple[EpisodeLog | None, list[str]]:
    if not isinstance(obj, dict):
        return None, [f"expected a JSON object, got {type(obj).__name__}"]
    errs: list[str] = []
    eid = obj.get("episode_id")
    if not isinstance(eid, str):
        return None, [f"episode_id: expected a string, got {eid!r}"]
    if eid not in ds.episodes:
        return None, [f"episode_id {eid!r} is not in this dataset"]
    h = obj.get("dataset_hash")
    if h is not None and h != ds.dataset_hash:
        return None, [f"dataset_hash {h!r} is not this dataset's ({ds.dataset_hash})"]
    solver = obj.get("solver", default_solver)
    if not isinstance(solver, str) or not solver:
        return None, ["solver: missing (give it on the line or pass a default solver name)"]
    sample, cap = obj.get("sample", 0), obj.get("step_cap", STEP_CAP)
    for name, v in (("sample", sample), ("step_cap", cap)):
        if not isinstance(v, int) or isinstance(v, bool) or v < (0 if name == "sample" else 1):
            return None, [f"{name}: expected a {'non-negative' if name == 'sample' else 'positive'} integer, got {v!r}"]
    steps = obj.get("steps")
    if not isinstance(steps, list):
        return None, [f"steps: expected a list, got {type(steps).__name__}"]
    protocol = obj.get("protocol")
    played = protocol.get("reader") if isinstance(protocol, dict) else None
    if played is not None and played not in READERS:
        return None, [f"protocol.reader: expected one of {', '.join(READERS)}, got {played!r}"]
    if reader is None:            # each line with the reader it was played with (a page that shows runs as played)
        reader = played or "strict"
    if played is not None and played != reader:
        return None, [f"played with the {played!r} reader (the boards the model saw followed it): score it with "
                      f"--reader {played}"]
    ep = ds.episodes[eid]
    # a line without run-model's protocol object holds commands (an agent's, or written elsewhere), not replies:
    # the original's agents send theirs to its engine directly, which moves a well-formed command as strict does
    r = Replay(ep, cap, reader if isinstance(protocol, dict) else "strict")
    for k, st in enumerate(steps, 1):
        if r.done:
            errs.append(f"steps[{k - 1}]: the episode was already over after step {k - 1} "
                        f"({'solved' if r.d == 0 else 'step cap'})")
            break
        claim = {"action": st} if isinstance(st, str) else st
        if not isinstance(claim, dict) or not isinstance(claim.get("action"), str):
            errs.append(f"steps[{k - 1}]: expected the action text (a string, or an object with 'action')")
            break
        ms = claim.get("ms")
        if ms is not None and (not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms < 0):
            errs.append(f"steps[{k - 1}].ms: expected a non-negative number, got {ms!r}")
            ms = None
        extra = {key: v for key, v in claim.items()
                 if key not in ("t", "action", "command", "outcome", "d", "state", "ms", "moves")}
        got = r.send(claim["action"], ms, extra)
        if "moves" in claim:
            claim = {**claim, "moves": tuple(claim["moves"]) if isinstance(claim["moves"], list) else claim["moves"]}
        for field_name in ("t", "command", "outcome", "d", "state", "moves"):
            if field_name in claim and claim[field_name] != getattr(got, field_name):
                errs.append(f"steps[{k - 1}].{field_name}: the file says {claim[field_name]!r}, replaying the "
                            f"actions gives {getattr(got, field_name)!r}")
    if not errs and not r.done:
        errs.append(f"incomplete episode: {len(r.steps)} steps, neither solved nor at the step cap ({cap})")
    if "solved" in obj and not errs and obj["solved"] != (r.d == 0):
        errs.append(f"solved: the file says {obj['solved']!r}, replaying the actions gives {r.d == 0}")
    modality = obj.get("modality")
    if modality is not None and modality not in ("2d", "3d", "text"):
        errs.append(f"modality: {modality!r} is not one of 2d, 3d, text")
    meta = obj.get("meta") if isinstance(obj.get("meta"), dict) else {}
    if isinstance(protocol, dict):
        meta = {**meta, "protocol": protocol}
    if errs:
        return None, errs
    return r.log(solver, sample, ds.dataset_hash, modality, meta), []


def read_logs(path: Path | str, ds: SgpDataset, default_solver: str | None = None,
              reader: Reader | None = "strict") -> list[EpisodeLog]:
    """Every episode log in `path`, replayed and checked; raises `SgpLogError` naming file:line otherwise.
    `reader` reads the model replies of lines written by `sgp run-model` (a line played with another reader, its
    `protocol.reader`, is refused; None: each line with the reader it was played with); other lines are commands,
    replayed by the strict reader."""
    logs, problems = checked_records(Path(path), lambda obj: _check_line(obj, ds, default_solver, reader),
                                     lambda lg: (lg.solver, lg.episode_id, lg.sample),
                                     lambda lg: f"{lg.solver!r} episode {lg.episode_id} sample {lg.sample}")
    if problems:
        raise SgpLogError(problems)
    if not logs:
        raise SgpLogError([f"{path}: no episode logs in the file"])
    return logs
