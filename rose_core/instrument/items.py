"""The instrument's items: attention checks (an instructed-response item drawn on a real ROSE scene) and the item
of an assignment by its kind, with the picture a participant sees for it."""
from __future__ import annotations

import functools
import hashlib
import hmac
import io
import random
from dataclasses import dataclass, replace

from PIL import Image, ImageDraw

from ..benchmarks.rose.assets import load_assets
from ..benchmarks.rose.dataset import Dataset
from ..benchmarks.rose.item import RoseItem, rose_item
from ..benchmarks.rose.scenes import rng_for
from ..benchmarks.rose.scoring import ScoreKey


def attention_item_id(scene_id: str, seed: str) -> str:
    return f"ATT:{scene_id}:{seed}"


def attention_text(r: int, c: int) -> str:
    return f"Click the cell in row R{r}, column C{c} (and nothing else), then press DONE."


# A picture check's page text: the instruction itself is drawn into the image (`item_png`), so a script that reads
# the page's text cannot answer it (docs/threat-model.md, "Bots").
PICTURE_INSTRUCTION = "Follow the instruction written in the picture, then press DONE."
BAND_PX = 96           # the area under the grid that holds a picture check's instruction (its band varies inside)
BODY_TEXT_PX = 16      # Streamlit's body text; the picture's instruction is never drawn smaller (at natural width)
MIN_CONTRAST = 7.0     # WCAG AAA for body text, against the lightest and darkest noisy background pixel

# Equivalent wordings of a picture check (one per participant and slot, chosen by the drawing key): the same cell,
# in the voice of the worded check, so the set of candidate drawings is not one string per cell.
PICTURE_PHRASINGS = (
    "Click the cell in row R{r}, column C{c} (and nothing else), then press DONE.",
    "Click the one cell in row R{r}, column C{c}, then press DONE.",
    "Click the cell in column C{c}, row R{r} (that cell and no other), then press DONE.",
    "In row R{r}, click the cell in column C{c}, then press DONE.",
)


def attention_item(ds: Dataset, item_id: str, kind: str = "worded") -> RoseItem:
    """An instructed-response item on a real image: click one named cell, the right answer whatever it shows.

    Worded in the voice of the study's own click instructions (a named place, "(and nothing else), then press
    DONE"), with none of the words that announce a check ("only", "whatever it shows", "attention"): a participant
    who reads each instruction passes, one who clicks the odd cells by habit does not. `kind` "picture": the page
    text says only PICTURE_INSTRUCTION and the instruction is drawn in a band under the grid (the layout grows by
    BAND_PX at the bottom; every cell keeps its pixels); the gold is the same for either kind."""
    _, scene_id, seed = item_id.split(":", 2)
    scene = ds.scenes[scene_id]
    rng = rng_for(0, "attention", seed)
    r, c = rng.randint(1, scene.rows), rng.randint(1, scene.cols)
    key = ScoreKey(instance_id=item_id, template="ATT", output="click", rows=scene.rows, cols=scene.cols,
                   gold_count=1, gold_cells=frozenset({(r, c)}), global_count=1, outside_targets=frozenset(),
                   terminal="DONE")
    picture = kind == "picture"
    text = PICTURE_INSTRUCTION if picture else attention_text(r, c)
    layout = replace(scene.layout, height=scene.layout.height + BAND_PX) if picture else scene.layout
    return RoseItem(item_id, scene_id, "ATT", scene.subset, scene.split, scene.images["base"], layout,
                    "click", text, None, "inside", key)


def item_for(ds: Dataset, kind: str, item_id: str, attention: str = "worded") -> RoseItem:
    """The item of an assignment; `attention`: the study's `attention_kind`, for an attention check."""
    return attention_item(ds, item_id, attention) if kind == "attention" else rose_item(ds, item_id)


def is_picture_check(item: RoseItem) -> bool:
    return item.template == "ATT" and item.instruction == PICTURE_INSTRUCTION


def picture_key(secret: str, participant_id: str, slot: int) -> bytes:
    """The drawing key of one participant's picture check in one slot: an HMAC-SHA256 of the study's secret
    (`completion.study_secret`, kept on the study's row, never sent anywhere), so the drawing cannot be predicted
    without the secret; the same participant and slot, the same key and so the same bytes."""
    return hmac.new(secret.encode(), f"picture\x1f{participant_id}\x1f{slot}".encode(), hashlib.sha256).digest()


@dataclass(frozen=True)
class PictureStyle:
    """How one picture check's instruction is drawn: everything a script drawing candidates would have to guess.
    `band_top`: where the band starts below the grid; `x`, `y`: the text block's offset inside it; `align`: lines
    left-aligned or centred; `spacing`: extra pixels between letters; `noise`: the background's ±amplitude, drawn
    from `noise_seed`."""

    phrasing: int
    size: int
    text: tuple[int, int, int]
    background: tuple[int, int, int]
    spacing: float
    band_top: int
    x: int
    y: int
    align: str
    line_gap: int
    noise: int
    noise_seed: int


def picture_style(key: bytes) -> PictureStyle:
    """The style a drawing key selects; every choice keeps the text at least body size with AAA contrast."""
    rng = random.Random(key)
    background = tuple(rng.randint(228, 250) for _ in range(3))
    noise = rng.randint(3, 7)
    while True:       # a dark colour of any hue, redrawn until it clears MIN_CONTRAST against the noisy background
        text = tuple(rng.randint(0, 110) for _ in range(3))
        if _contrast(text, tuple(v - noise for v in background)) >= MIN_CONTRAST:
            break
    return PictureStyle(rng.randrange(len(PICTURE_PHRASINGS)), rng.randint(BODY_TEXT_PX + 1, 22), text, background,
                        round(rng.uniform(0.0, 2.5), 2), rng.randint(0, 12), rng.randint(4, 40), rng.randint(4, 16),
                        rng.choice(("left", "centre")), rng.randint(4, 9), noise, rng.getrandbits(64))


def _luminance(rgb: tuple[int, ...]) -> float:
    ch = [v / 255 for v in rgb]
    lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in ch]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """WCAG 2 contrast ratio of two sRGB colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def picture_text(item: RoseItem, style: PictureStyle) -> str:
    (r, c), = item.key.gold_cells
    return PICTURE_PHRASINGS[style.phrasing].format(r=r, c=c)


def item_png(ds: Dataset, item: RoseItem, drawing: bytes | None = None) -> bytes:
    """The PNG a participant sees for an item: the dataset's image (checked against its build hash: DatasetError
    when missing or changed), and for a picture check that image with its instruction drawn under the grid in the
    style its drawing key (`picture_key`, required for a picture check) selects. Deterministic: the same item and
    key give the same bytes."""
    data = ds.read_image(item.image)
    if not is_picture_check(item):
        return data
    if not drawing:
        raise ValueError(f"picture check {item.item_id}: no drawing key (picture_key of the study's secret)")
    style = picture_style(drawing)
    return drawn_png(data, picture_text(item, style), item.layout.width, item.layout.height, style)


def _lines(d: ImageDraw.ImageDraw, text: str, font, spacing: float, room: int) -> list[str]:
    words, lines = text.split(), [""]
    for w in words:
        trial = f"{lines[-1]} {w}".strip()
        if lines[-1] and _width(d, trial, font, spacing) > room:
            lines.append(w)
        else:
            lines[-1] = trial
    return lines


def _width(d: ImageDraw.ImageDraw, line: str, font, spacing: float) -> float:
    return d.textlength(line, font=font) + spacing * max(len(line) - 1, 0)


@functools.lru_cache(maxsize=64)
def drawn_png(base: bytes, text: str, width: int, height: int, style: PictureStyle) -> bytes:
    """`base` with `text` drawn under the grid in `style`: word-wrapped to the image's width, shrunk (never below
    BODY_TEXT_PX) until it fits the band; ValueError when even that does not fit (never drawn cut off)."""
    buf = io.BytesIO()
    drawn_image(base, text, width, height, style).save(buf, format="PNG")
    return buf.getvalue()


def drawn_image(base: bytes, text: str, width: int, height: int, style: PictureStyle) -> Image.Image:
    """`drawn_png`'s picture before it is encoded (RGB): its pixels are the PNG's."""
    im = Image.open(io.BytesIO(base)).convert("RGB")
    w, top = max(width, im.width), height - BAND_PX
    out = Image.new("RGB", (w, height), style.background)
    if style.noise:   # a little per-pixel noise under the band: no two drawings' backgrounds agree byte for byte
        rng, span = random.Random(style.noise_seed), 2 * style.noise + 1
        channels = [Image.frombytes("L", (w, BAND_PX), rng.randbytes(w * BAND_PX).translate(bytes(
            max(0, min(255, v + b % span - style.noise)) for b in range(256)))) for v in style.background]
        out.paste(Image.merge("RGB", channels), (0, top))
    out.paste(im, (0, 0))
    d = ImageDraw.Draw(out)
    pack = load_assets()
    margin = 8
    # the style's own offsets first; on a narrow image, the tightest ones (still varied in everything else)
    tight = replace(style, spacing=min(style.spacing, 0.5), band_top=0, x=margin, y=4, line_gap=4)
    for st, size in [(st, size) for st in (style, tight) for size in range(style.size, BODY_TEXT_PX - 1, -1)]:
        font = pack.font(size)
        x0 = min(st.x, max(margin, w // 10))
        lines = _lines(d, text, font, st.spacing, w - x0 - margin)
        fits = max(_width(d, line, font, st.spacing) for line in lines) <= w - x0 - margin
        y0 = top + st.band_top + st.y
        if fits and y0 + len(lines) * (size + st.line_gap) <= height - 4:
            break
    else:
        raise ValueError(f"picture check: {text!r} does not fit a {w}x{BAND_PX} band at {BODY_TEXT_PX}px")
    if st.band_top:  # the band's own height varies too: plain white between the grid and the band
        d.rectangle((0, top, w - 1, top + st.band_top - 1), fill=(255, 255, 255))
    for n, line in enumerate(lines):
        lw = _width(d, line, font, st.spacing)
        x = x0 + ((w - x0 - margin - lw) / 2 if st.align == "centre" else 0)
        y = y0 + n * (size + st.line_gap)
        for ch in line:
            d.text((x, y), ch, font=font, fill=st.text, anchor="la")
            x += d.textlength(ch, font=font) + st.spacing
    return out
