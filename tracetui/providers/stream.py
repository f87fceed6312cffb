"""Folding a server-sent event stream into one response.

Two rules: text deltas may be shown as they arrive, but a tool call is released
only once its arguments are complete JSON *and* the stream's completion event has
come. A stream that stops early, never completes, or closes a call with broken
JSON is a protocol error, and no tool runs.

:class:`EventFolder` holds those rules once; each API's assembler (Responses,
Chat Completions, Anthropic and Gemini) only says which of its events carry text,
arguments and completion. Each folder lives with its API's adapter.
"""
from __future__ import annotations

from typing import Any

import orjson

from tracetui.providers.shapes import json_type, plain
from tracetui.trace.safe_text import redacted_prefix

class StreamProtocolError(Exception):
    pass


def stream_error(event: dict[str, Any]) -> str | None:
    """The message of an error event, in any of the shapes vendors send, else None.

    Flat ``{"type": "error", "message": ...}`` (Responses), typed with a nested
    object ``{"type": "error", "error": {...}}`` (Anthropic), or an untyped
    ``{"error": {...}}`` chunk (Chat Completions, Gemini).
    """
    nested = event.get("error")
    if event.get("type") != "error" and not isinstance(nested, dict):
        return None
    err = nested if isinstance(nested, dict) else event
    message = err.get("message") or err.get("code") or err.get("status")
    if not message and err is not event:
        message = err.get("type")
    return plain(message or "unknown")


def complete_json(raw: Any, where: str) -> Any:
    """Parse tool arguments, or raise: a call is never released with broken JSON."""
    try:
        return orjson.loads(raw)
    except (orjson.JSONDecodeError, TypeError):
        raise StreamProtocolError(f"tool arguments in {where} are not complete JSON") from None


class EventFolder:
    """The rules every stream shares; subclasses fold their own event types.

    Subclasses implement :meth:`take` (one event; return a text delta to show, if
    any), :meth:`result` (the assembled body) and keep ``ended`` true once their
    final event arrived.
    """

    #: what the final event is called, for error messages
    final_event = "a completion event"

    def __init__(self) -> None:
        self.text = ""
        self.shown: list[str] = []
        self.ended = False

    def feed(self, event: Any) -> str | None:
        """Take one event; return a text delta that may be displayed now, if any."""
        if not isinstance(event, dict):
            raise StreamProtocolError(f"event is a JSON {type(event).__name__}, not an object")
        if self.ended and not self.after_end(event):
            raise StreamProtocolError(f"event after the {self.final_event.split(' ', 1)[-1]}")
        message = stream_error(event)
        if message is not None:
            raise StreamProtocolError(f"error event mid-stream: {message}")
        return self.take(event)

    def show(self, delta: str) -> str:
        self.text += delta
        self.shown.append(delta)
        return delta

    def after_end(self, event: dict[str, Any]) -> bool:
        """Whether ``event`` may follow the final event (e.g. a usage-only chunk)."""
        return False

    def finish(self) -> Any:
        """The assembled response; raises if the stream never completed."""
        if not self.ended:
            raise StreamProtocolError(f"stream ended without {self.final_event}")
        return self.result()

    def take(self, event: dict[str, Any]) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def result(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


def assemble(folder: EventFolder, events: list[Any]) -> tuple[Any, str | None]:
    """Feed every event; return ``(body, None)`` or ``(None, protocol error)``.

    The folders check what they read; an event shaped so oddly that a check was
    missed still ends as a protocol error, never as an exception out of the loop.
    """
    try:
        if not isinstance(events, list):
            raise StreamProtocolError(f"events are a JSON {json_type(events)}, not a list")
        for event in events:
            folder.feed(event)
        return folder.finish(), None
    except StreamProtocolError as exc:
        return None, str(exc)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        return None, f"malformed stream event: {type(exc).__name__}: {redacted_prefix(str(exc), 200)}"


def event_type(event: dict[str, Any]) -> str | None:
    """An event's ``type``: text, or None when it has none; any other JSON type is a protocol error."""
    kind = event.get("type")
    if kind is not None and not isinstance(kind, str):
        raise StreamProtocolError(f"event type is a JSON {json_type(kind)}, not a string")
    return kind


def text_field(obj: dict[str, Any], key: str, where: str) -> str:
    """``obj[key]`` as text ("" when absent); any other JSON type is a protocol error."""
    value = obj.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise StreamProtocolError(f"{key} in {where} is a JSON {json_type(value)}, not a string")
    return value


def object_field(obj: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """``obj[key]`` as an object ({} when absent or null); any other JSON type is a protocol error."""
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StreamProtocolError(f"{key} in {where} is a JSON {json_type(value)}, not an object")
    return value


def list_field(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    """``obj[key]`` as a list ([] when absent or null); any other JSON type is a protocol error."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise StreamProtocolError(f"{key} in {where} is a JSON {json_type(value)}, not a list")
    return value


def index_field(obj: dict[str, Any], key: str, where: str, default: int | None = None) -> int:
    """``obj[key]`` as a non-negative integer index; anything else is a protocol error."""
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        shown = "missing" if key not in obj else f"the number {value}" if isinstance(value, int) \
            and not isinstance(value, bool) else f"a JSON {json_type(value)}"
        raise StreamProtocolError(f"{key} in {where} is {shown}, not an index")
    return value
