"""JSON with a few bad spots, read anyway: an invalid UTF-8 byte or half a surrogate pair costs one character.

An exporter that cut a string in the middle of a character, or escaped half of a
UTF-16 pair (``\\ud83d`` alone), made one spot of a file unreadable to a strict
parser, and a whole OTLP/JSON document with it. Each such spot is read as U+FFFD
(the replacement character) and reported where it is, in words; the rest of the
document is read as written. Any other malformation is reported with its line and
column, never mended (a guess at the writer's intent could be wrong).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

#: bad spots reported one by one in a document (past them, one more note says how the rest went)
MAX_NOTES = 20
REPLACEMENT = "\ufffd"
#: one escape of a JSON string: ``\uXXXX`` or a backslash and one character
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)


@dataclass(frozen=True)
class Note:
    """A spot of the document: its line (1 for its first) and what was wrong there, in words."""

    line: int
    message: str


def loads(raw: bytes) -> tuple[Any, list[Note], Note | None]:
    """(the value, the spots read as U+FFFD, None), or (None, those spots, why it cannot be read)."""
    try:
        return orjson.loads(raw), [], None
    except orjson.JSONDecodeError:
        pass
    notes: list[Note] = []
    text = _decoded(raw, notes)
    text = _whole_pairs(text, notes)
    try:
        return orjson.loads(text), notes, None
    except orjson.JSONDecodeError as exc:
        return None, notes, Note(exc.lineno, f"malformed JSON: {exc.msg} (column {exc.colno})")


def _where(text: str | bytes, at: int) -> tuple[int, int]:
    """(line, column) of offset ``at``, both counted from 1."""
    newline = "\n" if isinstance(text, str) else b"\n"
    line_start = text.rfind(newline, 0, at) + 1  # type: ignore[arg-type]
    return text.count(newline, 0, at) + 1, at - line_start + 1  # type: ignore[arg-type]


def _decoded(raw: bytes, notes: list[Note]) -> str:
    """``raw`` as text, each invalid UTF-8 sequence one U+FFFD (the first runs of them noted with where they are)."""
    parts: list[str] = []
    spots: list[list[int]] = []  # [start, end) of each run of bad bytes side by side
    at = 0
    while at < len(raw):
        try:
            parts.append(raw[at:].decode("utf-8"))
            break
        except UnicodeDecodeError as exc:
            start, end = at + exc.start, at + exc.end
        parts += (raw[at:start].decode("utf-8"), REPLACEMENT)
        if spots and spots[-1][1] == start:
            spots[-1][1] = end
        elif len(spots) < MAX_NOTES:
            spots.append([start, end])
        else:
            line, column = _where(raw, start)
            parts.append(raw[end:].decode("utf-8", errors="replace"))
            notes.extend(_byte_note(raw, *spot) for spot in spots)
            notes.append(Note(line, f"more bytes that are not UTF-8 from column {column} on: all read as U+FFFD"))
            return "".join(parts)
        at = end
    notes.extend(_byte_note(raw, *spot) for spot in spots)
    return "".join(parts)


def _byte_note(raw: bytes, start: int, end: int) -> Note:
    line, column = _where(raw, start)
    shown = " ".join(f"0x{b:02x}" for b in raw[start:end][:8]) + (" …" if end - start > 8 else "")
    said = f"byte {shown} at column {column} is" if end - start == 1 else f"bytes {shown} at column {column} are"
    return Note(line, f"{said} not UTF-8: read as U+FFFD")


def _whole_pairs(text: str, notes: list[Note]) -> str:
    """``text`` with each ``\\uD800``–``\\uDFFF`` escape that is not half of a pair made ``\\ufffd``."""
    escapes = [m for m in _ESCAPE.finditer(text) if m.group(1) is not None]
    lone: list[re.Match[str]] = []
    i = 0
    while i < len(escapes):
        unit = int(escapes[i].group(1), 16)
        if 0xD800 <= unit <= 0xDBFF and i + 1 < len(escapes) and escapes[i + 1].start() == escapes[i].end() \
                and 0xDC00 <= int(escapes[i + 1].group(1), 16) <= 0xDFFF:
            i += 2  # a whole pair
            continue
        if 0xD800 <= unit <= 0xDFFF:
            lone.append(escapes[i])
        i += 1
    if not lone:
        return text
    parts, at = [], 0
    for n, match in enumerate(lone, 1):
        parts += (text[at:match.start()], "\\ufffd")
        at = match.end()
        if n <= MAX_NOTES:
            line, column = _where(text, match.start())
            notes.append(Note(line, f"{match.group(0)} at column {column} is half a UTF-16 surrogate pair: "
                                    f"read as U+FFFD"))
    if len(lone) > MAX_NOTES:
        notes.append(Note(_where(text, lone[MAX_NOTES].start())[0],
                          f"{len(lone) - MAX_NOTES} more halves of surrogate pairs: all read as U+FFFD"))
    parts.append(text[at:])
    return "".join(parts)
