"""The board-state inference task for models behind any OpenAI-compatible chat endpoint.

One request per (board, sample): the instructions, then the board as the modality shows it (the 2D schematic
or the 3D view as a PNG, both drawn as the current state; or the text observation), and the answer format:
reasoning allowed, then a line `board:` followed by one `<colour> <shape>: <square>` line per geom (the text
observation's own format; in 2D the 2D shape names, which the scorer maps back). HTTP, retries, the runner's
loop and the resume check are the project's (`rose_core.common.chat`).

Resume: one line per answered board, in the format `inference.read_answers` reads (with the raw API response
and the attempts kept), so running the same command again asks only for what is missing; a file of another
build, model or modality is refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..benchmarks.sgp.board import COLOURS, SHAPE_2D, SHAPES, board_from_state, vocabulary
from ..benchmarks.sgp.dataset import SgpDataset
from ..benchmarks.sgp.inference import (
    BOARDS,
    InferenceItem,
    WhichBoard,
    inference_items,
)
from ..benchmarks.sgp.render import Modality
from ..common.chat import ChatEndpoint, ModelRunSummary, done_keys, run_jobs
from .sgp_model import state_parts


def inference_instructions(size: int, modality: Modality, words: tuple = (COLOURS, SHAPES)) -> str:
    """`words`: the colours and shapes to name (`board.vocabulary`: the paper's, unless the board holds others)."""
    colours, shape_words = words
    shapes = [SHAPE_2D[s] for s in shape_words] if modality == "2d" else list(shape_words)
    last_col = chr(ord("A") + size - 1)
    seen = "text below describes" if modality == "text" else "image shows"
    return (
        f"The {seen} one board of the Sliding Geom Puzzle: a {size}x{size} grid whose squares are named like a "
        f"chess board (columns A to {last_col} from left to right, rows 1 to {size} from bottom to top; A1 is "
        f"bottom-left, {last_col}{size} top-right). Some squares hold a geom. Each geom has a colour "
        f"({', '.join(colours)}) and a shape ({', '.join(shapes)}); no two geoms share both.\n"
        "Write down every geom on the board and the square it stands on. You may think first; then end your reply "
        "with a line that says only\nboard:\nfollowed by one line per geom, in the form <colour> <shape>: <square>, "
        f"for example\nred {shapes[0]}: A1\nWrite nothing after that list, and no line for an empty square.")


def inference_content(item: InferenceItem, modality: Modality) -> list[dict[str, Any]]:
    """The content parts of the one user message for this board."""
    board = board_from_state(item.state)
    return [{"type": "text", "text": inference_instructions(board.size, modality, vocabulary(board))},
            *state_parts("The board:", board, modality, "active")]


@dataclass(frozen=True)
class InferenceConfig(ChatEndpoint):
    modality: Modality = "3d"
    boards: tuple[WhichBoard, ...] = BOARDS
    samples: int = 1


def run_inference(ds: SgpDataset, cfg: InferenceConfig, out: Path | str, limit: int | None = None,
                  progress: Callable[[int, int], None] | None = None) -> ModelRunSummary:
    """Ask for every (board, sample) not yet in `out`; append each answer as one line."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = done_keys(out, {"dataset_hash": ds.dataset_hash, "solver": cfg.model, "modality": cfg.modality},
                     lambda o: (o["item_id"], int(o.get("sample", 0)))
                     if isinstance(o.get("item_id"), str) and isinstance(o.get("response"), str) else None)
    todo = [(it, s) for it in inference_items(ds, cfg.boards) for s in range(cfg.samples)
            if (it.item_id, s) not in done]
    if limit is not None:
        todo = todo[:limit]

    def ask(job: tuple[InferenceItem, int]) -> tuple[str, dict | None, str | None]:
        item, sample = job
        name = f"{item.item_id}#{sample}"
        text, raw, err, attempts, secs = cfg.ask(inference_content(item, cfg.modality))
        if text is None:
            return name, None, err
        return name, {"item_id": item.item_id, "episode_id": item.episode_id, "board": item.board, "sample": sample,
                      "solver": cfg.model, "modality": cfg.modality, "dataset_hash": ds.dataset_hash,
                      "response": text, "raw": raw, "attempts": attempts, "latency_s": round(secs, 3),
                      "meta": {"base_url": cfg.base_url, "temperature": cfg.temperature,
                               "max_tokens": cfg.max_tokens}}, None

    ok, failed = run_jobs(out, todo, ask, cfg.concurrency, progress)
    return ModelRunSummary(len(done), len(todo), ok, failed)
