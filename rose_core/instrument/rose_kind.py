"""ROSE's one-shot items as a kind of item in the one participant session (beside SGP's `episode_kind`): which
instances rank first, an item's screen (`ItemScreen`: the picture with its click grid, restored after a reload), a
practice item's feedback, the page texts. The session asks; this module answers (`item_kind.ItemKind`)."""
from __future__ import annotations

import json
from typing import Any, Iterator

from ..benchmarks.rose.dataset import Dataset
from ..storage import participants
from ..storage.events import view_events
from . import results
from .completion import study_secret
from .config import StudyConfig
from .grid_input import GridEvent, restore
from .ids import view_id_for
from .item_kind import ItemUnavailable
from .items import is_picture_check, item_for, picture_key
from .policy import default_tiebreak, main_pool, progress_text, rank_main
from .screens import FeedbackLine, ItemScreen, PracticeFeedback, RoundOutcome
from .texts import page_text


class RoseKind:
    """ROSE's one-shot items: a picture with a click grid and/or a number, answered once (`submit`)."""

    benchmark = "rose"

    def __init__(self, ds: Dataset):
        self.ds = ds

    def text(self, cfg: StudyConfig, key: str) -> str:
        return page_text(cfg, key)

    def templates(self, cfg: StudyConfig) -> tuple[str, ...]:
        return tuple(cfg.templates)

    def scene_of(self, instance_id: str) -> str:
        return self.ds.instances[instance_id].scene_id

    def practice_label(self, position: int, of: int) -> str:
        return f"Practice {position + 1} of {of}"

    def progress(self, cfg: StudyConfig, answered_main: int, answered_attention: int) -> str:
        return progress_text(cfg, answered_main, answered_attention)

    def rank(self, s: Any, counts: dict[str, int], mains: list[participants.Assignment],
             counterbalance: int, answered: int) -> Iterator[str]:
        seen = {a.instance_id for a in mains}, {a.scene_id for a in mains}
        return (i.instance_id for i in rank_main(main_pool(self.ds, s.cfg), s.cfg, counts, *seen, counterbalance,
                                                 answered, default_tiebreak(s.participant_id)))

    def item_screen(self, s: Any, c: Any, a: participants.Assignment, progress: str,
                    fraction: float) -> ItemScreen:
        item = item_for(self.ds, a.kind, a.instance_id, s.cfg.attention_kind)
        problem = self.ds.image_problem(item.image)
        if problem is not None:
            raise ItemUnavailable(a, f"{self.ds.root / item.image}: {problem}")
        view = view_id_for(a.participant_id, a.kind, a.attempt, a.position)
        restored = restore([GridEvent(*e) for e in view_events(c, a.participant_id, view)])
        drawing = picture_key(study_secret(c, s.study.study_id), a.participant_id, a.position) \
            if is_picture_check(item) else None
        return ItemScreen(view, a.kind, item, progress, fraction, restored.next_seq, restored, drawing)

    def feedback(self, s: Any, c: Any, p: participants.Participant, a: participants.Assignment,
                 outcome: RoundOutcome, of: int) -> PracticeFeedback:
        item = item_for(self.ds, a.kind, a.instance_id)
        row = results.result_of(c, s.study.run_id, p.participant_id, a.instance_id, "practice", a.attempt, False)
        parsed = json.loads(row["parsed"]) if row else {"clicks": [], "count": None}
        clicked = [tuple(x) for x in parsed.get("clicks") or []]
        gold = item.gold_cells()
        lines = [FeedbackLine(g, True, g in clicked) for g in gold]
        if item.mode != "count":
            lines += [FeedbackLine(x, False, True) for x in clicked if x not in gold]
        return PracticeFeedback(
            view_id_for(p.participant_id, a.kind, a.attempt, a.position), item, item.instruction,
            bool(row and row["passed"]), clicked if item.mode != "count" else [], parsed.get("count"), gold,
            None if item.mode == "click" else item.key.gold_count, lines, outcome, a.position + 1, of)
