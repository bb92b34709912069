"""Reference agents (iVISPAR's baselines) and the episode-log files they write.

- `optimal`: the first move of an A* shortest path from the current board; solves every episode in c1 steps.
- `random`: uniform over the legal moves (each leads to a board different from the current one: iVISPAR's
  "actions leading to new board states"); never sends an invalid action. Seeded per (seed, episode, sample),
  so every sample of every episode is reproducible on its own.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Callable, Literal

from .dataset import SgpDataset
from .play import STEP_CAP, EpisodeLog, PlayView, Policy, play_episode
from .search import astar_path, legal_moves

AgentName = Literal["optimal", "random"]
AGENTS: tuple[AgentName, ...] = ("optimal", "random")


def _command(view: PlayView, index: int, direction: str) -> str:
    g = view.board.geoms[index]
    return f"move {g.color} {g.shape} {direction}"


def optimal_policy(view: PlayView) -> str:
    mv = astar_path(view.board, view.goal)[0]
    return _command(view, mv.index, mv.direction)


def random_policy(rng: random.Random) -> Policy:
    def policy(view: PlayView) -> str:
        mv = rng.choice(legal_moves(view.board))
        return _command(view, mv.index, mv.direction)
    return policy


def agent_policy(name: AgentName, seed: int, episode_id: str, sample: int) -> Policy:
    if name == "optimal":
        return optimal_policy
    if name == "random":
        return random_policy(random.Random(f"sgp-random:{seed}:{episode_id}:{sample}"))
    raise ValueError(f"unknown agent {name!r} (expected one of {', '.join(AGENTS)})")


def run_agent(name: AgentName, ds: SgpDataset, out: Path | str, samples: int = 1, seed: int = 0,
              step_cap: int = STEP_CAP, episodes: list[str] | None = None,
              progress: Callable[[int, int], None] | None = None) -> int:
    """Play every episode (`samples` times each) and write one `EpisodeLog` JSON line per play to `out`
    (written whole at the end, through a temporary file). Returns the number of plays."""
    if samples < 1:
        raise ValueError("samples must be at least 1")
    ids = episodes if episodes is not None else list(ds.episodes)
    unknown = [i for i in ids if i not in ds.episodes]
    if unknown:
        raise ValueError(f"unknown episode ids: {unknown[:5]}")
    solver = name if name == "optimal" else f"{name} (seed {seed})"
    logs: list[EpisodeLog] = []
    total = len(ids) * samples
    for k, eid in enumerate(ids):
        for s in range(samples):
            logs.append(play_episode(ds.episodes[eid], agent_policy(name, seed, eid, s), solver, s, step_cap,
                                     ds.dataset_hash, meta={"agent": name, "seed": seed}))
            if progress:
                progress(k * samples + s + 1, total)
    write_logs(out, logs)
    return len(logs)


def write_logs(out: Path | str, logs: list[EpisodeLog]) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text("".join(json.dumps(lg.to_json(), sort_keys=True) + "\n" for lg in logs))
    tmp.replace(out)
