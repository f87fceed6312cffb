"""Model responses as each API writes them, for edits on the model's side of a run.

Two needs: *where* in a recorded body a call's name, id or arguments sit (so a fix
edits one field, the smallest change), and a whole response written afresh when a
turn must say something else entirely (call a tool instead of refusing, answer from
the receipts). The builders write the minimal body each adapter in
:mod:`tracetui.providers` accepts; a test parses every one with its adapter.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import orjson

Parts = list[Any]  # a JSON Pointer as its segments


@dataclass(frozen=True)
class CallSpec:
    call_id: str
    name: str
    arguments: dict[str, Any]

    @property
    def text(self) -> str:
        return orjson.dumps(self.arguments).decode()


def answer_body(provider: str, text: str) -> dict[str, Any]:
    """A final text answer, in ``provider``'s response shape."""
    if provider == "openai-chat":
        return {"object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
    if provider == "anthropic":
        return {"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn"}
    if provider == "gemini":
        return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}]}
    return {"object": "response", "status": "completed", "output": [
        {"type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": text, "annotations": []}]}]}


def calls_body(provider: str, calls: list[CallSpec]) -> dict[str, Any]:
    """A response that makes these tool calls, in ``provider``'s response shape."""
    if provider == "openai-chat":
        return {"object": "chat.completion", "choices": [{"index": 0, "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.text}}
                           for c in calls]}, "finish_reason": "tool_calls"}]}
    if provider == "anthropic":
        return {"type": "message", "role": "assistant", "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.arguments} for c in calls]}
    if provider == "gemini":
        return {"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": c.call_id, "name": c.name, "args": c.arguments}} for c in calls]},
            "finishReason": "STOP"}]}
    return {"object": "response", "status": "completed", "output": [
        {"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.text, "status": "completed"}
        for c in calls]}


def exchange_record(body: dict[str, Any]) -> dict[str, Any]:
    """A whole answered exchange around a body (what ``/responses/<n>`` holds)."""
    return {"status": 200, "headers": {"content-type": "application/json"}, "body": body}


#: what a streamed body carries beside the answer (ids, model, usage): each API's stream repeats it
_STREAM_FIELDS: dict[str, dict[str, Any]] = {
    "openai-chat": {"id": "chatcmpl-fix", "created": 0, "model": "fix",
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}},
    "anthropic": {"id": "msg_fix", "model": "fix", "usage": {"input_tokens": 0, "output_tokens": 0}},
    "gemini": {"modelVersion": "fix", "responseId": "fix", "usageMetadata": {"promptTokenCount": 0, "candidatesTokenCount": 0}},
    "openai-responses": {},
}


def streamed_record(provider: str, body: dict[str, Any]) -> dict[str, Any]:
    """A whole exchange that streams ``body`` as ``provider``'s API streams it: what an SDK that asked for a
    stream can read (the user's agent re-run against a recording of one)."""
    from tracetui.providers.fake_wire import wire_for

    full = {**_STREAM_FIELDS.get(provider, {}), **body}
    return {"status": 200, "headers": {"content-type": "text/event-stream"}, "events": wire_for(provider).events(full)}


@dataclass(frozen=True)
class CallPlace:
    """Where one call's fields sit inside a response body (pointer segments from the body)."""

    name: Parts
    arguments: Parts
    call_id: Parts | None
    arguments_as_text: bool  # a JSON string (OpenAI) rather than an object (Anthropic, Gemini)


def _call_place(node: dict[str, Any], at: Parts) -> CallPlace | None:
    fn = node.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str) and "arguments" in fn:  # chat completions
        return CallPlace([*at, "function", "name"], [*at, "function", "arguments"],
                         [*at, "id"] if "id" in node else None, isinstance(fn["arguments"], str))
    if isinstance(node.get("name"), str):
        for key in ("arguments", "input", "args"):
            if key in node:
                id_key = "call_id" if "call_id" in node else "id" if "id" in node else None
                return CallPlace([*at, "name"], [*at, key], [*at, id_key] if id_key else None,
                                 isinstance(node[key], str))
    return None


def call_places(body: Any, limit: int = 256) -> list[CallPlace]:
    """Every tool call in a body, in document order (the order an adapter reads them)."""
    found: list[CallPlace] = []

    def walk(node: Any, at: Parts, depth: int) -> None:
        if len(found) >= limit or depth > 12:
            return
        if isinstance(node, dict):
            place = _call_place(node, at)
            if place is not None:
                found.append(place)
                return
            for key, value in node.items():
                walk(value, [*at, key], depth + 1)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, [*at, i], depth + 1)

    walk(body, [], 0)
    return found


def text_places(body: Any, text: str) -> Iterator[Parts]:
    """Where a string equal to ``text`` sits in a body (an answer's text, a finish reason)."""
    def walk(node: Any, at: Parts, depth: int) -> Iterator[Parts]:
        if depth > 12:
            return
        if isinstance(node, str):
            if node == text:
                yield at
        elif isinstance(node, dict):
            for key, value in node.items():
                yield from walk(value, [*at, key], depth + 1)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from walk(value, [*at, i], depth + 1)

    yield from walk(body, [], 0)


#: What a response that finished normally says where a cut-off one said why it stopped:
#: provider -> (field name, value when it made calls, value when it answered)
FINISHED = {
    "openai-responses": ("status", "completed", "completed"),
    "openai-chat": ("finish_reason", "tool_calls", "stop"),
    "anthropic": ("stop_reason", "tool_use", "end_turn"),
    "gemini": ("finishReason", "STOP", "STOP"),
}


def finished_place(provider: str, body: Any, with_calls: bool) -> tuple[Parts, str] | None:
    """The field that says why a response stopped, and the value of a response that finished."""
    field, calls_value, text_value = FINISHED.get(provider, FINISHED["openai-responses"])

    def walk(node: Any, at: Parts, depth: int) -> Parts | None:
        if depth > 6:
            return None
        if isinstance(node, dict):
            if isinstance(node.get(field), str):
                return [*at, field]
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    found = walk(value, [*at, key], depth + 1)
                    if found is not None:
                        return found
        elif isinstance(node, list) and node:
            return walk(node[0], [*at, 0], depth + 1)
        return None

    at = walk(body, [], 0)
    return (at, calls_value if with_calls else text_value) if at is not None else None
