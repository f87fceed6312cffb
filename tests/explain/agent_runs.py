"""Record runs of an openai-chat agent, built by hand exchange by exchange and judged by the record lanes.

Each scenario is what a support agent with one tool (``read_order``, ids ``^o-[0-9]+$``) sends and gets
for "What is the status of order o-1?": the run records come from :func:`tracetui.record.recording.run_records`,
as ``tracetui record`` writes them, so explain reads exactly what a recording holds.
"""
from __future__ import annotations

import hashlib
from typing import Any

import orjson

from tracetui.record.exchange import AgentExit, WireExchange
from tracetui.record.recording import run_records
from tracetui.trace.source import run_data_from_records

QUESTION = "What is the status of order o-1?"
SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^o-[0-9]+$"}},
          "required": ["order_id"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "read_order", "description": "Read one order's status.",
                                           "parameters": SCHEMA}}]
SHIPPED = {"order_id": "o-1", "status": "shipped"}


def call(name: str, arguments: Any, call_id: str = "call-1") -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def calls_reply(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"status": 200, "headers": {"content-type": "application/json"}, "latency_ms": 100, "body": {
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-x", "choices": [{
            "index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": None, "tool_calls": list(calls)}}]}}


def text_reply(text: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {"status": 200, "headers": {"content-type": "application/json"}, "latency_ms": 100, "body": {
        "id": "chatcmpl-2", "object": "chat.completion", "model": "gpt-x", "choices": [{
            "index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "content": text}}]}}


RATE_LIMITED = {"status": 429, "headers": {"content-type": "application/json", "retry-after": "0.01"}, "latency_ms": 5,
                "body": {"error": {"type": "rate_limit_exceeded", "message": "Rate limit reached"}}}


def request(messages: list[dict[str, Any]], retry: int | None = None, stream: bool = False,
            tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body = {"model": "gpt-x", "messages": messages, "tools": TOOLS if tools is None else tools,
            **({"stream": True} if stream else {})}
    raw = orjson.dumps(body)
    return {"method": "POST", "url": "/v1/chat/completions", "provider": "openai-chat", "model": "gpt-x",
            "stream": stream, "body": body, "body_sha256": hashlib.sha256(raw).hexdigest(), "retry_count": retry}


def streamed(reply: dict[str, Any]) -> dict[str, Any]:
    """The same reply as the API streams it (the events the recording keeps for a streamed call)."""
    from tracetui.providers.fake_wire import wire_for

    body = {"created": 0, "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}, **reply["body"]}
    return {"status": 200, "headers": {"content-type": "text/event-stream"}, "latency_ms": 100,
            "events": wire_for("openai-chat").events(body)}


def first_messages(question: str = QUESTION) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "You are a support agent."}, {"role": "user", "content": question}]


def after(messages: list[dict[str, Any]], reply: dict[str, Any], results: list[tuple[str, Any]]) -> list[dict]:
    """The next request's messages: the assistant turn, then each call's result."""
    message = reply["body"]["choices"][0]["message"]
    tool_messages = [{"role": "tool", "tool_call_id": cid, "content": r if isinstance(r, str) else
                      orjson.dumps(r).decode()} for cid, r in results]
    return [*messages, message, *tool_messages]


def run_of(pairs: list[tuple[dict[str, Any], dict[str, Any]]], status: int, run_id: str = "record-agent"):
    """A run from (request, response) pairs and the agent's exit status."""
    exchanges = [WireExchange(i, "openai-chat", req, resp, req["stream"]) for i, (req, resp) in enumerate(pairs)]
    records = run_records(run_id, exchanges, AgentExit(status, None, False, True, None), ["python", "agent.py"],
                          {"openai": "https://api.openai.com"})
    return run_data_from_records(records)


def denied_run():
    """The model asks for o-2 (not what the user asked): the tool denies it, the agent rejects the answer."""
    m0 = first_messages()
    r0 = calls_reply(call("read_order", {"order_id": "o-2"}))
    m1 = after(m0, r0, [("call-1", "Error: permission denied: o-2 belongs to another customer")])
    return run_of([(request(m0), r0), (request(m1), text_reply("I cannot see that order."))], 1, "denied")


def unknown_tool_run():
    m0 = first_messages()
    r0 = calls_reply(call("lookup_order", {"order_id": "o-1"}))
    m1 = after(m0, r0, [("call-1", "Error: no tool named lookup_order")])
    return run_of([(request(m0), r0), (request(m1), text_reply("Sorry, I could not look it up."))], 1, "unknown")


def schema_run():
    m0 = first_messages()
    r0 = calls_reply(call("read_order", {"orderId": "o-1"}))
    m1 = after(m0, r0, [("call-1", "Error: order_id is required")])
    return run_of([(request(m0), r0), (request(m1), text_reply("Sorry."))], 1, "schema")


def truncated_run():
    m0 = first_messages()
    return run_of([(request(m0), text_reply("Let me check the status of ord", "length"))], 1, "truncated")


def no_call_run():
    """The model answers at once, no tool called: the agent's acceptance rejects the answer."""
    m0 = first_messages()
    return run_of([(request(m0), text_reply("Order o-1 is on its way."))], 1, "no_call")


def streamed_no_call_run():
    """As :func:`no_call_run`, by an agent that streams its model calls."""
    m0 = first_messages()
    return run_of([(request(m0, stream=True), streamed(text_reply("Order o-1 is on its way.")))], 1, "streamed")


def unbacked_run():
    """The tool said shipped, the model answered processing: the agent rejects the answer."""
    m0 = first_messages()
    r0 = calls_reply(call("read_order", {"order_id": "o-1"}))
    m1 = after(m0, r0, [("call-1", SHIPPED)])
    return run_of([(request(m0), r0), (request(m1), text_reply("Order o-1 is still processing."))], 1, "unbacked")


def rate_limited_run():
    """Three 429s for the first request: the SDK gives up, the agent exits 1."""
    m0 = first_messages()
    pairs = [(request(m0, retry), RATE_LIMITED) for retry in (None, 1, 2)]
    return run_of(pairs, 1, "rate_limited")
