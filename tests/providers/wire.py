"""Documented response shapes per provider, taken from the fixtures, for the live-run tests."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
PROVIDERS = ("openai-responses", "openai-chat", "anthropic", "gemini")
ANSWER = '{"order_id":"o-1","status":"delivered","source":"read_order"}'

_READ_ORDER = {"type": "function", "name": "read_order", "description": "Read the status of an order.",
               "strict": True, "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                              "required": ["order_id"], "additionalProperties": False}}
_RESPONSES_COMMON = {"object": "response", "created_at": 1767225600, "status": "completed", "model": "gpt-4.1-mini",
                     "parallel_tool_calls": True, "tool_choice": "auto", "tools": [_READ_ORDER]}
_RESPONSES_CALL = {"id": "resp_1", **_RESPONSES_COMMON,
                   "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_r1", "name": "read_order",
                               "arguments": "{\"order_id\":\"o-1\"}", "status": "completed"}],
                   "usage": {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}, "output_tokens": 10,
                             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 50}}
_RESPONSES_ANSWER = {"id": "resp_2", **_RESPONSES_COMMON,
                     "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                                 "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]}],
                     "usage": {"input_tokens": 60, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}, "output_tokens": 20,
                               "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 80}}

#: the overload each API answers with, as its docs show it
OVERLOADED = {
    "openai-responses": (500, {"error": {"message": "The server had an error while processing your request.",
                                         "type": "server_error", "param": None, "code": None}}),
    "openai-chat": (503, {"error": {"message": "The engine is currently overloaded, please try again later",
                                    "type": "server_error", "param": None, "code": None}}),
    "anthropic": (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
                        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}),
    "gemini": (503, {"error": {"code": 503, "message": "The model is overloaded. Please try again later.",
                               "status": "UNAVAILABLE"}}),
}
RATE_LIMITED = {"error": {"message": "Rate limit reached for requests per minute. Please try again in 1s.",
                          "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
HTML = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
        "<body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>")


def base_url(provider: str, root: str) -> str:
    """The base URL each provider's SDK takes: OpenAI's ends in its version, the others are the API root."""
    return root + "/v1" if provider.startswith("openai") else root


def _load(name: str) -> list[Any]:
    return json.loads((FIXTURES / name).read_text())


def bodies(provider: str) -> tuple[Any, Any]:
    """(a tool call to read_order o-1, the verified answer) as JSON bodies."""
    if provider == "openai-responses":
        return _RESPONSES_CALL, _RESPONSES_ANSWER
    call, answer = _load(f"{provider}_tool_then_answer.json")
    return call, answer


def streams(provider: str) -> tuple[list[Any], list[Any]]:
    """The same two turns as server-sent events (data payloads, in order)."""
    if provider == "openai-responses":
        from tracetui.providers.fake_wire.responses import responses_to_events
        return responses_to_events(_RESPONSES_CALL), responses_to_events(_RESPONSES_ANSWER)
    call, answer = _load(f"{provider}_stream_tool_then_answer.json")
    return [_sse(e) for e in call["events"]], [_sse(e) for e in answer["events"]]


def sse_frames(provider: str, events: list[Any]) -> list[bytes]:
    """Events framed as each API sends them: Responses and Anthropic name each event (``event: TYPE``, which
    the anthropic SDK requires), Chat sends bare ``data:`` lines and ``data: [DONE]``, Gemini ends its lines
    with CRLF."""
    frames = []
    for event in events:
        if isinstance(event, dict) and set(event) == {"data"}:
            event = event["data"]  # a recorded bare data line ([DONE]) goes out as the text it was
        data = event if isinstance(event, str) else json.dumps(event)
        if provider == "gemini":
            frames.append(f"data: {data}\r\n\r\n".encode())
        elif provider in ("openai-responses", "anthropic") and isinstance(event, dict) and "type" in event:
            frames.append(f"event: {event['type']}\ndata: {data}\n\n".encode())
        else:
            frames.append(f"data: {data}\n\n".encode())
    return frames


def _sse(event: Any) -> Any:
    """Recorded ``{"data": "[DONE]"}`` goes on the wire as the bare text it was."""
    return event["data"] if isinstance(event, dict) and set(event) == {"data"} else event


def args_index(events: list[Any]) -> int:
    """Index of the first event carrying tool-argument text: cutting there drops the call mid-arguments."""
    for n, e in enumerate(events):
        text = json.dumps(e)
        if "function_call_arguments.delta" in text or "input_json_delta" in text and "order_id" in text \
                or ("tool_calls" in text and "order_" in text) or "functionCall" in text:
            return n
    raise AssertionError("no argument event")
