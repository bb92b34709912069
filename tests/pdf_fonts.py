"""The font sizes a PDF really prints, read from its content streams: every `Tf` (the font size set) times the
vertical scale of the text matrix and of the graphics state's matrix in force (`cm`, `q`/`Q`, `Tm`, `Td`), so a
figure scaled into a page or a table shrunk by `\\resizebox` shows its true size in points. Enough of PDF for the
files pdfTeX and Chromium (Skia) write: Flate-compressed or plain content streams, object streams, forms (`Do`)
drawn at their matrix (a form's name is resolved to the first form of that name in the file)."""
from __future__ import annotations

import math
import re
import zlib
from pathlib import Path

_TOKEN = re.compile(rb"/[^\s/\[\]()<>{}%]+|\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f\s]*>|\[|\]|[-+]?(?:\d+\.?\d*|\.\d+)|[A-Za-z'\"*]+")
_OBJ = re.compile(rb"(\d+)\s+0\s+obj(.*?)endobj", re.S)


def _mul(a: list[float], b: list[float]) -> list[float]:
    """a × b for PDF matrices [a b c d e f] (row vectors: a is applied first)."""
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
            a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


def _streams(pdf: bytes) -> dict[int, tuple[bytes, bytes]]:
    """object number -> (dictionary, decoded stream) for every stream object the file holds uncompressed at top
    level (pdfTeX's object streams hold dictionaries only, never content)."""
    out = {}
    for m in _OBJ.finditer(pdf):
        body = m.group(2)
        if b"stream" not in body:
            continue
        head, _, rest = body.partition(b"stream")
        data = rest.lstrip(b"\r\n").rsplit(b"endstream", 1)[0]
        if b"/FlateDecode" in head:
            try:
                data = zlib.decompressobj().decompress(data)
            except zlib.error:
                continue
        out[int(m.group(1))] = (head, data)
    return out


def _dictionaries(pdf: bytes, streams: dict[int, tuple[bytes, bytes]]) -> bytes:
    """The file's text with its object streams (pdfTeX's compressed dictionaries) unpacked beside it."""
    return pdf + b"\n".join(data for head, data in streams.values() if b"/ObjStm" in head)


def _page_contents(pdf: bytes) -> list[int]:
    """The content stream objects of every page (`/Contents n 0 R` or an array of them)."""
    ids = []
    for m in re.finditer(rb"/Contents\s*(\[[^\]]*\]|\d+\s+0\s+R)", pdf):
        ids += [int(x) for x in re.findall(rb"(\d+)\s+0\s+R", m.group(1))]
    return ids


def text_sizes(path: Path | str) -> list[float]:
    """Every font size (points) a text-showing operator of the PDF's pages uses, forms included."""
    raw = Path(path).read_bytes()
    streams = _streams(raw)
    pdf = _dictionaries(raw, streams)
    xobjects = {}  # a form's name is resolved loosely: any /Name n 0 R whose target is a Form stream
    for m in re.finditer(rb"/([^\s/<>\[\]]+)\s+(\d+)\s+0\s+R", pdf):
        obj = int(m.group(2))
        if obj in streams and b"/Form" in streams[obj][0]:
            xobjects.setdefault(m.group(1), obj)
    sizes: list[float] = []

    def run(data: bytes, ctm: list[float], depth: int) -> None:
        stack: list[list[float]] = []
        args: list[bytes] = []
        tm = [1.0, 0, 0, 1.0, 0, 0]
        line = list(tm)
        size = None
        for tok in _TOKEN.findall(data):
            if tok[:1].isalpha() or tok in (b"'", b'"'):
                op = tok
                nums = []
                for a in args:
                    try:
                        nums.append(float(a))
                    except ValueError:
                        nums.append(math.nan)
                if op == b"q":
                    stack.append(list(ctm))
                elif op == b"Q" and stack:
                    ctm = stack.pop()
                elif op == b"cm" and len(nums) >= 6:
                    ctm = _mul(nums[-6:], ctm)
                elif op == b"BT":
                    tm, line = [1.0, 0, 0, 1.0, 0, 0], [1.0, 0, 0, 1.0, 0, 0]
                elif op == b"Tm" and len(nums) >= 6:
                    tm, line = nums[-6:], nums[-6:]
                elif op in (b"Td", b"TD") and len(nums) >= 2:
                    line = _mul([1, 0, 0, 1, nums[-2], nums[-1]], line)
                    tm = list(line)
                elif op == b"Tf" and nums:
                    size = nums[-1]
                elif op in (b"Tj", b"TJ", b"'", b'"') and size is not None:
                    m = _mul(tm, ctm)
                    sizes.append(abs(size) * math.hypot(m[2], m[3]))
                elif op == b"Do" and args and depth < 8:
                    obj = xobjects.get(args[-1].lstrip(b"/"))
                    if obj is not None:
                        head = streams[obj][0]
                        mm = re.search(rb"/Matrix\s*\[([^\]]*)\]", head)
                        fm = [float(x) for x in mm.group(1).split()] if mm else [1.0, 0, 0, 1.0, 0, 0]
                        run(streams[obj][1], _mul(fm, ctm), depth + 1)
                args = []
            else:
                args.append(tok)

    for obj in _page_contents(pdf):
        if obj in streams:
            run(streams[obj][1], [1.0, 0, 0, 1.0, 0, 0], 0)
    return sizes


def smallest_text_pt(path: Path | str) -> float:
    sizes = text_sizes(path)
    if not sizes:
        raise AssertionError(f"{path}: no text found in its pages")
    return min(sizes)
