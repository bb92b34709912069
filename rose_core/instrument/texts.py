"""The participant's words are the experimenter's: the study's texts, the facts they must state, the end
questionnaire and the worked examples of the instructions.

A study carries Markdown for its consent, instructions, end, screen-out and (optional) debrief pages
(`StudyConfig.texts`) and the facts an ethics board asks for (`StudyConfig.info`). Texts name the facts as
fields, `{researcher}`, filled in when shown, so each fact is written once. The shipped defaults are a template
whose facts are markers such as `[[RESEARCHER]]`: a study keeps them only as a draft, and cannot be opened to
participants while a marker is left or a required fact is empty (`opening_problems`). The exact Markdown shown
(fields filled in) is stored per study and text version (`rose_core.storage.study_texts`) and goes into the paper
bundle.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from ..storage import questionnaire as q_store
from ..storage import study_texts
from ..storage.connection import Connection, Store

# `cfg` below is a `config.StudyConfig` (config imports this module, so it is not imported here).
StudyConfig = Any

TextKey = Literal["consent", "instructions", "end", "screen_out", "debrief"]
TEXT_KEYS: tuple[str, ...] = TextKey.__args__  # type: ignore[attr-defined]
OPTIONAL_TEXTS = ("debrief",)          # "" = not shown
MAX_TEXT_CHARS = 20_000

# The facts a participant must be told before agreeing (what an ethics board checks), and their template marker.
INFO_FIELDS: dict[str, str] = {
    "researcher": "who runs the study (name)",
    "contact": "how to reach them (e-mail)",
    "institution": "the institution responsible",
    "ethics_reference": "the ethics approval (board and reference number)",
    "payment": "what participants are paid, and for what",
    "expected_duration": "how long the study takes",
    "data_retention": "what data is kept, where, and for how long",
    "withdrawal": "how to withdraw, and until when",
}
MAX_INFO_CHARS = 1_000


def marker(name: str) -> str:
    return f"[[{name.upper()}]]"


MARKER = re.compile(r"\[\[[^\[\]\n]{1,80}\]\]")
FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Fields filled from the study's own settings, beside the info facts.
SETTING_FIELDS = ("items_per_participant", "time_limit")

DEFAULT_TEXTS: dict[str, str] = {
    "consent": """\
You are invited to take part in a research study run by **{researcher}** ({institution}). It looks at how people \
find the odd cells in a grid of pictures: each screen shows a grid, and you count or click the cells that look \
different from the rest.

- **What you do:** a short practice with feedback, then {items_per_participant} screens ({time_limit}). \
It takes about **{expected_duration}**.
- **Payment:** {payment}
- **What is recorded:** your answers, your clicks and their timing, your screen size and the participant id you \
arrived with; no name or e-mail. {data_retention}
- **Taking part is voluntary.** {withdrawal}
- **Ethics approval:** {ethics_reference}
- **Questions:** {researcher}, {contact}
""",
    "instructions": """\
Each picture is a grid. Rows are numbered **R1, R2, …** from the top and columns **C1, C2, …** from the left. \
Almost every cell shows the same item; **a few cells show a slightly different item: these are the odd cells**. \
Which item is the odd one is never said: you decide from what most cells show.

Read the instruction above each picture. Click a cell again to unselect it; **Undo** and **Clear** help; the \
keyboard works too (arrow keys move, Enter or Space selects).
""",
    "end": """\
Thank you for taking part. If you have a question, or want your answers withdrawn, contact {researcher} at \
{contact}. {withdrawal}
""",
    "screen_out": """\
Thank you for your time. Your practice answers did not reach what this study needs, so it ends here: this says \
nothing about you, the task is simply hard to learn in a few screens. If you came from a recruitment platform \
such as Prolific: when a screen-out code is shown below, enter it there; otherwise please **return your \
submission** rather than submitting it. Questions: {researcher}, {contact}.
""",
    "debrief": """\
**About this study.** The pictures you saw come from ROSE, a benchmark that tests whether AI models can find \
what is odd in a grid. Your answers are compared with the answers of AI models on the very same pictures, to see \
where people and models differ.
""",
}


def default_texts() -> dict[str, str]:
    return dict(DEFAULT_TEXTS)


def default_info() -> dict[str, str]:
    """The template: every fact a marker, so a study left with them cannot open."""
    return {k: marker(k) for k in INFO_FIELDS}


# --------------------------------------------------------------------------- the end questionnaire

@dataclass(frozen=True)
class Question:
    key: str
    label: str
    choices: tuple[tuple[str, str], ...] = ()   # (stored code, label); empty: free text
    max_chars: int = 0


NO_ANSWER = "prefer_not_to_say"
QUESTIONS: dict[str, Question] = {q.key: q for q in (
    Question("age_band", "Your age", (("18-24", "18–24"), ("25-34", "25–34"), ("35-44", "35–44"),
                                      ("45-54", "45–54"), ("55-64", "55–64"), ("65+", "65 or over"),
                                      (NO_ANSWER, "Prefer not to say"))),
    Question("vision", "Your eyesight while doing the study", (
        ("normal", "Normal"), ("corrected", "Corrected to normal (glasses or contact lenses)"),
        ("other", "Neither / not sure"), (NO_ANSWER, "Prefer not to say"))),
    Question("colour_vision", "Do you have a colour-vision deficiency (colour blindness)?", (
        ("no", "No"), ("yes", "Yes"), ("not_sure", "Not sure"), (NO_ANSWER, "Prefer not to say"))),
    Question("device", "What did you use?", (
        ("desktop", "Desktop computer"), ("laptop", "Laptop"), ("tablet", "Tablet"), ("phone", "Phone"),
        ("other", "Something else"), (NO_ANSWER, "Prefer not to say"))),
    Question("strategy", "How did you find the odd cells? (optional, a sentence or two)", max_chars=1_000),
)}


def questionnaire_problems(questions: Any) -> list[str]:
    if not isinstance(questions, list) or any(not isinstance(x, str) for x in questions):
        return [f"questionnaire: expected a list of question names, got {questions!r}"]
    bad = [x for x in questions if x not in QUESTIONS]
    out = [f"questionnaire: unknown question(s) {bad}; choose from {', '.join(QUESTIONS)}"] if bad else []
    if len(set(questions)) != len(questions):
        out.append("questionnaire: a question is listed twice")
    return out


def validate_answers(asked: list[str], answers: Any) -> dict[str, str | None]:
    """The answers a browser sent, checked against the study's questions: a choice must be one of its codes, free
    text is trimmed and capped. Missing or empty answers are None (every question is optional). Anything else is
    refused naming the question (ValueError)."""
    if not isinstance(answers, dict):
        raise ValueError("questionnaire: expected a mapping of question to answer")
    extra = sorted(set(answers) - set(asked))
    if extra:
        raise ValueError(f"questionnaire: {extra} not asked in this study")
    out: dict[str, str | None] = {}
    for key in asked:
        q, v = QUESTIONS[key], answers.get(key)
        if v is None or v == "":
            out[key] = None
            continue
        if not isinstance(v, str):
            raise ValueError(f"questionnaire.{key}: expected text, got {type(v).__name__}")
        if q.choices:
            if v not in dict(q.choices):
                raise ValueError(f"questionnaire.{key}: {v!r} is not one of {', '.join(c for c, _ in q.choices)}")
            out[key] = v
        else:
            v = v.strip()
            if len(v) > q.max_chars:
                raise ValueError(f"questionnaire.{key}: at most {q.max_chars} characters, got {len(v)}")
            out[key] = v or None
    return out


# --------------------------------------------------------------------------- checks

def structure_problems(cfg: StudyConfig) -> list[str]:
    """What no study may be created with: unknown text keys or facts, wrong types, fields no text can fill, an
    unknown question (one message each, naming the key)."""
    out: list[str] = []
    texts, info = cfg.texts, cfg.info
    if not isinstance(texts, dict) or any(not isinstance(v, str) for v in texts.values()):
        out.append("texts: expected a table of Markdown strings")
        texts = {}
    if not isinstance(info, dict) or any(not isinstance(v, str) for v in info.values()):
        out.append("info: expected a table of strings")
        info = {}
    for k in texts:
        if k not in TEXT_KEYS:
            out.append(f"texts.{k}: unknown text; expected one of {', '.join(TEXT_KEYS)}")
        elif len(texts[k]) > MAX_TEXT_CHARS:
            out.append(f"texts.{k}: at most {MAX_TEXT_CHARS:,} characters, got {len(texts[k]):,}")
    for k in info:
        if k not in INFO_FIELDS:
            out.append(f"info.{k}: unknown field; expected one of {', '.join(INFO_FIELDS)}")
        elif len(info[k]) > MAX_INFO_CHARS:
            out.append(f"info.{k}: at most {MAX_INFO_CHARS:,} characters, got {len(info[k]):,}")
    known = set(INFO_FIELDS) | set(SETTING_FIELDS)
    for k, text in texts.items():
        unknown = sorted({m for m in FIELD.findall(text) if m not in known})
        if unknown:
            out.append(f"texts.{k}: unknown field(s) {', '.join('{' + u + '}' for u in unknown)}; fields: "
                       f"{', '.join('{' + f + '}' for f in known)}")
    return out + questionnaire_problems(cfg.questionnaire)


def opening_problems(cfg: StudyConfig) -> list[str]:
    """Why the study cannot open to participants yet: each required fact empty or still a marker, each marker
    left in a text, each required text empty. Empty: it may open."""
    out: list[str] = []
    texts, info = full_texts(cfg), cfg.info if isinstance(cfg.info, dict) else {}
    for k in INFO_FIELDS:
        v = info.get(k)
        if not isinstance(v, str) or not v.strip():
            out.append(f"info.{k}: required ({INFO_FIELDS[k]}), empty")
        elif MARKER.search(v):
            out.append(f"info.{k}: still the template marker {', '.join(MARKER.findall(v))}")
    for k in TEXT_KEYS:
        text = texts.get(k, "")
        if not text.strip() and k not in OPTIONAL_TEXTS:
            out.append(f"texts.{k}: required, empty")
        for m in dict.fromkeys(MARKER.findall(text)):
            out.append(f"texts.{k}: marker {m} left")
    return out


def full_texts(cfg: StudyConfig) -> dict[str, str]:
    """The study's texts, a default for each key it does not set."""
    own = cfg.texts if isinstance(cfg.texts, dict) else {}
    return {k: own.get(k, DEFAULT_TEXTS[k]) for k in TEXT_KEYS}


def _settings(cfg: StudyConfig) -> dict[str, str]:
    return {"items_per_participant": str(cfg.items_per_participant),
            "time_limit": f"a time limit of {cfg.time_limit_minutes} minutes from when you agree"
            if cfg.time_limit_minutes else "no time limit"}


def fill(text: str, cfg: StudyConfig) -> str:
    """`text` with each `{field}` replaced by the study's fact or setting (unknown fields are left as they are:
    `structure_problems` refuses them before a study is stored)."""
    values = {**_settings(cfg), **{k: v.strip() for k, v in (cfg.info or {}).items() if isinstance(v, str)}}
    return FIELD.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def shown_texts(cfg: StudyConfig) -> dict[str, str]:
    """The Markdown each page shows, fields filled in, plus the instructions' worked examples (key
    "worked_examples"): what is stored with the study version and put in the bundle."""
    out = {k: fill(v, cfg).strip() for k, v in full_texts(cfg).items()}
    out["worked_examples"] = "\n\n".join(f"**{e.title}.** {e.text}" for e in worked_examples(cfg.templates))
    return out


def page_text(cfg: StudyConfig, key: str) -> str:
    """One page's Markdown, fields filled in. A study with markers left is never open to participants
    (`opening_problems`; the participant page checks it again before anyone joins)."""
    return fill(full_texts(cfg)[key], cfg).strip()


# --------------------------------------------------------------------------- worked examples

ExampleKind = Literal["count", "named_region", "highlighted", "excluded_count", "nothing"]


@dataclass(frozen=True)
class WorkedExample:
    kind: ExampleKind
    title: str
    text: str           # Markdown; the page puts the example picture (page_data.example_image) beside it


_EXAMPLE: dict[str, tuple[str, str, str]] = {   # title, what to do, what that is on the example picture
    "count": ("Counting", "*“How many odd cells are in the grid?”* (or in a named row, column or rectangle): type "
              "the number of odd cells in the box under the grid and press **SUBMIT**.",
              "Here the odd cells are the outlined ones, so the answer is **{n_all}**."),
    "named_region": ("A named rectangle", "*“Click every odd cell in rows R2–R4, columns C1–C3”*: only that "
                     "rectangle counts; on the real screen it is named, not drawn. Click its odd cells, then press "
                     "**DONE**.",
                     "Here the instruction names {named} (outlined in orange): click {cells_in}."),
    "highlighted": ("A highlighted region", "*“Click every odd cell in the highlighted region”*: the picture "
                    "itself marks the region with a tinted rectangle. Click only the odd cells inside it, then "
                    "press **DONE**.", "Here: {cells_hl}."),
    "excluded_count": ("An excluded region, with a count", "*“Click every odd cell outside the excluded region, "
                       "then give their number”*: ignore the rectangle the instruction names; click the odd cells "
                       "everywhere else, type how many you clicked and press **SUBMIT**.",
                       "Here the excluded rectangle is outlined in red: click {cells_out} and type {n_out}."),
    "nothing": ("Nothing to click", "Sometimes no odd cell lies where the instruction asks. Then there is "
                "nothing to click: **press DONE without selecting anything** (with a count, type 0). That is a "
                "right answer, not a mistake.", "Here: for *“click every odd cell in row R{empty}”* (outlined), press DONE "
                "with nothing selected."),
}
EXAMPLE_OF_TEMPLATE: dict[str, ExampleKind] = {   # as instrument.practice.PRACTICE_KIND groups the answers
    "T1": "count", "T2": "count", "mL-Cnt": "count", "T3": "named_region", "G-Clk": "named_region",
    "T4": "highlighted", "T5": "excluded_count",
}
CLICK_TEMPLATES = ("T3", "T4", "G-Clk", "T5")


def example_kinds(templates: list[str]) -> list[ExampleKind]:
    """The output kinds a study's templates ask for, in the order they first appear, then "nothing to click"
    when any template asks for clicks (its answer may be no cell at all)."""
    out: list[ExampleKind] = []
    for t in templates:
        k = EXAMPLE_OF_TEMPLATE.get(t)
        if k is not None and k not in out:
            out.append(k)
    if any(t in CLICK_TEMPLATES for t in templates):
        out.append("nothing")
    return out


@dataclass(frozen=True)
class ExampleScene:
    """What the worked examples say about their one scene (filled in by `page_data.example_scene`)."""

    targets: list[tuple[int, int]]
    named: tuple[int, int, int, int]          # r0, c0, r1, c1 of the named rectangle
    named_words: str                          # how an instruction names it ("column C4")
    highlighted: tuple[int, int, int, int]
    excluded: tuple[int, int, int, int]
    empty_row: int                            # a row without odd cells


def _cells(cells: list[tuple[int, int]]) -> str:
    return ", ".join(f"R{r},C{c}" for r, c in cells) or "no cell"


def _inside(cells: list[tuple[int, int]], box: tuple[int, int, int, int]) -> list[tuple[int, int]]:
    r0, c0, r1, c1 = box
    return [(r, c) for r, c in cells if r0 <= r <= r1 and c0 <= c <= c1]


def worked_examples(templates: list[str], scene: ExampleScene | None = None) -> list[WorkedExample]:
    """One worked example per output kind the study uses. With `scene` (the example picture's), the cells are
    the picture's; without it, the text names the kind only (what is stored with the study)."""
    out = []
    for kind in example_kinds(templates):
        title, text, here = _EXAMPLE[kind]
        if scene is not None and here:
            t = scene.targets
            outside = [x for x in t if x not in _inside(t, scene.excluded)]
            text += " " + here.format(n_all=len(t), named=scene.named_words,
                                      cells_in=_cells(_inside(t, scene.named)),
                                      cells_hl=_cells(_inside(t, scene.highlighted)), cells_out=_cells(outside),
                                      n_out=len(outside), empty=scene.empty_row)
        out.append(WorkedExample(kind, title, text))
    return out


# --------------------------------------------------------------------------- storing and editing

def store_texts(conn: Connection, study_id: str, cfg: StudyConfig, version: int, at: float) -> None:
    """Inside the caller's transaction: the texts shown for this version of the study (fields filled in)."""
    study_texts.insert_texts(conn, study_id, version, shown_texts(cfg), at)


def texts_version(store: Store, study_id: str) -> int:
    """The current text version of a study (1 when created; each saved edit adds one), 0 when none is stored."""
    with store.connect() as c:
        return study_texts.latest_version(c, study_id)


def stored_texts(store: Store, study_ids: list[str]) -> list[study_texts.StoredText]:
    with store.connect() as c:
        return study_texts.texts_of(c, study_ids)


def edit_problems(old: StudyConfig, new: StudyConfig, active: bool, answered: int) -> list[str]:
    """Why an edit of the texts, facts or questions is refused: malformed; a marker or an empty fact while the
    study is open (an open study never shows a template); other questions once `answered` participants answered."""
    out = structure_problems(new) + (opening_problems(new) if active else [])
    if set(new.questionnaire) != set(old.questionnaire) and answered:
        out.append(f"questionnaire: {answered} participant(s) answered it already; the questions are fixed")
    return out


def stored_info_json(info: dict[str, str]) -> str:
    """A study's facts as a small JSON document (the bundle's texts/<study>/info.json)."""
    return json.dumps({k: (info or {}).get(k, "") for k in INFO_FIELDS}, indent=1, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- the questionnaire's summary

@dataclass(frozen=True)
class AnswerCount:
    question: str
    answer: str          # the choice's label, "(no answer)", or for free text "answered"
    n: int
    of: int              # participants who reached the questionnaire and stored it (skipped ones included)

    @property
    def percent(self) -> float:
        return 100 * self.n / self.of


def questionnaire_summary(store: Store, study_ids: list[str]) -> tuple[list[AnswerCount], list[tuple[str, str]]]:
    """Counts per question and answer over real participants (origin 'participant') of these studies, and the
    free-text strategies as (participant id, text). Every choice is listed, with 0 when nobody chose it."""
    with store.connect() as c:
        rows = q_store.answer_rows(c, study_ids)
    by_q: dict[str, list[str | None]] = {}
    strategies: list[tuple[str, str]] = []
    for _study, pid, question, answer in rows:
        by_q.setdefault(question, []).append(answer)
        if question in QUESTIONS and not QUESTIONS[question].choices and answer:
            strategies.append((pid, answer))
    out: list[AnswerCount] = []
    for key in QUESTIONS:
        answers = by_q.get(key)
        if not answers:
            continue
        q, of = QUESTIONS[key], len(answers)
        if q.choices:
            out += [AnswerCount(key, label, answers.count(code), of) for code, label in q.choices]
        else:
            out.append(AnswerCount(key, "answered", sum(a is not None for a in answers), of))
        out.append(AnswerCount(key, "(no answer)", answers.count(None), of))
    return out, strategies


def questionnaire_line(counts: list[AnswerCount]) -> str:
    """The summary in one line (the checklist): per question, each answer chosen with its count."""
    parts = []
    for key in dict.fromkeys(a.question for a in counts):
        mine = [a for a in counts if a.question == key and a.n]
        of = next(a.of for a in counts if a.question == key)
        parts.append(f"{key} (n = {of}): " + ", ".join(f"{a.answer} {a.n}" for a in mine))
    return "; ".join(parts)
