"""Human studies: configuration, server-side assignment, the participant flow, recording.

Everything a participant does goes through these functions, and every one that
changes shared state runs in one `BEGIN IMMEDIATE` transaction, so two
participants arriving at once never push an instance past its target and a
response is stored exactly once. Gold answers stay here: what the page sends to
the browser is the image, the cell layout and the human instruction.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .dataset import Dataset
from .instances import protocol_string
from .records import MAIN_TEMPLATES, SUBSETS, TEMPLATE_OUTPUT, TEMPLATES, Cell, Instance, Output
from .scenes import rng_for
from .scoring import SCORER_VERSION, Score, ScoreKey, score
from .store import Store, now

Ordering = Literal["random", "counterbalanced"]
Kind = Literal["practice", "main", "attention"]
Stage = Literal["consent", "instructions", "practice", "main", "done"]
EndReason = Literal["completed", "screened_out", "timed_out", "pool_exhausted"]


class StudyError(ValueError):
    """A study configuration or a participant request that cannot be honoured."""


@dataclass
class StudyConfig:
    """What an experimenter sets when creating a study."""

    name: str
    split: Literal["dev", "test", "all"] = "test"
    subsets: list[str] = field(default_factory=lambda: list(SUBSETS))
    templates: list[str] = field(default_factory=lambda: list(MAIN_TEMPLATES))
    items_per_participant: int = 20
    target_per_instance: int = 3
    practice_items: int = 3
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
    practice_instance_ids: list[str] = field(default_factory=list)
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
            if not isinstance(v, int) or v < lo:
                out.append(f"{name}: expected a whole number >= {lo}, got {v!r}")
        if not 0 <= self.practice_pass_fraction <= 1:
            out.append(f"practice_pass_fraction: expected 0..1, got {self.practice_pass_fraction!r}")
        if self.ordering not in ("random", "counterbalanced"):
            out.append(f"ordering: expected random or counterbalanced, got {self.ordering!r}")
        if self.completion_url and not self.completion_url.startswith(("https://", "http://")):
            out.append("completion_url: expected an http(s) URL")
        return out

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> StudyConfig:
        return StudyConfig(**json.loads(text))


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


@dataclass
class Participant:
    participant_id: str
    study_id: str
    external_id: str
    source: str
    counterbalance: int
    consent_at: float | None
    instructions_at: float | None
    practice_attempts: int
    practice_passed: bool | None
    finished_at: float | None
    end_reason: str | None
    started_main_at: float | None


@dataclass
class Item:
    """One thing to show a participant. `gold_key` never leaves the server."""

    kind: Kind
    position: int
    attempt: int
    instance_id: str
    scene_id: str
    template: str              # "ATT" for attention checks
    subset: str
    split: str
    image: str                 # dataset-relative PNG path
    output: Output
    instruction: str
    gold_key: ScoreKey
    main_index: int            # how many main items were answered before this one


# --------------------------------------------------------------------------- studies

def main_pool(ds: Dataset, cfg: StudyConfig) -> list[Instance]:
    """The instances a study may assign as main items (practice scenes excluded)."""
    excluded = set(cfg.practice_scene_ids)
    return [i for i in ds.select(None if cfg.split == "all" else cfg.split, cfg.subsets, cfg.templates)
            if i.scene_id not in excluded]


def _choose_practice(ds: Dataset, cfg: StudyConfig) -> None:
    """Practice items come from scenes outside the main pool, one template after another."""
    if cfg.practice_items == 0:
        return
    rng = rng_for(cfg.seed, "practice")
    pool_scenes = {i.scene_id for i in main_pool(ds, cfg)}
    outside = [i for i in ds.instances.values() if i.template in cfg.templates and i.subset in cfg.subsets
               and i.scene_id not in pool_scenes]
    if len(outside) < cfg.practice_items:
        # Every scene is in the pool (split "all"): keep a few scenes out of it for practice.
        scenes = sorted(pool_scenes)
        cfg.practice_scene_ids = sorted(rng.sample(scenes, min(len(scenes), cfg.practice_items)))
        keep = set(cfg.practice_scene_ids)
        outside = [i for i in ds.instances.values() if i.scene_id in keep and i.template in cfg.templates]
    by_template: dict[str, list[Instance]] = {}
    for i in sorted(outside, key=lambda i: i.instance_id):
        by_template.setdefault(i.template, []).append(i)
    chosen: list[str] = []
    used_scenes: set[str] = set()
    templates = [t for t in cfg.templates if t in by_template]
    while len(chosen) < cfg.practice_items and templates:
        for t in list(templates):
            cands = [i for i in by_template[t] if i.scene_id not in used_scenes]
            if not cands:
                templates.remove(t)
                continue
            pick = rng.choice(cands)
            chosen.append(pick.instance_id)
            used_scenes.add(pick.scene_id)
            if len(chosen) == cfg.practice_items:
                break
    cfg.practice_instance_ids = chosen


def create_study(store: Store, ds: Dataset, cfg: StudyConfig) -> Study:
    problems = cfg.problems()
    if problems:
        raise StudyError("; ".join(problems))
    cfg.practice_instance_ids, cfg.practice_scene_ids = [], []
    _choose_practice(ds, cfg)
    if not main_pool(ds, cfg):
        raise StudyError("the chosen split, subsets and templates select no instance")
    study = Study(f"s{secrets.token_hex(4)}", cfg.name.strip(), ds.dataset_hash, cfg, now(), True)
    with store.write() as c:
        c.execute("INSERT INTO studies(study_id, name, dataset_hash, config, created_at, active) VALUES (?,?,?,?,?,1)",
                  (study.study_id, study.name, study.dataset_hash, cfg.to_json(), study.created_at))
        c.execute("INSERT INTO runs(run_id, solver_kind, solver_name, study_id, format, dataset_hash, imported_at) "
                  "VALUES (?, 'human', ?, ?, 'participant-app', ?, ?)",
                  (study.run_id, f"Human ({study.name})", study.study_id, ds.dataset_hash, study.created_at))
    return study


def _study_from_row(row: Any) -> Study:
    return Study(row["study_id"], row["name"], row["dataset_hash"], StudyConfig.from_json(row["config"]),
                 row["created_at"], bool(row["active"]))


def get_study(store: Store, study_id: str) -> Study | None:
    rows = store.query("SELECT * FROM studies WHERE study_id = ?", (study_id,))
    return _study_from_row(rows[0]) if rows else None


def list_studies(store: Store) -> list[Study]:
    return [_study_from_row(r) for r in store.query("SELECT * FROM studies ORDER BY created_at DESC")]


def set_active(store: Store, study_id: str, active: bool) -> None:
    with store.write() as c:
        c.execute("UPDATE studies SET active = ? WHERE study_id = ?", (int(active), study_id))


# --------------------------------------------------------------------------- participants

def _participant(row: Any) -> Participant:
    return Participant(row["participant_id"], row["study_id"], row["external_id"], row["source"],
                       row["counterbalance"], row["consent_at"], row["instructions_at"], row["practice_attempts"],
                       None if row["practice_passed"] is None else bool(row["practice_passed"]),
                       row["finished_at"], row["end_reason"], row["started_main_at"])


def join(store: Store, study: Study, external_id: str, source: str,
         prolific_study_id: str | None = None, prolific_session_id: str | None = None) -> Participant:
    """The participant for (study, external id), created on the first request and stored at once."""
    external_id = external_id.strip()
    if not external_id or len(external_id) > 128:
        raise StudyError("participant id: expected 1-128 characters")
    t = now()
    with store.write() as c:
        row = c.execute("SELECT * FROM participants WHERE study_id = ? AND external_id = ?",
                        (study.study_id, external_id)).fetchone()
        if row is None:
            (n,) = c.execute("SELECT count(*) FROM participants WHERE study_id = ?", (study.study_id,)).fetchone()
            pid = f"p{secrets.token_hex(6)}"
            c.execute("INSERT INTO participants(participant_id, study_id, external_id, source, prolific_study_id, "
                      "prolific_session_id, counterbalance, created_at, last_seen_at) VALUES (?,?,?,?,?,?,?,?,?)",
                      (pid, study.study_id, external_id, source, prolific_study_id, prolific_session_id, n, t, t))
            row = c.execute("SELECT * FROM participants WHERE participant_id = ?", (pid,)).fetchone()
        else:
            c.execute("UPDATE participants SET last_seen_at = ? WHERE participant_id = ?", (t, row["participant_id"]))
    return _participant(row)


def get_participant(store: Store, participant_id: str) -> Participant:
    return _participant(store.query("SELECT * FROM participants WHERE participant_id = ?", (participant_id,))[0])


def give_consent(store: Store, p: Participant) -> None:
    with store.write() as c:
        c.execute("UPDATE participants SET consent_at = coalesce(consent_at, ?), last_seen_at = ? "
                  "WHERE participant_id = ?", (now(), now(), p.participant_id))


def finish_instructions(store: Store, p: Participant) -> None:
    with store.write() as c:
        c.execute("UPDATE participants SET instructions_at = coalesce(instructions_at, ?), last_seen_at = ? "
                  "WHERE participant_id = ?", (now(), now(), p.participant_id))


def _finish(c: sqlite3.Connection, participant_id: str, reason: EndReason) -> None:
    c.execute("UPDATE participants SET finished_at = coalesce(finished_at, ?), end_reason = coalesce(end_reason, ?) "
              "WHERE participant_id = ?", (now(), reason, participant_id))


def stage(store: Store, study: Study, p: Participant) -> Stage:
    """Where the participant is, from the database alone (so reloads and restarts resume)."""
    cfg = study.config
    if p.finished_at is not None:
        return "done"
    if p.consent_at is None:
        return "consent"
    if cfg.time_limit_minutes and now() - p.consent_at > 60 * cfg.time_limit_minutes:
        with store.write() as c:
            _finish(c, p.participant_id, "timed_out")
        return "done"
    if p.instructions_at is None:
        return "instructions"
    if cfg.practice_instance_ids and not p.practice_passed:
        return "practice"
    return "main"


# --------------------------------------------------------------------------- items

def _tiebreak(*parts: str) -> str:
    return hashlib.sha1(":".join(parts).encode()).hexdigest()


def attention_check(ds: Dataset, scene_id: str, seed: str) -> tuple[str, str, ScoreKey, str]:
    """An instructed-response item on a real image: click one named cell, whatever it shows."""
    scene = ds.scenes[scene_id]
    rng = rng_for(0, "attention", seed)
    r, c = rng.randint(1, scene.rows), rng.randint(1, scene.cols)
    iid = f"ATT:{scene_id}:{seed}"
    key = ScoreKey(instance_id=iid, template="ATT", output="click", rows=scene.rows, cols=scene.cols,
                   gold_count=1, gold_cells=frozenset({(r, c)}), global_count=1, outside_targets=frozenset(),
                   terminal="DONE")
    text = (f"Attention check: click only the cell in row R{r}, column C{c} (whatever it shows), "
            "then press DONE.")
    return iid, scene.images["base"], key, text


def _item(ds: Dataset, kind: Kind, position: int, attempt: int, instance_id: str, main_index: int) -> Item:
    if kind == "attention":
        _, scene_id, seed = instance_id.split(":")
        _, image, key, text = attention_check(ds, scene_id, seed)
        scene = ds.scenes[scene_id]
        return Item(kind, position, attempt, instance_id, scene_id, "ATT", scene.subset, scene.split, image,
                    "click", text, key, main_index)
    inst = ds.instances[instance_id]
    return Item(kind, position, attempt, instance_id, inst.scene_id, inst.template, inst.subset, inst.split,
                inst.image, TEMPLATE_OUTPUT[inst.template], inst.instruction, ds.key(instance_id), main_index)


def _release_stale(c: sqlite3.Connection, study: Study, except_participant: str) -> None:
    cutoff = now() - 60 * study.config.release_after_minutes
    c.execute(
        "UPDATE assignments SET released_at = ? WHERE kind = 'main' AND answered_at IS NULL AND released_at IS NULL "
        "AND participant_id IN (SELECT participant_id FROM participants WHERE study_id = ? AND last_seen_at < ? "
        "AND participant_id != ?)", (now(), study.study_id, cutoff, except_participant))


def _pick_main(c: sqlite3.Connection, ds: Dataset, study: Study, p: Participant, position: int) -> Instance | None:
    """Least-annotated eligible instance; counterbalanced by template and subset across participants."""
    cfg = study.config
    counts = dict(c.execute(
        "SELECT a.instance_id, count(*) FROM assignments a JOIN participants q USING (participant_id) "
        "WHERE q.study_id = ? AND a.kind = 'main' AND a.released_at IS NULL GROUP BY a.instance_id",
        (study.study_id,)).fetchall())
    seen = c.execute("SELECT instance_id, scene_id FROM assignments WHERE participant_id = ? AND kind = 'main'",
                     (p.participant_id,)).fetchall()
    seen_ids = {r[0] for r in seen}
    seen_scenes = {r[1] for r in seen}
    eligible = [i for i in main_pool(ds, cfg)
                if counts.get(i.instance_id, 0) < cfg.target_per_instance and i.instance_id not in seen_ids
                and (cfg.same_scene_multiple_templates or i.scene_id not in seen_scenes)]
    if not eligible:
        return None

    def best(cands: list[Instance]) -> Instance:
        return min(cands, key=lambda i: (counts.get(i.instance_id, 0), _tiebreak(p.participant_id, i.instance_id)))

    if cfg.ordering == "counterbalanced":
        templates = [t for t in cfg.templates]
        subsets = [s for s in cfg.subsets]
        want_t = templates[(p.counterbalance + position) % len(templates)]
        want_s = subsets[(p.counterbalance + position // len(templates)) % len(subsets)]
        for pred in (lambda i: i.template == want_t and i.subset == want_s, lambda i: i.template == want_t):
            cands = [i for i in eligible if pred(i)]
            if cands:
                return best(cands)
    return best(eligible)


def current_item(store: Store, ds: Dataset, study: Study, p: Participant) -> Item | None:
    """The item to show now; assigns one (server-side) when none is held. None when the phase is over."""
    cfg = study.config
    st = stage(store, study, p)
    with store.write() as c:
        c.execute("UPDATE participants SET last_seen_at = ? WHERE participant_id = ?", (now(), p.participant_id))
        if st == "practice":
            attempt = p.practice_attempts
            rows = c.execute("SELECT position, instance_id FROM assignments WHERE participant_id = ? AND "
                             "kind = 'practice' AND attempt = ? AND answered_at IS NULL ORDER BY position",
                             (p.participant_id, attempt)).fetchall()
            answered = c.execute("SELECT count(*) FROM assignments WHERE participant_id = ? AND kind = 'practice' "
                                 "AND attempt = ? AND answered_at IS NOT NULL",
                                 (p.participant_id, attempt)).fetchone()[0]
            if not rows and answered == 0:
                for pos, iid in enumerate(cfg.practice_instance_ids):
                    c.execute("INSERT INTO assignments(participant_id, kind, position, attempt, instance_id, scene_id, "
                              "assigned_at) VALUES (?, 'practice', ?, ?, ?, ?, ?)",
                              (p.participant_id, pos, attempt, iid, ds.instances[iid].scene_id, now()))
                rows = [(pos, iid) for pos, iid in enumerate(cfg.practice_instance_ids)]
            if not rows:
                return None
            return _item(ds, "practice", rows[0][0], attempt, rows[0][1], 0)
        if st != "main":
            return None
        if p.started_main_at is None:
            c.execute("UPDATE participants SET started_main_at = coalesce(started_main_at, ?) WHERE participant_id = ?",
                      (now(), p.participant_id))
        _release_stale(c, study, p.participant_id)
        held = c.execute("SELECT kind, position, instance_id FROM assignments WHERE participant_id = ? AND "
                         "kind IN ('main', 'attention') AND answered_at IS NULL AND released_at IS NULL "
                         "ORDER BY assigned_at LIMIT 1", (p.participant_id,)).fetchone()
        answered_main = c.execute("SELECT count(*) FROM assignments WHERE participant_id = ? AND kind = 'main' "
                                  "AND answered_at IS NOT NULL", (p.participant_id,)).fetchone()[0]
        if held is not None:
            return _item(ds, held["kind"], held["position"], 0, held["instance_id"], answered_main)
        if answered_main >= cfg.items_per_participant:
            _finish(c, p.participant_id, "completed")
            return None
        slot = answered_main // cfg.attention_every if cfg.attention_every else 0
        if cfg.attention_every and answered_main and answered_main % cfg.attention_every == 0:
            done = c.execute("SELECT 1 FROM assignments WHERE participant_id = ? AND kind = 'attention' AND "
                             "position = ?", (p.participant_id, slot)).fetchone()
            if done is None:
                pool = main_pool(ds, cfg)
                scene_id = pool[int(_tiebreak(p.participant_id, str(slot)), 16) % len(pool)].scene_id
                iid = f"ATT:{scene_id}:{p.participant_id}-{slot}"
                c.execute("INSERT INTO assignments(participant_id, kind, position, instance_id, scene_id, assigned_at) "
                          "VALUES (?, 'attention', ?, ?, ?, ?)", (p.participant_id, slot, iid, scene_id, now()))
                return _item(ds, "attention", slot, 0, iid, answered_main)
        pos = c.execute("SELECT count(*) FROM assignments WHERE participant_id = ? AND kind = 'main'",
                        (p.participant_id,)).fetchone()[0]
        inst = _pick_main(c, ds, study, p, answered_main)
        if inst is None:
            _finish(c, p.participant_id, "completed" if answered_main else "pool_exhausted")
            return None
        c.execute("INSERT INTO assignments(participant_id, kind, position, instance_id, scene_id, assigned_at) "
                  "VALUES (?, 'main', ?, ?, ?, ?)", (p.participant_id, pos, inst.instance_id, inst.scene_id, now()))
        return _item(ds, "main", pos, 0, inst.instance_id, answered_main)


# --------------------------------------------------------------------------- recording

@dataclass
class Submission:
    """What the click grid sends when the participant presses DONE / SUBMIT."""

    view_id: str
    selected: list[Cell]           # in the order they were (last) selected
    count: int | None              # the number field (COUNT and SUBMIT items)
    events: list[dict]             # cumulative event log of this view
    first_action_ms: float | None
    total_ms: float | None
    viewport: tuple[int, int] | None
    device_pixel_ratio: float | None
    focus_lost: bool

    @staticmethod
    def from_client(payload: dict) -> Submission:
        """Validate what the browser sent; anything malformed raises StudyError (never stored half)."""
        try:
            sel = [(int(r), int(c)) for r, c in payload.get("selected") or []]
            cnt = payload.get("count")
            cnt = None if cnt in (None, "") else int(cnt)
            vp = payload.get("viewport")
            return Submission(
                view_id=str(payload["view_id"])[:64], selected=sel, count=cnt,
                events=list(payload.get("events") or [])[:5000],
                first_action_ms=_num(payload.get("first_action_ms")), total_ms=_num(payload.get("total_ms")),
                viewport=(int(vp[0]), int(vp[1])) if vp else None,
                device_pixel_ratio=_num(payload.get("dpr")), focus_lost=bool(payload.get("focus_lost")))
        except (KeyError, TypeError, ValueError) as e:
            raise StudyError(f"malformed submission from the browser: {e}") from e

    def protocol(self, output: Output) -> str:
        """The same protocol string a model would write for this answer."""
        if output == "count":
            return "" if self.count is None else protocol_string("count", self.count, None)
        if output == "click_submit" and self.count is None:
            return protocol_string("click", None, self.selected).removesuffix("DONE").strip()
        return protocol_string(output, self.count, self.selected)


def _num(v: Any) -> float | None:
    return None if v is None else float(v)


def _event_rows(p: Participant, instance_id: str, view_id: str, events: list[dict], t: float) -> list[tuple]:
    rows = []
    for seq, e in enumerate(events):
        if not isinstance(e, dict):
            continue
        rows.append((p.participant_id, instance_id, view_id, seq, str(e.get("type", "?"))[:16],
                     _int_or_none(e.get("r")), _int_or_none(e.get("c")),
                     None if e.get("value") is None else str(e.get("value"))[:64], _num_or_none(e.get("t")), t))
    return rows


def _int_or_none(v: Any) -> int | None:
    try:
        return None if v is None else int(v)
    except (TypeError, ValueError):
        return None


def _num_or_none(v: Any) -> float | None:
    try:
        return None if v is None else float(v)
    except (TypeError, ValueError):
        return None


_EVENT_SQL = ("INSERT OR IGNORE INTO events(participant_id, instance_id, view_id, seq, type, row, col, value, "
              "client_ts, server_ts) VALUES (?,?,?,?,?,?,?,?,?,?)")


def log_events(store: Store, p: Participant, item: Item, view_id: str, events: list[dict]) -> int:
    """Store the new events of a view (the browser sends its cumulative log; repeats are ignored)."""
    t = now()
    rows = _event_rows(p, item.instance_id, str(view_id)[:64], events[:5000], t)
    with store.write() as c:
        c.executemany(_EVENT_SQL, rows)
        c.execute("UPDATE participants SET last_seen_at = ? WHERE participant_id = ?", (t, p.participant_id))
    return len(rows)


@dataclass
class Recorded:
    score: Score
    protocol: str
    duplicate: bool            # the item had already been answered: nothing new was stored


def record_response(store: Store, study: Study, p: Participant, item: Item, sub: Submission) -> Recorded:
    """Score the answer with the benchmark's scorer and store it with its events, in one transaction."""
    proto = sub.protocol(item.output)
    s = score(item.gold_key, proto)
    t = now()
    with store.write() as c:
        row = c.execute("SELECT answered_at FROM assignments WHERE participant_id = ? AND kind = ? AND attempt = ? "
                        "AND position = ?", (p.participant_id, item.kind, item.attempt, item.position)).fetchone()
        if row is None or row["answered_at"] is not None:
            return Recorded(s, proto, duplicate=True)
        c.execute(
            "INSERT INTO responses(run_id, participant_id, instance_id, kind, attempt, template, subset, split, "
            "scene_id, response, protocol, parsed, valid, passed, failure, errors, first_action_ms, total_ms, "
            "viewport_w, viewport_h, device_pixel_ratio, focus_lost, view_id, submitted_at, scorer_version) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (study.run_id, p.participant_id, item.instance_id, item.kind, item.attempt, item.template, item.subset,
             item.split, item.scene_id, proto, s.parsed.canonical, json.dumps(s.parsed.to_json()), int(s.valid), int(s.passed),
             s.failure, json.dumps(list(s.errors)), sub.first_action_ms, sub.total_ms,
             sub.viewport[0] if sub.viewport else None, sub.viewport[1] if sub.viewport else None,
             sub.device_pixel_ratio, int(sub.focus_lost), sub.view_id, t, SCORER_VERSION))
        c.execute("UPDATE assignments SET answered_at = ? WHERE participant_id = ? AND kind = ? AND attempt = ? "
                  "AND position = ?", (t, p.participant_id, item.kind, item.attempt, item.position))
        c.executemany(_EVENT_SQL, _event_rows(p, item.instance_id, sub.view_id, sub.events, t))
        c.execute("UPDATE participants SET last_seen_at = ? WHERE participant_id = ?", (t, p.participant_id))
        if item.kind == "practice":
            _close_practice_if_done(c, study, p)
    return Recorded(s, proto, duplicate=False)


def _close_practice_if_done(c: sqlite3.Connection, study: Study, p: Participant) -> None:
    cfg = study.config
    rows = c.execute("SELECT r.passed FROM responses r WHERE r.participant_id = ? AND r.kind = 'practice' "
                     "AND r.attempt = ?", (p.participant_id, p.practice_attempts)).fetchall()
    if len(rows) < len(cfg.practice_instance_ids):
        return
    share = sum(r[0] for r in rows) / len(rows)
    if share >= cfg.practice_pass_fraction:
        c.execute("UPDATE participants SET practice_passed = 1 WHERE participant_id = ?", (p.participant_id,))
    elif p.practice_attempts + 1 >= cfg.practice_max_attempts:
        c.execute("UPDATE participants SET practice_passed = 0, practice_attempts = practice_attempts + 1 "
                  "WHERE participant_id = ?", (p.participant_id,))
        _finish(c, p.participant_id, "screened_out")
    else:
        c.execute("UPDATE participants SET practice_attempts = practice_attempts + 1 WHERE participant_id = ?",
                  (p.participant_id,))
