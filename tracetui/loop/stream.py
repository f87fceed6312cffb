"""Folding a server-sent event stream into one response.

Two rules: text deltas may be shown as they arrive, but a tool call is released
only once its arguments are complete JSON *and* the stream's completion event has
come. A stream that stops early, never completes, or closes a call with broken
JSON is a protocol error, and no tool runs.

:class:`EventFolder` holds those rules once; each API's assembler (Responses here,
Chat Completions, Anthropic and Gemini in ``tracetui.providers``) only says which
of its events carry text, arguments and completion.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from tracetui.providers.shapes import json_type, plain

TERMINAL = {"response.completed", "response.incomplete", "response.failed"}


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
        return None, f"malformed stream event: {type(exc).__name__}: {str(exc)[:200]}"


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


@dataclass
class StreamAssembler(EventFolder):
    """Feed it Responses-API stream events one at a time."""

    text: str = ""
    items: dict[int, dict[str, Any]] = field(default_factory=dict)
    args: dict[int, str] = field(default_factory=dict)
    final: dict[str, Any] | None = None
    shown: list[str] = field(default_factory=list)  # text deltas, in arrival order

    final_event = "a completion event"

    @property
    def ended(self) -> bool:  # type: ignore[override]
        return self.final is not None

    def take(self, event: dict[str, Any]) -> str | None:
        kind = event_type(event)
        if kind in TERMINAL:
            response = event.get("response")
            if not isinstance(response, dict):
                raise StreamProtocolError(f"{kind} carries no response object")
            self.final = response
            return None
        if kind == "response.output_text.delta":
            return self.show(text_field(event, "delta", kind))
        if kind not in ("response.output_item.added", "response.function_call_arguments.delta",
                        "response.function_call_arguments.done", "response.output_item.done"):
            return None
        idx = index_field(event, "output_index", kind, default=0)
        if kind == "response.output_item.added":
            self.items[idx] = dict(object_field(event, "item", kind))
            if self.items[idx].get("type") == "function_call":
                self.args[idx] = ""
        elif kind == "response.function_call_arguments.delta":
            if idx not in self.args:
                raise StreamProtocolError(f"arguments delta for unknown output item {idx}")
            self.args[idx] += text_field(event, "delta", kind)
        elif kind == "response.function_call_arguments.done":
            # checked when the stream ends: a response cut by its token limit is "incomplete", not broken
            if "arguments" in event:
                self.args[idx] = text_field(event, "arguments", kind)
            else:
                self.args.setdefault(idx, "")
        else:  # response.output_item.done
            item = dict(object_field(event, "item", kind) or self.items.get(idx) or {})
            if item.get("type") == "function_call" and item.get("status") != "incomplete":
                complete_json(item.get("arguments", self.args.get(idx, "")), f"output item {idx}")
            self.items[idx] = item
        return None

    def result(self) -> dict[str, Any]:
        assert self.final is not None
        if self.final.get("status") != "incomplete":  # an incomplete response runs no tool anyway
            for idx, item in self.items.items():
                if item.get("type") == "function_call":
                    complete_json(self.args.get(idx, item.get("arguments", "")), f"output item {idx}")
        return self.final


def assemble_responses_stream(events: list[dict[str, Any]]) -> tuple[Any, str | None]:
    return assemble(StreamAssembler(), events)


def responses_to_events(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Render a complete Responses body as the event stream a server would send."""
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": body.get("id"), "status": "in_progress"}}]
    for idx, item in enumerate(body.get("output") or []):
        if item.get("type") == "function_call":
            events.append({"type": "response.output_item.added", "output_index": idx,
                           "item": {**item, "arguments": ""}})
            raw = item["arguments"]
            half = len(raw) // 2
            for chunk in (raw[:half], raw[half:]):
                events.append({"type": "response.function_call_arguments.delta", "output_index": idx, "delta": chunk})
            events.append({"type": "response.function_call_arguments.done", "output_index": idx, "arguments": raw})
        elif item.get("type") == "message":
            events.append({"type": "response.output_item.added", "output_index": idx,
                           "item": {**item, "content": []}})
            for part in item.get("content") or []:
                text = part.get("text", "")
                for start in range(0, len(text), 24):
                    events.append({"type": "response.output_text.delta", "output_index": idx,
                                   "delta": text[start:start + 24]})
        else:
            events.append({"type": "response.output_item.added", "output_index": idx, "item": item})
        events.append({"type": "response.output_item.done", "output_index": idx, "item": item})
    terminal = {"completed": "response.completed", "incomplete": "response.incomplete"}.get(body.get("status"), "response.failed")
    events.append({"type": terminal, "response": body})
    return events
