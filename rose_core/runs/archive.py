"""Bounded reading of the containers run files come in: zip archives (inspect's .eval, VLMEvalKit's .xlsx) and
one-document JSON files.

Work on hostile files is bounded: an archive is checked against a decompressed-size limit before anything is
expanded (and while expanding, in case the sizes lie), every member's checksum is checked, a JSON document is
refused above the same limit before it is read.
"""
from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any, Callable, Iterator

from ..common.problems import parse_json
from .records import Limits, RunImportError

CHUNK = 16 * 2**20   # decompression step


def check_declared(path: Path, infos: list[zipfile.ZipInfo], limits: Limits) -> None:
    """Refuse an archive whose members declare more than the limit, before expanding any of them."""
    declared = sum(i.file_size for i in infos)
    if declared > limits.max_expanded_bytes:
        raise RunImportError([f"{path}: the archive declares {declared:,} bytes once expanded, above the limit of "
                              f"{limits.max_expanded_bytes:,} (--max-expanded-mb): refused before expanding it"])


def member_chunks(path: Path, f: io.BufferedReader, info: zipfile.ZipInfo, budget: int) -> Iterator[bytes]:
    """One member's bytes in bounded steps (stored, deflate or Zstandard); never more than min(its declared
    size, budget) in all - a member that tries to expand further is a zip bomb - and its checksum checked."""
    where = f"{path}:{info.filename}"
    f.seek(info.header_offset)
    head = f.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise RunImportError([f"{where}: broken local header (truncated or corrupt archive)"])
    n, m = struct.unpack("<HH", head[26:30])
    f.seek(info.header_offset + 30 + n + m)
    raw = f.read(info.compress_size)
    if len(raw) < info.compress_size:
        raise RunImportError([f"{where}: the archive ends inside this member - truncated?"])
    cap = min(info.file_size, budget)
    if info.compress_type == zipfile.ZIP_STORED:
        pieces: Iterator[bytes] = iter([raw])
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        pieces = _inflate(where, raw)
    elif info.compress_type == 93:  # Zstandard, what current inspect_ai writes
        pieces = _unzstd(where, raw)
    else:
        raise RunImportError([f"{where}: compression method {info.compress_type} is not supported (stored, deflate "
                              "and Zstandard are)"])
    size, crc = 0, 0
    for piece in pieces:
        size += len(piece)
        if size > cap:
            raise RunImportError([f"{where}: expands beyond "
                                  f"{'its declared size' if cap == info.file_size else 'the limit'} ({cap:,} bytes): "
                                  "a zip bomb? Refused"])
        crc = zlib.crc32(piece, crc)
        yield piece
    if crc != info.CRC:
        raise RunImportError([f"{where}: checksum mismatch (corrupt or truncated archive)"])


def _inflate(where: str, raw: bytes) -> Iterator[bytes]:
    d = zlib.decompressobj(-15)
    data = raw
    try:
        while data and not d.eof:
            out = d.decompress(data, CHUNK)
            data = d.unconsumed_tail
            if out:
                yield out
        if tail := d.flush():
            yield tail
    except zlib.error as e:
        raise RunImportError([f"{where}: corrupt deflate data ({e})"]) from None


def _unzstd(where: str, raw: bytes) -> Iterator[bytes]:
    import zstandard

    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True) as r:
            while out := r.read(CHUNK):
                yield out
    except zstandard.ZstdError as e:
        raise RunImportError([f"{where}: corrupt Zstandard data ({e})"]) from None


def read_member(path: Path, f: io.BufferedReader, info: zipfile.ZipInfo, budget: int) -> bytes:
    return b"".join(member_chunks(path, f, info, budget))


def zip_members(path: Path, limits: Limits, want: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of the members `want` names, in name order, all of them together within the limit."""
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise RunImportError([f"{path}: not a readable zip archive ({e}) - truncated?"]) from None
    with z, path.open("rb") as f:
        infos = sorted((i for i in z.infolist() if want(i.filename)), key=lambda i: i.filename)
        check_declared(path, infos, limits)
        budget = limits.max_expanded_bytes
        for info in infos:
            data = read_member(path, f, info, budget)
            budget -= len(data)
            yield info.filename, data


def json_document(path: Path, limits: Limits) -> Any:
    """A whole-file JSON document, refused above the expanded-size limit and named by line when it is broken."""
    size = path.stat().st_size
    if size > limits.max_expanded_bytes:
        raise RunImportError([f"{path}: {size:,} bytes, above the limit of {limits.max_expanded_bytes:,} for one JSON "
                              "document (--max-expanded-mb)"])
    data = path.read_bytes()
    try:
        return parse_json(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise RunImportError([f"{path}:{line}: not UTF-8 text: binary garbage in a JSON document"]) from None
    except json.JSONDecodeError as e:
        raise RunImportError([f"{path}:{e.lineno}: not valid JSON ({e.msg} at column {e.colno}) - truncated?"]) from None
    except ValueError as e:
        raise RunImportError([f"{path}: not usable JSON ({e})"]) from None
