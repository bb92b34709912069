"""The device policy: the window a study needs, checked before consent against what the browser claims.

Display size is part of the stimulus (a phone shows a 40 px cell where a desktop shows 64 px, and subtle glyph or
pixel differences depend on it), so by default a study refuses a window smaller than 1024×640 CSS pixels with a
page saying what is needed; `allow_phones` lifts the minimum. The browser's report (window size, device pixel
ratio, touch points, coarse pointer) is a claim: its types and ranges are checked, it is stored for the device
mix (`storage.devices`), and nothing else is derived from it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..storage import devices
from ..storage.connection import Store
from .config import StudyConfig
from .grid_input import _dpr, _viewport
from .ids import Clock, system_clock
from .storage_errors import storage

MAX_TOUCH_POINTS = 256


@dataclass(frozen=True)
class DeviceClaim:
    """What a browser said about itself; None where it said nothing usable."""

    viewport: tuple[int, int] | None   # window.innerWidth × innerHeight, CSS pixels
    dpr: float | None                  # window.devicePixelRatio
    touch_points: int | None           # navigator.maxTouchPoints
    coarse_pointer: bool | None        # matchMedia("(pointer: coarse)"): a finger is the main pointer


@dataclass(frozen=True)
class DeviceGate:
    """Whether this participant may go on to consent, and what the page says when not."""

    ok: bool
    reported: bool                     # the browser has reported at least once
    viewport: tuple[int, int] | None   # the latest claimed window
    min_viewport: tuple[int, int] | None   # None: phones allowed, no minimum


def read_claim(payload: Any) -> DeviceClaim:
    """The browser's message, checked field by field: anything malformed or out of range is None (a claim that
    cannot be read never passes a minimum, and never raises)."""
    p = payload if isinstance(payload, dict) else {}
    tp = p.get("touch_points")
    touch = tp if isinstance(tp, int) and not isinstance(tp, bool) and 0 <= tp <= MAX_TOUCH_POINTS else None
    coarse = p.get("coarse_pointer")
    return DeviceClaim(_viewport(p.get("viewport")), _dpr(p.get("dpr")), touch,
                       coarse if isinstance(coarse, bool) else None)


def min_viewport(cfg: StudyConfig) -> tuple[int, int] | None:
    return None if cfg.allow_phones else (cfg.min_viewport_width, cfg.min_viewport_height)


def allowed(cfg: StudyConfig, viewport: tuple[int, int] | None) -> bool:
    """True when this window meets the study's device policy (an unknown window never meets a minimum)."""
    need = min_viewport(cfg)
    if need is None:
        return True
    return viewport is not None and viewport[0] >= need[0] and viewport[1] >= need[1]


def report_device(store: Store, cfg: StudyConfig, participant_id: str, payload: Any,
                  clock: Clock = system_clock) -> DeviceClaim:
    """Store the browser's claim as this participant's device (the latest claim wins) and whether it passes."""
    claim = read_claim(payload)
    with storage(store), store.write(concurrent=True) as c:
        devices.record_device(c, participant_id, claim.viewport, claim.dpr, claim.touch_points, claim.coarse_pointer,
                              allowed(cfg, claim.viewport), clock())
    return claim


def device_gate(store: Store, cfg: StudyConfig, participant_id: str) -> DeviceGate:
    """May this participant see the consent page? Judged on the stored claim against the study's policy now."""
    with storage(store), store.connect() as c:
        row = devices.device_of(c, participant_id)
    vp = (row.viewport_w, row.viewport_h) if row and row.viewport_w and row.viewport_h else None
    need = min_viewport(cfg)
    return DeviceGate(need is None or (row is not None and allowed(cfg, vp)), row is not None, vp, need)


def refusal_text(gate: DeviceGate) -> str:
    """The page a participant whose window is too small sees: what is needed, what they have, what to do."""
    assert gate.min_viewport is not None
    w, h = gate.min_viewport
    have = (f"Your browser window is {gate.viewport[0]} × {gate.viewport[1]} pixels." if gate.viewport else
            "Your browser did not say how large its window is.")
    return (f"This study needs a browser window of at least **{w} × {h} pixels**: a desktop or laptop computer "
            f"(a tablet held sideways may do). The pictures must be shown at full size. {have}\n\n"
            "- On a computer: maximise the browser window (or make it larger), and set the zoom to 100% "
            "(Ctrl + 0, or ⌘ + 0 on a Mac). This page continues by itself once the window is large enough.\n"
            "- On a phone or a small tablet: please open the same link on a computer instead.")
