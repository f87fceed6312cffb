"""Anthropic Messages' fake server: messages in, a ``message`` (or its stream events) out.

The reply is content blocks: ``thinking`` (with its signature, which must come
back with the ``tool_use`` it led to), ``text`` and ``tool_use`` (``input`` an
object); the verdict is ``stop_reason``: ``end_turn``, ``tool_use``,
``max_tokens`` when the output limit cut it, ``refusal``. Streams are
``message_start``, per block ``content_block_start`` / ``_delta`` / ``_stop``
(arguments as ``input_json_delta`` text), ``message_delta`` with the stop reason
and usage, and ``message_stop``.

Anthropic has no failed or cancelled status: a failed generation is an HTTP 500
(``api_error``), an overload a 529 (``overloaded_error``).
"""
from __future__ import annotations

from typing import Any

import orjson

from tracetui.providers.fake_wire.base import (
    FAKE_MODEL, MODEL_FAILED, RATE_LIMITED, FakeWire, halves, loads_or, text_pieces, tokens,
)
from tracetui.providers.shapes import try_canonical_json

STOP = {"completed": "end_turn", "incomplete": "max_tokens"}
#: a fixed stand-in for the signature the API puts on a thinking block
SIGNATURE = "EqQBCkYIBxgCKkBfakesignature"


class AnthropicWire(FakeWire):
    name = "anthropic"
    unexpressed = frozenset({"response_cancelled"})
    differences = {
        "response_failed": ("server_error", "Anthropic has no failed status: a failed generation is an HTTP 500 "
                                            "(api_error), retried, then server_error"),
        "response_cancelled": ("answer_ready", "Anthropic cannot cancel a response: the model answers plainly"),
        "invalid_json": ("answer_ready", "tool_use input arrives as an object, never as broken JSON: the model's "
                                         "broken arguments reach the loop as {} (schema_error, then repaired)"),
    }
    fault_differences = {"5xx": ("overloaded", "Anthropic answers an overload with 529 overloaded_error")}

    def read(self, body):
        items: list[dict[str, Any]] = []
        if isinstance(body.get("system"), str):
            items.append({"type": "message", "role": "system", "content": body["system"]})
        for message in body.get("messages") or ():
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            if isinstance(content, str) or not isinstance(content, list):
                items.append({"type": "message", "role": message.get("role"), "content": content})
                continue
            for block in content:
                if isinstance(block, dict):
                    items.append(_neutral(block, message.get("role")))
        limit = body.get("max_tokens")
        return items, limit if isinstance(limit, int) and not isinstance(limit, bool) else 500

    def cache_key(self, body):
        return [body.get("max_tokens"), body.get("messages")]

    def headers(self, request_id):
        return {"request-id": request_id, "content-type": "application/json"}

    def render(self, reply, number, units):
        if reply["status"] == "failed":
            return 500, {"type": "error", "error": {"type": "api_error", "message": MODEL_FAILED}}
        blocks = [_block(i) for i in reply["output"]]
        if any(i["type"] == "refusal" for i in reply["output"]):
            stop = "refusal"
        elif reply["status"] == "incomplete":
            stop = "max_tokens"
        else:
            stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        return 200, {"id": f"msg_{number:024d}", "type": "message", "role": "assistant", "model": FAKE_MODEL,
                     "content": [b for b in blocks if b["type"] != "refusal"], "stop_reason": stop,
                     "stop_sequence": None, "usage": {"input_tokens": units, "output_tokens": tokens(blocks)}}

    def events(self, body):
        start = {**body, "content": [], "stop_reason": None, "stop_sequence": None,
                 "usage": {**body["usage"], "output_tokens": 1}}
        events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
        for index, block in enumerate(body["content"]):
            events.extend(_block_events(index, block))
        events.append({"type": "message_delta", "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
                       "usage": {"output_tokens": body["usage"]["output_tokens"]}})
        events.append({"type": "message_stop"})
        return events

    def broken_arguments(self, body):
        content = [dict(b) for b in body["content"]]
        call = next((b for b in content if b["type"] == "tool_use"), None)
        if call is not None:
            call["partial_json"] = orjson.dumps(call["input"]).decode()[:-2]  # streamed as such: _block_events
        return {**body, "content": content}

    def cut_at(self, events):
        return next(i for i, e in enumerate(events) if e["type"] == "content_block_delta"
                    and e["delta"]["type"] == "input_json_delta" and e["delta"]["partial_json"]) + 1

    def without_completion(self, events):
        return [e for e in events if e["type"] not in ("message_delta", "message_stop")]

    def rejection(self, problem, detail):
        if problem == "orphan_result":
            detail = (f"messages: unexpected `tool_use_id` found in `tool_result` blocks: {detail}. Each "
                      f"`tool_result` block must have a corresponding `tool_use` block in the previous message.")
        else:
            detail = ("messages: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` "
                      "is enabled, a final `assistant` message must start with a thinking block.")
        return {"type": "error", "error": {"type": "invalid_request_error", "message": detail}}

    def fault(self, kind, request_id):
        if kind == "429":
            return 429, {"request-id": request_id, "retry-after": "2", "content-type": "application/json"}, {
                "type": "error", "error": {"type": "rate_limit_error", "message": RATE_LIMITED}}
        return 529, {"request-id": request_id, "content-type": "application/json"}, {
            "type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    def foreign_body(self):
        return {"id": "chatcmpl-01", "object": "chat.completion", "created": 1, "model": "other-model", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hello from a different API."},
             "finish_reason": "stop"}]}


def _neutral(block: dict[str, Any], role: Any) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "tool_use":
        call = {"type": "tool_call", "call_id": block.get("id"), "name": block.get("name"),
                "arguments": try_canonical_json(block["input"]) if isinstance(block.get("input"), dict) else None}
        return call
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
        return {"type": "tool_result", "call_id": block.get("tool_use_id"), "output": content}
    if kind in ("thinking", "redacted_thinking"):
        return {"type": "reasoning"}
    if kind == "text":
        return {"type": "message", "role": role, "content": block.get("text")}
    return {"type": "other"}


def _block(item: dict[str, Any]) -> dict[str, Any]:
    kind = item["type"]
    if kind == "call":
        args = loads_or(item["arguments"], None)  # cut short by the output limit: no input arrived whole
        return {"type": "tool_use", "id": item["call_id"], "name": item["name"],
                "input": args if isinstance(args, dict) else {}}
    if kind == "text":
        return {"type": "text", "text": item["text"]}
    if kind == "reasoning":
        return {"type": "thinking", "thinking": item["summary"], "signature": SIGNATURE}
    return {"type": "refusal"}


def _block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    kind = block["type"]
    at = {"type": "content_block_delta", "index": index}
    if kind == "text":
        events = [{"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}]
        events += [{**at, "delta": {"type": "text_delta", "text": piece}} for piece in text_pieces(block["text"])]
    elif kind == "tool_use":
        raw = block.get("partial_json", None)
        raw = orjson.dumps(block["input"]).decode() if raw is None else raw
        start = {k: v for k, v in block.items() if k != "partial_json"}
        events = [{"type": "content_block_start", "index": index, "content_block": {**start, "input": {}}}]
        events += [{**at, "delta": {"type": "input_json_delta", "partial_json": piece}} for piece in halves(raw)]
    else:  # thinking
        events = [{"type": "content_block_start", "index": index,
                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                  {**at, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}},
                  {**at, "delta": {"type": "signature_delta", "signature": block["signature"]}}]
    return events + [{"type": "content_block_stop", "index": index}]
