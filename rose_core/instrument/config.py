"""A study's configuration and record: what an experimenter sets, checked before anything is stored."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from ..benchmarks.rose.records import MAIN_TEMPLATES, SUBSETS, TEMPLATES
from ..benchmarks.sgp.actions import allowed_words
from ..benchmarks.sgp.render import MODALITIES as SGP_MODALITIES
from ..benchmarks.sgp.render import Modality as SgpModality
from ..storage import studies
from ..storage.connection import Connection
from .texts import default_info, default_texts, structure_problems

Ordering = Literal["random", "counterbalanced"]
Kind = Literal["practice", "main", "attention"]
EndReason = Literal["completed", "screened_out", "timed_out", "pool_exhausted"]
Origin = Literal["participant", "preview", "simulated", "test"]   # only "participant" is ever counted
Benchmark = Literal["rose", "sgp"]
SgpInput = Literal["click", "keyboard", "typed"]
SgpGoalView = Literal["side_by_side", "toggle"]
SGP_INPUTS: tuple[str, ...] = SgpInput.__args__  # type: ignore[attr-defined]
SGP_GOAL_VIEWS: tuple[str, ...] = SgpGoalView.__args__  # type: ignore[attr-defined]
SGP_DEFAULT_STEP_CAP = 20                # the paper's cap for models: humans get the same by default
SampleBy = Literal["template", "subset", "split"]
SAMPLE_BY: tuple[str, ...] = SampleBy.__args__  # type: ignore[attr-defined]
AttentionKind = Literal["picture", "worded"]
ATTENTION_KINDS: tuple[str, ...] = AttentionKind.__args__  # type: ignore[attr-defined]
BehaviourCheck = Literal["off", "flag", "exclude"]
BEHAVIOUR_CHECKS: tuple[str, ...] = BehaviourCheck.__args__  # type: ignore[attr-defined]
CompletionCodeKind = Literal["study", "participant"]
COMPLETION_CODE_KINDS: tuple[str, ...] = CompletionCodeKind.__args__  # type: ignore[attr-defined]
SampleScenes = Literal["distinct", "shared"]
SAMPLE_SCENES: tuple[str, ...] = SampleScenes.__args__  # type: ignore[attr-defined]


class StudyError(ValueError):
    """A study configuration or a participant request that cannot be honoured."""


@dataclass
class ItemSample:
    """A designed item sample: `per_cell` instances drawn (with `seed`) from every cell of the `by` dimensions over
    the study's templates, subsets (and split), so a pilot gets several raters per item instead of one on each of
    thousands (rose_core.instrument.sample draws it)."""

    per_cell: int
    by: list[str] = field(default_factory=lambda: ["template", "subset"])
    seed: int = 1
    # "distinct": items on different scenes where the dataset allows (every item fills evenly); "shared": every
    # cell follows one seeded scene order, so templates share scenes (the conditioned gap and bridges need that)
    scenes: SampleScenes = "distinct"


@dataclass
class StudyConfig:
    """What an experimenter sets when creating a study.

    `practice_rounds` and `practice_scene_ids` are filled by `create_study`: one list of practice instances per
    allowed attempt, each on a scene never used in another round (a retry never repeats revealed answers)."""

    name: str
    split: Literal["dev", "test", "all"] = "test"
    subsets: list[str] = field(default_factory=lambda: list(SUBSETS))
    templates: list[str] = field(default_factory=lambda: list(MAIN_TEMPLATES))
    items_per_participant: int = 20
    target_per_instance: int = 3
    practice_items: int = 4            # per round; at least one per kind of answer the study asks for
    practice_pass_fraction: float = 2 / 3
    practice_max_attempts: int = 2
    attention_every: int = 10          # one attention check after every N main items; 0 = none
    ordering: Ordering = "counterbalanced"
    seed: int = 1
    same_scene_multiple_templates: bool = False
    completion_code: str = ""
    completion_url: str = ""
    # Prolific's screen-out: a participant who failed the practice (and, with attention_screen_out, an attention
    # check) gets this code / is sent to this URL, and is asked to return the submission if they have no code.
    screen_out_code: str = ""
    screen_out_url: str = ""
    attention_screen_out: bool = False  # a failed attention check ends the study at once, screened out (same code)
    # ---- bots (docs/threat-model.md, "Bots"). "picture": the check's instruction is drawn into its image and the
    # page says only "follow the instruction in the picture" (a script reading the page's text cannot answer it);
    # "worded": the instruction in the page's text (kept for studies stored before picture checks).
    attention_kind: AttentionKind = "picture"
    # The behaviour check at completion (rose_core.instrument.behaviour): "flag" records a `behaviour` flag,
    # "exclude" also excludes the participant (a standing exclusion by "behaviour check"), "off" neither.
    behaviour_check: BehaviourCheck = "flag"
    # "study": everyone who completes gets `completion_code` (Prolific's fixed code); "participant": each gets
    # their own code, an HMAC of a per-study secret kept in the database and their id (rose_core.instrument.completion)
    completion_code_kind: CompletionCodeKind = "study"
    # A visitor without a PROLIFIC_PID gets a calm page and never reaches consent. None: on when the study has a
    # completion URL or code (a Prolific study), off otherwise (`prolific_id_required`).
    require_prolific_id: bool | None = None
    # Whether answers of visitors without a Prolific id (`?pid=` links) fill the per-instance targets. None: only
    # where the study admits them (no Prolific id required: a lab study), never in a Prolific study (`counts_anonymous`).
    anonymous_counts: bool | None = None
    time_limit_minutes: int = 0        # 0 = no limit
    release_after_minutes: int = 30    # a participant silent this long loses their held item
    practice_rounds: list[list[str]] = field(default_factory=list)
    practice_scene_ids: list[str] = field(default_factory=list)  # scenes kept out of the main pool
    # ---- the benchmark the study runs. "sgp": iVISPAR's sliding geom puzzle, one episode per item
    # (rose_core.instrument.episode_session); the ROSE fields above (split, subsets, templates, attention) are
    # then unused, and practice_rounds / practice_scene_ids hold episode ids.
    benchmark: Benchmark = "rose"
    sgp_modality: SgpModality = "2d"             # what the participant sees: the 2D schematic, the 3D view, text
    sgp_input: SgpInput = "click"                # click a geom then an arrow or cell; keyboard; typed command
    sgp_goal_view: SgpGoalView = "side_by_side"  # the goal beside the board, or behind a toggle
    step_cap: int | None = SGP_DEFAULT_STEP_CAP  # moves per episode, invalid ones included; None = no cap
    sgp_num_geoms: list[int] = field(default_factory=list)  # episodes with these numbers of geoms (empty: all)
    sgp_c1: list[int] = field(default_factory=list)         # episodes with these shortest path lengths (empty: all)
    # What a participant gets beside the image: by default nothing the models do not get. Piece buttons name the
    # piece only ("red cube"); True adds its cell ("red cube at B3"), i.e. the board as text beside the image.
    sgp_piece_coordinates: bool = False
    sgp_several_moves: bool = False              # typed: several moves per submission, split on commas (iVISPAR)
    # ---- what participants read (rose_core.instrument.texts): Markdown per page (consent, instructions, end,
    # screen_out, debrief), the facts the texts name as {fields}, and the end questionnaire's questions. The
    # defaults are a template with markers: a study keeps them only as a draft, never open to participants.
    texts: dict[str, str] = field(default_factory=default_texts)
    info: dict[str, str] = field(default_factory=default_info)
    questionnaire: list[str] = field(default_factory=list)
    # ---- the item sample (ROSE). None and no `items`: every instance of split × subsets × templates is in the pool.
    sample: ItemSample | None = None
    items: list[str] = field(default_factory=list)   # an explicit list of instance ids (a study file's items_file)
    participants: int = 0              # planned participants who finish (0: as many as the pool needs); checks the design
    sample_ids: list[str] = field(default_factory=list)  # filled by create_study: the pool, stored so it never changes
    # ---- the device policy: display size is part of a subtle stimulus, so a window smaller than this (CSS pixels,
    # as the browser claims it before consent) is refused with a page saying what is needed; allow_phones lifts it.
    min_viewport_width: int = 1024
    min_viewport_height: int = 640
    allow_phones: bool = False

    def problems(self) -> list[str]:
        out = []
        if not self.name.strip():
            out.append("name: must not be empty")
        if self.benchmark not in ("rose", "sgp"):
            out.append(f"benchmark: expected rose or sgp, got {self.benchmark!r}")
        if self.benchmark == "sgp":
            return out + self._common_problems() + self._sgp_problems()
        if self.split not in ("dev", "test", "all"):
            out.append(f"split: expected dev, test or all, got {self.split!r}")
        bad = [s for s in self.subsets if s not in SUBSETS]
        if not self.subsets or bad:
            out.append(f"subsets: choose at least one of {', '.join(SUBSETS)}" + (f" (unknown: {bad})" if bad else ""))
        bad = [t for t in self.templates if t not in TEMPLATES]
        if not self.templates or bad:
            out.append(f"templates: choose at least one of {', '.join(TEMPLATES)}" + (f" (unknown: {bad})" if bad else ""))
        return out + self._common_problems() + self._sample_problems()

    def _sample_problems(self) -> list[str]:
        """What is wrong with the sample and the planned participants before any dataset is read."""
        out, s = [], self.sample
        if s is not None:
            if not isinstance(s.per_cell, int) or isinstance(s.per_cell, bool) or s.per_cell < 1:
                out.append(f"sample.per_cell: expected a whole number >= 1, got {s.per_cell!r}")
            bad = [b for b in s.by if b not in SAMPLE_BY] if isinstance(s.by, list) else [s.by]
            if bad or (isinstance(s.by, list) and len(set(s.by)) != len(s.by)):
                out.append(f"sample.by: expected distinct names among {', '.join(SAMPLE_BY)}, got {s.by!r}")
            if not isinstance(s.seed, int) or isinstance(s.seed, bool):
                out.append(f"sample.seed: expected a whole number, got {s.seed!r}")
            if s.scenes not in SAMPLE_SCENES:
                out.append(f"sample.scenes: expected one of {', '.join(SAMPLE_SCENES)}, got {s.scenes!r}")
            if self.items:
                out.append("sample: give either a sample or an explicit list of items (items / items_file), not both")
        if not isinstance(self.items, list) or any(not isinstance(i, str) or not i.strip() for i in self.items):
            out.append("items: expected a list of instance ids")
        elif len(set(self.items)) != len(self.items):
            dup = sorted({i for i in self.items if self.items.count(i) > 1})
            out.append(f"items: listed twice: {', '.join(dup[:10])}")
        p = self.participants
        if not isinstance(p, int) or isinstance(p, bool) or p < 0:
            out.append(f"participants: expected a whole number >= 0 (0: as many as needed), got {p!r}")
        elif p and isinstance(self.target_per_instance, int) and self.target_per_instance > p:
            out.append(f"target_per_instance: {self.target_per_instance} raters per item need at least as many "
                       f"participants, planned {p}")
        return out

    def _common_problems(self) -> list[str]:
        out = structure_problems(self)
        for name, lo in (("items_per_participant", 1), ("target_per_instance", 1), ("practice_items", 0),
                         ("practice_max_attempts", 1), ("attention_every", 0), ("time_limit_minutes", 0),
                         ("release_after_minutes", 1), ("min_viewport_width", 1), ("min_viewport_height", 1)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                out.append(f"{name}: expected a whole number >= {lo}, got {v!r}")
        if not 0 <= self.practice_pass_fraction <= 1:
            out.append(f"practice_pass_fraction: expected 0..1, got {self.practice_pass_fraction!r}")
        if not isinstance(self.allow_phones, bool):
            out.append(f"allow_phones: expected true or false, got {self.allow_phones!r}")
        if self.ordering not in ("random", "counterbalanced"):
            out.append(f"ordering: expected random or counterbalanced, got {self.ordering!r}")
        for name in ("completion_url", "screen_out_url"):
            if getattr(self, name) and not getattr(self, name).startswith(("https://", "http://")):
                out.append(f"{name}: expected an http(s) URL")
        if self.screen_out_code and self.screen_out_code == self.completion_code:
            out.append("screen_out_code: must differ from completion_code (Prolific would pay a screened-out "
                       "participant as one who completed)")
        if self.screen_out_url and self.screen_out_url == self.completion_url:
            out.append("screen_out_url: must differ from completion_url")
        if not isinstance(self.attention_screen_out, bool):
            out.append(f"attention_screen_out: expected true or false, got {self.attention_screen_out!r}")
        return out + self._bot_problems()

    def _bot_problems(self) -> list[str]:
        out = []
        for name, options in (("attention_kind", ATTENTION_KINDS), ("behaviour_check", BEHAVIOUR_CHECKS),
                              ("completion_code_kind", COMPLETION_CODE_KINDS)):
            if getattr(self, name) not in options:
                out.append(f"{name}: expected one of {', '.join(options)}, got {getattr(self, name)!r}")
        if self.require_prolific_id is not None and not isinstance(self.require_prolific_id, bool):
            out.append(f"require_prolific_id: expected true or false (or leave it out), got "
                       f"{self.require_prolific_id!r}")
        if self.anonymous_counts is not None and not isinstance(self.anonymous_counts, bool):
            out.append(f"anonymous_counts: expected true or false (or leave it out), got {self.anonymous_counts!r}")
        if self.completion_code_kind == "participant" and not (self.completion_code or self.completion_url):
            out.append("completion_code_kind: per-participant codes need a completion_code or completion_url "
                       "(a study without one shows no code)")
        return out

    @property
    def prolific_id_required(self) -> bool:
        """Whether a visitor needs a PROLIFIC_PID: the setting, or by default whether the study pays through
        Prolific (it has a completion URL or code)."""
        if self.require_prolific_id is not None:
            return self.require_prolific_id
        return bool(self.completion_url or self.completion_code)

    @property
    def counts_anonymous(self) -> bool:
        """Whether anonymous visitors' answers fill the targets: the setting, or by default exactly when the study
        admits them (a lab study run through `?pid=` links; in a Prolific study they are bots or mistakes)."""
        if self.anonymous_counts is not None:
            return self.anonymous_counts
        return not self.prolific_id_required

    def _sgp_problems(self) -> list[str]:
        out = []
        if self.sgp_modality not in SGP_MODALITIES:
            out.append(f"sgp_modality: expected one of {', '.join(SGP_MODALITIES)}, got {self.sgp_modality!r}")
        if self.sgp_input not in SGP_INPUTS:
            out.append(f"sgp_input: expected one of {', '.join(SGP_INPUTS)}, got {self.sgp_input!r}")
        if self.sgp_goal_view not in SGP_GOAL_VIEWS:
            out.append(f"sgp_goal_view: expected one of {', '.join(SGP_GOAL_VIEWS)}, got {self.sgp_goal_view!r}")
        if self.sgp_modality == "text" and self.sgp_input != "typed":
            out.append("sgp_input: a text-only board has nothing to click; use typed")
        cap = self.step_cap
        if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 1):
            out.append(f"step_cap: expected a whole number >= 1, or None for no cap, got {cap!r}")
        if self.attention_every:
            out.append("attention_every: SGP studies have no attention checks; set it to 0")
        for name in ("sgp_piece_coordinates", "sgp_several_moves"):
            if not isinstance(getattr(self, name), bool):
                out.append(f"{name}: expected true or false, got {getattr(self, name)!r}")
        if self.sgp_piece_coordinates is True and self.sgp_input == "typed":
            out.append("sgp_piece_coordinates: typed studies have no piece buttons to label; leave it false")
        if self.sgp_several_moves is True and self.sgp_input != "typed":
            out.append("sgp_several_moves: only typed commands can hold several moves; use sgp_input typed")
        for name in ("sgp_num_geoms", "sgp_c1"):
            v = getattr(self, name)
            if not isinstance(v, list) or any(not isinstance(x, int) or isinstance(x, bool) or x < 0 for x in v):
                out.append(f"{name}: expected a list of whole numbers, got {v!r}")
        return out

    @property
    def attention_checks(self) -> int:
        """How many attention checks a participant who answers every item meets (after every N-th, not the last)."""
        return (self.items_per_participant - 1) // self.attention_every if self.attention_every else 0

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> StudyConfig:
        d = json.loads(text)
        if "practice_instance_ids" in d:  # studies stored before practice rounds: one round, repeated
            ids = d.pop("practice_instance_ids")
            d.setdefault("practice_rounds", [ids] if ids else [])
        if not {"allow_phones", "min_viewport_width", "min_viewport_height"} & set(d):
            d["allow_phones"] = True  # stored before the device policy: it keeps admitting every window it admitted
        if "attention_kind" not in d:  # stored before picture checks: its checks keep the wording they were run with
            d["attention_kind"] = "worded"
        if "anonymous_counts" not in d:  # stored before the setting: anonymous answers kept filling the targets
            d["anonymous_counts"] = True
        known = {f.name for f in fields(StudyConfig)}
        if isinstance(d.get("sample"), dict):
            d["sample"] = ItemSample(**d["sample"])
        return StudyConfig(**{k: v for k, v in d.items() if k in known})


def sgp_move_help(cfg: StudyConfig) -> str:
    """How to move, in the instructions (Markdown): exactly what the board component does under these settings
    (the board is clickable only with click input; shape names as the modality shows them)."""
    words = allowed_words("2d" if cfg.sgp_modality == "2d" else "3d")
    piece = f"red {words['shapes'][0]}"
    if cfg.sgp_input == "typed":
        listed = (f"The words: **move**, a colour ({', '.join(words['colours'])}), a shape "
                  f"({', '.join(words['shapes'])}) and a direction ({', '.join(words['directions'])}).")
        if cfg.sgp_several_moves:
            return (f"Type a move such as **move {piece} up** and press Enter. You may type several moves at once, "
                    f"separated by commas (**move {piece} up, move {piece} left**): each counts as one move, in "
                    f"order. {listed}")
        return f"Type a move such as **move {piece} up** and press Enter. {listed}"
    if cfg.sgp_input == "keyboard":
        return ("Choose a piece with its button (or the number keys 1, 2, …), then press an **arrow key** to move "
                "it one cell. The free cells it can move to are highlighted on the board.")
    return ("Click a piece on the board (or its button below it), then click one of the **highlighted cells** next "
            "to it, or an **arrow button**, to move it one cell.")


@dataclass
class Study:
    study_id: str
    name: str
    dataset_hash: str
    config: StudyConfig
    created_at: float
    active: bool
    version: int = 1    # raised by every edit (instrument.study_edit); each version's settings in study_versions

    @property
    def run_id(self) -> str:
        """Human responses of a study form one run (solver kind 'human')."""
        return f"study:{self.study_id}"

    def participants_needed(self, pool_size: int) -> int:
        """pool × target ÷ items per participant (at most the pool: nobody answers an instance twice), rounded up:
        how many complete participants fill the study."""
        c = self.config
        return -(-pool_size * c.target_per_instance // max(1, min(c.items_per_participant, pool_size)))


def study_from_row(row: Any) -> Study:
    return Study(row["study_id"], row["name"], row["dataset_hash"], StudyConfig.from_json(row["config"]),
                 row["created_at"], bool(row["active"]), int(row["version"]))


def load_study(conn: Connection, study_id: str) -> Study | None:
    row = studies.study_row(conn, study_id)
    return study_from_row(row) if row else None


def load_studies(conn: Connection) -> list[Study]:
    return [study_from_row(r) for r in studies.study_rows(conn)]
