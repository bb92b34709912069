"""Play SGP episodes with a model behind any OpenAI-compatible chat endpoint, under one of two protocols.

`studio` (the default): one user message per step with this project's own instructions (repeated at every
step), the last two steps as context (the board before each, and the action the model took), the current state
and the goal state, each as an image (2D or 3D modality) or as text (`- red cube: A1` lines).

`ivispar`: the original's message layout (SharkyBamboozle/iVISPAR, `Source/Experiment/agent_systems.py`,
`GPT4Agent.act`): a system message (the instruction file, then the chain-of-thought file, as `LLMAgent.__init__`
appends it); the past two steps as alternating user and assistant messages (image modalities: the board before
the step as one image, then "Action: <command>"; text: "Previous observation i: <board>", then "Previous action
i: <command>"), then the goal image, the current image and the step instruction as three user messages (text:
one user message, the step instruction with the goal and the current board put in). Its text board is
`A1 red cube` per line, as the original's engine writes it (`TargetBehaviour.getObjectChessStatus`). The
wording comes from files the user points to (`load_instructions`); this project ships none of the original's.

Sampling (`Sampling`: temperature, top-p, top-k, token limit) is the user's, or a preset named after the
paper's settings (`PRESETS`). How a reply becomes moves is the reader's (`benchmarks.sgp.readers`): strict by
default, ivispar by default under the ivispar protocol. HTTP, retries and backoff are the project's
(`rose_core.common.chat.post_with_retries`).

Resume: the output gets one line per finished play (an `EpisodeLog` with every reply and raw API response,
and its `protocol` object), so running the same command again skips finished (episode, sample) pairs and
replays only the rest from their start; a file holding plays of another dataset build, model, modality, step
cap, protocol, reader, sampling or instruction texts is refused. `<out>.settings.toml` records the run's
settings (`runs.settings`) for `import-run` and the paper's checklist.
"""
from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from ..benchmarks.sgp.actions import find_command
from ..benchmarks.sgp.readers import READERS, Reader, ivispar_extract
from ..benchmarks.sgp.board import (
    COLOURS,
    SHAPE_2D,
    SHAPES,
    Board,
    StateKind,
    board_from_state,
    coord,
    vocabulary,
)
from ..benchmarks.sgp.dataset import SgpDataset
from ..benchmarks.sgp.play import STEP_CAP, PlayView, Replay
from ..benchmarks.sgp.render import Modality, render_png, render_text
from ..common.chat import ChatEndpoint, ModelRunSummary, done_keys, image_part, run_jobs
from .settings import check_settings, clean_endpoint, settings_toml, sidecar

CONTEXT_STEPS = 2
Protocol = Literal["studio", "ivispar"]
PROTOCOLS: tuple[Protocol, ...] = ("studio", "ivispar")


class SgpProtocolError(ValueError):
    """A protocol setting or instruction file that cannot be used (named)."""


@dataclass(frozen=True)
class Sampling:
    """What the request asks of the sampler; None: not sent (the endpoint's default)."""

    temperature: float | None = 0.0
    top_p: float | None = None
    top_k: int | None = None
    max_tokens: int = 2048

    def body(self) -> dict[str, Any]:
        return {k: v for k, v in (("temperature", self.temperature), ("top_p", self.top_p), ("top_k", self.top_k),
                                  ("max_tokens", self.max_tokens)) if v is not None}


# The original's sampling, by the agent classes of Source/Experiment/agent_systems.py (main branch): GPT4Agent's
# text branch sends temperature 0.5 and max_tokens 500, its image branch max_tokens 500 and no temperature (the
# API's default); ClaudeAgent sends temperature 0.5 and max_tokens 500 in both branches; GeminiAgent's image
# branch max_output_tokens 500 and nothing else; OpenSourceAgent.act (Qwen2-VL, LLaVA-OneVision, Llama,
# DeepSeek-VL2, InternVL through vLLM) SamplingParams(temperature=1.0, top_p=0.95, top_k=50, max_tokens=500).
PRESETS: dict[str, Sampling] = {
    "ivispar-gpt-text": Sampling(0.5, None, None, 500),
    "ivispar-gpt-vision": Sampling(None, None, None, 500),
    "ivispar-claude": Sampling(0.5, None, None, 500),
    "ivispar-gemini-vision": Sampling(None, None, None, 500),
    "ivispar-open": Sampling(1.0, 0.95, 50, 500),
}

# The instruction files of the ivispar protocol, named as the original names its prompt files
# (Data/Instructions/ICML_instruction.txt, ICML_instruction_2D.txt); the chain-of-thought suffix and the step
# instructions are strings in the original's code (LLMAgent.__init__, GPT4Agent.act) and get files here.
SYSTEM_FILES: dict[str, str] = {"3d": "ICML_instruction.txt", "text": "ICML_instruction.txt",
                                "2d": "ICML_instruction_2D.txt"}
COT_FILE = "ICML_instruction_cot.txt"
STEP_FILES: dict[str, str] = {"3d": "ICML_instruction_step_vision.txt", "2d": "ICML_instruction_step_vision.txt",
                              "text": "ICML_instruction_step_text.txt"}
TEXT_SLOTS = ("{goal_state}", "{current_state}")   # where the text step instruction takes the two boards
# what the original's history shows for a reply without `action: move `: parse_action returns "No valid action
# found.", and parse_action_rmv_special_chars drops the full stop before GPT4Agent.act stores it
NO_ACTION = "No valid action found"


@dataclass(frozen=True)
class IvisparTexts:
    """The ivispar protocol's wording for one modality, read from the user's files, and their digest."""

    system: str
    step: str
    digest: str
    files: tuple[str, ...]


def load_instructions(folder: Path | str, modality: Modality) -> IvisparTexts:
    """The instruction texts for `modality` from `folder`; a missing, unreadable or empty file, or a text step
    instruction without both board slots, is refused by name."""
    folder = Path(folder)
    names = (SYSTEM_FILES[modality], COT_FILE, STEP_FILES[modality])
    texts: list[str] = []
    for name in names:
        path = folder / name
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SgpProtocolError(f"{path}: missing (the ivispar protocol's {modality} instructions need "
                                   f"{', '.join(names)} in {folder})") from None
        except (OSError, UnicodeDecodeError) as e:
            raise SgpProtocolError(f"{path}: cannot read ({e})") from None
        if not text.strip():
            raise SgpProtocolError(f"{path}: empty")
        texts.append(text)
    if modality == "text":
        missing = [slot for slot in TEXT_SLOTS if slot not in texts[2]]
        if missing:
            raise SgpProtocolError(f"{folder / names[2]}: no {' or '.join(missing)} (where the goal and the "
                                   "current board go)")
    h = hashlib.sha256()
    for name, text in zip(names, texts):
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    return IvisparTexts(texts[0] + texts[1], texts[2], h.hexdigest(), names)


def ivispar_board(board: Board) -> str:
    """The original's text observation: one `A1 red cube` line per geom (in the board's geom order; the
    original's is its engine's object order)."""
    return "\n".join(f"{coord(c)} {g.color} {g.shape}" for g, c in zip(board.geoms, board.cells))


def ivispar_messages(view: PlayView, modality: Modality, texts: IvisparTexts) -> list[dict[str, Any]]:
    """One step's messages under the ivispar protocol (see the module docstring)."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": texts.system}]
    hist = view.history[-CONTEXT_STEPS:]
    boards = [view.episode.start_board()] + [board_from_state(s.state) for s in view.history]
    first = len(view.history) - len(hist)
    for i, s in enumerate(hist, 1):
        before, action = boards[first + i - 1], ivispar_extract(s.action) or NO_ACTION
        if modality == "text":
            msgs += [{"role": "user", "content": f"Previous observation {i}: {ivispar_board(before)}"},
                     {"role": "assistant", "content": f"Previous action {i}: {action}"}]
        else:
            msgs += [{"role": "user", "content": [image_part(render_png(before, modality, "past"))]},
                     {"role": "assistant", "content": f"Action: {action}"}]
    if modality == "text":
        step = texts.step.replace("{goal_state}", ivispar_board(view.goal)).replace(
            "{current_state}", ivispar_board(view.board))
        return msgs + [{"role": "user", "content": [{"type": "text", "text": step}]}]
    return msgs + [{"role": "user", "content": [image_part(render_png(view.goal, modality, "goal"))]},
                   {"role": "user", "content": [image_part(render_png(view.board, modality, "active"))]},
                   {"role": "user", "content": texts.step}]


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


def _done(out: Path, dataset_hash: str, model: str, modality: str, step_cap: int,
          protocol: dict[str, Any]) -> set[tuple[str, int]]:
    """(episode, sample) pairs already played in `out`; a file of another build, model, modality, step cap or
    protocol (layout, reader, sampling, instruction texts) is refused: those plays are another measurement."""
    return done_keys(out, {"dataset_hash": dataset_hash, "solver": model, "modality": modality, "step_cap": step_cap,
                           "protocol": protocol},
                     lambda o: (o["episode_id"], int(o.get("sample", 0))) if "episode_id" in o else None)


@dataclass(frozen=True)
class ModelConfig(ChatEndpoint):
    modality: Modality = "3d"
    step_cap: int = STEP_CAP
    samples: int = 1
    protocol: Protocol = "studio"
    reader: Reader | None = None          # None: the protocol's own (studio strict, ivispar ivispar)
    sampling: Sampling | None = None      # None: the endpoint fields' temperature and max_tokens
    preset: str | None = None             # the preset `sampling` came from, for the record
    instructions: Path | None = None      # the ivispar protocol's instruction folder
    texts: IvisparTexts | None = field(default=None, init=False, compare=False)

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise SgpProtocolError(f"protocol {self.protocol!r}: expected one of {', '.join(PROTOCOLS)}")
        if self.protocol == "ivispar":
            if self.instructions is None:
                raise SgpProtocolError("the ivispar protocol needs --instructions DIR (files "
                                       f"{SYSTEM_FILES[self.modality]}, {COT_FILE}, {STEP_FILES[self.modality]})")
            object.__setattr__(self, "texts", load_instructions(self.instructions, self.modality))
        elif self.instructions is not None:
            raise SgpProtocolError("--instructions is for the ivispar protocol; the studio protocol has its own")
        if self.reader is not None and self.reader not in READERS:
            raise SgpProtocolError(f"reader {self.reader!r}: expected one of {', '.join(READERS)}")
        check_settings(self.sampling_used.body(), "sampling")   # negative temperature, zero tokens … by name

    @property
    def reader_used(self) -> Reader:
        return self.reader or ("ivispar" if self.protocol == "ivispar" else "strict")

    @property
    def sampling_used(self) -> Sampling:
        return self.sampling or Sampling(self.temperature, None, None, self.max_tokens)

    def prompt_digest(self, sizes: list[int]) -> str:
        """SHA-256 of the instruction texts: the user's files (ivispar), or the studio's own text per board size."""
        if self.texts is not None:
            return self.texts.digest
        text = "\0".join(instructions(n, self.modality, self.step_cap) for n in sizes)
        return hashlib.sha256(text.encode()).hexdigest()

    def body(self, view: PlayView) -> dict[str, Any]:
        """The chat-completion request of one step."""
        if self.texts is not None:
            messages = ivispar_messages(view, self.modality, self.texts)
        else:
            messages = [{"role": "user", "content": prompt_content(view, self.modality, self.step_cap)}]
        return {"model": self.model, **self.sampling_used.body(), "messages": messages}


def run_settings(cfg: ModelConfig, protocol: dict[str, Any]) -> dict[str, Any]:
    """The run's settings as `runs.settings` stores them (the sidecar `<out>.settings.toml`)."""
    raw = {"model": cfg.model, "endpoint": clean_endpoint(cfg.base_url), "prompt_variant": f"sgp-{cfg.protocol}",
           "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
           **{k: v for k, v in protocol.items() if v is not None}}
    if cfg.preset:
        raw["preset"] = cfg.preset
    if cfg.texts is not None:
        raw["system_prompt"] = cfg.texts.system
    return check_settings(raw, "sgp run-model")


def run_model_episodes(ds: SgpDataset, cfg: ModelConfig, out: Path | str, limit: int | None = None,
                       progress: Callable[[int, int], None] | None = None) -> ModelRunSummary:
    """Play every (episode, sample) not yet in `out`; append each finished play as one line."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sizes = sorted({ep.board_size for ep in ds.episodes.values()})
    protocol = {"protocol": cfg.protocol, "reader": cfg.reader_used, **cfg.sampling_used.body(),
                "prompt_digest": cfg.prompt_digest(sizes)}
    protocol.setdefault("temperature", None)     # "not sent" is a setting too
    done = _done(out, ds.dataset_hash, cfg.model, cfg.modality, cfg.step_cap, protocol)
    if not sidecar(out).exists() or not done:
        sidecar(out).write_text(settings_toml(run_settings(cfg, protocol)), encoding="utf-8")
    todo = [(eid, s) for eid in ds.episodes for s in range(cfg.samples) if (eid, s) not in done]
    if limit is not None:
        todo = todo[:limit]

    def play(job: tuple[str, int]) -> tuple[str, dict | None, str | None]:
        eid, sample = job
        r = Replay(ds.episodes[eid], cfg.step_cap, cfg.reader_used)
        while not r.done:
            reply, raw, err, attempts, secs = cfg.post(cfg.body(r.view()))
            if reply is None:
                return f"{eid}#{sample}", None, f"step {len(r.steps) + 1}: {err}"
            r.send(reply, round(1000 * secs, 3), {"raw": raw, "attempts": attempts})
        log = r.log(cfg.model, sample, ds.dataset_hash, cfg.modality,
                    {"base_url": cfg.base_url, "temperature": cfg.sampling_used.temperature,
                     "max_tokens": cfg.sampling_used.max_tokens})
        return f"{eid}#{sample}", {**log.to_json(), "protocol": protocol}, None

    ok, failed = run_jobs(out, todo, play, cfg.concurrency, progress)
    return ModelRunSummary(len(done), len(todo), ok, failed)
