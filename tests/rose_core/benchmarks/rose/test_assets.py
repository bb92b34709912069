"""The committed asset pack: intact, verified by rendering, licensed, big enough."""
import itertools

from rose_core import load_assets
from rose_core.benchmarks.rose.assets import glyph_problem, glyphs_differ


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
