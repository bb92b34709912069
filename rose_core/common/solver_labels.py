"""How a solver is named in every table: one label per run, never another run's.

The analyses group responses by this label, so two runs sharing one would be pooled into one row without
a word (a model called "oracle (agent)" beside the agent "oracle", a model called "Human" beside the
participants). `runs.importer` refuses such names; `label_of` keeps runs imported before that apart.
"""
from __future__ import annotations

HUMAN = "Human"   # the participants, pooled (shown as "Human (<studies>)")
LABEL_SUFFIXES = (" (agent)", " (model)", " (published)")


def reserved_model_name(name: str) -> bool:
    """A model name that reads as another solver's label: the pooled humans, an agent or a published row."""
    return name == HUMAN or name.startswith(HUMAN + " (") or name.endswith(LABEL_SUFFIXES)


def label_of(kind: str, name: str) -> str:
    """"Human" for participants, "<name> (agent)" for an agent, a model's name, or "<name> (model)" when the
    name alone would read as another solver's label (so the labels of different runs always differ)."""
    if kind == "human":
        return HUMAN
    if kind == "agent":
        return f"{name} (agent)"
    return f"{name} (model)" if reserved_model_name(name) else name


def refused_name(name: str) -> bool:
    """Names an import refuses: label-like in any letter case (what a reader could not tell apart)."""
    low = name.casefold()
    return low == HUMAN.casefold() or low.startswith(HUMAN.casefold() + " (") or low.endswith(LABEL_SUFFIXES)
