"""The response-contract lab's four minimal faults, from recorded Responses-shaped fixtures."""
from __future__ import annotations

import orjson
import pytest

from tracetui.loop.inputs import responses_inputs
from tracetui.loop.runner import run_inputs
from tracetui.providers.openai_responses import OpenAIResponsesAdapter


@pytest.mark.parametrize("fixture,status,lane,receipts", [
    ("normal", "answer_ready", None, 1),
    ("unknown_tool", "unknown_tool", "arguments", 0),
    ("cross_tenant", "permission_denied", "authorization", 0),
    ("duplicate_call_id", "duplicate_call_id", "arguments", 1),
    ("no_receipt", "unverified_answer", "answer", 0),
    ("incomplete", "incomplete", "generation", 0),
    ("rate_limited_then_ok", "answer_ready", None, 1),
    ("repeated_call", "loop_detected", "generation", 1),  # the same call again: stopped at the repeat
])
def test_recorded_fixture(root, fixture, status, lane, receipts):
    responses = orjson.loads((root / "sample_traces" / "responses" / f"{fixture}.json").read_bytes())
    result = run_inputs(fixture, responses_inputs(responses))
    assert result.status == status
    assert (result.summary["first_failure"] or {}).get("lane") == lane
    assert len([e for e in result.events if e["lane"] == "receipt" and e["outcome"] == "ok"]) == receipts


def test_the_seeds_bounded_loop_stops_at_the_turn_budget_with_two_calls(root):
    responses = orjson.loads((root / "sample_traces" / "responses" / "bounded_loop.json").read_bytes())
    result = run_inputs("bounded", responses_inputs(responses, max_turns=2))
    assert result.status == "budget_exhausted" and result.summary["metrics"]["tool_calls"] == 2


def test_cassette_running_dry_is_reported():
    one = [{"status": "completed", "output": [{"type": "function_call", "call_id": "c", "name": "read_order",
                                               "arguments": '{"order_id": "o-1"}'}]}]
    result = run_inputs("dry", responses_inputs(one))
    assert result.status == "cassette_exhausted" and result.summary["first_failure"]["lane"] == "http"


@pytest.mark.parametrize("body,kind", [
    ({"status": "completed", "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "no"}]}]}, "refused"),
    ({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}, "incomplete"),
    ({"status": "failed"}, "failed"),
    ({"status": "cancelled"}, "cancelled"),
    ({"status": "completed", "output": [{"type": "web_search_call"}]}, "unsupported"),
    ({"status": "completed", "output": [{"type": "function_call", "name": "read_order"}]}, "invalid_tool_call"),
    ({"status": "completed", "output": []}, "empty"),
    ("<!DOCTYPE html><html>", "foreign_body"),
    ({"choices": []}, "foreign_body"),
    ({"type": "message", "content": []}, "foreign_body"),
])
def test_classification(body, kind):
    assert OpenAIResponsesAdapter().parse_response(body).kind == kind
