"""How a reply becomes moves: the project's `strict` reader (`actions.parse_action`), or iVISPAR's own
(`ivispar`), chosen when episodes are played or scored.

The `ivispar` reader reproduces what the original does with a model's reply, in two stages (each function
below names the part of SharkyBamboozle/iVISPAR it follows; facts, not its code):

1. Extraction, on the Python side (`Source/Experiment/agent_systems.py`, `LLMAgent.parse_action` and
   `parse_action_rmv_special_chars`): newlines become spaces, `*` and `#` are dropped, the text is lower-cased,
   the 2D shape names are replaced by the 3D ones anywhere in the text (also inside words: "squares" becomes
   "cubes"); the command is "move " + everything after the LAST `action: move ` (exactly that, one space each
   side), with every character other than letters, digits and whitespace removed and runs of whitespace
   collapsed. A reply without `action: move ` sends a text the engine does not know: "not a legal command".
2. Decoding, in the Unity engine (`Source/iVISPAR/Assets/Scripts/Level/TurnManager.cs`, `decodeCommand`): the
   verb is the first of move/start/reset/done contained anywhere; the body is the first of cube, tile, sphere,
   cylinder, pyramid, cone, prism (in that order, not the order in the text) contained anywhere, also inside a
   word; its colour is the word just before an exact token equal to the body (the last such token); the
   direction is the first of left/right/up/down (in that order) contained anywhere, also inside a word; the
   repeat count is the first run of digits anywhere ("up to B3" moves three times), else the first of
   one…ten contained anywhere ("done" contains "one"), else 1. `ActionDecoder` then moves the geom named
   colour + body that many times, one engine move each (`TargetBehaviour.MoveForward`/`MoveRight`).

What the original counts (`Source/Evaluate/compile_mistakes_advanced.py` counts the engine's validity strings
per move): each move is a legal move, "Destination occupied" or "Destination out of bounds"; a text without a
known verb is "not a legal command". A command naming a geom that is not on the board ("… is not a valid
object"), one without a direction word, or one whose repeat count is 0 moves nothing and is counted in none of
those classes: here `UNCLASSIFIED` (the step still counts as a step). Legal moves are split into effective and
ineffective one by one (each changes the A* distance by exactly ±1), so per play a step that moved three times
counts three times, as the original counts three validity strings.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .actions import Outcome, parse_action, step_board
from .board import DIRECTIONS, KNOWN_COLOURS, KNOWN_SHAPES, Board, Geom, in_bounds
from .search import astar_distance, distance_after_move

Reader = Literal["strict", "ivispar"]
READERS: tuple[Reader, ...] = ("strict", "ivispar")
UNCLASSIFIED = "unclassified"       # iVISPAR: a command that moved nothing and matched none of its classes
StepOutcome = Literal["effective", "ineffective", "occupied", "out_of_bounds", "illegal", "unclassified"]

_MARK = "action: move "                                            # parse_action's split_at, lower-cased
_2D_TO_3D = (("circle", "sphere"), ("square", "cube"), ("triangle", "pyramid"), ("hexagon", "cylinder"))
VERBS = ("move", "start", "reset", "done")                         # TurnManager.knownCommands
BODIES = ("cube", "tile", "sphere", "cylinder", "pyramid", "cone", "prism")   # TurnManager.knownObjects
DIRECTION_WORDS = ("left", "right", "up", "down")                  # TurnManager.knownDirections
NUMBER_WORDS = (("one", 1), ("two", 2), ("three", 3), ("four", 4), ("five", 5), ("six", 6), ("seven", 7),
                ("eight", 8), ("nine", 9), ("ten", 10))            # TurnManager.wordToNumber, in its order
# A repeat count above this is not replayed (the engine would try every move, one verdict each: a reply
# saying 'up 999999999' would take the replay's memory): such a step counts in no class, with its reason.
MAX_REPEAT = 1000
_INT_MAX = 2**31 - 1                                               # C# int.Parse overflows beyond this


def ivispar_extract(reply: str) -> str | None:
    """The command the original sends to its engine for this reply (agent_systems.py `parse_action`, then
    `parse_action_rmv_special_chars`); None when the reply holds no `action: move ` (the original then sends
    a text its engine calls "not a legal command")."""
    text = reply.replace("\n", " ").replace("*", "").replace("#", "").strip().lower()
    for flat, body in _2D_TO_3D:
        text = text.replace(flat, body)
    at = text.rfind(_MARK)
    if at < 0:
        return None
    cmd = "move " + text[at + len(_MARK):].strip()
    cmd = re.sub(r'[\\/*?:"<>|]', "", cmd)
    cmd = re.sub(r"[\r\n\t]", " ", cmd)
    cmd = re.sub(r"[^a-zA-Z0-9\s]", "", cmd)
    return re.sub(r"\s+", " ", cmd.strip("'").strip()).strip()


@dataclass(frozen=True)
class Decoded:
    """The engine's reading of one command (TurnManager.cs `decodeCommand`); `crash` says why the engine would
    throw on it (then nothing moves)."""

    verb: str
    body: str
    colour: str
    direction: str
    repeat: int
    crash: str | None = None


def unity_decode(command: str) -> Decoded:
    """TurnManager.cs `decodeCommand`, rule by rule (see the module docstring)."""
    c = command.lower()
    verb = next((w for w in VERBS if w in c), "")
    body = next((w for w in BODIES if w in c), "")
    colour, crash = "", None
    if body:
        tokens = c.split(" ")
        for k, tok in enumerate(tokens):
            if tok != body:
                continue
            if body == "tile":
                if k + 1 >= len(tokens):
                    crash = "index out of range: nothing after 'tile'"
                    break
                colour = tokens[k + 1]
            elif k == 0:
                crash = f"index out of range: nothing before {body!r}"
                break
            else:
                colour = tokens[k - 1]
    direction = next((w for w in DIRECTION_WORDS if w in c), "")
    repeat = 1
    if body != "tile":
        m = re.search(r"[0-9]+", c)
        if m:
            digits = m.group().lstrip("0") or "0"
            if len(digits) > 10 or int(digits) > _INT_MAX:   # never int() of a huge digit run
                crash, repeat = f"repeat count {m.group()[:20]}{'…' if len(m.group()) > 20 else ''} overflows " \
                                "a 32-bit int", 0
            else:
                repeat = int(digits)
        else:
            repeat = next((n for word, n in NUMBER_WORDS if word in c), 1)
    return Decoded(verb, body, colour, direction, repeat, crash)


@dataclass(frozen=True)
class ReadStep:
    """What one reply did under a reader: the board after it, the step's class, each engine move's class
    (`moves`; empty: nothing moved and nothing was counted), the canonical command (None: no geom and direction
    read), the A* distance after it, and why it did not move (None when it did)."""

    board: Board
    outcome: StepOutcome
    moves: tuple[Outcome, ...]
    command: str | None
    distance: int
    error: str | None


def _strict_step(board: Board, reply: str, goal: Board, before: int) -> ReadStep:
    s = step_board(board, reply, goal, before)
    cmd = s.parsed.action.command() if s.parsed.action else None
    return ReadStep(s.board, s.outcome, (s.outcome,), cmd, s.distance, s.error)


@dataclass(frozen=True)
class _Target:
    """The ivispar reader's verdict before any move: `kind` illegal / unclassified / move, with the geom,
    its cell and the decoded command when it moves."""

    kind: Literal["illegal", "unclassified", "move"]
    error: str | None
    decoded: Decoded | None = None
    geom: Geom | None = None
    command: str | None = None


def _target(board: Board, reply: str, command: bool = False) -> _Target:
    cmd = reply if command else ivispar_extract(reply)
    if cmd is None:
        return _Target("illegal", "no 'action: move ' in the reply")
    d = unity_decode(cmd)
    if d.verb != "move":     # unreachable from a reply (the extraction starts with "move"); a typed "done" etc.
        return _Target("illegal", f"{cmd!r}: not a move command")
    if d.crash:
        return _Target("unclassified", f"{cmd!r}: the engine would throw ({d.crash})")
    geom = Geom(d.colour, d.body) if d.colour in KNOWN_COLOURS and d.body in KNOWN_SHAPES else None  # type: ignore[arg-type]
    if geom is None or board.cell_of(geom) is None:
        what = f"{d.colour} {d.body}".strip() or "no geom"
        return _Target("unclassified", f"{cmd!r}: {what!r} is not a geom on the board")
    if not d.direction:
        return _Target("unclassified", f"{cmd!r}: no direction word")
    command = f"move {geom.color} {geom.shape} {d.direction}"
    if d.repeat == 0:
        return _Target("unclassified", f"{cmd!r}: repeat count 0", d, geom, command)
    if d.repeat > MAX_REPEAT:
        return _Target("unclassified", f"{cmd!r}: repeat count {d.repeat}: the original's engine would try that "
                                       f"many moves, one verdict each; beyond {MAX_REPEAT} this reader does not "
                                       "reproduce it and counts the step in no class", d, geom, command)
    return _Target("move", None, d, geom, command)


def ivispar_step(board: Board, reply: str, goal: Board, before: int) -> ReadStep:
    """Apply a reply as the original would: extract, decode, then move the named geom `repeat` times."""
    t = _target(board, reply)
    if t.kind == "illegal":
        return ReadStep(board, "illegal", ("illegal",), None, before, t.error)
    if t.kind == "unclassified":
        return ReadStep(board, UNCLASSIFIED, (), t.command, before, t.error)
    d, geom, command = t.decoded, t.geom, t.command
    assert d is not None and geom is not None
    cell = board.cell_of(geom)
    assert cell is not None
    dc, dr = DIRECTIONS[d.direction]
    index = board.geoms.index(geom)
    moves: list[Outcome] = []
    dist = before
    start_board = board
    for _ in range(d.repeat):
        to = (cell[0] + dc, cell[1] + dr)
        if not in_bounds(to, board.size) or board.occupant(to) is not None:
            # blocked: the board no longer changes, so every remaining repeat is blocked the same way
            moves += ["out_of_bounds" if not in_bounds(to, board.size) else "occupied"] * (d.repeat - len(moves))
            break
        board = board.moved(index, to)
        after = distance_after_move(board, goal, dist)
        moves.append("effective" if after < dist else "ineffective")
        dist, cell = after, to
    if board != start_board:
        outcome: StepOutcome = "effective" if dist < before else "ineffective"
        error = None
    else:
        outcome = moves[0]
        error = f"{geom.name} cannot move {d.direction}"
    return ReadStep(board, outcome, tuple(moves), command, dist, error)


def read_step(reader: Reader, board: Board, reply: str, goal: Board, before: int | None = None) -> ReadStep:
    """One reply applied to `board` under `reader`."""
    before = astar_distance(board, goal) if before is None else before
    if reader == "strict":
        return _strict_step(board, reply, goal, before)
    if reader == "ivispar":
        return ivispar_step(board, reply, goal, before)
    raise ValueError(f"unknown reader {reader!r} (expected one of {', '.join(READERS)})")


def counts_as_illegal(reader: Reader, board: Board, reply: str, command: bool = False) -> bool:
    """Whether `reader` counts this reply, on this board, as an illegal command (the side-by-side figure):
    strict, not the grammar or no such geom on the board; ivispar, no `action: move ` to extract, or no verb
    the engine knows. `command`: the text is a command sent to the engine as it is (an agent's or a typed one,
    as the original's AIAgent and human page send theirs), not a model's reply to extract it from."""
    if reader == "strict":
        a = parse_action(reply).action
        return a is None or board.cell_of(a.geom) is None
    return _target(board, reply, command).kind == "illegal"


def counts_as_unclassified(board: Board, reply: str, command: bool = False) -> bool:
    """Whether the ivispar reader moves nothing for this reply and counts it in none of the classes."""
    return _target(board, reply, command).kind == "unclassified"
