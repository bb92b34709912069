"""iVISPAR's Sliding Geom Puzzle (SGP): an interactive benchmark of multi-step episodes.

Board and JSON state (`board`), exact search (`search`), the action grammar and outcomes (`actions`), how a
reply becomes moves (`readers`: strict, or iVISPAR's own), the observations (`render`), episodes (`records`,
`generate`, `dataset`; iVISPAR's own config files in and out: `ivispar_configs`; its episode logs in: `ivispar_logs`), playing them (`play`), the reference
agents (`agents`), episode-log import (`logs`), iVISPAR's metrics (`metrics`) and the board-state inference task
(`inference`: items, answers, the scorer).
shared/research/ivispar.md says what iVISPAR measures; this is the project's own implementation. Like every
benchmark it imports only benchmarks, the storage layer and `rose_core.common` (the Wilson interval and seeded
streams of `common.stats`); models play it through `rose_core.runs.sgp_model` and `runs.sgp_inference`, its
commands live in `rose_core.cli.sgp`.
"""
from .actions import (
    OUTCOMES, VALID_OUTCOMES, Action, BoardStep, Outcome, ParsedAction, StepResult, apply_action, find_command,
    parse_action, step_board,
)
from .agents import AGENTS, optimal_policy, random_policy, run_agent, write_logs
from .board import (
    ALL_GEOMS, COLOURS, DIRECTIONS, EXTRA_COLOURS, EXTRA_SHAPES, KNOWN_COLOURS, KNOWN_GEOMS, KNOWN_SHAPES, SHAPE_2D,
    SHAPE_FROM_2D, SHAPES, Board, BoardError, Cell, Colour, Direction, Geom, Shape, StateKind, board_from_state, coord,
    parse_coord, vocabulary,
)
from .dataset import (
    SgpDataset, SgpDatasetError, build_sgp_dataset, is_sgp_dataset, sgp_dataset_dir, write_sgp_dataset,
)
from .generate import BuildParams, GenerationError, generate_episodes
from .inference import (
    BOARDS, InferenceAnswer, InferenceFileError, InferenceItem, InferenceScore, Triplet, inference_item,
    inference_items, parse_board_text, read_answers, score_counts, score_inference, scored_rows,
)
from .ivispar_configs import ConfigError, export_configs, import_configs, read_config, read_configs
from .ivispar_logs import IvisparLogError, episode_folders, import_logs, read_episode_folder
from .logs import SgpLogError, read_logs
from .metrics import (
    INFERENCE_CLASSES, INFERENCE_PER_BOARD, MetricsInputError, bootstrap_ratio, check_pooling, d_at, episodes_frame,
    heatmap, inference_table, outcome_counts, reader_figures, regret, regret_curve, solved_rate, step_deviation,
    steps_frame, summary_table,
)
from .play import STEP_CAP, EpisodeLog, PlayView, Policy, Replay, StepLog, play_episode
from .readers import READERS, UNCLASSIFIED, Reader, ReadStep, ivispar_extract, read_step, unity_decode
from .records import IMAGE_KEYS, Episode, EpisodeGeom
from .render import (
    BACKGROUND, GEOM_RGB, KIND_LABEL, MODALITIES, Modality, render, render_2d, render_3d, render_png, render_text,
    text_lines,
)
from .search import (
    Move, SearchLimit, astar_distance, astar_path, bfs_distance, distance_after_move, interference, legal_moves,
    manhattan,
)

__all__ = [
    "OUTCOMES", "VALID_OUTCOMES", "Action", "BoardStep", "Outcome", "ParsedAction", "StepResult", "apply_action",
    "find_command", "parse_action", "step_board",
    "AGENTS", "optimal_policy", "random_policy", "run_agent", "write_logs",
    "ALL_GEOMS", "COLOURS", "DIRECTIONS", "EXTRA_COLOURS", "EXTRA_SHAPES", "KNOWN_COLOURS", "KNOWN_GEOMS",
    "KNOWN_SHAPES", "SHAPE_2D", "SHAPE_FROM_2D", "SHAPES", "Board", "BoardError", "Cell",
    "Colour", "Direction", "Geom", "Shape", "StateKind", "board_from_state", "coord", "parse_coord", "vocabulary",
    "SgpDataset", "SgpDatasetError", "build_sgp_dataset", "is_sgp_dataset", "sgp_dataset_dir", "write_sgp_dataset",
    "ConfigError", "export_configs", "import_configs", "read_config", "read_configs",
    "IvisparLogError", "episode_folders", "import_logs", "read_episode_folder",
    "BuildParams", "GenerationError", "generate_episodes",
    "BOARDS", "InferenceAnswer", "InferenceFileError", "InferenceItem", "InferenceScore", "Triplet", "inference_item",
    "inference_items", "parse_board_text", "read_answers", "score_counts", "score_inference", "scored_rows",
    "SgpLogError", "read_logs",
    "INFERENCE_CLASSES", "INFERENCE_PER_BOARD", "MetricsInputError", "bootstrap_ratio", "check_pooling", "d_at",
    "inference_table", "episodes_frame", "heatmap", "outcome_counts", "reader_figures", "regret", "regret_curve",
    "solved_rate", "step_deviation", "steps_frame", "summary_table",
    "STEP_CAP", "EpisodeLog", "PlayView", "Policy", "Replay", "StepLog", "play_episode",
    "READERS", "UNCLASSIFIED", "Reader", "ReadStep", "ivispar_extract", "read_step", "unity_decode",
    "IMAGE_KEYS", "Episode", "EpisodeGeom",
    "BACKGROUND", "GEOM_RGB", "KIND_LABEL", "MODALITIES", "Modality", "render", "render_2d", "render_3d",
    "render_png", "render_text", "text_lines",
    "Move", "SearchLimit", "astar_distance", "astar_path", "bfs_distance", "distance_after_move", "interference",
    "legal_moves", "manhattan",
]
