"""iVISPAR's own episode logs (one folder per episode, as its experiment runner leaves them) replayed into the
project's episode-log JSONL, so a published run is scored by `sgp score` beside ours.

What the original writes, read from its code (SharkyBamboozle/iVISPAR; facts, not its code):

- The runner (`Source/Experiment/run_experiment.py`) gives each episode a folder
  `Episodes/episode_<agent>_<game>_<env>_<config file name>/` holding a copy of the episode's
  `config_<config_instance_id>.json` (the one config*.json there, with the env's display keys added),
  `metadata.json` (`{"env": {name: params}, "agent": {name: params}, "game": {name: params}}`, the game's
  `max_game_length` among them) and the two logs below. The config's `config_instance_id` names the episode.
- `GameSystem._save_logs` (`Source/Experiment/game_systems.py`) writes `agent_message_log.txt`, the agent's
  messages joined by newlines, and `sim_message_log.json`, `json.dump(…, indent=4)` of a map "step i" → the
  engine's reply i parsed from JSON (`feed_sim_response`). The loop (`action_perception_loop.py`,
  `interact_with_server`) feeds reply 0 (the board on the goal, before "start"), sends message 0 ("start"),
  feeds reply 1 (the start board), and so on: reply i+1 answers message i, and the last reply answers the
  last message. It stops when a reply says `game_done`, or once `max_game_length` replies after reply 0 have
  been acted on (`InteractivePuzzle.check_done`): so N replies, N - 1 messages, N - 2 moves.
- Each reply is the engine's `EventLogs` (`Assets/Scripts/JSON/ActionLogs.cs`; `TurnManager.ResponseAck`):
  `Actions` (per command of the message, split at commas and stripped: `command_count`, `action_count`,
  `prompt`, and `valididy`, the engine's verdict strings, one per engine move), `board_state` (per object
  "<chess cell> <colour> <body>", `TargetBehaviour.getObjectChessStatus`), `board_data` (per object `body`,
  `color`, `current_coordinate` and `goal_coordinate` as [x, z] floats, `GetObjectData`) and `game_done`. The
  objects come in `GameObject.FindGameObjectsWithTag` order, which Unity does not specify: they are matched
  here by colour and body, in any order. Whole floats are read as the numbers they are, "2.0" or "2".

Nothing is believed. The folder's config must be the dataset episode of that id (imported with `sgp
import-configs`); every message is replayed through the ivispar reader (the engine reads commands loosely;
a command is stored as the reply `action: <command>`, which the reader's extraction turns back into that very
command, and only when the engine would decode both alike); and every reply must agree with the replay: the
board of every step (each object once, on its cell, with its goal), the verdict strings of every move, and
`game_done` (so the run must have had `auto_done_check`, as every published setting has). Anything else
refuses the folder naming the file and the step; the output file is written only when every folder passed,
and is read back through `logs.read_logs` before it is put in place.
"""
from __future__ import annotations

import fnmatch
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from ...common.problems import ProblemsError, parse_json
from .board import Board, BoardError, Cell, Geom, coord, in_bounds
from .dataset import SgpDataset
from .ivispar_configs import ConfigError, read_config
from .logs import read_logs
from .play import STEP_CAP, EpisodeLog, Replay
from .readers import ivispar_extract, unity_decode

SIM_LOG = "sim_message_log.json"
AGENT_LOG = "agent_message_log.txt"
METADATA = "metadata.json"
PROTOCOL = {"reader": "ivispar"}
MAX_FILE_BYTES = 16 * 2**20
# TargetBehaviour.MoveForward / MoveRight: one verdict per engine move; TurnManager.ActionDecoder: no verb
VERDICT = {"effective": "was legal move", "ineffective": "was legal move", "occupied": "Destination occupied",
           "out_of_bounds": "Destination out of bounds", "illegal": "not a legal command"}
COUNTED = frozenset(VERDICT.values())
START_VERDICTS = ("set objects position to initial positions", "valid command. start of experiment")
# GameSystem.representation_type → the observation the model saw
MODALITY = {"vision": "3d", "schematic": "2d", "text": "text"}


class IvisparLogError(ProblemsError):
    """Episode folders that cannot be imported: one line per problem, each naming the folder's file and step."""


class _Refused(Exception):
    """One problem in one folder; `read_episode_folder` prefixes the file."""


def episode_folders(path: Path | str) -> list[Path]:
    """`path` itself when it is an episode folder, else its episode subfolders (or those of its `Episodes/`)."""
    path = Path(path)
    if not path.is_dir():
        raise IvisparLogError([f"{path}: not a folder"])
    if (path / SIM_LOG).is_file():
        return [path]
    for root in (path, path / "Episodes"):
        found = sorted(p for p in root.iterdir() if (p / SIM_LOG).is_file()) if root.is_dir() else []
        if found:
            return found
    raise IvisparLogError([f"{path}: no {SIM_LOG} in it, in its subfolders or in its Episodes/ subfolders "
                           f"(the original's runner writes one per episode folder)"])


def _json_file(path: Path) -> Any:
    if not path.is_file():
        raise _Refused(f"{path.name}: missing")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise _Refused(f"{path.name}: larger than {MAX_FILE_BYTES:,} bytes")
    try:
        return parse_json(path.read_bytes())
    except ValueError as e:
        raise _Refused(f"{path.name}: not JSON ({e})") from None


def _whole(v: Any) -> int | None:
    """A coordinate number as the engine wrote it (a float; Python reads "2.0" as 2.0, "2" as 2), or None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float) and (not math.isfinite(v) or not v.is_integer()):
        return None
    return int(v)


def _xz(v: Any, where: str, size: int) -> Cell:
    nums = [_whole(x) for x in v] if isinstance(v, list) and len(v) == 2 else [None]
    if None in nums:
        raise _Refused(f"{where}: expected [x, z], two whole numbers, found {v!r}")
    cell = (nums[0], nums[1])
    if not in_bounds(cell, size):  # type: ignore[arg-type]
        raise _Refused(f"{where}: [x, z] off the {size}x{size} board: {v!r}")
    return cell  # type: ignore[return-value]


def _reply(obj: Any, where: str) -> dict[str, Any]:
    """One engine reply's shape (ActionLogs.cs `EventLogs`, `NetAction`); raises `_Refused` naming the field."""
    if not isinstance(obj, dict):
        raise _Refused(f"{where}: expected the engine's reply (an object), found {type(obj).__name__}")
    for key, kind in (("Actions", list), ("board_state", list), ("board_data", list), ("game_done", bool)):
        if not isinstance(obj.get(key), kind):
            raise _Refused(f"{where}.{key}: expected a {kind.__name__}, found {obj.get(key)!r:.60}")
    for k, act in enumerate(obj["Actions"]):
        ok = (isinstance(act, dict) and all(isinstance(act.get(f), int) and not isinstance(act.get(f), bool)
                                            for f in ("command_count", "action_count"))
              and isinstance(act.get("prompt"), str) and isinstance(act.get("valididy"), list)
              and all(isinstance(s, str) for s in act["valididy"]))
        if not ok:
            raise _Refused(f"{where}.Actions[{k}]: expected command_count, action_count, prompt, valididy, "
                           f"found {act!r:.80}")
    return obj


def _board(rep: dict[str, Any], where: str, goal: Board) -> Board:
    """The board a reply shows, its objects matched to the episode's geoms by colour and body in any order;
    every object's goal and `board_state` line must agree with its `board_data`."""
    data, lines = rep["board_data"], rep["board_state"]
    if len(data) != len(goal.geoms) or len(lines) != len(data):
        raise _Refused(f"{where}: expected {len(goal.geoms)} objects in board_data and board_state, found "
                       f"{len(data)} and {len(lines)}")
    placed: dict[Geom, Cell] = {}
    for k, obj in enumerate(data):
        w = f"{where}.board_data[{k}]"
        if not isinstance(obj, dict) or not isinstance(obj.get("body"), str) or not isinstance(obj.get("color"), str):
            raise _Refused(f"{w}: expected body, color, current_coordinate, goal_coordinate, found {obj!r:.80}")
        g = Geom(obj["color"].lower(), obj["body"])  # type: ignore[arg-type]
        goal_cell = goal.cell_of(g)
        if goal_cell is None or g in placed:
            why = "a second time" if g in placed else "which is not a geom of this episode"
            raise _Refused(f"{w}: {obj['color']} {obj['body']} {why}")
        cell = _xz(obj.get("current_coordinate"), f"{w}.current_coordinate", goal.size)
        if _xz(obj.get("goal_coordinate"), f"{w}.goal_coordinate", goal.size) != goal_cell:
            raise _Refused(f"{w}.goal_coordinate: {obj['goal_coordinate']!r}, the episode's goal for {g.name} is "
                           f"{coord(goal_cell)}")
        want = f"{coord(cell)} {obj['color']} {obj['body']}"
        if lines[k] != want:
            raise _Refused(f"{where}.board_state[{k}]: {lines[k]!r}, its board_data says {want!r}")
        placed[g] = cell
    try:
        return Board.of(goal.size, placed)
    except BoardError as e:
        raise _Refused(f"{where}: {e}") from None


def _meta(folder: Path) -> tuple[str | None, int | None, str | None]:
    """metadata.json's agent name, the game's max_game_length and its representation as our modality."""
    if not (folder / METADATA).exists():
        return None, None, None
    md = _json_file(folder / METADATA)
    agent = md.get("agent") if isinstance(md, dict) else None
    game = md.get("game") if isinstance(md, dict) else None
    if not (isinstance(agent, dict) and len(agent) == 1 and isinstance(game, dict) and len(game) == 1):
        raise _Refused(f"{METADATA}: expected one agent and one game ({{'agent': {{name: …}}, 'game': {{name: …}}}})")
    params = next(iter(game.values()))
    cap = params.get("max_game_length") if isinstance(params, dict) else None
    if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 1):
        raise _Refused(f"{METADATA}: game max_game_length: expected a positive integer, found {cap!r}")
    rep = params.get("representation_type") if isinstance(params, dict) else None
    return next(iter(agent)), cap, MODALITY.get(rep) if isinstance(rep, str) else None


def _config(folder: Path, ds: SgpDataset):
    names = sorted(f.name for f in folder.iterdir() if fnmatch.fnmatch(f.name, "config*.json"))
    if len(names) != 1:   # experiment_utilities.load_single_json_from_directory wants exactly one
        raise _Refused(f"config*.json: expected exactly one (the runner's copy of the episode's config), found "
                       f"{len(names)}")
    try:
        own = read_config(folder / names[0])
    except ConfigError as e:
        raise _Refused(f"{names[0]}: {e.problems[0].split(': ', 1)[-1]}") from None
    ep = ds.episodes.get(own.episode_id)
    if ep is None:
        raise _Refused(f"{names[0]}: config_instance_id {own.episode_id!r} is not an episode of {ds.root} (import "
                       f"its config with `sgp import-configs` first)")
    if (ep.start_board(), ep.goal_board()) != (own.start_board(), own.goal_board()):
        raise _Refused(f"{names[0]}: its start or goal differs from episode {ep.episode_id} of {ds.root}")
    return ep


def _episode(folder: Path, ds: SgpDataset, solver: str | None, step_cap: int | None) -> EpisodeLog:
    ep = _config(folder, ds)
    agent, cap_md, modality = _meta(folder)
    if step_cap is not None and cap_md is not None and step_cap != cap_md:
        raise _Refused(f"{METADATA}: the game's max_game_length is {cap_md}, --step-cap says {step_cap}")
    cap = step_cap or cap_md or STEP_CAP
    solver = solver or agent
    if not solver:
        raise _Refused(f"{METADATA}: missing, so no agent name: give the solver name")
    sim = _json_file(folder / SIM_LOG)
    if not isinstance(sim, dict) or list(sim) != [f"step {i}" for i in range(len(sim))] or len(sim) < 2:
        raise _Refused(f"{SIM_LOG}: expected an object with keys 'step 0', 'step 1', … in order (at least two), "
                       f"found keys {list(sim)[:5] if isinstance(sim, dict) else type(sim).__name__}")
    agent_log = folder / AGENT_LOG
    if not agent_log.is_file():
        raise _Refused(f"{AGENT_LOG}: missing")
    try:
        text = agent_log.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise _Refused(f"{AGENT_LOG}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    messages = text.split("\n") if text else []
    if len(messages) != len(sim) - 1:
        raise _Refused(f"{AGENT_LOG}: {len(messages)} lines, but {SIM_LOG} holds {len(sim)} replies, which answer "
                       f"{len(sim) - 1} messages (a message holding a newline cannot be split back)")
    goal = ep.goal_board()
    reps = [_reply(sim[f"step {i}"], f"{SIM_LOG}: step {i}") for i in range(len(sim))]
    if reps[0]["Actions"] or reps[0]["game_done"] or _board(reps[0], f"{SIM_LOG}: step 0", goal) != goal:
        raise _Refused(f"{SIM_LOG}: step 0: expected the objects on their goals, no actions, game_done false "
                       f"(the engine places them there before 'start')")
    r = Replay(ep, cap, "ivispar")
    actions = 0
    for i, message in enumerate(messages):
        where = f"{SIM_LOG}: step {i + 1}"
        rep = reps[i + 1]
        commands = [c.strip() for c in message.split(",")]       # interact_with_server's message_list
        got = [a["prompt"] for a in rep["Actions"]]
        if got != commands:
            raise _Refused(f"{where}: Actions' prompts {got!r:.120}, but message {i} of {AGENT_LOG} sends "
                           f"{commands!r:.120}")
        counts = [(a["command_count"], a["action_count"]) for a in rep["Actions"]]
        if counts != [(i + 1, actions + k + 1) for k in range(len(commands))]:
            raise _Refused(f"{where}: command_count/action_count {counts}, expected message {i + 1} and actions "
                           f"{actions + 1}…{actions + len(commands)}")
        actions += len(commands)
        verdicts = rep["Actions"][0]["valididy"]
        if i == 0:
            if commands != ["start"] or sorted(verdicts) != sorted(
                    [START_VERDICTS[0]] * len(goal.geoms) + [START_VERDICTS[1]]) or rep["game_done"]:
                raise _Refused(f"{where}: expected 'start' (the objects set on their starts, game_done false), found "
                               f"{commands!r:.80} with {verdicts!r:.120}")
            if _board(rep, where, goal) != ep.start_board():
                raise _Refused(f"{where}: after 'start' the board is not the episode's start")
            continue
        if r.done:
            raise _Refused(f"{where}: the episode was already over after step {i} (the replay "
                           f"{'solved it' if r.d == 0 else f'is at the step cap {cap}'})")
        if len(commands) != 1:
            raise _Refused(f"{where}: message {i} sends {len(commands)} commands; a step here is one command")
        cmd = commands[0]
        dec = unity_decode(cmd)
        if dec.verb not in ("move", ""):
            raise _Refused(f"{where}: {cmd!r} is the engine's {dec.verb!r} command, which the ivispar reader does "
                           f"not play (it only moves)")
        reply = f"action: {cmd}"
        back = ivispar_extract(reply)
        if dec.verb == "move" and (back is None or unity_decode(back) != dec):
            raise _Refused(f"{where}: {cmd!r}: the ivispar reader would not read it as the engine did")
        step = r.send(reply)
        board = _board(rep, where, goal)
        if board != r.board:
            raise _Refused(f"{where}: the logged board {board.to_state()['geoms']} is not the replay's "
                           f"{r.board.to_state()['geoms']} after {cmd!r}")
        counted = [v for v in verdicts if v in COUNTED]
        want = [VERDICT[o] for o in step.move_outcomes()]
        if counted != want:
            raise _Refused(f"{where}: the engine's verdicts {counted!r:.160}, the replay's {want!r:.160}")
        if rep["game_done"] != (r.d == 0):
            raise _Refused(f"{where}: game_done {rep['game_done']}, but the board is {'' if r.d == 0 else 'not '}"
                           f"on the goal (was the run without auto_done_check?)")
    if not r.done:
        raise _Refused(f"{SIM_LOG}: ends after {len(r.steps)} moves, neither solved nor at the step cap ({cap})")
    return r.log(solver, 0, ds.dataset_hash, modality, {"source": "iVISPAR episode log", "folder": folder.name})


def read_episode_folder(folder: Path | str, ds: SgpDataset, solver: str | None = None,
                        step_cap: int | None = None) -> EpisodeLog:
    """One of the original's episode folders replayed into an `EpisodeLog`; raises `IvisparLogError` naming
    the folder, the file and the step."""
    folder = Path(folder)
    try:
        return _episode(folder, ds, solver, step_cap)
    except _Refused as e:
        raise IvisparLogError([f"{folder}/{e}"]) from None
    except OSError as e:
        raise IvisparLogError([f"{folder}: {e.strerror or e}"]) from None


def import_logs(paths: list[Path | str], ds: SgpDataset, out: Path | str, solver: str | None = None,
                step_cap: int | None = None) -> list[EpisodeLog]:
    """Every episode folder under `paths` as one line of the episode-log JSONL `out` (protocol reader ivispar),
    or nothing at all: every refused folder is listed."""
    if step_cap is not None and step_cap < 1:
        raise IvisparLogError([f"step cap {step_cap}: expected a positive integer"])
    logs: list[EpisodeLog] = []
    problems: list[str] = []
    seen: dict[tuple[str, str], Path] = {}
    for p in paths:
        for folder in episode_folders(p):
            try:
                lg = read_episode_folder(folder, ds, solver, step_cap)
            except IvisparLogError as e:
                problems += e.problems
                continue
            key = (lg.solver, lg.episode_id)
            if key in seen:
                problems.append(f"{folder}: {lg.solver!r} played {lg.episode_id} in {seen[key]} already")
                continue
            seen[key] = folder
            logs.append(lg)
    if problems:
        raise IvisparLogError(problems)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".writing", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps({**lg.to_json(), "protocol": PROTOCOL}, sort_keys=True) + "\n" for lg in logs))
        read_logs(tmp, ds, reader="ivispar")      # what `sgp score --reader ivispar` will read
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return logs
