"""The six lanes read from the wire: real SDK traffic (tests/record/wire_run.py) in, the loop's events out.

Each case runs a hand-written agent on the official SDK of a provider against a scripted model, keeps the
exchanges as the recording proxy keeps them, and asserts the lanes, the verdict (through the one rule,
tracetui.trace.verdict.first_failure) and who is responsible.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from tracetui.record.exchange import AgentExit, WireExchange
from tracetui.record.wire_lanes import events_of
from tracetui.trace.responsibility import responsibility
from tracetui.trace.verdict import first_failure

from wire_run import (CTRL_C, EXITED_0, EXITED_1, KILLED, PROVIDERS, SKIP, Reply, call_reply, refusal_reply,
                      run_agent, status_reply, text_reply, truncated_reply)

ANSWER = text_reply('{"order_id":"o-1","status":"delivered"}')
READ_O1 = call_reply(("read_order", {"order_id": "o-1"}, "call_1"))
FAST_RETRY = {"retry-after-ms": "1"}  # the SDKs wait what the server asks: the test does not sleep


def lanes(events: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [(e["kind"], e["outcome"], e["code"]) for e in events]


def verdict(events: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    failure = first_failure(events)
    return (failure["lane"], failure["code"]) if failure else (None, None)


CLEAN = [("http.attempt", "ok", None), ("generation.classify", "ok", None), ("arguments.validate", "ok", None),
         ("authorization.check", "ok", None), ("receipt.execute", "ok", None), ("http.attempt", "ok", None),
         ("generation.classify", "ok", None), ("answer.verify", "ok", None)]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_clean_run_is_ready_with_the_receipt_the_tool_returned(provider, stream):
    exchanges, text = run_agent(provider, [READ_O1, ANSWER], stream=stream)
    assert [ex.stream for ex in exchanges] == [stream, stream]
    if stream:
        assert all("events" in ex.response for ex in exchanges)  # folded by the adapter, as the loop folds them
    events = events_of(exchanges, EXITED_0)
    assert lanes(events) == CLEAN
    assert first_failure(events) is None
    classify = events[1]["data"]
    assert classify["kind"] == "tool_calls"
    assert classify["calls"] == [{"call_id": "call_1", "name": "read_order", "arguments": '{"order_id":"o-1"}'}]
    assert events[1]["summary"] == "1 tool call(s): read_order"
    receipt = events[4]
    assert receipt["call_id"] == "call_1" and receipt["data"]["result"] == {"order_id": "o-1", "status": "delivered"}
    assert events[2]["data"]["tool"] == "read_order" and events[2]["data"]["tool_call_id"] == "call_1"
    assert [e["turn"] for e in events] == [1, 1, 1, 1, 1, 2, 2, 2]
    assert [e["seq"] for e in events] == list(range(1, 9))
    assert [e["t_ms"] for e in events] == [100] * 5 + [200] * 3  # recorded latencies, cumulative
    answer = events[-1]
    assert answer["data"] == {"text": text, "exit_status": 0, "signal": None, "exchanges": 2}
    assert answer["summary"] == "the agent accepted its answer (exit 0)"
    attempt = events[0]["data"]
    assert attempt["exchange"] == 0 and attempt["attempt"] == 1
    assert attempt["request"]["body"] == exchanges[0].request["body"]


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses", "anthropic"])
def test_a_429_the_sdk_retried_is_a_repeated_request_and_recovered(provider):
    exchanges, _ = run_agent(provider, [status_reply(429, **FAST_RETRY), READ_O1, ANSWER])
    assert [ex.request["retry_count"] for ex in exchanges] == [0, 1, 0]  # the SDK's own header says so too
    events = events_of(exchanges, EXITED_0)
    first, second = events[0], events[1]
    assert (first["outcome"], first["code"], first["data"]["attempt"]) == ("recovered", "rate_limited", 1)
    assert (second["outcome"], second["data"]["attempt"], second["turn"]) == ("ok", 2, 1)
    assert "retried by the agent's SDK (exchange 1)" in first["summary"]
    assert first_failure(events) is None


def test_a_retry_is_told_by_its_body_when_the_sdk_sends_no_retry_count():
    exchanges, _ = run_agent("openai-chat", [status_reply(503, **FAST_RETRY), READ_O1, ANSWER])
    for ex in exchanges:
        ex.request["retry_count"] = None  # another SDK: only the repeated body shows the retry
    events = events_of(exchanges, EXITED_0)
    assert [(e["data"]["attempt"], e["outcome"], e["code"]) for e in events if e["kind"] == "http.attempt"] == [
        (1, "recovered", "server_error"), (2, "ok", None), (1, "ok", None)]


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
def test_a_429_the_sdk_gave_up_on_decides_the_run_on_the_http_lane(provider):
    exchanges, _ = run_agent(provider, [status_reply(429, **FAST_RETRY)] * 3, max_retries=2)
    events = events_of(exchanges, EXITED_1)  # the SDK raised, the agent crashed
    assert lanes(events) == [("http.attempt", "failed", "rate_limited")] * 3 + [
        ("answer.verify", "failed", "answer_rejected")]
    assert [e["data"]["attempt"] for e in events[:3]] == [1, 2, 3]
    failure = first_failure(events)
    assert (failure["lane"], failure["seq"], failure["decided_at"], failure["code"]) == ("http", 1, 3, "rate_limited")
    assert "retries exhausted after 3 attempts" in failure["reason"]
    assert responsibility(failure) == "environment"


def test_a_429_gemini_never_retries_is_said_so():
    exchanges, _ = run_agent("gemini", [status_reply(429)])
    events = events_of(exchanges, EXITED_1)
    assert verdict(events) == ("http", "rate_limited")
    assert events[0]["summary"].endswith("not retried by the agent's SDK")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_refusal_fails_the_generation_lane(provider):
    exchanges, _ = run_agent(provider, [refusal_reply()])
    events = events_of(exchanges, EXITED_1)
    assert lanes(events) == [("http.attempt", "ok", None), ("generation.classify", "failed", "refused"),
                             ("answer.verify", "failed", "answer_rejected")]
    assert verdict(events) == ("generation", "refused")
    assert responsibility(first_failure(events)) == "model"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_truncated_answer_is_incomplete_and_names_the_limit(provider):
    exchanges, _ = run_agent(provider, [truncated_reply()])
    events = events_of(exchanges, EXITED_1)
    assert verdict(events) == ("generation", "incomplete")
    classify = events[1]
    assert classify["data"]["finish_reason"] in ("max_output_tokens", "length", "max_tokens", "MAX_TOKENS")
    assert responsibility(first_failure(events)) == "harness"  # the request's own output limit cut it


def test_a_refusal_a_later_turn_overcame_is_recovered():
    exchanges, _ = run_agent("openai-chat", [refusal_reply(), ANSWER], max_turns=1)
    exchanges += run_agent("openai-chat", [ANSWER])[0]  # the agent asked again
    events = events_of(exchanges, EXITED_1)
    assert [e["outcome"] for e in events if e["kind"] == "generation.classify"] == ["recovered", "ok"]
    assert verdict(events) == ("answer", "answer_rejected")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_unknown_tool_fails_the_arguments_lane(provider):
    exchanges, _ = run_agent(provider, [call_reply(("cancel_order", {"order_id": "o-1"}, "call_1")), ANSWER])
    events = events_of(exchanges, EXITED_1)
    validate = next(e for e in events if e["kind"] == "arguments.validate")
    assert (validate["outcome"], validate["code"]) == ("failed", "unknown_tool")
    assert validate["summary"] == "no tool named 'cancel_order' is offered to the model"
    assert not [e for e in events if e["lane"] in ("authorization", "receipt")]  # the loop would not run it
    assert verdict(events) == ("arguments", "unknown_tool")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_schema_invalid_arguments_are_checked_against_the_schema_the_request_declared(provider):
    exchanges, _ = run_agent(provider, [call_reply(("read_order", {"order_id": "1"}, "call_1")), ANSWER])
    events = events_of(exchanges, EXITED_1)
    validate = next(e for e in events if e["kind"] == "arguments.validate")
    assert validate["code"] == "schema_error"
    assert validate["summary"].startswith("schema_error: order_id: '1' does not match '^o-[0-9]+$'")
    failure = first_failure(events)
    assert (failure["lane"], failure["code"]) == ("arguments", "schema_error")
    assert failure["reason"].endswith("never repaired: the model answered instead")


def test_arguments_a_later_valid_call_repaired_are_recovered():
    exchanges, _ = run_agent("anthropic", [call_reply(("read_order", {"orderId": "o-1"}, "call_1")),
                                           call_reply(("read_order", {"order_id": "o-1"}, "call_2")), ANSWER])
    events = events_of(exchanges, EXITED_1)
    assert [(e["outcome"], e["data"]["attempt"]) for e in events if e["kind"] == "arguments.validate"] == [
        ("recovered", 1), ("ok", 2)]
    assert verdict(events) == ("answer", "answer_rejected")


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses"])
def test_invalid_json_arguments(provider):
    exchanges, _ = run_agent(provider, [call_reply(("read_order", '{"order_id": "o-1"', "call_1")), ANSWER])
    events = events_of(exchanges, EXITED_1)
    validate = next(e for e in events if e["kind"] == "arguments.validate")
    assert (validate["code"], validate["data"]["arguments"]) == ("invalid_json", '{"order_id": "o-1"')
    assert validate["summary"].startswith("invalid_json: arguments are not valid JSON")
    assert verdict(events) == ("arguments", "invalid_json")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_duplicate_call_ids_in_one_response(provider):
    exchanges, _ = run_agent(provider, [call_reply(("read_order", {"order_id": "o-1"}, "call_1"),
                                                   ("read_order", {"order_id": "o-3"}, "call_1")), ANSWER])
    events = events_of(exchanges, EXITED_1)
    batch = next(e for e in events if e["kind"] == "arguments.batch")
    assert (batch["outcome"], batch["code"], batch["call_id"]) == ("failed", "duplicate_call_id", "call_1")
    assert verdict(events) == ("arguments", "duplicate_call_id")
    receipts = [e["data"]["result"]["order_id"] for e in events if e["kind"] == "receipt.execute"]
    assert receipts == ["o-1", "o-3"]  # two results under one id: taken in order


def test_a_call_id_reused_from_an_earlier_turn():
    exchanges, _ = run_agent("openai-chat", [READ_O1, call_reply(("read_order", {"order_id": "o-3"}, "call_1")),
                                             ANSWER])
    events = events_of(exchanges, EXITED_1)
    batch = next(e for e in events if e["kind"] == "arguments.batch")
    assert batch["turn"] == 2 and "already used in an earlier turn" in batch["summary"]


DENIALS = {
    "is_error": (lambda a: ("Access denied for this caller.", True), "is marked is_error and says"),
    "text": (lambda a: ("permission denied: o-2 belongs to another tenant", False), "says 'permission denied"),
    "json 403": (lambda a: (json.dumps({"status": 403, "message": "not yours"}), False), "has status 403"),
}


@pytest.mark.parametrize("provider,how", [(p, h) for p in ("anthropic", "openai-chat", "gemini") for h in DENIALS
                                          if (p, h) != ("openai-chat", "is_error")])  # Chat has no is_error
def test_a_denied_tool_result_fails_authorization(provider, how):
    tool, words = DENIALS[how]
    exchanges, _ = run_agent(provider, [call_reply(("read_order", {"order_id": "o-2"}, "call_1")), ANSWER],
                             tools={"read_order": tool})
    events = events_of(exchanges, EXITED_1)
    check = next(e for e in events if e["kind"] == "authorization.check")
    assert (check["outcome"], check["code"], check["call_id"]) == ("failed", "permission_denied", "call_1")
    assert words in check["summary"] or (provider == "gemini" and "has an error that says" in check["summary"])
    assert not [e for e in events if e["kind"] == "receipt.execute"]
    failure = first_failure(events)
    assert (failure["lane"], failure["code"]) == ("authorization", "permission_denied")
    # o-2 is not in the user's question: the model made the resource up
    assert "o-2 is not what the request asked for" in failure["reason"]
    assert responsibility(failure) == "model"


def test_a_denial_of_what_the_user_asked_for_is_the_guards():
    exchanges, _ = run_agent("anthropic", [READ_O1, ANSWER],
                             tools={"read_order": lambda a: ("403 Forbidden", False)})
    failure = first_failure(events_of(exchanges, EXITED_1))
    assert failure["code"] == "permission_denied" and responsibility(failure) == "guard"


@pytest.mark.parametrize("result", ["Order 403 was delivered", "Nothing here is forbidden to return."])
def test_a_result_that_only_mentions_denial_words_is_a_receipt(result):
    exchanges, _ = run_agent("openai-chat", [READ_O1, ANSWER], tools={"read_order": lambda a: (result, False)})
    events = events_of(exchanges, EXITED_0)
    assert [e["outcome"] for e in events if e["lane"] in ("authorization", "receipt")] == ["ok", "ok"]
    assert next(e for e in events if e["kind"] == "receipt.execute")["data"]["result"] == {"text": result}


@pytest.mark.parametrize("result", [(json.dumps({"error": "service unavailable"}), False),
                                    ("Error: timeout talking to the order service", False),
                                    ("the service is down", True)], ids=["json error", "Error text", "is_error"])
def test_an_error_result_is_tool_failed(result):
    exchanges, _ = run_agent("anthropic", [READ_O1, ANSWER], tools={"read_order": lambda a: result})
    events = events_of(exchanges, EXITED_1)
    assert lanes(events)[3:5] == [("authorization.check", "ok", None), ("receipt.execute", "failed", "tool_failed")]
    failure = first_failure(events)
    assert (failure["lane"], failure["code"]) == ("receipt", "tool_failed")
    assert responsibility(failure) == "environment"


def test_a_failed_tool_a_later_call_overcame_is_recovered():
    answers = iter([(json.dumps({"error": "busy"}), False), ('{"order_id":"o-1","status":"delivered"}', False)])
    exchanges, _ = run_agent("openai-chat", [READ_O1, call_reply(("read_order", {"order_id": "o-1"}, "call_2")),
                                             ANSWER], tools={"read_order": lambda a: next(answers)})
    events = events_of(exchanges, EXITED_1)
    assert [e["outcome"] for e in events if e["kind"] == "receipt.execute"] == ["recovered", "ok"]
    assert verdict(events) == ("answer", "answer_rejected")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_missing_tool_result_is_the_harness(provider):
    exchanges, _ = run_agent(provider, [READ_O1, ANSWER], tools={"read_order": lambda a: SKIP})
    events = events_of(exchanges, EXITED_1)
    receipt = next(e for e in events if e["lane"] == "receipt")
    assert (receipt["outcome"], receipt["code"]) == ("failed", "no_tool_result")
    assert "exchange 1" in receipt["summary"]
    failure = first_failure(events)
    assert failure["code"] == "no_tool_result" and responsibility(failure) == "harness"


def test_calls_the_agent_never_answered_have_no_authorization_or_receipt():
    exchanges, _ = run_agent("openai-chat", [READ_O1], max_turns=1)
    events = events_of(exchanges, KILLED)
    assert [e["kind"] for e in events] == ["http.attempt", "generation.classify", "arguments.validate",
                                           "answer.verify"]


def test_an_answer_then_exit_1_is_answer_rejected():
    exchanges, text = run_agent("openai-responses", [READ_O1, ANSWER])
    events = events_of(exchanges, AgentExit(1, None, False, True, None))
    answer = events[-1]
    assert (answer["outcome"], answer["code"]) == ("failed", "answer_rejected")
    assert answer["summary"] == (f"the agent exited with status 1: its own acceptance rejected the run "
                                 f"after: {text}")
    assert answer["data"] == {"text": text, "exit_status": 1, "signal": None, "exchanges": 2}
    failure = first_failure(events)
    assert failure["lane"] == "answer" and responsibility(failure) == "model"


def test_exit_0_accepts_the_run_and_overcomes_earlier_failures():
    exchanges, _ = run_agent("openai-chat", [READ_O1, ANSWER],
                             tools={"read_order": lambda a: ("permission denied", False)})
    events = events_of(exchanges, EXITED_0)
    assert next(e for e in events if e["kind"] == "authorization.check")["outcome"] == "recovered"
    assert first_failure(events) is None


def test_exit_0_with_a_last_response_that_is_no_answer_is_accepted():
    exchanges, _ = run_agent("openai-chat", [refusal_reply()])
    events = events_of(exchanges, EXITED_0)
    assert events[-1]["outcome"] == "ok" and "no text answer" in events[-1]["summary"]
    assert first_failure(events) is None


@pytest.mark.parametrize("status", [0, 3])
def test_no_exchanges(status):
    events = events_of([], AgentExit(status, None, False, True, None))
    assert lanes(events) == [("answer.verify", "failed", "no_exchanges")]
    assert "OPENAI_BASE_URL / ANTHROPIC_BASE_URL / GOOGLE_GEMINI_BASE_URL" in events[0]["summary"]
    assert events[0]["turn"] == 1
    assert responsibility(first_failure(events)) == "harness"


def test_killed_by_a_signal_keeps_what_it_did():
    exchanges, _ = run_agent("anthropic", [READ_O1, ANSWER])
    events = events_of(exchanges, KILLED)
    answer = events[-1]
    assert (answer["code"], answer["data"]["signal"], answer["data"]["exit_status"]) == ("agent_killed", "SIGKILL",
                                                                                         None)
    assert answer["summary"] == "the agent was killed by SIGKILL after 2 exchanges; the run holds what it did"
    assert lanes(events)[:-1] == CLEAN[:-1]
    assert responsibility(first_failure(events)) == "harness"


def test_ctrl_c_is_interrupted():
    exchanges, _ = run_agent("gemini", [READ_O1])
    events = events_of(exchanges[:1], CTRL_C)
    assert (events[-1]["code"], events[-1]["summary"]) == (
        "interrupted", "stopped with Ctrl-C after 1 exchange; the run holds what it did")
    assert verdict(events) == ("answer", "interrupted")


def test_a_command_that_did_not_start():
    events = events_of([], AgentExit(None, None, False, False, "no such file: agnet.py"))
    assert (events[0]["code"], events[0]["summary"]) == ("agent_not_started",
                                                         "the command did not start: no such file: agnet.py")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_streamed_refusal_and_truncation_read_as_the_plain_ones(provider):
    for reply, code in ((refusal_reply(), "refused"), (truncated_reply(), "incomplete")):
        plain = events_of(run_agent(provider, [reply])[0], EXITED_1)
        streamed = events_of(run_agent(provider, [reply], stream=True)[0], EXITED_1)
        assert verdict(streamed) == verdict(plain) == ("generation", code)


def test_a_stream_that_breaks_off_is_stream_interrupted_and_not_classified():
    exchanges, _ = run_agent("anthropic", [READ_O1, ANSWER], stream=True)
    broken = exchanges[0].response
    broken["events"], broken["error"] = broken["events"][:3], "stream_interrupted"
    events = events_of(exchanges[:1], EXITED_1)
    assert lanes(events) == [("http.attempt", "failed", "stream_interrupted"),
                             ("answer.verify", "failed", "answer_rejected")]


def test_a_stream_that_ends_early_is_a_protocol_error():
    exchanges, _ = run_agent("openai-responses", [READ_O1, ANSWER], stream=True)
    exchanges[0].response["events"] = exchanges[0].response["events"][:-1]  # no completion event
    events = events_of(exchanges[:1], EXITED_1)
    assert verdict(events) == ("generation", "protocol_error")


def test_an_exchange_of_no_model_api_is_http_only():
    other = WireExchange(0, None, {"method": "POST", "url": "/v1/embeddings", "provider": None, "model": None,
                                   "stream": False, "body": {"input": "x"}, "body_sha256": "ab", "retry_count": None},
                         {"status": 200, "headers": {}, "body": {"data": []}, "latency_ms": 7}, False)
    exchanges, _ = run_agent("openai-chat", [READ_O1, ANSWER])
    events = events_of([other, *exchanges], EXITED_0)
    assert lanes(events)[0] == ("http.attempt", "ok", None)
    assert [e["turn"] for e in events if e["kind"] == "http.attempt"] == [1, 1, 2]


def test_a_200_with_another_vendors_body_is_unexpected_body():
    exchanges, _ = run_agent("anthropic", [Reply(None, 200, {"content-type": "text/html"}, "<html>502</html>")])
    events = events_of(exchanges, EXITED_1)
    assert lanes(events)[0] == ("http.attempt", "failed", "unexpected_body")


@pytest.mark.parametrize("response", [None, [], {"status": "200", "body": {}}, {"status": True}, {"status": 500,
                                      "error": ["x"]}, {"status": 200, "events": "no", "headers": [1]},
                                      {"status": 200, "body": {"choices": "x"}}])
@pytest.mark.parametrize("request_", [None, {"body": [1, 2]}, {"body": {"tools": 5, "messages": [None]}}])
def test_exchanges_rebuilt_from_an_untrusted_trace_never_raise(response, request_):
    exchanges, _ = run_agent("openai-chat", [READ_O1, ANSWER])
    hostile = WireExchange(0, "openai-chat", request_, response, False)
    events = events_of([hostile, *exchanges], EXITED_1, recorded=[hostile])
    assert events[-1]["kind"] == "answer.verify"
    assert all(e["lane"] in ("http", "generation", "arguments", "authorization", "receipt", "answer") for e in events)


def test_gemini_calls_without_ids_are_matched_to_their_results_by_name_in_order():
    body = {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "read_order", "args": {"order_id": "o-1"}}},
        {"functionCall": {"name": "read_order", "args": {"order_id": "o-3"}}}]}, "finishReason": "STOP", "index": 0}],
        "modelVersion": "fake-model", "responseId": "resp-1"}
    exchanges, _ = run_agent("gemini", [Reply(None, 200, {"content-type": "application/json"}, body), ANSWER])
    assert "id" not in exchanges[1].request["body"]["contents"][2]["parts"][0]["functionResponse"]
    receipts = [e for e in events_of(exchanges, EXITED_0) if e["kind"] == "receipt.execute"]
    assert [(e["call_id"], e["data"]["result"]["order_id"]) for e in receipts] == [("gemini-call-1", "o-1"),
                                                                                    ("gemini-call-2", "o-3")]


def test_an_agent_tracetui_stopped_at_its_time_limit_says_so_in_the_answer_lane():
    from tracetui.record.exchange import AgentExit
    from tracetui.record.wire_lanes import events_of

    stopped = AgentExit(None, "SIGTERM", False, True, "stopped by tracetui: still running after its time limit of 300 s")
    last = events_of([], stopped)[-1]
    assert last["code"] == "agent_killed"
    assert last["summary"].startswith("stopped by tracetui: still running after its time limit of 300 s: "
                                      "the agent was killed by SIGTERM")


def test_a_next_request_too_large_to_keep_leaves_the_receipt_unknown_not_missing():
    import dataclasses

    exchanges = run_agent("openai-chat", [call_reply(("read_order", {"order_id": "o-1"}, "call_1")),
                                          text_reply('{"order_id":"o-1","status":"delivered"}')])[0]
    second = exchanges[1]
    exchanges[1] = dataclasses.replace(second, request={**second.request, "body": {"omitted": "5.0 MiB"}})
    events = events_of(exchanges, EXITED_1)
    assert not [e for e in events if e["lane"] in ("authorization", "receipt")]
    assert verdict(events)[1] == "answer_rejected"  # the agent's own acceptance, not a made-up no_tool_result
