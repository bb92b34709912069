"""Rebuild the licensed asset pack under data/assets/ from registry packages.

Maintainer tool, not used at run time: the pack it writes is committed, so the
app and the scene generator never touch the network. Sources (all by package
name from the ordinary clients):

  npm:  @iconify-json/noto, @iconify-json/twemoji, @iconify-json/openmoji,
        @iconify-json/fluent-emoji-flat, pixelarticons
  PyPI: noto-cjk-sans-otc (Noto Sans CJK, face "SC")

Needs (maintainer only): npm, pip, fonttools, resvg-py, numpy, pillow.

    python tools/build_asset_pack.py [--sources DIR] [--out data/assets]
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, str(Path(__file__).parent))
import curation  # noqa: E402

NPM_PACKAGES = {
    "@iconify-json/noto": "iconify-json-noto",
    "@iconify-json/twemoji": "iconify-json-twemoji",
    "@iconify-json/openmoji": "iconify-json-openmoji",
    "@iconify-json/fluent-emoji-flat": "iconify-json-fluent-emoji-flat",
    "pixelarticons": "pixelarticons",
}
PYPI_FONT = "noto-cjk-sans-otc"
EMOJI_PROVIDERS = {  # pack name -> iconify set
    "noto": "noto",
    "twemoji": "twemoji",
    "openmoji": "openmoji",
    "fluent": "fluent-emoji-flat",
}
EMOJI_TILE = 72
GLYPH_MIN_SIMILARITY = 0.55  # blurred-bitmap cosine; below this a pair is not "close"
PIXEL_EMOJI_SIZE = 16
ASCII = "".join(chr(c) for c in range(0x20, 0x7F))


def fetch_sources(src: Path) -> None:
    """npm pack / pip download into src (skipped for what is already there)."""
    npm = src / "npm"
    npm.mkdir(parents=True, exist_ok=True)
    for pkg, stem in NPM_PACKAGES.items():
        if not glob.glob(str(npm / f"{stem}-[0-9]*.tgz")):
            subprocess.run(["npm", "pack", pkg], cwd=npm, check=True, stdout=subprocess.DEVNULL)
    for tgz in npm.glob("*.tgz"):
        dest = npm / "x" / tgz.name[: -len(".tgz")]
        if not dest.exists():
            with tarfile.open(tgz) as t:
                t.extractall(dest, filter="data")
    pypi = src / "pypi"
    if not list(pypi.glob("*.whl")):
        pypi.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(pypi), PYPI_FONT], check=True)
    whl = next(pypi.glob("*.whl"))
    if not (pypi / "whl").exists():
        zipfile.ZipFile(whl).extractall(pypi / "whl")


def npm_dir(src: Path, stem: str) -> Path:
    return Path(glob.glob(str(src / "npm" / "x" / f"{stem}-[0-9]*" / "package"))[0])


def npm_version(src: Path, stem: str) -> str:
    return json.loads((npm_dir(src, stem) / "package.json").read_text())["version"]


# --------------------------------------------------------------------------- glyphs

def find_sc_face(ttc: Path) -> int:
    from fontTools.ttLib import TTCollection

    for i, f in enumerate(TTCollection(str(ttc)).fonts):
        if f["name"].getDebugName(1).endswith("CJK SC"):
            return i
    raise SystemExit(f"{ttc}: no 'CJK SC' face")


def glyph_vector(font: ImageFont.FreeTypeFont, ch: str) -> np.ndarray:
    im = Image.new("L", (64, 64), 0)
    ImageDraw.Draw(im).text((32, 32), ch, font=font, fill=255, anchor="mm")
    im = im.filter(ImageFilter.GaussianBlur(1.5)).resize((32, 32), Image.BILINEAR)
    v = np.asarray(im, np.float32).ravel()
    return v / (np.linalg.norm(v) or 1.0)


def build_glyphs(src: Path, out: Path, report: dict) -> dict:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    ttc = next((src / "pypi" / "whl").rglob("*.ttc"))
    face = find_sc_face(ttc)
    full = ImageFont.truetype(str(ttc), 48, index=face)
    cmap = TTFont(str(ttc), fontNumber=face, lazy=True).getBestCmap()
    notdef = Image.new("L", (64, 64), 0)
    ImageDraw.Draw(notdef).text((32, 32), "\U0010FFFD", font=full, fill=255, anchor="mm")

    def drawable(ch: str) -> bool:
        im = Image.new("L", (64, 64), 0)
        ImageDraw.Draw(im).text((32, 32), ch, font=full, fill=255, anchor="mm")
        return ord(ch) in cmap and im.getbbox() is not None and ImageChops.difference(im, notdef).getbbox() is not None

    sets, dropped_chars, far_pairs = [], [], []
    seen_sets: set[tuple[str, ...]] = set()
    for raw in curation.GLYPH_SETS:
        members = [c for c in dict.fromkeys(raw) if drawable(c) or dropped_chars.append(c)]
        vec = {c: glyph_vector(full, c) for c in members}
        pairs = []
        for a, b in itertools.combinations(members, 2):
            sim = float(vec[a] @ vec[b])
            (pairs if sim >= GLYPH_MIN_SIMILARITY and sim < 0.9999 else far_pairs).append((a, b, round(sim, 4)))
        keep = sorted({c for p in pairs for c in p[:2]}, key=members.index)
        if len(keep) >= 2 and tuple(keep) not in seen_sets:
            seen_sets.add(tuple(keep))
            sets.append({"id": f"g{len(sets) + 1:03d}", "members": keep,
                         "pairs": [{"a": a, "b": b, "similarity": s} for a, b, s in pairs]})
    chars = sorted({c for s in sets for c in s["members"]})
    fonts_dir = out / "fonts"
    fonts_dir.mkdir(parents=True)
    opts = subset.Options()
    opts.name_IDs = ["*"]
    opts.notdef_outline = True
    opts.drop_tables += ["vhea", "vmtx", "VORG"]
    tt = TTFont(str(ttc), fontNumber=face)
    sub = subset.Subsetter(opts)
    sub.populate(text="".join(chars) + ASCII)
    sub.subset(tt)
    font_path = fonts_dir / "NotoSansCJKsc-ROSE-subset.otf"
    tt.save(str(font_path))
    report["glyph"] = {
        "font_face": f"{ttc.name}#{face}", "sets": len(sets),
        "pairs": sum(len(s["pairs"]) for s in sets), "characters": len(chars),
        "dropped_characters": "".join(dropped_chars),
        "pairs_below_similarity": [f"{a}{b}:{s}" for a, b, s in far_pairs],
        "font_bytes": font_path.stat().st_size,
    }
    return {"font": "fonts/NotoSansCJKsc-ROSE-subset.otf", "min_similarity": GLYPH_MIN_SIMILARITY, "sets": sets}


# --------------------------------------------------------------------------- emoji

def codepoints(e: str, keep_fe0f: bool = True) -> str:
    return "-".join(f"{ord(c):x}" for c in e if keep_fe0f or ord(c) != 0xFE0F)


class IconifySet:
    def __init__(self, path: Path):
        self.icons = json.loads((path / "icons.json").read_text())
        self.chars = json.loads((path / "chars.json").read_text())

    def svg(self, e: str) -> str | None:
        name = self.chars.get(codepoints(e)) or self.chars.get(codepoints(e, keep_fe0f=False))
        if not name or name not in self.icons["icons"]:
            return None
        icon = self.icons["icons"][name]
        w = icon.get("width", self.icons.get("width", 16))
        h = icon.get("height", self.icons.get("height", 16))
        return (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
                f'viewBox="{icon.get("left", 0)} {icon.get("top", 0)} {w} {h}" width="{w}" height="{h}">{icon["body"]}</svg>')


def rasterise(svg: str, size: int, crisp: bool = False) -> Image.Image:
    import resvg_py

    kw = {"shape_rendering": "crisp_edges"} if crisp else {}
    png = resvg_py.svg_to_bytes(svg_string=svg, width=size, height=size, **kw)
    return Image.open(io.BytesIO(bytes(png))).convert("RGBA")


def crop_square(im: Image.Image, alpha_floor: int = 8) -> Image.Image | None:
    """Crop to the visible area (alpha above a floor), then centre on a square."""
    box = im.getchannel("A").point(lambda a: 255 if a > alpha_floor else 0).getbbox()
    if box is None:
        return None
    im = im.crop(box)
    side = max(im.size)
    sq = Image.new("RGBA", (side, side), (0, 0, 0, 0))
    sq.alpha_composite(im, ((side - im.width) // 2, (side - im.height) // 2))
    return sq


def build_emoji(src: Path, out: Path, report: dict) -> tuple[dict, dict[str, Image.Image]]:
    sets = {p: IconifySet(npm_dir(src, f"iconify-json-{s}")) for p, s in EMOJI_PROVIDERS.items()}
    wanted = list(dict.fromkeys([e for s in curation.EMOJI_CONTENT_SETS for e in s] + curation.EMOJI_STYLE_EXTRA))
    tiles: dict[str, dict[str, Image.Image]] = {}
    missing = []
    for e in wanted:
        per = {}
        for p, s in sets.items():
            svg = s.svg(e)
            im = crop_square(rasterise(svg, 256)) if svg else None
            if im is None:
                break
            per[p] = im.resize((EMOJI_TILE, EMOJI_TILE), Image.LANCZOS)
        if len(per) == len(sets):
            tiles[e] = per
        else:
            missing.append(e)
    identities = list(tiles)
    out_dir = out / "emoji"
    out_dir.mkdir(parents=True)
    cols = 16
    rows = (len(identities) + cols - 1) // cols
    same_style = []
    for p in sets:
        atlas = Image.new("RGBA", (cols * EMOJI_TILE, rows * EMOJI_TILE), (0, 0, 0, 0))
        for i, e in enumerate(identities):
            atlas.paste(tiles[e][p], ((i % cols) * EMOJI_TILE, (i // cols) * EMOJI_TILE))
        atlas.save(out_dir / f"{p}.png", optimize=True)
    for e in identities:  # two providers that draw an identity identically are no EmojiStyle pair
        for a, b in itertools.combinations(sets, 2):
            d = np.abs(np.asarray(tiles[e][a], np.int16) - np.asarray(tiles[e][b], np.int16)).mean()
            if d < 2.0:
                same_style.append(f"{e}:{a}={b}")
    content_sets = []
    for raw in curation.EMOJI_CONTENT_SETS:
        members = [e for e in raw if e in tiles]
        if len(members) >= 2:
            content_sets.append({"id": f"e{len(content_sets) + 1:03d}", "members": members})
    report["emoji"] = {"identities": len(identities), "content_sets": len(content_sets),
                       "missing_in_some_provider": "".join(missing), "identical_across_providers": same_style}
    index = {
        "tile": EMOJI_TILE, "columns": cols, "providers": list(sets),
        "identities": [{"emoji": e, "codepoints": codepoints(e), "slot": i} for i, e in enumerate(identities)],
        "style_identical": same_style, "content_sets": content_sets,
    }
    return index, {e: tiles[e]["noto"] for e in identities}


# --------------------------------------------------------------------------- pixel art

def pixelise(im: Image.Image, n: int = PIXEL_EMOJI_SIZE, colours: int = 8) -> Image.Image:
    small = im.resize((n, n), Image.BOX)
    a = np.asarray(small)
    alpha = a[..., 3] > 128
    rgb = Image.fromarray(np.ascontiguousarray(a[..., :3])).quantize(colours, method=Image.Quantize.MEDIANCUT,
                                                                    dither=Image.Dither.NONE).convert("RGB")
    return Image.fromarray(np.dstack([np.asarray(rgb), (alpha * 255).astype(np.uint8)]), "RGBA")


def mask_sprite(mask: np.ndarray) -> Image.Image:
    """One-colour icon as black ink whose alpha is the mask; the renderer picks the ink."""
    a = np.zeros(mask.shape + (4,), np.uint8)
    a[..., 3] = mask * 255
    return Image.fromarray(a, "RGBA")


def build_pixel(src: Path, out: Path, noto_tiles: dict[str, Image.Image], emoji_index: dict, report: dict) -> dict:
    svg_dir = npm_dir(src, "pixelarticons") / "svg"
    names = sorted(p.stem for p in svg_dir.glob("*.svg") if not p.stem.endswith("-sharp") and not p.stem.endswith("-solid"))
    masks: dict[str, np.ndarray] = {}
    for name in names:
        m = np.asarray(rasterise((svg_dir / f"{name}.svg").read_text(), 24, crisp=True))[..., 3] > 127
        if m.sum() >= 12:
            masks[name] = m
    # Families: names that share all but their last hyphenated token, plus the stem itself.
    groups: dict[str, list[str]] = {}
    for name in masks:
        stem = name.rsplit("-", 1)[0] if "-" in name else name
        groups.setdefault(stem, [])
        if name != stem:
            groups[stem].append(name)
    sprites: list[dict] = []
    images: list[Image.Image] = []

    def add(kind: str, name: str, im: Image.Image) -> int:
        sprites.append({"id": f"{kind}:{name}", "kind": kind, "size": im.width, "slot": len(images)})
        images.append(im)
        return len(sprites) - 1

    icon_slot: dict[str, int] = {}
    families = []
    for stem, members in sorted(groups.items()):
        fam = ([stem] if stem in masks else []) + sorted(members)
        fam = [n for n in fam if n in masks]
        distinct = list({masks[n].tobytes(): n for n in fam}.values())
        if 2 <= len(distinct) <= 6:
            for n in distinct:
                if n not in icon_slot:
                    icon_slot[n] = add("icon", n, mask_sprite(masks[n]))
            families.append({"id": f"p{len(families) + 1:03d}", "source": "pixelarticons",
                             "members": [sprites[icon_slot[n]]["id"] for n in sorted(distinct, key=fam.index)]})
    # Pixelised emoji (16x16, 8 colours): edit bases and content families.
    emoji_slot: dict[str, int] = {}
    for ident in emoji_index["identities"]:
        e = ident["emoji"]
        px = pixelise(noto_tiles[e])
        if np.asarray(px)[..., 3].sum() > 0:
            emoji_slot[e] = add("pxemoji", ident["codepoints"], px)
    for cs in emoji_index["content_sets"]:
        ms = [sprites[emoji_slot[e]]["id"] for e in cs["members"] if e in emoji_slot]
        arrs = {np.asarray(images[sprites[emoji_slot[e]]["slot"]]).tobytes() for e in cs["members"] if e in emoji_slot}
        if len(ms) >= 2 and len(arrs) == len(ms):
            families.append({"id": f"p{len(families) + 1:03d}", "source": "pixelised-noto", "members": ms})
    slot = 24
    cols = 32
    rows = (len(images) + cols - 1) // cols
    atlas = Image.new("RGBA", (cols * slot, rows * slot), (0, 0, 0, 0))
    for i, im in enumerate(images):
        atlas.paste(im, ((i % cols) * slot, (i // cols) * slot))
    (out / "pixel").mkdir(parents=True)
    atlas.save(out / "pixel" / "sprites.png", optimize=True)
    # Edit bases: colourful pixelised emoji and the one-colour icons used in families.
    edit_bases = [s["id"] for s in sprites]
    report["pixel"] = {"sprites": len(sprites), "families": len(families),
                       "icon_families": sum(f["source"] == "pixelarticons" for f in families)}
    return {"slot": slot, "columns": cols, "sprites": sprites, "families": families, "edit_bases": edit_bases}


# --------------------------------------------------------------------------- licences

LICENSES_TEXT = """ROSE Studio asset pack: sources and licences
=============================================

Every file under data/assets/ is derived by tools/build_asset_pack.py from the
packages below (versions in pack.json). Rendered benchmark images that contain
these assets carry the same attributions.

fonts/NotoSansCJKsc-ROSE-subset.otf
    Noto Sans CJK SC (PyPI package noto-cjk-sans-otc), subset to the characters
    ROSE draws. SIL Open Font License 1.1 (licenses/OFL-1.1.txt).
    Copyright 2014-2021 Adobe (http://www.adobe.com/), with Reserved Font Name 'Source'.

emoji/noto.png       Noto Emoji (npm @iconify-json/noto), Google Inc. Apache License 2.0.
emoji/twemoji.png    Twemoji (npm @iconify-json/twemoji), Twitter Inc. and contributors. CC BY 4.0.
emoji/openmoji.png   OpenMoji (npm @iconify-json/openmoji), HfG Schwaebisch Gmuend. CC BY-SA 4.0;
                     the derived raster tiles are shared under the same licence.
emoji/fluent.png     Fluent Emoji Flat (npm @iconify-json/fluent-emoji-flat), Microsoft Corporation. MIT.
    Tiles are the providers' SVGs rasterised with resvg, cropped to the visible area
    and scaled to 72x72. No Apple or Facebook images are included.

pixel/sprites.png
    kind "icon":    pixelarticons (npm pixelarticons), Gerrit Halfmann. MIT.
    kind "pxemoji": Noto Emoji (Apache 2.0) reduced to 16x16 pixels and 8 colours.

glyphs.json, emoji/index.json, pixel/index.json
    Confusable sets curated by the ROSE Studio maintainers (tools/curation.py); facts.
"""


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", type=Path, help="reuse/keep downloaded sources here (default: a temporary folder)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "data" / "assets")
    a = ap.parse_args(argv)
    src = a.sources or Path(tempfile.mkdtemp(prefix="rose-assets-src-"))
    fetch_sources(src)
    tmp = Path(tempfile.mkdtemp(prefix=".assets-", dir=a.out.parent))
    report: dict = {}
    glyphs = build_glyphs(src, tmp, report)
    emoji_index, noto_tiles = build_emoji(src, tmp, report)
    pixel_index = build_pixel(src, tmp, noto_tiles, emoji_index, report)
    (tmp / "glyphs.json").write_text(json.dumps(glyphs, ensure_ascii=False, indent=1))
    (tmp / "emoji" / "index.json").write_text(json.dumps(emoji_index, ensure_ascii=False, indent=1))
    (tmp / "pixel" / "index.json").write_text(json.dumps(pixel_index, ensure_ascii=False, indent=1))
    (tmp / "LICENSES").write_text(LICENSES_TEXT)
    (tmp / "licenses").mkdir()
    ofl = next((src / "pypi" / "whl").rglob("LICENSE"))
    shutil.copy(ofl, tmp / "licenses" / "OFL-1.1.txt")
    shutil.copy(npm_dir(src, "pixelarticons") / "LICENSE", tmp / "licenses" / "pixelarticons-MIT.txt")
    files = sorted(p for p in tmp.rglob("*") if p.is_file())
    pack = {
        "sources": {**{pkg: npm_version(src, stem) for pkg, stem in NPM_PACKAGES.items()},
                    PYPI_FONT: next((src / "pypi").glob("*.whl")).name.split("-")[1]},
        "report": report,
        "files": {str(p.relative_to(tmp)): sha256(p) for p in files},
    }
    (tmp / "pack.json").write_text(json.dumps(pack, ensure_ascii=False, indent=1))
    if a.out.exists():
        shutil.rmtree(a.out)
    os.replace(tmp, a.out)
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
