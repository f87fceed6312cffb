"""Server-sent events, parsed incrementally from bytes into the event list a trace records.

Parsed as the HTML spec's event-stream interpretation says: lines end with CRLF,
LF or a lone CR (a CR at the end of one chunk may be the first half of a CRLF
split across two), a leading byte-order mark is dropped, ``data`` lines join with
``\\n``, a blank line dispatches the event, and an event still open when the
stream ends is discarded. Each chunk is scanned once, and a line split over many
chunks is joined once, so the work is linear in the bytes however long a line is.

Each event becomes its ``data`` parsed as JSON when it is a JSON object; any
other data (Chat Completions' ``[DONE]``, a stray string) is kept as
``{"data": text}`` so nothing the server sent as an event is lost or invented.
Event names, ids, ``retry`` and comments are not recorded: every API here repeats
the type in the data.
"""
from __future__ import annotations

import codecs
from typing import Any

import orjson

from tracetui.trace.limits import too_deep

_BOM = "\ufeff"


def to_event(data: str) -> dict[str, Any]:
    """The event's data as a JSON object, else as ``{"data": …}`` (text when it is not JSON a trace can hold)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {"data": data}
    if too_deep(value):
        return {"data": data}
    return value if isinstance(value, dict) else {"data": value}


class SSEParser:
    """Feed it byte chunks as they arrive; it returns the events completed so far."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial: list[str] = []  # the pieces of a line not yet ended
        self._after_cr = False  # the last chunk ended with CR: a LF opening the next one ends nothing
        self._started = False  # whether the first character (a possible BOM) was seen
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        return self._text(self._decoder.decode(chunk))

    def close(self) -> list[dict[str, Any]]:
        """The end of the body: a last line without its line end still counts; an event it leaves open does not."""
        events = self._text(self._decoder.decode(b"", final=True))
        if self._partial:
            line, self._partial = "".join(self._partial), []
            event = self._line(line)
            if event is not None:
                events.append(event)
        self._data = []  # the spec: an event not ended by a blank line is never dispatched
        return events

    def _text(self, text: str) -> list[dict[str, Any]]:
        if not text:  # a chunk that decoded to nothing (half a character, a gzip flush block) changes nothing
            return []
        if not self._started:
            self._started = True
            if text.startswith(_BOM):
                text = text[1:]
        if self._after_cr:
            self._after_cr = False
            if text.startswith("\n"):  # the second half of a CRLF split across chunks
                text = text[1:]
        if not text:
            return []
        if "\r" in text:
            self._after_cr = text.endswith("\r")
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        tail = lines.pop()  # what follows the last line end: the start of a line not yet ended
        if lines and self._partial:
            self._partial.append(lines[0])
            lines[0] = "".join(self._partial)
            self._partial = []
        if tail:
            self._partial.append(tail)
        events: list[dict[str, Any]] = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> dict[str, Any] | None:
        if not line:
            if not self._data:
                return None
            data, self._data = "\n".join(self._data), []
            return to_event(data)
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if field == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None
