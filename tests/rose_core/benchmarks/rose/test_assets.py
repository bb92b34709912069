"""The committed asset pack: intact, verified by rendering, licensed, big enough."""
import functools
import itertools

from PIL import Image, ImageChops, ImageDraw, ImageFont

from rose_core import load_assets
from rose_core.benchmarks.rose.assets import AssetPack

NOTDEF_PROBE = "\U0010FFFD"  # a plane-16 private-use code point: no font here maps it


def _render_glyph(font: ImageFont.FreeTypeFont, ch: str, size: int = 64) -> Image.Image:
    im = Image.new("L", (size, size), 0)
    ImageDraw.Draw(im).text((size // 2, size // 2), ch, font=font, fill=255, anchor="mm")
    return im


@functools.lru_cache(maxsize=4)
def _cmap(font_path: str) -> dict[int, str]:
    from fontTools.ttLib import TTFont

    return TTFont(font_path, lazy=True).getBestCmap()


def glyph_problem(pack: AssetPack, ch: str) -> str | None:
    """Why `ch` cannot be drawn with the pack's font, or None when it renders a real glyph.

    A character counts as drawable only if the font maps it, its rendering is not
    the missing-glyph box (the font's .notdef) and it is not blank.
    """
    cmap = _cmap(str(pack.font_path))
    if ord(ch) not in cmap:
        return f"{ch!r} (U+{ord(ch):04X}) is not in the font's cmap"
    font = pack.font(48)
    im = _render_glyph(font, ch)
    if im.getbbox() is None:
        return f"{ch!r} renders blank"
    if ImageChops.difference(im, _render_glyph(font, NOTDEF_PROBE)).getbbox() is None:
        return f"{ch!r} renders as the missing-glyph box"
    return None


def glyphs_differ(pack: AssetPack, a: str, b: str) -> bool:
    font = pack.font(48)
    return ImageChops.difference(_render_glyph(font, a), _render_glyph(font, b)).getbbox() is not None


def test_pack_files_match_their_hashes():
    assert load_assets().verify_files() == []


def test_every_character_is_a_real_glyph_and_pairs_render_differently():
    pack = load_assets()
    chars = {c for s in pack.glyph_sets for c in s.members}
    problems = [p for c in sorted(chars) if (p := glyph_problem(pack, c))]
    assert problems == []
    for s in pack.glyph_sets:
        for a, b in itertools.combinations(s.members, 2):
            assert glyphs_differ(pack, a, b), (a, b)


def test_font_verification_catches_missing_and_notdef():
    pack = load_assets()
    assert "not in the font's cmap" in glyph_problem(pack, "\U0001F600")  # an emoji: no CJK glyph
    assert "cmap" in glyph_problem(pack, "龘")                            # CJK, but not in the subset


def test_glyph_pairs_are_close_and_many():
    pack = load_assets()
    pairs = [sim for s in pack.glyph_sets for sim in s.similarity.values()]
    assert len(pairs) >= 120
    assert min(pairs) >= 0.55  # blurred-bitmap cosine: "close"


def test_emoji_providers_and_sets():
    pack = load_assets()
    assert len(pack.emoji_providers) >= 4
    assert len(pack.emoji_slots) >= 150
    assert len(pack.emoji_content_sets) >= 60
    for p in pack.emoji_providers:  # every identity is drawn (not blank) by every provider
        for e in list(pack.emoji_slots)[::25]:
            assert pack.emoji_tile(p, e).getchannel("A").getbbox() is not None


def test_pixel_families_and_sprites():
    pack = load_assets()
    assert len(pack.sprite_families) >= 40
    for _, members in pack.sprite_families:
        arrays = [pack.sprite_array(m).tobytes() for m in members]
        assert len(set(arrays)) == len(arrays)  # related but distinct


def test_licences_name_every_source_and_no_apple_or_facebook():
    pack = load_assets()
    text = (pack.root / "LICENSES").read_text()
    for needle in ("Open Font License", "Apache", "CC BY 4.0", "CC BY-SA 4.0", "MIT", "pixelarticons"):
        assert needle in text
    for src in pack.pack["sources"]:
        assert src.split("/")[-1].replace("iconify-json-", "") in text or src in text
    assert "apple" not in " ".join(pack.emoji_providers).lower()
    assert "facebook" not in " ".join(pack.emoji_providers).lower()
