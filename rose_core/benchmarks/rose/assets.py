"""The committed asset pack (data/assets/): confusable sets, the verified font, emoji and sprites.

Loaded once per process and read-only; scene generation and rendering only ever see
these pixels, so the same pack and seed give the same images on any machine.
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageFont

ASSETS_DIR = Path(__file__).resolve().parents[3] / "data" / "assets"


class AssetError(RuntimeError):
    """The asset pack is missing, altered, or fails verification."""


@dataclass(frozen=True)
class GlyphSet:
    set_id: str
    members: tuple[str, ...]
    similarity: dict[tuple[str, str], float]  # unordered pair (sorted) -> blurred-bitmap cosine


@dataclass(frozen=True)
class Sprite:
    sprite_id: str
    kind: str  # "icon" (one-colour mask) or "pxemoji" (8-colour pixelised emoji)
    size: int
    slot: int


class AssetPack:
    """Read access to data/assets. Construct with `load_assets()` (cached)."""

    def __init__(self, root: Path = ASSETS_DIR):
        self.root = root
        try:
            self.pack = json.loads((root / "pack.json").read_text())
            glyphs = json.loads((root / "glyphs.json").read_text())
            self.emoji_index = json.loads((root / "emoji" / "index.json").read_text())
            self.pixel_index = json.loads((root / "pixel" / "index.json").read_text())
        except FileNotFoundError as e:
            raise AssetError(f"asset pack incomplete: {e.filename} is missing "
                             "(rebuild with tools/build_asset_pack.py)") from e
        self.font_path = root / glyphs["font"]
        self.glyph_sets = [
            GlyphSet(s["id"], tuple(s["members"]),
                     {tuple(sorted((p["a"], p["b"]))): p["similarity"] for p in s["pairs"]})
            for s in glyphs["sets"]
        ]
        self.emoji_providers: list[str] = self.emoji_index["providers"]
        self.emoji_slots = {i["emoji"]: i["slot"] for i in self.emoji_index["identities"]}
        self.emoji_content_sets: list[tuple[str, tuple[str, ...]]] = [
            (s["id"], tuple(s["members"])) for s in self.emoji_index["content_sets"]]
        self.sprites = {s["id"]: Sprite(s["id"], s["kind"], s["size"], s["slot"]) for s in self.pixel_index["sprites"]}
        self.sprite_families: list[tuple[str, tuple[str, ...]]] = [
            (f["id"], tuple(f["members"])) for f in self.pixel_index["families"]]
        self.edit_bases: list[str] = self.pixel_index["edit_bases"]
        self._atlases: dict[str, Image.Image] = {}

    # -- integrity ---------------------------------------------------------------------
    def verify_files(self) -> list[str]:
        """Files whose sha256 differs from pack.json (empty when the pack is intact)."""
        bad = []
        for rel, digest in self.pack["files"].items():
            p = self.root / rel
            if not p.exists() or hashlib.sha256(p.read_bytes()).hexdigest() != digest:
                bad.append(rel)
        return bad

    def fingerprint(self) -> str:
        """One hash of the whole pack; stored in every dataset manifest."""
        return hashlib.sha256(json.dumps(self.pack["files"], sort_keys=True).encode()).hexdigest()[:16]

    # -- glyphs ------------------------------------------------------------------------
    def font(self, size: int) -> ImageFont.FreeTypeFont:
        return _font(str(self.font_path), size)

    def glyph_pairs(self) -> list[tuple[str, str, str, float]]:
        """Every ordered (majority, exception) pair: (set id, a, b, similarity)."""
        out = []
        for s in self.glyph_sets:
            for (a, b), sim in s.similarity.items():
                out += [(s.set_id, a, b, sim), (s.set_id, b, a, sim)]
        return out

    # -- emoji -------------------------------------------------------------------------
    def _atlas(self, name: str) -> Image.Image:
        if name not in self._atlases:
            im = Image.open(self.root / name)
            im.load()
            self._atlases[name] = im
        return self._atlases[name]

    def emoji_tile(self, provider: str, emoji: str) -> Image.Image:
        t, cols = self.emoji_index["tile"], self.emoji_index["columns"]
        slot = self.emoji_slots[emoji]
        x, y = (slot % cols) * t, (slot // cols) * t
        return self._atlas(f"emoji/{provider}.png").crop((x, y, x + t, y + t))

    # -- sprites -----------------------------------------------------------------------
    def sprite_array(self, sprite_id: str) -> np.ndarray:
        """RGBA uint8 array of the sprite at its native pixel size (a fresh copy)."""
        s = self.sprites[sprite_id]
        slot, cols = self.pixel_index["slot"], self.pixel_index["columns"]
        x, y = (s.slot % cols) * slot, (s.slot // cols) * slot
        return np.array(self._atlas("pixel/sprites.png").crop((x, y, x + s.size, y + s.size)))


@functools.lru_cache(maxsize=16)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


@functools.lru_cache(maxsize=2)
def load_assets(root: Path = ASSETS_DIR) -> AssetPack:
    return AssetPack(root)
