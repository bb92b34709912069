"""The device mix of a study's participants: the window, device pixel ratio and touch their browsers claimed before
consent (rose_core.instrument.device), as counts and shares, for the Participants page and the checklist.

Only counted participants (origin 'participant') are read. A participant whose browser never reported (it joined
before the device check, or ran no script) is counted as "not reported", never as some size; shares are over the
participants that reported, and undefined (NaN, shown "—") when none did.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..storage import devices
from ..storage.connection import Store

NOT_REPORTED = "not reported"
# Window classes by the claimed width in CSS pixels: what the grid is drawn into, not what the device is.
WINDOW_CLASSES: tuple[tuple[str, int], ...] = (("phone-sized (< 768 px wide)", 0), ("tablet-sized (768–1023 px)", 768),
                                               ("desktop-sized (≥ 1024 px)", 1024))


@dataclass(frozen=True)
class DeviceMix:
    participants: pd.DataFrame   # one row per participant: ids, window, window class, dpr, touch
    summary: pd.DataFrame        # aspect, value, participants, share % (of those that reported)
    total: int
    reported: int


def window_class(width: float | None) -> str:
    if width is None or pd.isna(width):
        return NOT_REPORTED
    return [name for name, lo in WINDOW_CLASSES if width >= lo][-1]


def _touch(points: float | None, coarse: float | None) -> str:
    if points is None or pd.isna(points):
        return NOT_REPORTED
    if points > 0:
        return "touch, finger as main pointer" if coarse == 1 else "touch screen, mouse or pad as main pointer"
    return "no touch"


def _dpr(v: float | None) -> str:
    return NOT_REPORTED if v is None or pd.isna(v) else f"{v:g}"


def device_mix(store: Store, study_ids: list[str] | None = None,
               participant_ids: list[str] | None = None) -> DeviceMix:
    """The device mix of these studies' counted participants (all studies when None), optionally only these
    participants (the checklist's analysed ones)."""
    with store.connect() as conn:
        df = devices.device_frame(conn, study_ids)
    if participant_ids is not None:
        df = df[df["participant_id"].isin(set(participant_ids))]
    reported = df["viewport_w"].notna()
    per = pd.DataFrame({
        "participant_id": df["participant_id"], "study_id": df["study_id"], "external_id": df["external_id"],
        "window": [f"{int(w)} × {int(h)}" if pd.notna(w) and pd.notna(h) else NOT_REPORTED
                   for w, h in zip(df["viewport_w"], df["viewport_h"])],
        "window_class": [window_class(w) for w in df["viewport_w"]],
        "dpr": [_dpr(v) for v in df["dpr"]],
        "touch": [_touch(p, c) for p, c in zip(df["touch_points"], df["coarse_pointer"])],
    }).reset_index(drop=True)
    n_rep = int(reported.sum())
    rows = []
    for aspect, col in (("window", "window_class"), ("device pixel ratio", "dpr"), ("touch", "touch")):
        counts = per[col].value_counts()
        order = sorted((v for v in counts.index if v != NOT_REPORTED),
                       key=lambda v: (float(v) if col == "dpr" else v)) + ([NOT_REPORTED] if NOT_REPORTED in counts else [])
        for v in order:
            n = int(counts[v])
            share = float("nan") if v == NOT_REPORTED or n_rep == 0 else 100 * n / n_rep
            rows.append({"aspect": aspect, "value": v, "participants": n, "share %": share})
    summary = pd.DataFrame(rows, columns=["aspect", "value", "participants", "share %"])
    return DeviceMix(per, summary, len(per), n_rep)


def device_sentence(mix: DeviceMix) -> str:
    """One line for the checklist and captions: every count, the unreported ones named."""
    if mix.total == 0:
        return "no participant"
    parts = []
    for aspect in ("window", "device pixel ratio", "touch"):
        g = mix.summary[mix.summary["aspect"] == aspect]
        parts.append(f"{aspect}: " + ", ".join(f"{v} {n}" for v, n in zip(g["value"], g["participants"])))
    return f"{mix.reported} of {mix.total} participants' browsers reported their device; " + "; ".join(parts)
