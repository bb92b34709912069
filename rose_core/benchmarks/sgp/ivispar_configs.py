"""iVISPAR's own episode files (`config_<config_instance_id>.json`) read into an SGP dataset, and written back.

The format, as the original's config generator writes it and its engine loads it: `config_instance_id`,
`experiment_type` ("SlidingGeomPuzzle"), `complexity_c1` (the A* path length), `complexity_c2` (its
interference), `grid_size`, `landmarks` (per geom `geom_nr`, `body`, `color`, `start_coordinate`,
`goal_coordinate`), `use_rendering`, and three move lists: `shortest_move_sequence`,
`random_valid_move_sequence`, `random_invalid_move_sequence` (each "start", then `move <color> <body>
<direction>`, in older files ending with "done"). The experiment runner adds display keys (`grid_label`,
`camera_offset`, …) to its copies; they are kept as they are. A coordinate is [x, z]: x the column, z the row,
0-based, so [0, 0] is A1; `up` is z + 1 and `right` x + 1 (the engine's moves).

Reading believes nothing: each file's c1 and c2 are recomputed (exact A*), its shortest sequence is replayed
move by move and must reach the goal in c1 moves, the random valid sequence must be legal move by move, and
an id that spells out the board, geoms, c1 and c2 (as the original's evaluation reads them from it) must agree
with the fields. Any mismatch refuses the file, naming the file, the field, and what was expected and found;
the dataset is written only when every file passed, through the SGP dataset writer (a temporary folder
renamed into place). Each episode keeps its file's geom order, sequences and extra keys (`Episode.source`), so
writing it back gives a file that reads in as the same episode. Generated episodes are written with our own
A* path and seeded random sequences.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from ...common.problems import ProblemsError, parse_json
from .board import (
    DIRECTIONS, KNOWN_COLOURS, KNOWN_SHAPES, MAX_BOARD, MIN_BOARD, Board, BoardError, Cell, Geom, in_bounds,
)
from .dataset import SgpDataset, write_sgp_dataset
from .records import Episode
from .search import SearchLimit, astar_distance, astar_path, interference, legal_moves, manhattan

EXPERIMENT_TYPE = "SlidingGeomPuzzle"
FORMAT = "ivispar-config"
IMPORTED_NAME = "iVISPAR episode configs (imported by ROSE Studio)"
SEQUENCES = ("shortest_move_sequence", "random_valid_move_sequence", "random_invalid_move_sequence")
# The keys the generator writes, in its order; anything else in a file is kept verbatim and written after them.
KNOWN_KEYS = ("config_instance_id", "experiment_type", "complexity_c1", "complexity_c2", "grid_size", "landmarks",
              "use_rendering", *SEQUENCES)
RANDOM_LENGTH = 100          # moves in each random sequence we write (the original's generator: 100)
MAX_FILE_BYTES = 4 * 2**20   # a config is a few kB; anything far larger is not one
_ID = re.compile(r"[A-Za-z0-9_.-]{1,200}")
_ID_FIELDS = re.compile(r"_b_(\d+)_g_(\d+)_c1_(\d+)_c2_(\d+)_i_(\d+)$")
# Colour names the engine parses to one and the same colour: two such geoms of one body look identical.
_SAME_COLOUR = {"aqua": "cyan", "fuchsia": "magenta"}


class ConfigError(ProblemsError):
    """iVISPAR config files that cannot become a dataset: one line per problem, each naming its file."""


class _Refused(Exception):
    """One problem in one file (field, expected, found); `read_config` turns it into `file: field: …`."""


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _cell(v: Any, size: int, name: str) -> Cell:
    """A config coordinate [x, z] (integers; the engine reads floats, so 2.0 is 2) → (column, row)."""
    if not isinstance(v, list) or len(v) != 2 or not all(
            _int(x) or (isinstance(x, float) and x.is_integer()) for x in v):
        raise _Refused(f"{name}: expected [x, z], two integers, found {v!r}")
    cell = (int(v[0]), int(v[1]))
    if not in_bounds(cell, size):
        raise _Refused(f"{name}: expected x and z in 0..{size - 1} (grid_size {size}), found {v!r}")
    return cell


def _geom(lm: dict[str, Any], k: int) -> Geom:
    body, color = lm.get("body"), lm.get("color")
    if not isinstance(body, str) or body.lower() not in KNOWN_SHAPES:
        hint = " ('tile' is the original's sliding tile puzzle, not a geom)" if body == "tile" else ""
        raise _Refused(f"landmarks[{k}].body: expected one of {', '.join(KNOWN_SHAPES)}, found {body!r}{hint}")
    if not isinstance(color, str) or color.lower() not in KNOWN_COLOURS:
        hint = " (hex colours are not names a command can say)" if isinstance(color, str) and color.startswith("#") else ""
        raise _Refused(f"landmarks[{k}].color: expected a colour name the original's engine knows "
                       f"({', '.join(KNOWN_COLOURS)}), found {color!r}{hint}")
    return Geom(color.lower(), body.lower())  # type: ignore[arg-type]


def _move(text: Any, geoms: dict[str, int], field: str) -> tuple[int, str] | None:
    """A sequence entry: None for "start"/"done", else (geom index, direction) of `move <color> <body> <dir>`."""
    if text in ("start", "done"):
        return None
    words = text.split() if isinstance(text, str) else []
    if len(words) != 4 or words[0] != "move" or words[3] not in DIRECTIONS:
        raise _Refused(f"{field}: expected 'move <color> <body> <direction>', found {text!r}")
    name = f"{words[1]} {words[2]}"
    if name not in geoms:
        raise _Refused(f"{field}: {text!r} names no geom of this config (geoms: {', '.join(geoms)})")
    return geoms[name], words[3]


def _sequence(cfg: dict[str, Any], key: str, geoms: dict[str, int]) -> list[str] | None:
    seq = cfg.get(key)
    if seq is None and key != "shortest_move_sequence":
        return None
    if not isinstance(seq, list) or not seq or seq[0] != "start":
        raise _Refused(f"{key}: expected a list starting with 'start', found {str(seq)[:80]!r}")
    for k, entry in enumerate(seq):
        if (k > 0 and entry == "start") or (entry == "done" and k != len(seq) - 1):
            raise _Refused(f"{key}[{k}]: expected 'start' only first and 'done' only last, found {entry!r} there")
        _move(entry, geoms, f"{key}[{k}]")
    return list(seq)


def _play(board: Board, seq: list[str], geoms: dict[str, int], key: str, legal_only: bool) -> Board:
    """The board after the sequence's moves; with `legal_only` an illegal move refuses the file."""
    for k, entry in enumerate(seq):
        mv = _move(entry, geoms, f"{key}[{k}]")
        if mv is None:
            continue
        i, d = mv
        c, r = board.cells[i]
        to = (c + DIRECTIONS[d][0], r + DIRECTIONS[d][1])
        if not in_bounds(to, board.size) or board.occupant(to) is not None:
            if legal_only:
                why = "off the board" if not in_bounds(to, board.size) else f"onto {board.occupant(to).name}"  # type: ignore[union-attr]
                raise _Refused(f"{key}[{k}]: expected a legal move, found {entry!r} ({why})")
            continue
        board = board.moved(i, to)
    return board


def episode_of_config(cfg: Any, file_name: str) -> Episode:
    """The episode of one parsed config, every claim checked; raises `_Refused` naming field, expected, found."""
    if not isinstance(cfg, dict):
        raise _Refused(f"the file: expected a JSON object, found {type(cfg).__name__}")
    cid = cfg.get("config_instance_id")
    if not isinstance(cid, str) or not _ID.fullmatch(cid):
        raise _Refused(f"config_instance_id: expected a name of letters, digits, '_', '.', '-', found {cid!r}")
    if file_name != f"config_{cid}.json":
        raise _Refused(f"config_instance_id: expected the file's name to be config_{cid}.json, found {file_name}")
    if cfg.get("experiment_type") != EXPERIMENT_TYPE:
        raise _Refused(f"experiment_type: expected {EXPERIMENT_TYPE!r}, found {cfg.get('experiment_type')!r}")
    size = cfg.get("grid_size")
    if not _int(size) or not MIN_BOARD <= size <= MAX_BOARD:
        raise _Refused(f"grid_size: expected an integer {MIN_BOARD}..{MAX_BOARD}, found {size!r}")
    lms = cfg.get("landmarks")
    if not isinstance(lms, list) or not 1 <= len(lms) <= size * size - 1:
        raise _Refused(f"landmarks: expected a list of 1..{size * size - 1} geoms, found "
                       f"{len(lms) if isinstance(lms, list) else type(lms).__name__}")
    start: dict[Geom, Cell] = {}
    goal: dict[Geom, Cell] = {}
    numbers: list[list[Any]] = []
    for k, lm in enumerate(lms):
        if not isinstance(lm, dict):
            raise _Refused(f"landmarks[{k}]: expected an object, found {type(lm).__name__}")
        nr = lm.get("geom_nr")
        if not _int(nr) or nr < 1 or nr in [n for n, _ in numbers]:
            raise _Refused(f"landmarks[{k}].geom_nr: expected a positive integer no other geom has, found {nr!r}")
        g = _geom(lm, k)
        if g in start:
            raise _Refused(f"landmarks[{k}]: expected a colour-body pair no other geom has, found {g.name} twice")
        twin = Geom(_SAME_COLOUR.get(g.color, g.color), g.shape)  # type: ignore[arg-type]
        if any(Geom(_SAME_COLOUR.get(h.color, h.color), h.shape) == twin for h in start):  # type: ignore[arg-type]
            raise _Refused(f"landmarks[{k}]: {g.name} looks exactly like another geom of the config (the engine "
                           f"draws aqua as cyan and fuchsia as magenta)")
        for which, where in (("start", start), ("goal", goal)):
            cell = _cell(lm.get(f"{which}_coordinate"), size, f"landmarks[{k}].{which}_coordinate")
            if cell in where.values():
                raise _Refused(f"landmarks[{k}].{which}_coordinate: expected a free cell, found {lm[f'{which}_coordinate']} "
                               f"taken by another geom's {which}")
            where[g] = cell
        numbers.append([nr, g.name])
    try:
        b0, goal_board = Board.of(size, start), Board.of(size, goal)
        c1, m = astar_distance(b0, goal_board), manhattan(b0, goal_board)
        c2 = interference(b0, goal_board)
    except (BoardError, SearchLimit, ValueError) as e:
        raise _Refused(f"landmarks: {e}") from None
    for key, want in (("complexity_c1", c1), ("complexity_c2", c2)):
        if cfg.get(key) != want or not _int(cfg.get(key)):
            raise _Refused(f"{key}: expected {want} (recomputed: A* distance {c1}, Manhattan sum {m}), "
                           f"found {cfg.get(key)!r}")
    if c1 == 0:
        raise _Refused("landmarks: expected a start different from the goal, found every geom on its goal")
    spelled = _ID_FIELDS.search(cid)
    if spelled:
        for name, want, found in zip(("grid_size (_b_)", "geoms (_g_)", "complexity_c1 (_c1_)", "complexity_c2 (_c2_)"),
                                     (size, len(lms), c1, c2), spelled.groups()):
            if int(found) != want:
                raise _Refused(f"config_instance_id: its {name} says {found}, the config has {want}")
    geoms = {g.name: i for i, g in enumerate(b0.geoms)}
    seqs = {key: _sequence(cfg, key, geoms) for key in SEQUENCES}
    shortest = seqs["shortest_move_sequence"] or []
    moves = [e for e in shortest if e not in ("start", "done")]
    end = _play(b0, shortest, geoms, "shortest_move_sequence", legal_only=True)
    if end != goal_board or len(moves) != c1:
        where = "reaching the goal" if end == goal_board else "ending off the goal"
        raise _Refused(f"shortest_move_sequence: expected {c1} legal moves reaching the goal, found {len(moves)} "
                       f"moves {where}")
    if seqs["random_valid_move_sequence"] is not None:
        _play(b0, seqs["random_valid_move_sequence"], geoms, "random_valid_move_sequence", legal_only=True)
    use_rendering = cfg.get("use_rendering", True)
    if not isinstance(use_rendering, bool):
        raise _Refused(f"use_rendering: expected true or false, found {use_rendering!r}")
    source = {"format": FORMAT, "geom_nr": numbers, "use_rendering": use_rendering,
              **{k: v for k, v in seqs.items() if v is not None},
              "extra": {k: v for k, v in cfg.items() if k not in KNOWN_KEYS}}
    ep = Episode.of(cid, b0, goal_board, c1, c2)
    return Episode(ep.episode_id, ep.board_size, ep.c1, ep.c2, ep.geoms, source=source)


def read_config(path: Path) -> Episode:
    """One config file as an episode; raises `ConfigError` naming the file and the field."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise _Refused(f"the file: expected a config of at most {MAX_FILE_BYTES:,} bytes, found "
                           f"{path.stat().st_size:,}")
        try:
            cfg = parse_json(path.read_bytes())
        except ValueError as e:
            raise _Refused(f"the file: expected JSON, found {e}") from None
        return episode_of_config(cfg, path.name)
    except OSError as e:
        raise ConfigError([f"{path}: the file: expected a readable file, found {e.strerror or e}"]) from None
    except _Refused as e:
        raise ConfigError([f"{path}: {e}"]) from None


def _natural(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def read_configs(folder: Path | str) -> tuple[list[Episode], dict[str, str]]:
    """Every `config_*.json` in `folder` as episodes (by geoms, c1, c2, then id) and {file name: SHA-256};
    raises `ConfigError` listing every refused file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError([f"{folder}: not a folder"])
    files = sorted(folder.glob("config_*.json"), key=lambda p: _natural(p.name))
    if not files:
        raise ConfigError([f"{folder}: no config_*.json files (iVISPAR writes one per episode)"])
    episodes, problems, shas = [], [], {}
    for f in files:
        try:
            episodes.append(read_config(f))
            shas[f.name] = hashlib.sha256(f.read_bytes()).hexdigest()
        except ConfigError as e:
            problems += e.problems
    if problems:
        raise ConfigError(problems)
    episodes.sort(key=lambda e: (e.n_geoms, e.c1, e.c2, _natural(e.episode_id)))
    return episodes, shas


def import_configs(folder: Path | str, out: Path | str, workers: int | None = None,
                   progress: Callable[[int, int], None] | None = None, replace: bool = False) -> dict:
    """An SGP dataset in `out` from the config files in `folder`, or nothing at all; returns the manifest."""
    episodes, shas = read_configs(folder)
    params = {"source": FORMAT, "configs": shas}
    return write_sgp_dataset(Path(out), episodes, params, IMPORTED_NAME, workers, progress, replace)


# ---------------------------------------------------------------------------------------------------- export

def _command(g: Geom, direction: str) -> str:
    return f"move {g.color} {g.shape} {direction}"


def _random_sequences(ep: Episode, seed_text: str) -> tuple[list[str], list[str]]:
    """Seeded stand-ins for the original's random sequences: `RANDOM_LENGTH` legal moves; and as many drawn
    (geom, direction) commands, each applied only when legal, as its invalid sequence means."""
    rng = random.Random(f"sgp-export:{seed_text}:{ep.episode_id}")
    board, valid = ep.start_board(), ["start"]
    for _ in range(RANDOM_LENGTH):
        mv = rng.choice(legal_moves(board))
        valid.append(_command(mv.geom, mv.direction))
        board = board.moved(mv.index, mv.to)
    board, invalid = ep.start_board(), ["start"]
    for _ in range(RANDOM_LENGTH):
        i, d = rng.randrange(len(board.geoms)), rng.choice(list(DIRECTIONS))
        invalid.append(_command(board.geoms[i], d))
        c, r = board.cells[i]
        to = (c + DIRECTIONS[d][0], r + DIRECTIONS[d][1])
        if in_bounds(to, board.size) and board.occupant(to) is None:
            board = board.moved(i, to)
    return valid, invalid


def config_of_episode(ep: Episode, config_id: str, seed_text: str) -> dict[str, Any]:
    """The config the original loads for one episode: an imported one as it came; a generated one with its
    geoms in canonical order, our A* path and seeded random sequences."""
    src = ep.source if ep.source.get("format") == FORMAT else {}
    by_name = {f"{g.color} {g.shape}": g for g in ep.geoms}
    order = [(nr, by_name[name]) for nr, name in src["geom_nr"]] if src else list(enumerate(ep.geoms, 1))
    landmarks = [{"geom_nr": nr, "body": g.shape, "color": g.color,
                  "start_coordinate": _xz(g.start), "goal_coordinate": _xz(g.goal)} for nr, g in order]
    if src:
        seqs = {k: src[k] for k in SEQUENCES if k in src}
    else:
        start = ep.start_board()
        valid, invalid = _random_sequences(ep, seed_text)
        seqs = {"shortest_move_sequence": ["start", *[_command(m.geom, m.direction)
                                                      for m in astar_path(start, ep.goal_board())]],
                "random_valid_move_sequence": valid, "random_invalid_move_sequence": invalid}
    cfg: dict[str, Any] = {"config_instance_id": config_id, "experiment_type": EXPERIMENT_TYPE,
                           "complexity_c1": ep.c1, "complexity_c2": ep.c2, "grid_size": ep.board_size,
                           "landmarks": landmarks, "use_rendering": src.get("use_rendering", True), **seqs}
    cfg.update(src.get("extra", {}))
    return cfg


def _xz(chess: str) -> list[int]:
    return [ord(chess[0]) - ord("A"), int(chess[1:]) - 1]


def config_ids(ds: SgpDataset) -> dict[str, str]:
    """Episode id → config id: an imported episode keeps its own; a generated one gets the original's pattern
    (`ROSE_<dataset hash>_b_…_g_…_c1_…_c2_…_i_…`, i counting from 1 within its geoms, c1 and c2)."""
    out: dict[str, str] = {}
    count: dict[tuple[int, int, int], int] = {}
    for e in ds.episodes.values():
        if e.source.get("format") == FORMAT:
            out[e.episode_id] = e.episode_id
            continue
        k = (e.n_geoms, e.c1, e.c2)
        count[k] = count.get(k, 0) + 1
        out[e.episode_id] = f"ROSE_{ds.dataset_hash}_b_{e.board_size}_g_{e.n_geoms}_c1_{e.c1}_c2_{e.c2}_i_{count[k]}"
    if len(set(out.values())) != len(out):
        raise ConfigError([f"{ds.root}: two episodes would be written under one config id"])
    return out


def export_configs(ds: SgpDataset, out: Path | str) -> list[Path]:
    """Write every episode of `ds` as `config_<id>.json` into the new folder `out` (all or nothing)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError([f"{out} exists and is not empty: refusing to write configs into it"])
    ids = config_ids(ds)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.writing-", dir=out.parent))
    try:
        for e in ds.episodes.values():
            cfg = config_of_episode(e, ids[e.episode_id], ds.dataset_hash)
            (tmp / f"config_{ids[e.episode_id]}.json").write_text(json.dumps(cfg, indent=4))
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sorted(out.glob("config_*.json"), key=lambda p: _natural(p.name))
