"""Each adapter offline: fixtures land on the right lane, and the next request correlates by call id."""
from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tracetui.loop.inputs import responses_inputs
from tracetui.loop.runner import run_inputs
from tracetui.providers import base
from tracetui.providers.base import HttpRequest
from tracetui.providers.cassette import CassetteTransport
from tracetui.providers.registry import ADAPTERS, get_adapter

from wire import HTML, bodies

FIXTURES = Path(__file__).parent / "fixtures"

#: fixture → (status, first failing lane, code), None when the run is answer-ready
EXPECTED = {
    "openai-chat_tool_then_answer": ("answer_ready", None, None),
    "openai-chat_stream_tool_then_answer": ("answer_ready", None, None),
    "openai-chat_refusal": ("refused", "generation", "refused"),
    "openai-chat_content_filter": ("refused", "generation", "refused"),
    "openai-chat_truncation": ("incomplete", "generation", "incomplete"),
    "anthropic_tool_then_answer": ("answer_ready", None, None),
    "anthropic_stream_tool_then_answer": ("answer_ready", None, None),
    "anthropic_overloaded": ("answer_ready", None, None),
    "anthropic_refusal": ("refused", "generation", "refused"),
    "anthropic_truncation": ("incomplete", "generation", "incomplete"),
    "anthropic_pause_turn": ("incomplete", "generation", "incomplete"),
    "gemini_tool_then_answer": ("answer_ready", None, None),
    "gemini_stream_tool_then_answer": ("answer_ready", None, None),
    "gemini_refusal": ("refused", "generation", "refused"),
    "gemini_prompt_blocked": ("refused", "generation", "refused"),
    "gemini_truncation": ("incomplete", "generation", "incomplete"),
    "gemini_malformed_function_call": ("invalid_tool_call", "generation", "invalid_tool_call"),
    "gemini_malformed_under_stop": ("invalid_tool_call", "generation", "invalid_tool_call"),
}


class Recording(CassetteTransport):
    """A cassette that keeps the requests the loop built."""

    def __init__(self, recorded):
        super().__init__(recorded)
        self.requests: list[HttpRequest] = []

    def send(self, request):
        self.requests.append(request)
        return super().send(request)


def run_fixture(name: str):
    provider = name.split("_", 1)[0]
    responses = json.loads((FIXTURES / f"{name}.json").read_text())
    transport = Recording(responses)
    result = run_inputs(name, responses_inputs(responses, provider), transport)
    return result, transport.requests


def test_every_fixture_is_expected():
    assert sorted(p.stem for p in FIXTURES.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_verdicts(name):
    status, lane, code = EXPECTED[name]
    result, _ = run_fixture(name)
    assert result.status == status
    ff = result.summary["first_failure"]
    assert (ff and (ff["lane"], ff["code"])) == ((lane, code) if lane else None)
    if lane:
        assert not any(e["lane"] == "receipt" for e in result.events), "no tool may run on a failed turn"


def test_the_cli_runs_each_provider_over_its_cassette(tmp_path):
    from click.testing import CliRunner

    from tracetui.cli import main

    for provider in ("openai-chat", "anthropic", "gemini"):
        out = tmp_path / f"{provider}.jsonl"
        res = CliRunner().invoke(main, ["run", "--responses", str(FIXTURES / f"{provider}_tool_then_answer.json"),
                                        "--provider", provider, "-o", str(out)])
        assert res.exit_code == 0, res.output
        run = orjson.loads(out.read_bytes().splitlines()[0])
        assert run["inputs"]["provider"] == provider and run["inputs"]["source"] == "responses"


def test_chat_truncated_tool_call_is_reported_not_run():
    result, _ = run_fixture("openai-chat_truncation")
    gen = next(e for e in result.events if e["lane"] == "generation")
    assert gen["data"]["calls"] == [{"call_id": "call_cut1", "name": "read_order", "arguments": '{"order_id":"o-'}]
    assert "1 partial tool call(s) not executed" in gen["summary"]


def test_chat_next_request_answers_by_tool_call_id():
    _, requests = run_fixture("openai-chat_tool_then_answer")
    first, second = (r.body for r in requests)
    assert requests[0].url.endswith("/v1/chat/completions")
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["tools"][0]["function"]["name"] == "read_order" and first["tools"][0]["function"]["strict"]
    assistant, tool = second["messages"][2:]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "call_abc123"
    assert tool == {"role": "tool", "tool_call_id": "call_abc123", "content": tool["content"]}
    assert json.loads(tool["content"])["status"] == "delivered"


def test_anthropic_arguments_are_canonical_and_blocks_go_back_verbatim():
    result, requests = run_fixture("anthropic_tool_then_answer")
    gen = next(e for e in result.events if e["lane"] == "generation")
    assert gen["data"]["calls"][0]["arguments"] == '{"order_id":"o-1"}'
    second = requests[1].body
    assert second["system"].startswith("Use read_order") and requests[1].url.endswith("/v1/messages")
    assistant, results = second["messages"][1:]
    original = json.loads((FIXTURES / "anthropic_tool_then_answer.json").read_text())[0]["content"]
    assert assistant == {"role": "assistant", "content": original}  # thinking block + signature intact
    block = results["content"][0]
    assert results["role"] == "user"
    assert (block["type"], block["tool_use_id"], block["is_error"]) == ("tool_result", "toolu_01A09q90qw90lq917835lq9", False)


def test_anthropic_refusal_keeps_partial_text_out_of_the_transcript():
    result, _ = run_fixture("anthropic_refusal")
    gen = next(e for e in result.events if e["lane"] == "generation")
    assert gen["data"]["finish_reason"] == "refusal" and gen["data"]["text"] == "Sure, here is how to"
    assert "partial text discarded" in gen["summary"]


def test_gemini_synthesizes_a_deterministic_id_and_says_so():
    result, requests = run_fixture("gemini_tool_then_answer")
    gen = next(e for e in result.events if e["lane"] == "generation")
    assert gen["data"]["calls"][0]["call_id"] == "gemini-call-1"
    assert "synthesized gemini-call-1" in gen["data"]["detail"]
    assert requests[0].url.endswith("/v1beta/models/recorded-model:generateContent")
    second = requests[1].body
    model, user = second["contents"][1:]
    assert model["role"] == "model"
    assert model["parts"][0]["thoughtSignature"] == "CiQBVKhc7sig"  # returned verbatim
    fr = user["parts"][0]["functionResponse"]
    assert fr["name"] == "read_order" and "id" not in fr  # the API never issued that id
    assert fr["response"]["output"]["status"] == "delivered"
    assert second["tools"][0]["functionDeclarations"][0]["parameters_json_schema"]["additionalProperties"] is False
    again, _ = run_fixture("gemini_tool_then_answer")
    assert again.events == result.events


def test_gemini_real_ids_are_kept_and_sent_back():
    adapter = get_adapter("gemini")
    turn = adapter.parse_response({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": "fc-1", "name": "read_order", "args": {"order_id": "o-1"}}}]}, "finishReason": "STOP"}]})
    assert turn.kind == base.TOOL_CALLS and turn.calls[0].call_id == "fc-1" and turn.detail is None
    transcript = [{"type": "message", "role": "user", "content": "q"}, *turn.items,
                  {"type": "tool_result", "call_id": "fc-1", "output": '{"ok":false}', "is_error": True}]
    body = adapter.build_request("m", transcript, [], 100, False)
    fr = body["contents"][-1]["parts"][0]["functionResponse"]
    assert fr == {"name": "read_order", "response": {"error": {"ok": False}}, "id": "fc-1"}


def test_anthropic_tool_error_results_say_is_error():
    body = get_adapter("anthropic").build_request("m", [
        {"type": "message", "role": "user", "content": "q"},
        {"type": "tool_call", "call_id": "t1", "name": "read_order", "arguments": '{"order_id":"o-9"}'},
        {"type": "tool_result", "call_id": "t1", "output": "{}", "is_error": True}], [], 100, False)
    assert body["messages"][1]["content"] == [{"type": "tool_use", "id": "t1", "name": "read_order",
                                               "input": {"order_id": "o-9"}}]
    assert body["messages"][2]["content"][0]["is_error"] is True


@pytest.mark.parametrize("provider", sorted(ADAPTERS))
def test_html_and_other_vendors_are_foreign(provider):
    adapter = get_adapter(provider)
    assert adapter.parse_response(HTML).kind == base.FOREIGN_BODY
    assert "HTML" in adapter.parse_response(HTML).detail
    for other in ("openai-chat", "anthropic", "gemini"):
        if other != provider:
            turn = adapter.parse_response(bodies(other)[0])
            assert turn.kind == base.FOREIGN_BODY, (provider, other)
            assert "looks like" in turn.detail


@pytest.mark.parametrize("body, kind, finish", [
    ({"id": "x", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                             "function": {"name": "read_order", "arguments": "{}"}}]}}]},
     base.TOOL_CALLS, "stop"),  # compatible servers that finish tool calls with "stop"
    ({"object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
                                                "message": {"role": "assistant", "content": "hm"}}]},
     base.INVALID_TOOL_CALL, "tool_calls"),
    ({"object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                             "function": {"name": "read_order"}}]}}]},
     base.INVALID_TOOL_CALL, "tool_calls"),
    ({"object": "chat.completion", "choices": []}, base.UNSUPPORTED, None),
    ({"error": {"message": "boom", "type": "server_error"}}, base.FAILED, None),
])
def test_chat_edge_shapes(body, kind, finish):
    turn = get_adapter("openai-chat").parse_response(body)
    assert (turn.kind, turn.finish_reason) == (kind, finish)


def test_anthropic_error_body_at_200_and_unknown_blocks():
    adapter = get_adapter("anthropic")
    assert adapter.parse_response({"type": "error", "error": {"type": "api_error", "message": "x"}}).kind == base.FAILED
    odd = {"type": "message", "role": "assistant", "content": [{"type": "server_tool_use", "id": "s"}],
           "stop_reason": "end_turn"}
    assert adapter.parse_response(odd).kind == base.UNSUPPORTED
    no_call = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}], "stop_reason": "tool_use"}
    assert adapter.parse_response(no_call).kind == base.INVALID_TOOL_CALL


def test_gemini_no_candidates_and_unknown_finish():
    adapter = get_adapter("gemini")
    assert adapter.parse_response({"candidates": [], "usageMetadata": {}}).kind == base.EMPTY
    newer = {"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "SOMETHING_NEW"}]}
    assert adapter.parse_response(newer).kind == base.UNSUPPORTED
    for reason in ("UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"):
        turn = adapter.parse_response({"candidates": [{"finishReason": reason}]})
        assert turn.kind == base.INVALID_TOOL_CALL



@pytest.mark.parametrize("reason, status", [
    ("OTHER", "generation_stopped"), ("IMAGE_OTHER", "generation_stopped"),
    ("FINISH_REASON_UNSPECIFIED", "finish_reason_unspecified"), ("MALFORMED_RESPONSE", "malformed_response"),
    ("NO_IMAGE", "no_image"), ("MISSING_THOUGHT_SIGNATURE", "missing_thought_signature"),
    ("PUP_LIMITED_DISABLED", "account_restricted"), ("MODEL_ARMOR", "refused"), ("IMAGE_SAFETY", "refused"),
    ("IMAGE_PROHIBITED_CONTENT", "refused"), ("IMAGE_RECITATION", "refused"), ("ESCALATION", "refused"),
    ("CONTINUATION", "incomplete"), ("TOO_MANY_TOOL_CALLS", "invalid_tool_call"),
])
def test_every_gemini_finish_reason_has_its_own_code_and_words(reason, status):
    body = {"candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}, "finishReason": reason}]}
    result = run_inputs("g", responses_inputs([body], "gemini"))
    failure = result.summary["first_failure"]
    assert result.status == status and failure["lane"] == "generation"
    assert f"(finishReason {reason})" in failure["reason"] and "unexpected" not in failure["reason"]


def test_every_gemini_finish_reason_the_sdk_knows_is_named():
    from google.genai.types import FinishReason

    from tracetui.providers.gemini_finish import FINISH_REASONS

    assert {r.value for r in FinishReason} - {"STOP"} <= set(FINISH_REASONS)


def test_a_legacy_chat_function_call_gets_its_own_code():
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [{
        "index": 0, "finish_reason": "function_call", "logprobs": None,
        "message": {"role": "assistant", "content": None,
                    "function_call": {"name": "read_order", "arguments": "{\"order_id\": \"o-1\"}"}}}]}
    result = run_inputs("legacy", responses_inputs([body], "openai-chat"))
    failure = result.summary["first_failure"]
    assert result.status == "legacy_function_call" and failure["lane"] == "generation"
    assert "legacy function_call" in failure["reason"]
    assert not any(e["lane"] == "receipt" for e in result.events)
