"""Chat Completions' fake server: messages in, a ``chat.completion`` (or its chunks and ``[DONE]``) out.

A turn is one choice: text in ``message.content``, calls in ``message.tool_calls``,
a refusal in ``message.refusal``, the verdict in ``finish_reason`` (``length`` when
the output limit cut it). Streams are ``chat.completion.chunk`` objects: the role
first, then content or tool-call fragments (the first with the call's id and
name), a chunk with the finish reason, the usage chunk the request asks for
(``stream_options.include_usage``), and ``data: [DONE]``.

Chat Completions has no reasoning items and no failed or cancelled status: a
failed generation is an HTTP 500, and a cancelled one cannot happen.
"""
from __future__ import annotations

from typing import Any

from tracetui.providers.fake_wire.base import (
    CREATED_AT, FAKE_MODEL, MODEL_FAILED, OVERLOADED, RATE_LIMITED, FakeWire, halves, text_pieces, tokens,
)

FINISH = {"completed": "stop", "incomplete": "length"}


class ChatWire(FakeWire):
    name = "openai-chat"
    reasoning = False
    unexpressed = frozenset({"reasoning_items", "response_cancelled"})
    differences = {
        "response_failed": ("server_error", "Chat Completions has no failed status: a failed generation is an "
                                            "HTTP 500, retried, then server_error"),
        "response_cancelled": ("answer_ready", "Chat Completions cannot cancel a response: the model answers "
                                               "plainly"),
        "reasoning_items": ("answer_ready", "Chat Completions carries no reasoning items: the model answers "
                                            "without them (as expected)"),
    }

    def read(self, body):
        items: list[dict[str, Any]] = []
        for message in body.get("messages") or ():
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "assistant":
                if isinstance(message.get("content"), str) and message["content"]:
                    items.append({"type": "message", "role": "assistant", "content": message["content"]})
                for call in message.get("tool_calls") or ():
                    function = call.get("function") if isinstance(call, dict) else None
                    function = function if isinstance(function, dict) else {}
                    items.append({"type": "tool_call", "call_id": call.get("id") if isinstance(call, dict) else None,
                                  "name": function.get("name"), "arguments": function.get("arguments")})
            elif role == "tool":
                items.append({"type": "tool_result", "call_id": message.get("tool_call_id"),
                              "output": message.get("content")})
            else:
                items.append({"type": "message", "role": role, "content": message.get("content")})
        limit = body.get("max_completion_tokens")
        return items, limit if isinstance(limit, int) and not isinstance(limit, bool) else 500

    def cache_key(self, body):
        return [body.get("max_completion_tokens"), body.get("messages")]

    def render(self, reply, number, units):
        if reply["status"] == "failed":
            return 500, {"error": {"message": MODEL_FAILED, "type": "server_error", "param": None, "code": None}}
        text = "".join(i["text"] for i in reply["output"] if i["type"] == "text")
        refusal = next((i["text"] for i in reply["output"] if i["type"] == "refusal"), None)
        calls = [{"id": i["call_id"], "type": "function", "function": {"name": i["name"], "arguments": i["arguments"]}}
                 for i in reply["output"] if i["type"] == "call"]
        message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": refusal,
                                   "annotations": []}
        if calls:
            message["tool_calls"] = calls
        finish = FINISH.get(reply["status"], "stop")
        if finish == "stop" and calls:
            finish = "tool_calls"
        out = tokens(message)
        return 200, {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": CREATED_AT,
                     "model": FAKE_MODEL, "choices": [{"index": 0, "message": message, "logprobs": None,
                                                      "finish_reason": finish}],
                     "usage": {"prompt_tokens": units, "completion_tokens": out, "total_tokens": units + out}}

    def events(self, body):
        message = body["choices"][0]["message"]
        head = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": piece}) for piece in text_pieces(message.get("content") or "")]
        events += [chunk({"refusal": piece}) for piece in text_pieces(message.get("refusal") or "")]
        for n, call in enumerate(message.get("tool_calls") or []):
            fn = call["function"]
            events.append(chunk({"tool_calls": [{"index": n, "id": call["id"], "type": "function",
                                                 "function": {"name": fn["name"], "arguments": ""}}]}))
            events += [chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]})
                       for piece in halves(fn["arguments"])]
        events.append(chunk({}, body["choices"][0]["finish_reason"]))
        events.append({**head, "choices": [], "usage": body["usage"]})
        events.append({"data": "[DONE]"})
        return events

    def broken_arguments(self, body):
        choice = body["choices"][0]
        calls = [dict(c, function=dict(c["function"])) for c in choice["message"].get("tool_calls") or []]
        if calls:
            calls[0]["function"]["arguments"] = calls[0]["function"]["arguments"][:-2]
        return {**body, "choices": [{**choice, "message": {**choice["message"], "tool_calls": calls}}]}

    def cut_at(self, events):
        return next(i for i, e in enumerate(events) if any(
            (f.get("function") or {}).get("arguments") for c in e.get("choices") or ()
            for f in c["delta"].get("tool_calls") or ())) + 1

    def without_completion(self, events):
        """Cut before the finish reason: no choice finishes, no usage, no ``[DONE]``."""
        return [e for e in events if e.get("choices") and e["choices"][0]["finish_reason"] is None]

    def rejection(self, problem, detail):
        if problem == "orphan_result":
            detail = ("Invalid parameter: messages with role 'tool' must be a response to a preceding message "
                      "with 'tool_calls'.")
        return {"error": {"message": detail, "type": "invalid_request_error", "param": "messages", "code": None}}

    def fault(self, kind, request_id):
        if kind == "429":
            return 429, {"x-request-id": request_id, "retry-after": "2", "content-type": "application/json"}, {
                "error": {"message": RATE_LIMITED, "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
        return 503, {"x-request-id": request_id, "content-type": "application/json"}, {
            "error": {"message": OVERLOADED, "type": "server_error", "param": None, "code": None}}
