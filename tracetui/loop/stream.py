"""Folding a server-sent event stream into one response.

Two rules: text deltas may be shown as they arrive, but a tool call is released
only once its arguments are complete JSON *and* the stream's completion event has
come. A stream that stops early, never completes, or closes a call with broken
JSON is a protocol error, and no tool runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

TERMINAL = {"response.completed", "response.incomplete", "response.failed"}


class StreamProtocolError(Exception):
    pass


@dataclass
class StreamAssembler:
    """Feed it Responses-API stream events one at a time."""

    text: str = ""
    items: dict[int, dict[str, Any]] = field(default_factory=dict)
    args: dict[int, str] = field(default_factory=dict)
    final: dict[str, Any] | None = None
    shown: list[str] = field(default_factory=list)  # text deltas, in arrival order

    def feed(self, event: dict[str, Any]) -> str | None:
        """Take one event; return a text delta that may be displayed now, if any."""
        if self.final is not None:
            raise StreamProtocolError("event after the completion event")
        kind = event.get("type")
        idx = event.get("output_index", 0)
        if kind == "error":
            err = event.get("error") if isinstance(event.get("error"), dict) else event
            raise StreamProtocolError(f"error event mid-stream: {err.get('message') or err.get('code') or 'unknown'}")
        if kind == "response.output_item.added":
            self.items[idx] = dict(event.get("item") or {})
            if self.items[idx].get("type") == "function_call":
                self.args[idx] = ""
        elif kind == "response.output_text.delta":
            delta = str(event.get("delta", ""))
            self.text += delta
            self.shown.append(delta)
            return delta
        elif kind == "response.function_call_arguments.delta":
            if idx not in self.args:
                raise StreamProtocolError(f"arguments delta for unknown output item {idx}")
            self.args[idx] += str(event.get("delta", ""))
        elif kind == "response.function_call_arguments.done":
            raw = event.get("arguments", self.args.get(idx, ""))
            try:
                orjson.loads(raw)
            except (orjson.JSONDecodeError, TypeError):
                raise StreamProtocolError(f"tool arguments in output item {idx} are not complete JSON") from None
            self.args[idx] = raw
        elif kind == "response.output_item.done":
            item = dict(event.get("item") or self.items.get(idx) or {})
            if item.get("type") == "function_call":
                raw = item.get("arguments", self.args.get(idx, ""))
                try:
                    orjson.loads(raw)
                except (orjson.JSONDecodeError, TypeError):
                    raise StreamProtocolError(f"tool arguments in output item {idx} are not complete JSON") from None
            self.items[idx] = item
        elif kind in TERMINAL:
            response = event.get("response")
            if not isinstance(response, dict):
                raise StreamProtocolError(f"{kind} carries no response object")
            self.final = response
        return None

    def finish(self) -> dict[str, Any]:
        """The assembled response; raises if the stream never completed."""
        if self.final is None:
            raise StreamProtocolError("stream ended without a completion event")
        for idx, item in self.items.items():
            if item.get("type") == "function_call" and idx in self.args:
                try:
                    orjson.loads(item.get("arguments", self.args[idx]))
                except (orjson.JSONDecodeError, TypeError):
                    raise StreamProtocolError(f"tool arguments in output item {idx} are not complete JSON") from None
        return self.final


def assemble_responses_stream(events: list[dict[str, Any]]) -> tuple[Any, str | None]:
    asm = StreamAssembler()
    try:
        for event in events:
            asm.feed(event)
        return asm.finish(), None
    except StreamProtocolError as exc:
        return None, str(exc)


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
