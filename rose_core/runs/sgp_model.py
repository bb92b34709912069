"""Play SGP episodes with a model behind any OpenAI-compatible chat endpoint, with iVISPAR's prompt structure.

Every step sends one user message: the task instructions (repeated at every step, as iVISPAR does for models
with short context), the last two steps as context (the board before each, and the action the model took),
the current state and the goal state, each as an image (2D or 3D modality) or as text. The model's whole
reply is the step's action text; the command is its last `action:` line. HTTP, retries and backoff are the
project's (`rose_core.common.chat.post_with_retries`).

Resume: the output gets one line per finished play (an `EpisodeLog` with every reply and raw API response),
so running the same command again skips finished (episode, sample) pairs and replays only the rest from
their start; a file holding plays of another dataset build, model, modality or step cap is refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..benchmarks.sgp.actions import find_command
from ..benchmarks.sgp.board import (
    COLOURS,
    SHAPE_2D,
    SHAPES,
    Board,
    StateKind,
    board_from_state,
    vocabulary,
)
from ..benchmarks.sgp.dataset import SgpDataset
from ..benchmarks.sgp.play import STEP_CAP, PlayView, Replay
from ..benchmarks.sgp.render import Modality, render_png, render_text
from ..common.chat import ChatEndpoint, ModelRunSummary, done_keys, image_part, run_jobs

CONTEXT_STEPS = 2


def instructions(size: int, modality: Modality, step_cap: int, words: tuple = (COLOURS, SHAPES)) -> str:
    """`words`: the colours and shapes to name (`board.vocabulary`: the paper's, unless the board holds others)."""
    colours, shape_words = words
    shapes = [SHAPE_2D[s] for s in shape_words] if modality == "2d" else list(shape_words)
    last = f"{chr(ord('A') + size - 1)}{size}"
    return (
        f"You are playing the Sliding Geom Puzzle on a {size}x{size} board. Each geom has a colour "
        f"({', '.join(colours)}) and a shape ({', '.join(shapes)}); no two geoms share both. Squares are named "
        f"like a chess board: columns A to {chr(ord('A') + size - 1)} from left to right, rows 1 to {size} from "
        f"bottom to top (A1 is bottom-left, {last} top-right).\n"
        "Your task: move the geoms until the board matches the goal state. One action moves one geom by one "
        "square up, down, left or right onto a free square; a geom cannot leave the board or move onto another "
        "geom. 'up' means towards the higher row numbers, 'right' towards the later letters.\n"
        f"You see the current state and the goal state, and your last {CONTEXT_STEPS} steps. You have at most "
        f"{step_cap} actions.\n"
        "Write an action as: move <colour> <shape> <direction>   (for example: move red "
        f"{shapes[0]} up)\n"
        "Think step by step, then end your reply with one line of the form\n"
        "action: move <colour> <shape> <direction>")


def state_parts(label: str, board: Board, modality: Modality, kind: StateKind) -> list[dict[str, Any]]:
    if modality == "text":
        return [{"type": "text", "text": f"{label}\n{render_text(board, kind)}"}]
    return [{"type": "text", "text": label}, image_part(render_png(board, modality, kind))]


def prompt_content(view: PlayView, modality: Modality, step_cap: int) -> list[dict[str, Any]]:
    """The content parts of one step's user message."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": instructions(view.board.size, modality, step_cap,
                                                                           vocabulary(view.board))}]
    hist = view.history[-CONTEXT_STEPS:]
    if hist:
        parts.append({"type": "text", "text": f"Your last {len(hist)} step(s), oldest first:"})
        boards = [view.episode.start_board()] + [board_from_state(s.state) for s in view.history]
        first = len(view.history) - len(hist)
        for k, s in enumerate(hist):
            parts += state_parts(f"Step {s.t}: the board before it", boards[first + k], modality, "past")
            parts.append({"type": "text", "text": f"Step {s.t}: your action: {find_command(s.action) or '(none)'}"})
    parts += state_parts("The current state:", view.board, modality, "active")
    parts += state_parts("The goal state:", view.goal, modality, "goal")
    parts.append({"type": "text", "text": "What is your next action?"})
    return parts


def _done(out: Path, dataset_hash: str, model: str, modality: str, step_cap: int) -> set[tuple[str, int]]:
    """(episode, sample) pairs already played in `out`; a file of another build, model, modality or step cap is
    refused (plays under another cap are another measurement)."""
    return done_keys(out, {"dataset_hash": dataset_hash, "solver": model, "modality": modality, "step_cap": step_cap},
                     lambda o: (o["episode_id"], int(o.get("sample", 0))) if "episode_id" in o else None)


@dataclass(frozen=True)
class ModelConfig(ChatEndpoint):
    modality: Modality = "3d"
    step_cap: int = STEP_CAP
    samples: int = 1


def run_model_episodes(ds: SgpDataset, cfg: ModelConfig, out: Path | str, limit: int | None = None,
                       progress: Callable[[int, int], None] | None = None) -> ModelRunSummary:
    """Play every (episode, sample) not yet in `out`; append each finished play as one line."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _done(out, ds.dataset_hash, cfg.model, cfg.modality, cfg.step_cap)
    todo = [(eid, s) for eid in ds.episodes for s in range(cfg.samples) if (eid, s) not in done]
    if limit is not None:
        todo = todo[:limit]

    def play(job: tuple[str, int]) -> tuple[str, dict | None, str | None]:
        eid, sample = job
        r = Replay(ds.episodes[eid], cfg.step_cap)
        while not r.done:
            reply, raw, err, attempts, secs = cfg.ask(prompt_content(r.view(), cfg.modality, cfg.step_cap))
            if reply is None:
                return f"{eid}#{sample}", None, f"step {len(r.steps) + 1}: {err}"
            r.send(reply, round(1000 * secs, 3), {"raw": raw, "attempts": attempts})
        log = r.log(cfg.model, sample, ds.dataset_hash, cfg.modality,
                    {"base_url": cfg.base_url, "temperature": cfg.temperature, "max_tokens": cfg.max_tokens})
        return f"{eid}#{sample}", log.to_json(), None

    ok, failed = run_jobs(out, todo, play, cfg.concurrency, progress)
    return ModelRunSummary(len(done), len(todo), ok, failed)
