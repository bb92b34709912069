"""A study's configuration and record: what an experimenter sets, checked before anything is stored."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Literal

from ..benchmarks.rose.records import MAIN_TEMPLATES, SUBSETS, TEMPLATES

Ordering = Literal["random", "counterbalanced"]
Kind = Literal["practice", "main", "attention"]
EndReason = Literal["completed", "screened_out", "timed_out", "pool_exhausted"]


class StudyError(ValueError):
    """A study configuration or a participant request that cannot be honoured."""


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
    time_limit_minutes: int = 0        # 0 = no limit
    release_after_minutes: int = 30    # a participant silent this long loses their held item
    practice_rounds: list[list[str]] = field(default_factory=list)
    practice_scene_ids: list[str] = field(default_factory=list)  # scenes kept out of the main pool

    def problems(self) -> list[str]:
        out = []
        if not self.name.strip():
            out.append("name: must not be empty")
        if self.split not in ("dev", "test", "all"):
            out.append(f"split: expected dev, test or all, got {self.split!r}")
        bad = [s for s in self.subsets if s not in SUBSETS]
        if not self.subsets or bad:
            out.append(f"subsets: choose at least one of {', '.join(SUBSETS)}" + (f" (unknown: {bad})" if bad else ""))
        bad = [t for t in self.templates if t not in TEMPLATES]
        if not self.templates or bad:
            out.append(f"templates: choose at least one of {', '.join(TEMPLATES)}" + (f" (unknown: {bad})" if bad else ""))
        for name, lo in (("items_per_participant", 1), ("target_per_instance", 1), ("practice_items", 0),
                         ("practice_max_attempts", 1), ("attention_every", 0), ("time_limit_minutes", 0),
                         ("release_after_minutes", 1)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                out.append(f"{name}: expected a whole number >= {lo}, got {v!r}")
        if not 0 <= self.practice_pass_fraction <= 1:
            out.append(f"practice_pass_fraction: expected 0..1, got {self.practice_pass_fraction!r}")
        if self.ordering not in ("random", "counterbalanced"):
            out.append(f"ordering: expected random or counterbalanced, got {self.ordering!r}")
        if self.completion_url and not self.completion_url.startswith(("https://", "http://")):
            out.append("completion_url: expected an http(s) URL")
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
        known = {f.name for f in fields(StudyConfig)}
        return StudyConfig(**{k: v for k, v in d.items() if k in known})


@dataclass
class Study:
    study_id: str
    name: str
    dataset_hash: str
    config: StudyConfig
    created_at: float
    active: bool

    @property
    def run_id(self) -> str:
        """Human responses of a study form one run (solver kind 'human')."""
        return f"study:{self.study_id}"

    def participants_needed(self, pool_size: int) -> int:
        """pool × target ÷ items per participant, rounded up: how many complete participants fill the study."""
        c = self.config
        return -(-pool_size * c.target_per_instance // c.items_per_participant)
