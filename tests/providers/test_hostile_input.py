"""Recorded responses are untrusted: any field may hold any JSON type.

Every adapter, stream folder, ``Exchange.from_record`` and the retry rules must
turn such input into a clear, well-typed verdict, never an exception. The fuzz
tests draw arbitrary JSON (biased towards the keys and words each API uses, so
the deep branches are reached) and mutate the real fixtures one subtree at a time.
"""
from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.loop.inputs import responses_inputs
from tracetui.loop.retry import ANTHROPIC, GEMINI, OPENAI, failure_code
from tracetui.loop.runner import run_inputs, run_scenario
from tracetui.providers.openai_responses import StreamAssembler
from tracetui.providers.stream import assemble
from tracetui.providers import base
from tracetui.providers.base import MALFORMED_EXCHANGE, Exchange, ModelTurn, ToolCall
from tracetui.providers.registry import get_adapter
from tracetui.trace.schema import SCHEMA

FIXTURES = Path(__file__).parent / "fixtures"
PROVIDERS = ("openai-responses", "openai-chat", "anthropic", "gemini")
KINDS = {base.TOOL_CALLS, base.TEXT, base.REFUSED, base.INCOMPLETE, base.FAILED, base.CANCELLED, base.UNSUPPORTED,
         base.EMPTY, base.INVALID_TOOL_CALL, base.PROTOCOL_ERROR, base.FOREIGN_BODY}
#: examples per fuzz test; raise TRACETUI_FUZZ_EXAMPLES for a longer hunt
FUZZ = settings(max_examples=int(os.environ.get("TRACETUI_FUZZ_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- strategies --------------------------------------------------------------------------------------

#: the words the four APIs use, as keys and as values, so random bodies reach past the first check
WORDS = [
    "type", "status", "object", "output", "content", "role", "text", "id", "name", "arguments", "call_id", "input",
    "message", "response", "completed", "incomplete", "failed", "function_call", "output_text", "refusal",
    "reasoning", "incomplete_details", "reason", "error", "usage", "stop_reason", "tool_use", "end_turn",
    "max_tokens", "pause_turn", "thinking", "partial_json", "choices", "finish_reason", "tool_calls", "function",
    "stop", "length", "content_filter", "chat.completion", "candidates", "promptFeedback", "blockReason",
    "finishReason", "finishMessage", "parts", "functionCall", "args", "thought", "STOP", "MAX_TOKENS", "SAFETY",
    "MALFORMED_FUNCTION_CALL", "usageMetadata", "index", "output_index", "item", "delta", "data", "[DONE]",
    "response.output_item.added", "response.output_item.done", "response.output_text.delta",
    "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.completed",
    "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
    "message_stop", "content_block", "text_delta", "input_json_delta", "thinking_delta", "signature_delta",
    "assistant", "model",
]
scalars = (st.none() | st.booleans() | st.integers(min_value=-(2 ** 63), max_value=2 ** 64 - 1)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12) | st.sampled_from(WORDS))
keys = st.sampled_from(WORDS) | st.text(max_size=8)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=6),
    max_leaves=40,
)
json_objects = st.dictionaries(keys, json_values, max_size=8)


def _paths(value: Any, here: tuple = ()) -> list[tuple]:
    """Every location in a JSON tree, the root included."""
    out = [here]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*here, i))
    return out


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


@st.composite
def mutated(draw, original: Any, times: int = 3) -> Any:
    """``original`` with one to ``times`` subtrees swapped for arbitrary JSON (or dropped from their object)."""
    value = original
    for _ in range(draw(st.integers(1, times))):
        paths = _paths(value)
        path = paths[draw(st.integers(0, len(paths) - 1))]
        if path and isinstance(_replace_parent(value, path), dict) and draw(st.booleans()):
            parent = _replace_parent(value, path)
            value = _replace(value, path[:-1], {k: v for k, v in parent.items() if k != path[-1]})
        else:
            value = _replace(value, path, draw(json_values))
    return value


def _replace_parent(value: Any, path: tuple) -> Any:
    for step in path[:-1]:
        value = value[step]
    return value


# -- the real material to mutate ---------------------------------------------------------------------

def _fixture_records(provider: str) -> list[Any]:
    out: list[Any] = []
    for path in sorted(FIXTURES.glob(f"{provider}_*.json")):
        out += json.loads(path.read_text())
    return out


def _scenario_exchanges() -> list[dict[str, Any]]:
    """Responses-API exchanges as the fake provider sends them (plain and streamed)."""
    out = []
    for name in ("single", "stream"):
        try:
            result = run_scenario(name)
        except KeyError:
            continue
        out += [e["data"]["response"] for e in result.events if e["lane"] == "http"]
    return out


def _bodies(provider: str) -> list[Any]:
    records = _scenario_exchanges() if provider == "openai-responses" else _fixture_records(provider)
    return [r["body"] if isinstance(r, dict) and "status" in r and "body" in r and not isinstance(r["status"], str)
            else r for r in records if not (isinstance(r, dict) and "events" in r)]


def _streams(provider: str) -> list[list[Any]]:
    records = _scenario_exchanges() if provider == "openai-responses" else _fixture_records(provider)
    return [r["events"] for r in records if isinstance(r, dict) and isinstance(r.get("events"), list)]


BODIES = {p: _bodies(p) for p in PROVIDERS}
STREAMS = {p: _streams(p) for p in PROVIDERS}


def test_there_is_real_material_to_mutate():
    assert all(BODIES[p] for p in PROVIDERS), {p: len(b) for p, b in BODIES.items()}
    assert all(STREAMS[p] for p in PROVIDERS), {p: len(s) for p, s in STREAMS.items()}


# -- checks ------------------------------------------------------------------------------------------

def _opt_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def assert_well_typed(turn: Any) -> None:
    assert isinstance(turn, ModelTurn)
    assert turn.kind in KINDS
    assert isinstance(turn.text, str)
    assert _opt_str(turn.finish_reason) and _opt_str(turn.detail) and _opt_str(turn.status)
    assert isinstance(turn.item_types, list) and all(isinstance(t, str) for t in turn.item_types)
    assert isinstance(turn.calls, list)
    for call in turn.calls:
        assert isinstance(call, ToolCall)
        assert _opt_str(call.call_id) and _opt_str(call.name) and _opt_str(call.arguments)
    if turn.kind == base.TOOL_CALLS:  # released calls are complete
        assert all(isinstance(c.call_id, str) and isinstance(c.name, str) and isinstance(c.arguments, str)
                   for c in turn.calls)
    assert isinstance(turn.items, list) and all(isinstance(i, dict) for i in turn.items)
    assert turn.usage is None or isinstance(turn.usage, dict)
    if turn.kind not in (base.TOOL_CALLS, base.TEXT, base.EMPTY):
        assert turn.detail, turn
    orjson.dumps([turn.text, turn.detail, turn.finish_reason, turn.status, turn.item_types])


def parse(provider: str, body: Any) -> ModelTurn:
    turn = get_adapter(provider).parse_response(body)
    assert_well_typed(turn)
    return turn


def fold(provider: str, events: Any) -> tuple[Any, str | None]:
    body, error = get_adapter(provider).assemble_stream(events)
    assert error is None or (isinstance(error, str) and error and body is None)
    if error is None:
        parse(provider, body)
    return body, error


# -- adapters: parse_response ------------------------------------------------------------------------

@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(body=json_values)
def test_parse_response_on_arbitrary_json(provider, body):
    parse(provider, body)


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(data=st.data())
def test_parse_response_on_mutated_fixtures(provider, data):
    original = data.draw(st.sampled_from(BODIES[provider]))
    parse(provider, data.draw(mutated(original)))


REPORTED = [  # the shapes the reviewer found, and their neighbours
    ("anthropic", {"type": "message", "role": "assistant", "content": [], "stop_reason": {"x": 1}}),
    ("anthropic", {"type": "message", "role": "assistant", "content": [], "stop_reason": ["max_tokens"]}),
    ("anthropic", {"type": "message", "content": [{"type": "tool_use", "id": ["x"], "name": {}, "input": 5}],
                   "stop_reason": "max_tokens"}),
    ("gemini", {"candidates": [{"finishReason": ["STOP"], "content": {"parts": []}}]}),
    ("gemini", {"candidates": [{"finishReason": {"a": 1}}]}),
    ("gemini", {"promptFeedback": {"blockReason": ["SAFETY"]}}),
    ("gemini", {"candidates": [{"finishReason": "MAX_TOKENS", "content": {"parts": [
        {"functionCall": {"id": 7, "name": [], "args": {}}}]}}]}),
    ("openai-chat", {"choices": [{"finish_reason": ["length"], "message": {"content": "x"}}]}),
    ("openai-chat", {"choices": [{"finish_reason": "length", "message": {
        "tool_calls": [{"id": {}, "function": {"name": 1, "arguments": []}}]}}]}),
    ("openai-responses", {"object": "response", "status": "incomplete", "incomplete_details": {"reason": [1]},
                          "output": [{"type": "function_call", "call_id": [], "name": 1, "arguments": {}}]}),
    ("openai-responses", {"object": "response", "status": "completed", "output": [{"type": ["message"]}]}),
    ("openai-responses", {"object": "response", "status": ["completed"], "output": []}),
]


@pytest.mark.parametrize("provider,body", REPORTED)
def test_reported_bodies_classify_instead_of_raising(provider, body):
    turn = parse(provider, body)
    assert turn.kind not in (base.TOOL_CALLS, base.TEXT)


def test_unexpected_stop_reason_types_are_unsupported():
    anthropic = parse("anthropic", {"type": "message", "role": "assistant", "content": [], "stop_reason": {"x": 1}})
    assert (anthropic.kind, anthropic.finish_reason) == (base.UNSUPPORTED, None)
    assert anthropic.detail == "unexpected stop_reason a JSON object"
    gemini = parse("gemini", {"candidates": [{"finishReason": ["STOP"], "content": {"parts": []}}]})
    assert (gemini.kind, gemini.finish_reason) == (base.UNSUPPORTED, None)


def test_deeply_nested_arguments_are_an_invalid_call_not_a_crash():
    deep: Any = {}
    for _ in range(300):
        deep = {"a": deep}
    turn = parse("anthropic", {"type": "message", "role": "assistant", "stop_reason": "tool_use",
                               "content": [{"type": "tool_use", "id": "t1", "name": "read_order", "input": deep}]})
    assert turn.kind == base.INVALID_TOOL_CALL
    turn = parse("gemini", {"candidates": [{"finishReason": "STOP", "content": {"parts": [
        {"functionCall": {"name": "read_order", "args": deep}}]}}]})
    assert turn.kind == base.INVALID_TOOL_CALL
    nested: Any = "x"
    for _ in range(990):
        nested = [nested]
    parse("anthropic", {"type": "message", "content": [], "stop_reason": nested})
    parse("openai-chat", {"error": {"message": nested}})


# -- stream folders ----------------------------------------------------------------------------------

stream_events = st.lists(json_objects | json_values, max_size=12)


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(events=stream_events)
def test_stream_folders_on_arbitrary_events(provider, events):
    fold(provider, events)


@st.composite
def mutated_stream(draw, events: list[Any]) -> list[Any]:
    ops = draw(st.lists(st.sampled_from(["mutate", "drop", "duplicate", "swap"]), min_size=1, max_size=3))
    events = list(events)
    for op in ops:
        if not events:
            break
        i = draw(st.integers(0, len(events) - 1))
        if op == "mutate":
            events[i] = draw(mutated(events[i], times=2))
        elif op == "drop":
            del events[i]
        elif op == "duplicate":
            events.insert(i, events[i])
        else:
            j = draw(st.integers(0, len(events) - 1))
            events[i], events[j] = events[j], events[i]
    return events


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(data=st.data())
def test_stream_folders_on_mutated_fixture_streams(provider, data):
    original = data.draw(st.sampled_from(STREAMS[provider]))
    fold(provider, data.draw(mutated_stream(original)))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unmutated_fixture_streams_still_fold(provider):
    for events in STREAMS[provider]:
        if events and isinstance(events[-1], dict) and events[-1]:
            body, error = fold(provider, events)


@pytest.mark.parametrize("provider,events,words", [
    ("openai-responses", [{"type": "response.output_item.added", "output_index": [0], "item": {}}], "output_index"),
    ("openai-responses", [{"type": ["response.completed"]}], "event type is a JSON array"),
    ("openai-responses", [{"type": "response.output_item.added", "output_index": 0, "item": [1, 2]}], "item"),
    ("openai-responses", [{"type": "response.output_item.added", "output_index": 0, "item": "ab"}], "item"),
    ("openai-responses", [{"type": "response.output_text.delta", "delta": {"t": 1}}], "delta"),
    ("openai-responses", [{"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call"}},
                          {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": 5}], "delta"),
    ("anthropic", [{"type": "message_start", "message": {}},
                   {"type": "content_block_delta", "index": [0], "delta": {}}], "index"),
    ("anthropic", [{"type": "message_start", "message": {}},
                   {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": 5}},
                   {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}],
     "not a string"),
    ("anthropic", [{"type": "message_start", "message": {}},
                   {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
                   {"type": "content_block_delta", "index": 0, "delta": "text"}], "delta"),
    ("anthropic", [{"type": "message_start", "message": {}}, {"type": "message_delta", "delta": "stop_reason"}],
     "delta"),
    ("anthropic", [{"type": "message_start", "message": {"type": "message", "role": "assistant", "usage": [1]}},
                   {"type": "message_delta", "delta": {"stop_reason": {"a": 1}}, "usage": {"output_tokens": 1}},
                   {"type": "message_stop"}], None),
    ("openai-chat", [{"choices": 5}], "choices"),
    ("openai-chat", [{"choices": [{"delta": ["x"]}]}], "delta"),
    ("openai-chat", [{"choices": [{"delta": {"tool_calls": [{"index": 0, "id": ["x"]}]}}]}], "id"),
    ("openai-chat", [{"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c", "function": "f"}]}}]}],
     "function"),
    ("gemini", [{"candidates": 5}], "candidates"),
    ("gemini", [{"candidates": [{"content": ["x"]}]}], "content"),
    ("gemini", [{"candidates": [{"content": {"parts": [{"text": 5}]}}]}], "text"),
    ("gemini", [{"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "STOP"}]},
                {"candidates": [{"content": 7}]}], "content"),
])
def test_malformed_events_are_protocol_errors_that_say_what(provider, events, words):
    body, error = fold(provider, events)
    if words is None:  # folds; the adapter then judges the odd body
        assert error is None and parse(provider, body).kind == base.UNSUPPORTED
    else:
        assert error and words in error and "malformed stream event" not in error, error


def test_assemble_turns_an_unforeseen_exception_into_a_protocol_error():
    class Careless(StreamAssembler):
        def take(self, event):
            return event["missing"]

    body, error = assemble(Careless(), [{"type": "x"}])
    assert body is None and error.startswith("malformed stream event: KeyError")
    assert assemble(StreamAssembler(), "not a list") == (None, "events are a JSON string, not a list")


# -- Exchange.from_record ----------------------------------------------------------------------------

record_like = st.fixed_dictionaries({"status": json_values}, optional={
    "headers": json_values | st.dictionaries(st.sampled_from(["retry-after", "x-request-id", "date"]) | keys,
                                             json_values, max_size=4),
    "body": json_values, "events": json_values | st.lists(json_objects, max_size=3),
    "error": json_values, "latency_ms": json_values})


def assert_well_typed_exchange(ex: Exchange) -> None:
    assert ex.status is None or (type(ex.status) is int and 100 <= ex.status <= 599)
    assert isinstance(ex.headers, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in ex.headers.items())
    assert type(ex.latency_ms) is int and ex.latency_ms >= 0
    assert ex.error is None or (isinstance(ex.error, str) and ex.error)
    assert ex.events is None or isinstance(ex.events, list)
    orjson.dumps(ex.to_record())
    code = failure_code(ex.status, ex.error)
    assert isinstance(code, str) and code


@FUZZ
@given(rec=json_values | record_like)
def test_from_record_is_well_typed_for_any_record(rec):
    assert_well_typed_exchange(Exchange.from_record(rec))


@pytest.mark.parametrize("rec,expect", [
    ({"status": 200, "body": {}, "latency_ms": "x"}, {"status": 200, "latency_ms": 0, "error": None}),
    ({"status": 200, "body": {}, "latency_ms": -5}, {"latency_ms": 0}),
    ({"status": 200, "body": {}, "latency_ms": 12.7}, {"latency_ms": 12}),
    ({"status": 200, "body": {}, "latency_ms": "40"}, {"latency_ms": 40}),
    ({"status": 200, "body": {}, "headers": "ab"}, {"status": 200, "headers": {}}),
    ({"status": 429, "body": {}, "headers": {"retry-after": 2, "x-should-retry": True, "a": [1], "b": None,
                                             "x-request-id": "r1"}},
     {"headers": {"retry-after": "2", "x-should-retry": "true", "x-request-id": "r1"}}),
    ({"status": 200, "body": {}, "error": ["x"]}, {"status": None, "error": MALFORMED_EXCHANGE}),
    ({"status": 200, "body": {}, "error": 5}, {"status": None, "error": MALFORMED_EXCHANGE}),
    ({"status": 200, "body": {}, "error": ""}, {"status": 200, "error": None}),
    ({"status": "200", "body": {}}, {"status": None, "error": MALFORMED_EXCHANGE}),
    ({"status": True, "body": {}}, {"status": None, "error": MALFORMED_EXCHANGE}),
    ({"status": 200.0, "body": {}}, {"status": None, "error": MALFORMED_EXCHANGE}),
    ({"status": 7, "body": {}}, {"status": None, "error": MALFORMED_EXCHANGE}),
    ({"status": 200, "events": {"type": "x"}}, {"status": None, "error": MALFORMED_EXCHANGE}),
    ({"status": None, "error": "timeout"}, {"status": None, "error": "timeout"}),
    ({"status": 200, "body": {}, "error": "null"}, {"status": None, "error": MALFORMED_EXCHANGE}),
    ({"status": None, "body": {}}, {"status": None, "error": MALFORMED_EXCHANGE}),
    # a Responses body has a textual status and may carry "error": it stays a bare body
    ({"object": "response", "status": "failed", "error": {"message": "x"}, "output": []},
     {"status": 200, "error": None}),
])
def test_from_record_cleans_or_rejects(rec, expect):
    ex = Exchange.from_record(rec)
    assert_well_typed_exchange(ex)
    for key, value in expect.items():
        assert getattr(ex, key) == value, (key, ex)
    if ex.error == MALFORMED_EXCHANGE:
        assert "recorded exchange is malformed" in ex.body["error"]["message"]
        assert failure_code(ex.status, ex.error) == MALFORMED_EXCHANGE
        for policy in (OPENAI, ANTHROPIC, GEMINI):
            assert not policy.decide(1, ex.status, ex.error, ex.headers, random.Random(0)).retry
            assert not policy.decide(1, ex.status, ex.error, {"x-should-retry": "true"}, random.Random(0)).retry


# -- retry rules -------------------------------------------------------------------------------------

http_dates = st.datetimes(min_value=__import__("datetime").datetime(1990, 1, 1),
                          max_value=__import__("datetime").datetime(2100, 1, 1)).map(
    lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT"))
header_values = json_values | http_dates | st.integers(-10, 100_000).map(str) | st.sampled_from(
    ["true", "false", "nan", "inf", "-1", "1e400", "Wed, 21 Oct 2015 07:28:00", "Sun Nov  6 08:49:37 1994",
     "Sunday, 06-Nov-94 08:49:37 GMT", "Mon, 99 Foo 99999 99:99:99 +9999"])
retry_headers = st.dictionaries(st.sampled_from(["retry-after", "retry-after-ms", "x-should-retry", "date",
                                                 "Retry-After"]) | keys, header_values, max_size=5)


def decide(headers, status=429, attempt=1, policy=OPENAI):
    return policy.decide(attempt, status, None, headers, random.Random(0))


def waits(decision):
    """(wait in ms, where it came from) of a retry decision."""
    assert decision.retry
    return decision.wait_ms, decision.source


@FUZZ
@given(status=st.none() | st.integers(100, 599), error=st.none() | st.sampled_from(
    ["timeout", "connect", "connection", "stream_interrupted", MALFORMED_EXCHANGE]), headers=retry_headers,
    attempt=st.integers(1, 12), seed=st.integers(0, 2 ** 32))
def test_retry_rules_with_arbitrary_header_values(status, error, headers, attempt, seed):
    for policy, longest in ((OPENAI, 120_000), (ANTHROPIC, 4_294_967_000), (GEMINI, 60_000)):
        decision = policy.decide(attempt, status, error, headers, random.Random(seed))
        assert isinstance(decision.retry, bool) and isinstance(decision.why, str) and decision.why
        if decision.retry:
            assert type(decision.wait_ms) is int and 0 <= decision.wait_ms <= longest
            assert decision.source in ("retry-after-ms", "retry-after", "retry-after date", "exponential backoff")


@pytest.mark.parametrize("headers", [{"retry-after": [1]}, {"retry-after": {"s": 1}}, {"retry-after-ms": [5]},
                                     {"x-should-retry": ["true"]}, {"x-should-retry": {}}, {"retry-after": None}])
def test_non_text_retry_headers_fall_back(headers):
    decision = decide(headers)
    assert decision.retry is True and decision.source == "exponential backoff"


def test_numeric_retry_headers_still_count():
    assert waits(decide({"retry-after": 2})) == (2000, "retry-after")
    assert waits(decide({"retry-after-ms": 250.5})) == (250, "retry-after-ms")
    assert waits(decide({"retry-after": "3"})) == (3000, "retry-after")
    assert decide({"x-should-retry": True}, status=400).retry is True


def test_retry_after_as_an_http_date_is_measured_against_the_date_header():
    date = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert waits(decide({"retry-after": "Wed, 21 Oct 2015 07:28:12 GMT", "date": date})) == (12000, "retry-after date")
    # RFC 850 and asctime spellings are HTTP dates too, and read as UTC
    assert waits(decide({"retry-after": "Wednesday, 21-Oct-15 07:28:05 GMT", "date": date})) == \
        (5000, "retry-after date")
    assert waits(decide({"retry-after": "Wed Oct 21 07:28:01 2015", "date": date})) == (1000, "retry-after date")


@pytest.mark.parametrize("headers", [
    {"retry-after": "Wed, 21 Oct 2015 07:28:12 GMT"},  # no Date: nothing deterministic to measure against
    {"retry-after": "Wed, 21 Oct 2015 07:28:12 GMT", "date": "yesterday"},
    {"retry-after": "Wed, 21 Oct 2015 07:27:00 GMT", "date": "Wed, 21 Oct 2015 07:28:00 GMT"},  # in the past
])
def test_retry_after_dates_that_cannot_be_used_fall_back_to_backoff(headers):
    for policy in (OPENAI, ANTHROPIC):
        decision = decide(headers, attempt=2, policy=policy)
        assert decision.source == "exponential backoff" and 750 <= decision.wait_ms <= 1000


# -- end to end --------------------------------------------------------------------------------------

HOSTILE: dict[str, list[Any]] = {
    "openai-responses": [{"object": "response", "status": "completed", "output": [
        {"type": "function_call", "call_id": {"a": 1}, "name": ["read_order"], "arguments": 5}]}],
    "openai-chat": [{"object": "chat.completion", "choices": [{"finish_reason": ["stop"], "message": {"content": 5}}]}],
    "anthropic": [{"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}],
                   "stop_reason": {"why": "max_tokens"}}],
    "gemini": [{"candidates": [{"finishReason": ["MALFORMED_FUNCTION_CALL"], "content": {"parts": []}}]}],
}
COMMON_HOSTILE = [
    {"status": 200, "body": {}, "latency_ms": "x"},
    {"status": 200, "body": {}, "headers": "ab"},
    {"status": 200, "body": {}, "error": ["x"]},
    {"status": 200, "body": {}, "error": 5},
    {"status": 429, "body": {}, "headers": {"retry-after": ["x"], "retry-after-ms": {"a": 1}, "x-should-retry": 3}},
    {"status": 503, "body": {}, "headers": {"retry-after": "Wed, 21 Oct 2015 07:28:02 GMT",
                                            "date": "Wed, 21 Oct 2015 07:28:00 GMT"}},
    {"status": 200, "events": [{"type": "response.output_item.added", "output_index": [0], "item": "x"},
                               {"type": {"t": 1}}, {"choices": 5}, {"candidates": [{"content": 1}]},
                               {"type": "content_block_delta", "index": {}, "delta": []}, 7, "text"]},
    {"status": 200, "events": "not a list"},
    "<!DOCTYPE html><html>gateway</html>",
]


def _check_run(result) -> None:
    assert isinstance(result.summary["status"], str)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for record in result.records:
        orjson.dumps(record)
        errors = list(validator.iter_errors(record))
        assert not errors, (record, errors[0].message)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_hostile_recorded_responses_end_in_a_verdict(provider):
    responses = HOSTILE[provider] + COMMON_HOSTILE
    for start in range(len(responses)):  # each hostile record gets to be the one the run turns on
        result = run_inputs(f"hostile-{provider}-{start}", responses_inputs(responses[start:], provider))
        _check_run(result)
        assert result.status != "answer_ready"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_malformed_exchange_is_an_http_failure_that_is_not_retried(provider):
    responses = [{"status": 200, "body": {}, "error": ["x"], "headers": {"x-should-retry": "true"}},
                 *BODIES[provider]]
    result = run_inputs("malformed", responses_inputs(responses, provider))
    _check_run(result)
    first = result.summary["first_failure"]
    assert (first["lane"], first["code"]) == ("http", MALFORMED_EXCHANGE)
    http = [e for e in result.events if e["lane"] == "http"]
    assert len(http) == 1 and "not retryable" in http[0]["summary"]
    assert "error is a JSON array" in http[0]["summary"]


@pytest.mark.parametrize("provider", PROVIDERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_runs_over_fuzzed_responses_end_in_a_verdict(provider, data):
    pool = BODIES[provider] + [{"status": 200, "events": e} for e in STREAMS[provider]]
    responses = data.draw(st.lists(
        record_like | json_objects | st.sampled_from(pool).flatmap(lambda r: mutated(r)), min_size=1, max_size=4))
    _check_run(run_inputs("fuzzed", responses_inputs(responses, provider)))


def test_cli_reports_a_verdict_for_a_hostile_file(tmp_path):
    from click.testing import CliRunner

    from tracetui.cli import main

    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(HOSTILE["anthropic"] + COMMON_HOSTILE))
    out = tmp_path / "trace.jsonl"
    res = CliRunner().invoke(main, ["run", "--responses", str(path), "--provider", "anthropic", "-o", str(out)])
    assert res.exit_code == 1, res.output
    assert isinstance(res.exception, SystemExit) and "Traceback" not in res.output
    assert "incomplete" in res.output or "unsupported" in res.output, res.output
    summary = orjson.loads(out.read_bytes().splitlines()[-1])
    assert summary["rec"] == "summary" and isinstance(summary["status"], str)

    for name, records in (("odd-record", [{"status": 200, "body": {}, "error": 5}]),
                          ("odd-headers", [{"status": 429, "body": {}, "headers": {"retry-after": [1]}}, "x"])):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(records))
        res = CliRunner().invoke(main, ["run", "--responses", str(path), "--provider", "anthropic",
                                        "-o", str(tmp_path / f"{name}.jsonl")])
        assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output


@pytest.mark.parametrize("provider", PROVIDERS)
def test_records_nested_too_deeply_are_malformed_exchanges(provider):
    deep: Any = {"type": "text"}
    for _ in range(260):  # past orjson's output limit: it could be neither sent back nor traced
        deep = [deep]
    records = [{"status": 200, "body": {"content": deep}}, {"content": deep}]
    for record in records:
        ex = Exchange.from_record(record)
        assert ex.error == MALFORMED_EXCHANGE and "nests deeper than" in ex.body["error"]["message"]
    result = run_inputs("deep", responses_inputs(records, provider))
    assert result.summary["first_failure"]["code"] == MALFORMED_EXCHANGE
    for record in (*result.events, result.summary):  # the run record keeps the input as given
        orjson.dumps(record)
