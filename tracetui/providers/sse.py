"""Server-sent events, parsed incrementally from bytes into the event list a trace records.

Each event becomes its ``data`` parsed as JSON when it is a JSON object; any
other data (Chat Completions' ``[DONE]``, a stray string) is kept as
``{"data": text}`` so nothing the server sent is lost or invented. Event names,
ids and comments are not recorded: every API here repeats the type in the data.
"""
from __future__ import annotations

import codecs
from typing import Any

import orjson


def to_event(data: str) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {"data": data}
    return value if isinstance(value, dict) else {"data": value}


class SSEParser:
    """Feed it byte chunks as they arrive; it returns the events completed so far."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        self._buffer += self._decoder.decode(chunk)
        events: list[dict[str, Any]] = []
        while True:
            cut = self._buffer.find("\n")
            if cut < 0:
                return events
            line, self._buffer = self._buffer[:cut].rstrip("\r"), self._buffer[cut + 1:]
            event = self._line(line)
            if event is not None:
                events.append(event)

    def close(self) -> list[dict[str, Any]]:
        """Events left at the end of the body: a last event without its blank line still counts."""
        self._buffer += self._decoder.decode(b"", final=True)
        events = self.feed(b"\n") if self._buffer else []
        if self._data:
            events.append(to_event("\n".join(self._data)))
            self._data = []
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
