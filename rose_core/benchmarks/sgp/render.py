"""Observations of a board: the 2D schematic, a 3D view, and text. Same state, same bytes.

- 2D (iVISPAR's look): a square grid with black lines, each geom a flat marker in its colour with a black
  edge (cube square, sphere circle, pyramid triangle, cylinder hexagon; the original's further bodies: cone
  a five-pointed star, prism a diamond), chess labels along the edges and on
  free cells, on a background whose colour and label say which state it is: active (blue), goal (green),
  past (grey).
- 3D: the project's own rendering in place of iVISPAR's Unity scene: an orthographic camera looking down
  the board from the front at `ELEVATION_DEG`, shaded solids (Lambert shading of flat facets, one light),
  drawn back row first so a nearer geom hides part of the one behind it. Edge labels as in 2D, the same
  background per state kind.
- Text: the geoms with chess coordinates, in the order of the coordinates (A1, A2, …, B1, …).

Images are drawn at `SUPERSAMPLE`× and reduced with a fixed filter, and encoded with fixed PNG settings
(`rose.render.encode_png`), so the same state gives byte-identical files.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

from PIL import Image, ImageDraw, ImageFont

from ..rose.render import encode_png
from .board import SHAPE_2D, Board, StateKind, board_from_state, coord

Modality = Literal["2d", "3d", "text"]
MODALITIES: tuple[Modality, ...] = ("3d", "2d", "text")
FONT_PATH = Path(__file__).resolve().parents[3] / "data" / "assets" / "fonts" / "NotoSansCJKsc-ROSE-subset.otf"
SUPERSAMPLE = 2

# iVISPAR's background colours per state kind, and its labels.
BACKGROUND: dict[str, tuple[int, int, int]] = {"active": (82, 138, 174), "goal": (100, 191, 106), "past": (141, 153, 174)}
KIND_LABEL: dict[str, str] = {"active": "Current state", "goal": "Goal state", "past": "Past state"}
GEOM_RGB: dict[str, tuple[int, int, int]] = {"red": (220, 38, 38), "green": (22, 163, 74), "blue": (37, 99, 235),
                                             "yellow": (250, 204, 21)}
# The further colour names of the original's engine, at their HTML values (the names it parses are HTML
# colour names). "aqua" and "cyan", "fuchsia" and "magenta" are one colour there, and so here.
GEOM_RGB.update({"cyan": (0, 255, 255), "darkblue": (0, 0, 139), "lightblue": (173, 216, 230),
                 "purple": (128, 0, 128), "lime": (0, 255, 0), "fuchsia": (255, 0, 255), "white": (255, 255, 255),
                 "silver": (192, 192, 192), "grey": (128, 128, 128), "black": (0, 0, 0), "orange": (255, 165, 0),
                 "brown": (165, 42, 42), "maroon": (128, 0, 0), "olive": (128, 128, 0), "navy": (0, 0, 128),
                 "teal": (0, 128, 128), "aqua": (0, 255, 255), "magenta": (255, 0, 255)})
BOARD_LIGHT, BOARD_DARK = (236, 236, 236), (214, 214, 214)
FREE_LABEL = (150, 150, 150)

CELL_2D = 96           # pixels per cell at output size
ELEVATION_DEG = 50.0   # 3D camera: angle between the line of sight and the board plane
LIGHT = (-0.45, -0.30, 0.85)   # towards the light: from above, a little front left


@functools.lru_cache(maxsize=16)
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_PATH), size)


def _board(state: dict[str, Any] | Board) -> Board:
    return state if isinstance(state, Board) else board_from_state(state)


# ---------------------------------------------------------------------------------------------------- 2D

def _marker(draw: ImageDraw.ImageDraw, shape: str, cx: float, cy: float, r: float, fill, edge: int) -> None:
    if shape == "sphere":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=(0, 0, 0), width=edge)
    elif shape == "cube":
        s = r * 0.9
        draw.rectangle((cx - s, cy - s, cx + s, cy + s), fill=fill, outline=(0, 0, 0), width=edge)
    elif shape == "pyramid":
        pts = [(cx + r * math.cos(math.radians(a)), cy - r * math.sin(math.radians(a))) for a in (90, 210, 330)]
        pts = [(x, y + r * 0.15) for x, y in pts]
        draw.polygon(pts, fill=fill, outline=(0, 0, 0), width=edge)
    elif shape == "cylinder":
        pts = [(cx + r * math.cos(math.radians(a)), cy - r * math.sin(math.radians(a))) for a in range(0, 360, 60)]
        draw.polygon(pts, fill=fill, outline=(0, 0, 0), width=edge)
    elif shape == "cone":       # a five-pointed star
        pts = [(cx + (r if i % 2 == 0 else r * 0.45) * math.cos(math.radians(90 + 36 * i)),
                cy - (r if i % 2 == 0 else r * 0.45) * math.sin(math.radians(90 + 36 * i)) + r * 0.06) for i in range(10)]
        draw.polygon(pts, fill=fill, outline=(0, 0, 0), width=edge)
    elif shape == "prism":      # a diamond, taller than wide so it is no turned square
        pts = [(cx, cy - r), (cx + r * 0.68, cy), (cx, cy + r), (cx - r * 0.68, cy)]
        draw.polygon(pts, fill=fill, outline=(0, 0, 0), width=edge)
    else:
        raise ValueError(f"no 2D marker for shape {shape!r}")


def render_2d(state: dict[str, Any] | Board, kind: StateKind = "active") -> Image.Image:
    """The 2D schematic of a board (RGB)."""
    b = _board(state)
    k, n = SUPERSAMPLE, b.size
    cell = CELL_2D * k
    left, top, right, bottom = 44 * k, 64 * k, 24 * k, 44 * k
    w, h = left + n * cell + right, top + n * cell + bottom
    im = Image.new("RGB", (w, h), BACKGROUND[kind])
    d = ImageDraw.Draw(im)
    d.text((w // 2, 32 * k), KIND_LABEL[kind], font=_font(26 * k), fill=(255, 255, 255), anchor="mm")
    d.rectangle((left, top, left + n * cell, top + n * cell), fill=(255, 255, 255))
    occupied = dict(zip(b.cells, b.geoms))
    for r in range(n):
        for c in range(n):
            x0, y0 = left + c * cell, top + (n - 1 - r) * cell
            g = occupied.get((c, r))
            if g is None:
                d.text((x0 + cell // 2, y0 + cell // 2), coord((c, r)), font=_font(18 * k), fill=FREE_LABEL, anchor="mm")
            else:
                _marker(d, g.shape, x0 + cell / 2, y0 + cell / 2, cell * 0.36, GEOM_RGB[g.color], 3 * k)
    for i in range(n + 1):
        d.line((left + i * cell, top, left + i * cell, top + n * cell), fill=(0, 0, 0), width=2 * k)
        d.line((left, top + i * cell, left + n * cell, top + i * cell), fill=(0, 0, 0), width=2 * k)
    for i in range(n):
        d.text((left + i * cell + cell // 2, top + n * cell + 22 * k), chr(ord("A") + i), font=_font(20 * k),
               fill=(255, 255, 255), anchor="mm")
        d.text((left // 2, top + (n - 1 - i) * cell + cell // 2), str(i + 1), font=_font(20 * k),
               fill=(255, 255, 255), anchor="mm")
    return im.resize((w // k, h // k), Image.Resampling.BOX)


# ---------------------------------------------------------------------------------------------------- 3D

Vec = tuple[float, float, float]


def _sub(a: Vec, b: Vec) -> Vec:
    return a[0] - b[0], a[1] - b[1], a[2] - b[2]


def _cross(a: Vec, b: Vec) -> Vec:
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


def _unit(a: Vec) -> Vec:
    n = math.sqrt(a[0] ** 2 + a[1] ** 2 + a[2] ** 2)
    return a[0] / n, a[1] / n, a[2] / n


def _dot(a: Vec, b: Vec) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


_EL = math.radians(ELEVATION_DEG)
VIEW: Vec = (0.0, math.cos(_EL), -math.sin(_EL))   # the camera looks forward (+row) and down
TOWARDS_CAMERA: Vec = (0.0, -math.cos(_EL), math.sin(_EL))
_LIGHT = _unit(LIGHT)


def _solid(shape: str, cx: float, cy: float) -> list[list[Vec]]:
    """Facets of a convex solid standing on the board at (cx, cy), each listed counter-clockwise from outside."""
    if shape == "cube":
        s, hgt = 0.32, 0.64
        v = [(cx + dx * s, cy + dy * s, z) for z in (0.0, hgt) for dx, dy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        return [[v[0], v[3], v[2], v[1]], [v[4], v[5], v[6], v[7]], [v[0], v[1], v[5], v[4]],
                [v[1], v[2], v[6], v[5]], [v[2], v[3], v[7], v[6]], [v[3], v[0], v[4], v[7]]]
    if shape == "pyramid":
        s, hgt = 0.36, 0.78
        b = [(cx + dx * s, cy + dy * s, 0.0) for dx, dy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        apex = (cx, cy, hgt)
        return [[b[0], b[3], b[2], b[1]]] + [[b[i], b[(i + 1) % 4], apex] for i in range(4)]
    if shape == "cylinder":
        r, hgt, m = 0.33, 0.62, 28
        ring = [(cx + r * math.cos(2 * math.pi * i / m), cy + r * math.sin(2 * math.pi * i / m)) for i in range(m)]
        bot = [(x, y, 0.0) for x, y in ring]
        topr = [(x, y, hgt) for x, y in ring]
        faces = [[bot[i], bot[(i + 1) % m], topr[(i + 1) % m], topr[i]] for i in range(m)]
        return faces + [topr, bot[::-1]]
    if shape == "cone":
        r, hgt, m = 0.34, 0.80, 28
        bot = [(cx + r * math.cos(2 * math.pi * i / m), cy + r * math.sin(2 * math.pi * i / m), 0.0) for i in range(m)]
        apex = (cx, cy, hgt)
        return [[bot[i], bot[(i + 1) % m], apex] for i in range(m)] + [bot[::-1]]
    if shape == "prism":        # a triangular prism lying on a face, its ridge running away from the camera
        s, hgt = 0.34, 0.62
        a, b, c, d = (cx - s, cy - s, 0.0), (cx + s, cy - s, 0.0), (cx + s, cy + s, 0.0), (cx - s, cy + s, 0.0)
        e, f = (cx, cy - s, hgt), (cx, cy + s, hgt)
        return [[a, d, c, b], [a, b, e], [d, c, f], [a, e, f, d], [b, c, f, e]]
    if shape == "sphere":
        r, rings, segs = 0.35, 12, 24
        cz = r

        def p(i: int, j: int) -> Vec:
            th, ph = math.pi * i / rings, 2 * math.pi * j / segs
            return (cx + r * math.sin(th) * math.cos(ph), cy + r * math.sin(th) * math.sin(ph), cz + r * math.cos(th))

        faces = []
        for i in range(rings):
            for j in range(segs):
                a, b2, c, d = p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1)
                quad = [a, b2, c, d] if 0 < i < rings - 1 else ([a, b2, c] if i == 0 else [a, b2, d])
                faces.append(quad)
        return faces
    raise ValueError(f"no 3D solid for shape {shape!r}")


def _normal(face: list[Vec], centre: Vec) -> Vec:
    n = _cross(_sub(face[1], face[0]), _sub(face[2], face[0]))
    if _dot(n, n) < 1e-18:
        n = _cross(_sub(face[2], face[0]), _sub(face[-1], face[0]))
    n = _unit(n)
    mid = tuple(sum(v[k] for v in face) / len(face) for k in range(3))
    return n if _dot(n, _sub(mid, centre)) >= 0 else (-n[0], -n[1], -n[2])  # type: ignore[return-value]


def _shade(rgb: tuple[int, int, int], n: Vec) -> tuple[int, int, int]:
    lam = 0.38 + 0.62 * max(0.0, _dot(n, _LIGHT))
    return tuple(min(255, round(c * lam)) for c in rgb)  # type: ignore[return-value]


def _camera_3d(n: int, k: int) -> tuple[int, int, Callable[[Vec], tuple[float, float]]]:
    """The 3D view's camera at `k`× the output size: (width, height, board point -> pixel); the renderer draws
    with it at SUPERSAMPLE and the hit map reads it at 1 (every length scales with k)."""
    unit = 118 * k
    sin_e, cos_e = math.sin(_EL), math.cos(_EL)
    margin_x, top = 70 * k, 80 * k
    board_h = n * unit * sin_e
    w = 2 * margin_x + n * unit
    h = int(top + board_h + 1.0 * unit * cos_e + 60 * k)

    def proj(v: Vec) -> tuple[float, float]:
        # screen x = column axis; screen y grows downwards: far rows and height go up
        return margin_x + v[0] * unit, top + board_h - (v[1] * sin_e + v[2] * cos_e) * unit + 0.62 * unit * cos_e

    return w, h, proj


def render_3d(state: dict[str, Any] | Board, kind: StateKind = "active") -> Image.Image:
    """An angled top-down view of the board with shaded solids (RGB); nearer geoms occlude farther ones."""
    b = _board(state)
    k, n = SUPERSAMPLE, b.size
    w, h, proj = _camera_3d(n, k)
    im = Image.new("RGB", (w, h), BACKGROUND[kind])
    d = ImageDraw.Draw(im)
    d.text((w // 2, 34 * k), KIND_LABEL[kind], font=_font(26 * k), fill=(255, 255, 255), anchor="mm")
    thick = 0.12
    d.polygon([proj((0, 0, 0)), proj((n, 0, 0)), proj((n, 0, -thick)), proj((0, 0, -thick))], fill=(120, 120, 120))
    for r in range(n):
        for c in range(n):
            quad = [proj((c, r, 0)), proj((c + 1, r, 0)), proj((c + 1, r + 1, 0)), proj((c, r + 1, 0))]
            d.polygon(quad, fill=BOARD_LIGHT if (r + c) % 2 else BOARD_DARK, outline=(90, 90, 90), width=k)
    occupied = set(b.cells)
    for r in range(n):
        for c in range(n):
            if (c, r) not in occupied:
                x, y = proj((c + 0.5, r + 0.5, 0))
                d.text((x, y), coord((c, r)), font=_font(16 * k), fill=FREE_LABEL, anchor="mm")
    for i in range(n):
        x, y = proj((i + 0.5, 0, -thick))
        d.text((x, y + 18 * k), chr(ord("A") + i), font=_font(20 * k), fill=(255, 255, 255), anchor="mm")
        x, y = proj((0, i + 0.5, 0))
        d.text((x - 24 * k, y), str(i + 1), font=_font(20 * k), fill=(255, 255, 255), anchor="mm")
    # painter's algorithm: farthest row first; within a solid only the facets facing the camera
    order = sorted(zip(b.geoms, b.cells), key=lambda gc: (-gc[1][1], gc[1][0]))
    for g, (c, r) in order:
        cx, cy = c + 0.5, r + 0.5
        centre = (cx, cy, 0.35)
        facets = []
        for f in _solid(g.shape, cx, cy):
            nrm = _normal(f, centre)
            if _dot(nrm, TOWARDS_CAMERA) <= 1e-9:
                continue
            depth = sum(_dot(v, VIEW) for v in f) / len(f)
            facets.append((-depth, f, nrm))
        facets.sort(key=lambda t: t[0])
        for _, f, nrm in facets:
            col = _shade(GEOM_RGB[g.color], nrm)
            crisp = g.shape in ("cube", "pyramid", "prism") or len(f) > 4   # facet edges of curved solids stay unseen
            d.polygon([proj(v) for v in f], fill=col, outline=(30, 30, 30) if crisp else col, width=k if crisp else 1)
    return im.resize((w // k, h // k), Image.Resampling.BOX)


# ---------------------------------------------------------------------------------------------------- hit map

@dataclass(frozen=True)
class CellHit:
    """Where a cell is on a board's image (output pixels): the polygon a click on it lands in. For a cell with a
    geom in 3D, the outline of its solid and its floor together (a click on the solid picks the geom)."""

    coord: str
    points: tuple[tuple[float, float], ...]
    piece: bool

    def to_json(self) -> dict[str, Any]:
        return {"coord": self.coord, "points": [[round(x, 2), round(y, 2)] for x, y in self.points],
                "piece": self.piece}


def _hull(points: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """Convex hull (Andrew's monotone chain), counter-clockwise on screen."""
    pts = sorted(set(points))
    if len(pts) < 3:
        return tuple(pts)

    def half(seq: list[tuple[float, float]]) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        for p in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(pts[::-1])
    return tuple(lower[:-1] + upper[:-1])


def hit_map(state: dict[str, Any] | Board, modality: Literal["2d", "3d"]) -> list[CellHit]:
    """Every cell's click polygon on the image `render(state, modality)` draws, back to front: where polygons
    overlap (a nearer solid in front of a farther cell in 3D), the later one is on top, as in the image. The
    browser draws its click targets from these; the server maps a click back with `cell_at`."""
    b = _board(state)
    n = b.size
    if modality == "2d":
        left, top = 44, 64   # render_2d's margins at output size
        return [CellHit(coord((c, r)), ((left + c * CELL_2D, top + (n - 1 - r) * CELL_2D),
                                        (left + (c + 1) * CELL_2D, top + (n - 1 - r) * CELL_2D),
                                        (left + (c + 1) * CELL_2D, top + (n - r) * CELL_2D),
                                        (left + c * CELL_2D, top + (n - r) * CELL_2D)), (c, r) in b.cells)
                for r in range(n) for c in range(n)]
    if modality != "3d":
        raise ValueError(f"no image, so no hit map, for modality {modality!r}")
    _, _, proj = _camera_3d(n, 1)
    at = dict(zip(b.cells, b.geoms))
    out = []
    for r in range(n - 1, -1, -1):
        for c in range(n):
            floor = [proj((c, r, 0)), proj((c + 1, r, 0)), proj((c + 1, r + 1, 0)), proj((c, r + 1, 0))]
            g = at.get((c, r))
            if g is None:
                out.append(CellHit(coord((c, r)), tuple(floor), False))
                continue
            solid = [proj(v) for f in _solid(g.shape, c + 0.5, r + 0.5) for v in f]
            out.append(CellHit(coord((c, r)), _hull(floor + solid), True))
    return out


def _inside(points: tuple[tuple[float, float], ...], x: float, y: float) -> bool:
    inside = False
    for (x0, y0), (x1, y1) in zip(points, points[1:] + points[:1]):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            inside = not inside
    return inside


def cell_at(hits: Sequence[CellHit], x: float, y: float) -> str | None:
    """The cell a click at image pixel (x, y) lands on (the topmost polygon there), None off the board."""
    return next((h.coord for h in reversed(hits) if _inside(h.points, x, y)), None)


# ---------------------------------------------------------------------------------------------------- text

def text_lines(state: dict[str, Any] | Board, shape_names: Literal["3d", "2d"] = "3d") -> list[str]:
    """One line per geom, `<colour> <shape>: <coordinate>`, in coordinate order (A1, A2, …, B1, …)."""
    b = _board(state)
    rows = sorted(zip(b.cells, b.geoms))
    return [f"{g.color} {SHAPE_2D[g.shape] if shape_names == '2d' else g.shape}: {coord(c)}" for c, g in rows]


def render_text(state: dict[str, Any] | Board, kind: StateKind = "active") -> str:
    """The text observation of a board, headed by its kind."""
    b = _board(state)
    head = f"{KIND_LABEL[kind]} ({b.size}x{b.size} board, A1 bottom-left):"
    return "\n".join([head, *[f"- {ln}" for ln in text_lines(b)]])


def render(state: dict[str, Any] | Board, modality: Literal["2d", "3d"], kind: StateKind = "active") -> Image.Image:
    return render_2d(state, kind) if modality == "2d" else render_3d(state, kind)


def render_png(state: dict[str, Any] | Board, modality: Literal["2d", "3d"], kind: StateKind = "active") -> bytes:
    """PNG bytes of a board's image: deterministic."""
    return encode_png(render(state, modality, kind))


__all__ = ["BACKGROUND", "CellHit", "GEOM_RGB", "cell_at", "hit_map", "KIND_LABEL", "MODALITIES", "Modality", "render", "render_2d", "render_3d",
           "render_png", "render_text", "text_lines"]
