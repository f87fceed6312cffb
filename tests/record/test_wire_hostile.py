"""The lanes read from the wire, against a hostile agent or upstream: odd types, deep or huge results, many calls,
and runs where the agent got past a failure its own way."""
from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson
import pytest

from tracetui.providers.base import TOOL_CALLS, ModelTurn, ToolCall
from tracetui.record.exchange import WireExchange
from tracetui.record.recording import records_to_bytes, run_records
from tracetui.record.request_match import match
from tracetui.record.wire_calls import CallReader
from tracetui.record.wire_lanes import Lanes, events_of
from tracetui.trace.verdict import first_failure

from wire_run import EXITED_0, EXITED_1, call_reply, run_agent, status_reply, text_reply

URL = "/v1/chat/completions"
TOOLS = [{"type": "function", "function": {"name": "read_order", "parameters": {
    "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}]
USER = [{"role": "user", "content": "What is the status of order o-1?"}]


def chat(i: int, body: dict[str, Any], status: int = 200, answer: dict[str, Any] | None = None) -> WireExchange:
    raw = json.dumps(body).encode()
    request = {"method": "POST", "url": URL, "provider": "openai-chat", "model": body.get("model"), "stream": False,
               "body": body, "body_sha256": hashlib.sha256(raw).hexdigest(), "retry_count": 0}
    response = {"status": status, "headers": {"content-type": "application/json"}, "latency_ms": 10,
                "body": answer if answer is not None else {"error": {"message": "Rate limit reached"}}}
    return WireExchange(i, "openai-chat", request, response, False)


def completion(content: str | None = None, calls: list[tuple[str, str, str]] = ()) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for n, a, i in calls]
    return {"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}


def kinds(events: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [(e["kind"], e["outcome"], e["code"]) for e in events]


class CountedId(str):
    """A call id that counts how often it is compared: matching ids to results must not compare every pair."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        CountedId.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_matching_many_parallel_calls_to_their_results_compares_no_pair_of_them():
    n = 2000
    ids = [CountedId(f"call_{k}") for k in range(n)]
    calls = [ToolCall(ids[k], "read_order", json.dumps({"order_id": f"o-{k}"})) for k in range(n)]
    answered = USER + [{"role": "assistant", "tool_calls": []}] + [
        {"role": "tool", "tool_call_id": CountedId(f"call_{k}"), "content": f"order o-{k} delivered"}
        for k in reversed(range(n))]  # in another order than the calls: found by id, not by place
    exchanges = [chat(0, {"messages": USER, "tools": TOOLS}, answer={}),
                 chat(1, {"messages": answered, "tools": TOOLS}, answer={})]
    lanes = Lanes("r")
    CountedId.compared = 0
    CallReader(lanes, exchanges).read(0, exchanges[0], ModelTurn(TOOL_CALLS, calls=calls), None)
    receipts = [e for e in lanes.events if e["kind"] == "receipt.execute"]
    assert [e["data"]["result"] for e in receipts] == [{"text": f"order o-{k} delivered"} for k in range(n)]
    assert CountedId.compared < 10 * n  # a search per call compared ~n * n / 2 = 2,000,000 times


def test_a_duplicate_id_after_calls_without_ids_is_still_found():
    calls = [ToolCall(None, "read_order", "{}"), ToolCall(None, "read_order", "{}"),
             ToolCall("c1", "read_order", "{}"), ToolCall("c1", "read_order", "{}")]
    lanes = Lanes("r")
    CallReader(lanes, []).read(0, chat(0, {"messages": USER, "tools": TOOLS}, answer={}),
                               ModelTurn(TOOL_CALLS, calls=calls), None)
    assert ("arguments.batch", "failed", "duplicate_call_id") in kinds(lanes.events)


@pytest.mark.parametrize("depth", [250, 1000])
def test_a_tool_result_of_deeply_nested_json_is_kept_as_text_and_the_run_is_written(depth):
    deep = "[" * depth + "]" * depth
    exchanges = run_agent("openai-chat", [call_reply(("read_order", {"order_id": "o-1"}, "call_1")),
                                          text_reply("done")], tools={"read_order": lambda a: (deep, False)})[0]
    records = run_records("r", exchanges, EXITED_0, [], {})
    receipt = next(r for r in records if r.get("kind") == "receipt.execute")
    assert receipt["outcome"] == "ok" and receipt["data"]["result"] == {"text": deep}
    assert len(records_to_bytes(records).splitlines()) == len(records)


@pytest.mark.parametrize("parameters", [[], {"type": {"type": "function"}}, {"properties": 5}, "object"])
def test_a_declared_schema_of_the_wrong_kind_leaves_the_arguments_unchecked(parameters):
    tools = [{"type": "function", "function": {"name": "read_order", "parameters": parameters}}]
    answered = USER + [{"role": "assistant"}, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    exchanges = [chat(0, {"messages": USER, "tools": tools},
                      answer=completion(calls=[("read_order", '{"order_id": "o-1"}', "c1")])),
                 chat(1, {"messages": answered, "tools": tools}, answer=completion("done"))]
    events = events_of(exchanges, EXITED_1)
    validate = next(e for e in events if e["kind"] == "arguments.validate")
    assert (validate["outcome"], validate["code"]) == ("failed", "schema_unchecked")
    assert "not" in validate["summary"] and "check" in validate["summary"]


@pytest.mark.parametrize("field, value", [("provider", ["openai-chat"]), ("body_sha256", ["x"]), ("url", {"a": 1}),
                                          ("retry_count", "1"), ("method", 5)])
def test_request_fields_of_the_wrong_type_from_a_trace_read_as_absent(field, value):
    first = chat(0, {"messages": USER}, status=500)  # a retryable failure: retries are then looked for
    hostile = chat(1, {"messages": USER}, answer=completion("done"))
    hostile.request[field] = value
    records = run_records("r", [first, hostile], EXITED_0, [], {}, recorded=[hostile, first])
    assert records[-1]["status"] == "answer_ready"
    assert records_to_bytes(records)
    assert match(hostile.request, first.request)["match"] in ("changed", "different_turn", "exact")


def test_a_failure_the_agent_got_past_with_another_request_is_recovered():
    """A 429 the SDK gave up on; the agent falls back to another model and goes on. When the run later fails,
    the first failing boundary is where it failed, not the 429 it had got past."""
    answered = USER + [{"role": "assistant"}, {"role": "tool", "tool_call_id": "c1", "content": "Error: db down"}]
    exchanges = [chat(0, {"model": "big", "messages": USER, "tools": TOOLS}, status=429),
                 chat(1, {"model": "small", "messages": USER, "tools": TOOLS},
                      answer=completion(calls=[("read_order", '{"order_id": "o-1"}', "c1")])),
                 chat(2, {"model": "small", "messages": answered, "tools": TOOLS}, answer=completion("sorry"))]
    events = events_of(exchanges, EXITED_1)
    assert kinds(events)[0] == ("http.attempt", "recovered", "rate_limited")
    failure = first_failure(events)
    assert (failure["lane"], failure["code"]) == ("receipt", "tool_failed")


def test_a_failure_nothing_got_past_still_decides():
    exchanges = run_agent("openai-chat", [status_reply(500), status_reply(500), status_reply(500)], max_retries=2)[0]
    events = events_of(exchanges, EXITED_1)
    assert [e["outcome"] for e in events if e["kind"] == "http.attempt"] == ["failed"] * 3
    assert first_failure(events)["lane"] == "http"


@pytest.mark.parametrize("text", ["Exceptionally warm today: 31°C", "Errors found: none"])
def test_a_result_that_only_begins_like_an_error_word_is_a_receipt(text):
    answered = USER + [{"role": "assistant"}, {"role": "tool", "tool_call_id": "c1", "content": text}]
    exchanges = [chat(0, {"messages": USER, "tools": TOOLS},
                      answer=completion(calls=[("read_order", '{"order_id": "o-1"}', "c1")])),
                 chat(1, {"messages": answered, "tools": TOOLS}, answer=completion("done"))]
    receipt = next(e for e in events_of(exchanges, EXITED_1) if e["kind"] == "receipt.execute")
    assert (receipt["outcome"], receipt["data"]["result"]) == ("ok", {"text": text})


def test_a_denial_in_a_chained_responses_request_still_reads_the_users_question():
    """Responses' previous_response_id: a later request sends only the new items, not the user's message."""
    tools = [{"type": "function", "name": "read_order", "parameters": {"type": "object"}}]

    def responses(i: int, body: dict[str, Any], output: list[dict[str, Any]]) -> WireExchange:
        raw = orjson.dumps(body)
        request = {"method": "POST", "url": "/v1/responses", "provider": "openai-responses", "model": "m",
                   "stream": False, "body": body, "body_sha256": hashlib.sha256(raw).hexdigest(), "retry_count": 0}
        answer = {"id": f"resp_{i}", "object": "response", "status": "completed", "model": "m", "output": output}
        return WireExchange(i, "openai-responses", request, {"status": 200, "headers": {}, "latency_ms": 1,
                                                             "body": answer}, False)

    def call(call_id: str, order: str) -> dict[str, Any]:
        return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": "read_order",
                "arguments": json.dumps({"order_id": order}), "status": "completed"}

    def output(call_id: str, text: str) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": call_id, "output": text}

    exchanges = [
        responses(0, {"input": "What is the status of order o-1?", "tools": tools}, [call("c1", "o-1")]),
        responses(1, {"previous_response_id": "resp_0", "input": [output("c1", "pending")], "tools": tools},
                  [call("c2", "o-2")]),
        responses(2, {"previous_response_id": "resp_1", "input": [output("c2", "permission denied: o-2")],
                      "tools": tools}, [{"type": "message", "id": "m", "role": "assistant", "status": "completed",
                                         "content": [{"type": "output_text", "text": "sorry", "annotations": []}]}])]
    denial = next(e for e in events_of(exchanges, EXITED_1) if e["kind"] == "authorization.check"
                  and e["outcome"] == "failed")
    assert "o-2 is not what the request asked for" in denial["summary"]


def test_a_response_of_many_calls_names_its_first_ones_in_one_line():
    calls = [(f"tool_{k}", "{}", f"c{k}") for k in range(30)]
    events = events_of([chat(0, {"messages": USER, "tools": TOOLS}, answer=completion(calls=calls))], EXITED_1)
    classify = next(e for e in events if e["kind"] == "generation.classify")
    assert classify["summary"] == ("30 tool call(s): " + ", ".join(f"tool_{k}" for k in range(10)) + ", … (20 more)")
    assert len(classify["data"]["calls"]) == 30
