"""Reading one scan step: whole lines from a position, classified, without touching the scan's state.

A step is ``chunk_bytes`` of whole lines, or the one line longer than that: a line over
the limit is measured (its end found by reading on) but never held. The result, a
:class:`Prepared`, is linked to runs by :meth:`.scanner.Scanner.apply`. Preparing needs
nothing but the file.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracetui.trace import limits
from tracetui.trace.format import BOM
from tracetui.trace.index.classify import line_ends
from tracetui.trace.index.lines import FileLines

#: bytes read when looking for the end of a line longer than a chunk
_SEEK_BLOCK = 1 << 20
#: bytes read past a chunk, so that the bulk reads near its end need no copy
PAD = 64
#: lines classified in one step at the most: the bulk arrays cost a few hundred bytes a line, so a chunk
#: of blank or tiny lines (4 MiB of newlines is 4 M lines) would cost gigabytes
MAX_LINES_PER_STEP = 1 << 16


@dataclass
class Prepared:
    """A step read and classified, ready to be linked: bytes [start, end) of the file."""

    start: int
    end: int  # == start: nothing to do yet (a line is still being written)
    buf: bytes = b""
    base: int = 0  # where buf starts in the file
    size: int = 0  # bytes of buf that hold the step's whole lines
    chunk: Any = None
    validation: Any = None
    items: Any = None  # what bulk linking needs that the chunk alone decides (None: the per-line path)
    too_long: int | None = None  # a line over the limit: its length (reported, never held)


def prepare(lines: FileLines, strict: bool, start: int, size: int, chunk_bytes: int, final: bool) -> Prepared:
    """Read and classify the step from ``start`` (``size``: the file's end as the scan sees it).
    Touches no state of the scan, so it may run in another thread."""
    f = lines
    end = min(start + max(1, chunk_bytes), size)
    if end <= start:
        return Prepared(start, start)
    buf = f.read(start, min(end + PAD, size) - start)  # a little more: padding for the bulk reads
    length, base = end - start, start
    if start == 0 and buf.startswith(BOM):
        buf, base, length = buf[len(BOM):], len(BOM), length - len(BOM)
    last = end == size
    if last and final:
        n = length
    else:
        n = buf.rfind(b"\n", 0, length) + 1
        if n == 0:
            return _long_line(lines, strict, start, base, size, final)
    newlines = line_ends(buf, n)
    if len(newlines) > MAX_LINES_PER_STEP:  # tiny lines: the step ends after its first MAX_LINES_PER_STEP
        newlines = newlines[:MAX_LINES_PER_STEP]
        n, last = int(newlines[-1]) + 1, False
    return _classified(strict, start, buf, base, last and final, n, newlines)

def _long_line(lines: FileLines, strict: bool, step_start: int, start: int, size: int, final: bool) -> Prepared:
    """A line longer than a chunk: reported without holding it when over the limit, else read whole."""
    f = lines
    pos = start
    while True:
        block = f.read(pos, min(_SEEK_BLOCK, size - pos)) if pos < size else b""
        nl = block.find(b"\n")
        if nl >= 0:
            end = pos + nl + 1
            break
        pos += len(block)
        if pos >= size:
            if not final:
                return Prepared(step_start, step_start)  # still being written
            end = size
            break
    length = end - start
    tail = f.read(max(start, end - 64), min(64, length)) if length else b""
    length -= len(tail) - len(tail.rstrip(b"\r\n"))
    length = f.true_length(start, length)
    if length > limits.MAX_LINE_BYTES:
        return Prepared(step_start, end, too_long=length)
    return _classified(strict, step_start, f.read(start, end - start), start, end == size and final, end - start)

def _classified(strict: bool, step_start: int, buf: bytes, base: int, final: bool, size: int,
                newlines: Any = None) -> Prepared:
    from tracetui.trace.index import classify as cl
    from tracetui.trace.index.items import chunk_items
    from tracetui.trace.index.validation import Validation

    validation = Validation(buf, limits.MAX_DEPTH, size) if strict else None
    chunk = cl.classify(buf, limits.MAX_LINE_BYTES, final, validation, size, newlines)
    return Prepared(step_start, base + size, buf, base, size, chunk, validation, chunk_items(buf, chunk, validation, size))
