"""Plain data for the participant pages (the page scripts only lay it out): who the participant is, the worked
example, practice feedback, the study links, the dataset built once."""
from __future__ import annotations

import fcntl
import functools
import secrets
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from ..benchmarks.rose.assets import load_assets
from ..benchmarks.rose.dataset import Dataset, Progress, build_dataset
from ..benchmarks.rose.explore import outline_cells
from ..benchmarks.rose.records import Cell, Layout, Region
from ..benchmarks.rose.render import layout_for, render_scene
from ..benchmarks.rose.scenes import generate_scene
from .config import StudyConfig
from .joining import NeedsProlificId, admit
from .texts import ExampleScene, WorkedExample, worked_examples


def ensure_dataset(root: Path, progress: Progress | None = None) -> Path:
    """Build the dataset at `root` once, even when several sessions ask at the same time."""
    if (root / "manifest.json").exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "manifest.json").exists():
            build_dataset(root, progress=progress)  # never over a non-empty folder (DatasetError names it)
    return root


# --------------------------------------------------------------------------- participant page helpers

@dataclass(frozen=True)
class Identity:
    """Who arrives, from the link: Prolific's parameters, our own anonymous id, or a generated one."""

    study_id: str | None
    external_id: str
    source: str                   # prolific | anonymous
    prolific_study_id: str | None
    prolific_session_id: str | None
    generated: bool               # a new anonymous id: the page puts it in the URL so a reload keeps it


def identity_from_query(query: dict[str, str]) -> Identity:
    study = (query.get("study") or "").strip() or None
    pid = (query.get("PROLIFIC_PID") or "").strip()
    if pid:
        return Identity(study, pid, "prolific", query.get("STUDY_ID"), query.get("SESSION_ID"), False)
    anon = (query.get("pid") or "").strip()
    if anon:
        return Identity(study, anon, "anonymous", None, None, False)
    return Identity(study, f"anon-{secrets.token_hex(8)}", "anonymous", None, None, True)


def needs_prolific_id(cfg: StudyConfig, ident: Identity) -> bool:
    """True when this visitor may not start the study: it needs a Prolific id and the link has none (or not one of
    Prolific's shape). The page then stops before consent; `joining.join` refuses the same visitor."""
    try:
        admit(cfg, ident.source, ident.external_id)
    except NeedsProlificId:
        return True
    return False


def _png(im: Image.Image, width: int = 360) -> bytes:
    import io

    if im.width > width:
        im = im.resize((width, round(im.height * width / im.width)), Image.LANCZOS)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def region_words(g: Region) -> str:
    """A region as an instruction names it."""
    if g.kind == "row":
        return f"row R{g.r0}"
    if g.kind == "column":
        return f"column C{g.c0}"
    if g.kind == "grid":
        return "the whole grid"
    return f"rows R{g.r0}–R{g.r1}, columns C{g.c0}–C{g.c1}"


@functools.lru_cache(maxsize=16)
def worked_example_pictures(templates: tuple[str, ...]) -> list[tuple[WorkedExample, bytes]]:
    """The instructions' worked examples for a study's templates (one per output kind, `texts.worked_examples`),
    each with its picture: one scene drawn for this purpose only (no study item), the region the instruction
    names outlined (orange; red when excluded; the real highlight for T4) and the right cells outlined in green."""
    pack = load_assets()
    scene = generate_scene(pack, 424242, "EmojiContent", 0, "dev")
    lay = layout_for(scene.rows, scene.cols)
    plain = render_scene(pack, scene)
    t = scene.targets
    empty = next((r for r in range(1, scene.rows + 1) if all(tr != r for tr, _ in t)), 1)
    box = {k: (g.r0, g.c0, g.r1, g.c1) for k, g in scene.regions.items()}
    facts = ExampleScene(t, box["T3"], region_words(scene.regions["T3"]), box["T4"], box["T5"], empty)
    pictures = {
        "count": lambda: outline_cells(plain, lay, t, GOLD_COLOUR),
        "named_region": lambda: feedback_image(plain, lay, scene.regions["T3"], "inside",
                                               [c for c in t if c in scene.regions["T3"]], []),
        "highlighted": lambda: outline_cells(render_scene(pack, scene, highlight=True), lay,
                                             [c for c in t if c in scene.regions["T4"]], GOLD_COLOUR),
        "excluded_count": lambda: feedback_image(plain, lay, scene.regions["T5"], "outside",
                                                 [c for c in t if c not in scene.regions["T5"]], []),
        "nothing": lambda: feedback_image(plain, lay, Region("row", empty, 1, empty, scene.cols), "inside", [], []),
    }
    return [(e, _png(pictures[e.kind]())) for e in worked_examples(list(templates), facts)]


REGION_COLOUR = (255, 140, 0)      # the region the instruction names (or the highlighted one)
EXCLUDED_COLOUR = (200, 0, 0)      # T5: the excluded region
GOLD_COLOUR = (0, 150, 60)         # the correct cells
CLICK_COLOUR = (30, 90, 230)       # the participant's own clicks


def feedback_image(image: Image.Image, layout: Layout, region: Region | None, region_mode: str,
                   gold: list[Cell], clicked: list[Cell]) -> Image.Image:
    """Practice feedback: the region outlined (orange, or red when excluded), the correct cells outlined in
    green, and the participant's clicks marked with a blue dot in the cell's corner (so both stay visible)."""
    out = image.convert("RGB").copy()
    d = ImageDraw.Draw(out)
    if region is not None:
        x0, y0, _, _ = layout.box(region.r0, region.c0)
        _, _, x1, y1 = layout.box(region.r1, region.c1)
        d.rectangle((x0 - 2, y0 - 2, x1 + 1, y1 + 1), outline=EXCLUDED_COLOUR if region_mode == "outside"
                    else REGION_COLOUR, width=4)
    for r, c in gold:
        x0, y0, x1, y1 = layout.box(r, c)
        d.rectangle((x0 + 4, y0 + 4, x1 - 5, y1 - 5), outline=GOLD_COLOUR, width=3)
    rad = max(4, layout.cell // 8)
    for r, c in clicked:
        x0, y0, x1, y1 = layout.box(r, c)
        cx, cy = x1 - 8 - rad, y0 + 8 + rad
        d.ellipse((cx - rad, cy - rad, cx + rad, cy + rad), fill=CLICK_COLOUR, outline=(255, 255, 255), width=2)
    return out


def practice_feedback_png(ds: Dataset, item, clicked: list[Cell]) -> bytes:
    """The feedback image of a practice item (a `RoseItem`) as PNG bytes (cached: a rerun redraws nothing). Its
    picture is read through the dataset's hash check first: one missing or changed since the item was shown
    raises DatasetError (and is recorded as damaged), never an error from deep in the image library."""
    ds.read_image(item.image)
    return _feedback_png(str(ds.root), item, tuple(clicked))


@functools.lru_cache(maxsize=256)
def _feedback_png(root: str, item, clicked: tuple[Cell, ...]) -> bytes:
    import io

    im = feedback_image(Image.open(Path(root) / item.image), item.layout, item.region, item.region_mode,
                        item.gold_cells(), list(clicked))
    buf = io.BytesIO()
    im.save(buf, format="PNG", compress_level=1)  # lossless either way; level 1 encodes ~1.6x faster
    return buf.getvalue()


PUBLIC_URL_ENV = "ROSE_PUBLIC_URL"


def app_base_url(public_url: str | None, context_url: str | None, headers: dict[str, str] | None,
                 page_paths: tuple[str, ...] = ()) -> str | None:
    """The address participants use: $ROSE_PUBLIC_URL, else the address this page was opened with (the app's
    root: the page's own path removed), else the request's Host header. None when nothing says it."""
    from urllib.parse import urlsplit

    if public_url and public_url.strip():
        return public_url.strip().rstrip("/")
    if context_url:
        u = urlsplit(context_url)
        if u.scheme in ("http", "https") and u.netloc:
            parts = [p for p in u.path.split("/") if p]
            if parts and parts[-1] in page_paths:
                parts = parts[:-1]
            return f"{u.scheme}://{u.netloc}" + "".join(f"/{p}" for p in parts)
    h = {k.lower(): v for k, v in (headers or {}).items()}
    host = h.get("x-forwarded-host") or h.get("host")
    if host:
        proto = (h.get("x-forwarded-proto") or "http").split(",")[0].strip()
        return f"{proto}://{host.split(',')[0].strip()}"
    return None


def participant_links(base: str, study_id: str) -> tuple[str, str]:
    """(Prolific link, plain link) for a study."""
    prolific = (f"{base}/?study={study_id}&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
                f"&SESSION_ID={{{{%SESSION_ID%}}}}")
    return prolific, f"{base}/?study={study_id}"
