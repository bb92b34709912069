"""Episode folders written the way SharkyBamboozle/iVISPAR's runner and engine write them, for the import-log
tests: no published run ships one, so this follows the original's code step by step (each piece names the
file and function it follows; our own code, none of theirs). The one thing that code leaves open, the order
Unity lists the objects in, is a parameter (`order`); so is how whole floats come out of Unity's JSON writer.
"""
from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

KNOWN_OBJECTS = ("cube", "tile", "sphere", "cylinder", "pyramid", "cone", "prism")   # TurnManager.knownObjects
KNOWN_DIRECTIONS = ("left", "right", "up", "down")                                  # TurnManager.knownDirections
KNOWN_COMMANDS = ("move", "start", "reset", "done")                                 # TurnManager.knownCommands
WORD_NUMBERS = (("one", 1), ("two", 2), ("three", 3), ("four", 4), ("five", 5), ("six", 6), ("seven", 7),
                ("eight", 8), ("nine", 9), ("ten", 10))                             # TurnManager.wordToNumber


class Engine:
    """The Unity side for one episode: LevelManager.LoadLevel places the objects, TurnManager.ActionDecoder
    runs a message's commands, TurnManager.ResponseAck answers with Debugger.GetJSONLog."""

    def __init__(self, cfg: dict[str, Any], order: list[int], whole_floats: bool = True,
                 reorder: random.Random | None = None):
        self.size, self.auto_done = cfg["grid_size"], cfg.get("auto_done_check", True)
        self.whole_floats, self.reorder = whole_floats, reorder
        self.objects = []
        for k in order:                              # FindGameObjectsWithTag("Commandable") order: a parameter
            lm = cfg["landmarks"][k]
            goal = (int(lm["goal_coordinate"][0]), int(lm["goal_coordinate"][1]))
            self.objects.append({"body": lm["body"].lower(), "color": lm["color"],    # TargetBehaviour.SetInfo
                                 "id": f"{lm['color'].lower()} {lm['body'].lower()}",  # LevelManager objectList
                                 "pos": goal, "goal": goal,                         # setPositionOnGrid(goal)
                                 "start": (int(lm["start_coordinate"][0]), int(lm["start_coordinate"][1]))})
        self.occupied: set[tuple[int, int]] = set()    # Grid.isOccupied: LoadLevel leaves it empty
        self.initialized = False                       # TargetBehaviour.isInitialized
        self.solved = False                            # TurnManager.isPuzzleSolved
        self.command_count = self.action_count = 0
        self.log = self._new_log()

    @staticmethod
    def _new_log() -> dict[str, Any]:                  # ActionLogs.cs EventLogs(), fields in declaration order
        return {"Actions": [], "board_state": [], "board_data": [], "game_done": False}

    def _valid(self, text: str) -> None:               # Debugger.SetValidity: onto the last action
        self.log["Actions"][-1]["valididy"].append(text)

    def _float(self, v: int) -> float | int:
        return float(v) if self.whole_floats else v

    def ack(self) -> str:
        """TurnManager.ResponseAck: every object's status and data, game_done, the log as JSON; then EmptyLog."""
        listed = self.reorder.sample(self.objects, len(self.objects)) if self.reorder else self.objects
        for o in listed:                               # with `reorder`, Unity lists them anew each time
            x, z = o["pos"]
            self.log["board_state"].append(f"{chr(ord('A') + x)}{z + 1} {o['color']} {o['body']}")  # GridCoordinatesToChess
            self.log["board_data"].append({"body": o["body"], "color": o["color"],            # BoardData.cs ObjectData
                                           "current_coordinate": [self._float(x), self._float(z)],
                                           "goal_coordinate": [self._float(o["goal"][0]), self._float(o["goal"][1])]})
        self.log["game_done"] = self.solved
        text = json.dumps(self.log, separators=(",", ":"))          # JsonUtility.ToJson: compact
        self.log = self._new_log()
        return text

    def _auto_done(self) -> None:                      # TurnManager.AutoDoneCheck
        if self.auto_done:
            self.solved = all(o["pos"] == o["goal"] for o in self.objects)

    def _move(self, ident: str, direction: str) -> None:
        """TargetBehaviour.MovePlayer, on every object (each checks the id), then MoveForward / MoveRight."""
        for o in self.objects:
            if not self.initialized:
                self._valid("you can not move before start action")
                continue
            if o["id"] != ident or direction not in KNOWN_DIRECTIONS:
                continue
            dx, dz = {"up": (0, 1), "down": (0, -1), "right": (1, 0), "left": (-1, 0)}[direction]
            x, z = o["pos"]
            to = (x + dx, z + dz)
            if 0 <= to[0] < self.size and 0 <= to[1] < self.size and to not in self.occupied:
                self.occupied.discard((x, z))
                o["pos"] = to
                self.occupied.add(to)
                self._valid("was legal move")
            elif to in self.occupied:                   # Grid.GetOccupany is false off the board
                self._valid("Destination occupied")
            else:
                self._valid("Destination out of bounds")
            self._auto_done()

    @staticmethod
    def decode(command: str) -> tuple[str, str, str, str, int]:
        """TurnManager.decodeCommand."""
        c = command.lower()
        cmd = next((w for w in KNOWN_COMMANDS if w in c), "")
        obj = next((w for w in KNOWN_OBJECTS if w in c), "")
        attr = ""
        if obj:
            parts = c.split(" ")
            for k, part in enumerate(parts):
                if part == obj:
                    attr = parts[k + 1] if obj == "tile" else parts[k - 1]
        direction = next((w for w in KNOWN_DIRECTIONS if w in c), "")
        repeat = 1
        if obj != "tile":
            m = re.search(r"(\d+)", c)
            repeat = int(m.group()) if m else next((n for w, n in WORD_NUMBERS if w in c), 1)
        return cmd, obj, attr, direction, repeat

    def act(self, commands: list[str]) -> str:
        """TurnManager.ActionDecoder for one GameInteraction message, then the acknowledgement."""
        self.command_count += 1
        ids = {o["id"] for o in self.objects}
        for command in commands:
            self.log["Actions"].append({"command_count": self.command_count, "action_count": 0, "prompt": command,
                                        "valididy": []})     # CreateNewAction, SetCommandCount, SetPrompt
            self.action_count += 1
            self.log["Actions"][-1]["action_count"] = self.action_count
            cmd, obj, attr, direction, repeat = self.decode(command)
            if "move" in cmd:
                ident = f"{attr} {obj}"
                if ident not in ids:
                    self._valid(f"{ident} is not a valid object")
                for _ in range(repeat):
                    self._move(ident, direction)
            elif "start" in cmd:
                for o in self.objects:                 # TargetBehaviour.InitTargets
                    o["pos"] = o["start"]
                    self.occupied.add(o["start"])
                    self._valid("set objects position to initial positions")
                self.initialized = True
                self._valid("valid command. start of experiment")
            elif cmd in ("done", "reset"):
                raise ValueError(f"{cmd!r} mid-episode: the importer refuses such logs, so the writer never makes one")
            else:
                self._valid("not a legal command")
        return self.ack()


def write_episode(folder: Path, cfg: dict[str, Any], messages: list[str], order: list[int] | None = None,
                  max_game_length: int = 20, whole_floats: bool = True, agent: str = "AIAgent",
                  reorder_seed: int | None = None) -> Path:
    """One episode folder: the config copy (experiment_utilities.copy_json_to_experiment, expand_config_file),
    metadata.json (run_experiment), then the action-perception loop (action_perception_loop.interact_with_server
    with game_systems.InteractivePuzzle) and its logs (GameSystem._save_logs). `messages` are the agent's
    messages in turn (AIAgent.act pops its config sequence; past its end it says "path empty")."""
    folder.mkdir(parents=True)
    cfg = {**cfg, "grid_label": "both", "camera_offset": [0, 5.57, -3.68], "camera_auto_override": [6.5, 1.5],
           "screenshot_alpha": 0.0, "auto_done_check": True}
    (folder / f"config_{cfg['config_instance_id']}.json").write_text(json.dumps(cfg, indent=4))
    game = {"game_type": "InteractivePuzzle", "representation_type": "text", "max_game_length": max_game_length}
    (folder / "metadata.json").write_text(json.dumps({"env": {"SGP": {"grid_label": "both"}},
                                                      "agent": {agent: {"agent_type": "AIAgent"}},
                                                      "game": {"interactive": game}}, indent=4))
    engine = Engine(cfg, order if order is not None else list(range(len(cfg["landmarks"]))), whole_floats,
                    None if reorder_seed is None else random.Random(reorder_seed))
    queue = list(messages)
    message = engine.ack()                             # LevelManager.StartLevel: capture_send_screenshot
    agent_log: list[str] = []
    sim_log: dict[str, Any] = {}
    iteration = i = 0

    def check_done(m: str) -> bool:                    # InteractivePuzzle.check_done
        return json.loads(m).get("game_done", False) or iteration >= max_game_length

    while not check_done(message):
        sim_log[f"step {i}"] = json.loads(message)     # GameSystem.feed_sim_response
        iteration = i
        user = queue.pop(0) if queue else "path empty"
        agent_log.append(user)                         # feed_agent_response
        message = engine.act([m.strip() for m in user.split(",")])
        i += 1
    sim_log[f"step {i}"] = json.loads(message)         # the last observation after the loop
    (folder / "agent_message_log.txt").write_text("\n".join(agent_log))
    with open(folder / "sim_message_log.json", "w") as f:
        json.dump(sim_log, f, indent=4)
    return folder
