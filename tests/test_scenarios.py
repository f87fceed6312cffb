"""Every named scenario ends where the seeds say it must, on the right boundary."""
from __future__ import annotations

import pytest

from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.inputs import build_inputs, responses_inputs
from tracetui.loop.runner import run_inputs, run_scenario
from tracetui.loop.scenarios import SCENARIOS
from tracetui.providers.base import HttpRequest
from tracetui.providers.fake import FakeProvider

# scenario -> (status, first failing lane or None, recovered events)
EXPECTED = {
    "text": ("answer_ready", None, 0),
    "single": ("answer_ready", None, 0),
    "parallel": ("answer_ready", None, 0),
    "parallel_partial_failure": ("answer_ready", None, 1),
    "invalid_args": ("answer_ready", None, 1),
    "tool_failure": ("tool_failed", "receipt", 0),
    "repeat": ("loop_detected", "generation", 0),
    "refusal": ("refused", "generation", 0),
    "truncated": ("incomplete", "generation", 0),
    "duplicate_ids": ("duplicate_call_id", "arguments", 0),
    "truncated_tool_call": ("incomplete", "generation", 0),
    "unknown_tool": ("unknown_tool", "arguments", 0),
    "cross_tenant": ("permission_denied", "authorization", 0),
    "reused_call_id": ("duplicate_call_id", "arguments", 0),
    "no_receipt": ("unverified_answer", "answer", 0),
    "response_failed": ("response_failed", "generation", 0),
    "response_cancelled": ("response_cancelled", "generation", 0),
    "reasoning_items": ("answer_ready", None, 0),
    "call_budget": ("budget_exhausted", "generation", 0),
    "turn_budget": ("budget_exhausted", "generation", 0),
    "refund": ("answer_ready", None, 0),
    "invalid_json": ("answer_ready", None, 1),
    "repair_exhausted": ("handoff_required", "arguments", 0),
    "business_rule": ("business_rule_violation", "arguments", 0),
    "write_timeout": ("answer_ready", None, 1),
    "write_unguarded": ("duplicate_execution", "receipt", 0),
    "stream": ("answer_ready", None, 0),
    "stream_cut": ("stream_interrupted", "http", 0),
    "stream_no_completion": ("protocol_error", "generation", 0),
    "stream_bad_json": ("protocol_error", "generation", 0),
}


def test_every_scenario_has_an_expectation():
    assert set(EXPECTED) == set(SCENARIOS)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_scenario_verdict(name):
    status, lane, recovered = EXPECTED[name]
    result = run_scenario(name)
    assert result.status == status
    assert result.summary["ready"] is (status == "answer_ready")
    failure = result.summary["first_failure"]
    assert (failure["lane"] if failure else None) == lane
    assert result.summary["metrics"]["recovered"] == recovered
    assert SCENARIOS[name].expect == status
    if failure:
        pointed = result.events[failure["seq"] - 1]
        assert pointed["seq"] == failure["seq"] and pointed["lane"] == lane and pointed["outcome"] == "failed"
        assert failure["reason"]


def lanes(result):
    return [(e["lane"], e["outcome"]) for e in result.events]


def test_single_crosses_every_boundary_in_order():
    result = run_scenario("single")
    assert [lane for lane, _ in lanes(result)] == [
        "http", "generation", "arguments", "authorization", "receipt", "http", "generation", "answer"]
    assert all(outcome == "ok" for _, outcome in lanes(result))
    m = result.summary["metrics"]
    assert (m["iterations"], m["model_calls"], m["tool_calls"]) == (2, 2, 1)
    assert m["input_units"] > 0


def test_parallel_results_are_correlated_by_their_own_call_ids():
    result = run_scenario("parallel")
    receipts = [e for e in result.events if e["lane"] == "receipt"]
    assert [(e["call_id"], e["data"]["result"]["order_id"]) for e in receipts] == [("call-1", "o-1"), ("call-2", "o-3")]


def test_parallel_partial_failure_keeps_the_successful_result():
    result = run_scenario("parallel_partial_failure")
    receipt = [e for e in result.events if e["lane"] == "receipt"]
    assert [e["outcome"] for e in receipt] == ["ok", "recovered"]
    answer = result.events[-1]
    assert answer["lane"] == "answer" and answer["data"]["claims"] == [receipt[0]["data"]["result"]]


def test_invalid_args_error_goes_back_by_call_id_and_is_repaired():
    result = run_scenario("invalid_args")
    args = [e for e in result.events if e["lane"] == "arguments"]
    assert [(e["call_id"], e["outcome"], e["code"]) for e in args] == [
        ("call-1", "recovered", "schema_error"), ("call-2", "ok", None)]
    assert args[0]["data"]["error_type"] == "schema_error"


def test_tool_failure_invents_no_result():
    result = run_scenario("tool_failure")
    assert all("result" not in e["data"] for e in result.events if e["lane"] == "receipt")
    assert result.events[-1]["lane"] == "answer" and result.events[-1]["data"]["claims"] == []


def test_duplicate_ids_run_no_tool():
    for name in ("duplicate_ids", "truncated_tool_call", "call_budget", "stream_cut", "stream_bad_json",
                 "stream_no_completion"):
        result = run_scenario(name)
        assert not [e for e in result.events if e["lane"] in ("authorization", "receipt")], name
        assert result.summary["metrics"]["tool_calls"] == 0, name


def test_cross_tenant_returns_no_protected_field():
    result = run_scenario("cross_tenant")
    auth = [e for e in result.events if e["lane"] == "authorization"][0]
    assert auth["outcome"] == "failed" and auth["data"]["returned_fields"] == []
    assert "processing" not in str(result.events)  # o-2's status never leaves the tool
    assert "o-2 belongs to tenant shop-b, user u-2; caller is tenant shop-a, user u-1: tenant and user differ" in result.summary["first_failure"]["reason"]


def test_no_receipt_answer_is_unverified_even_though_it_is_true():
    result = run_scenario("no_receipt")
    answer = result.events[-1]
    assert answer["data"]["claims"] == [{"order_id": "o-1", "status": "delivered", "source": "read_order"}]
    assert result.status == "unverified_answer"


def test_repair_budget_hands_off_with_original_arguments_and_last_error():
    result = run_scenario("repair_exhausted")
    last = result.events[-1]
    assert last["code"] == "handoff_required"
    assert last["data"]["handoff"]["original_arguments"] == '{"order_id":"o-1","amount":"20.00","reason":"damaged"}'
    assert "is not of type 'number'" in last["data"]["handoff"]["last_error"]
    failed_args = [e for e in result.events if e["lane"] == "arguments"]
    assert len(failed_args) == 3  # two repairs allowed, the third attempt hands off


def test_validation_log_fields():
    result = run_scenario("refund")
    args = next(e for e in result.events if e["lane"] == "arguments")
    receipt = next(e for e in result.events if e["lane"] == "receipt")
    for field in ("request_id", "tool_call_id", "error_type", "attempt", "validated_at"):
        assert field in args["data"]
    for field in ("request_id", "tool_call_id", "idempotency_key", "executed_at", "attempt"):
        assert field in receipt["data"]
    assert receipt["data"]["idempotency_key"] == "refund:o-1:20.00"


def test_write_timeout_checks_the_receipt_instead_of_writing_twice():
    result = run_scenario("write_timeout")
    receipts = [e for e in result.events if e["lane"] == "receipt"]
    assert [(e["kind"], e["outcome"]) for e in receipts] == [("receipt.execute", "recovered"), ("receipt.lookup", "ok")]
    assert receipts[1]["data"]["result"]["refund_id"] == "r-1"


def test_unguarded_write_executes_twice_and_is_flagged():
    result = run_scenario("write_unguarded")
    last = result.events[-1]
    assert last["code"] == "duplicate_execution"
    assert [x["refund_id"] for x in last["data"]["executions"]] == ["r-1", "r-2"]


def test_business_rule_is_not_retried():
    result = run_scenario("business_rule")
    assert result.summary["metrics"]["model_calls"] == 1
    assert "exceeds the refundable balance 50.00" in result.summary["first_failure"]["reason"]


def test_reasoning_item_is_kept_and_required():
    result = run_scenario("reasoning_items")
    assert "reasoning" in result.events[1]["data"]["item_types"]
    provider = FakeProvider(build_inputs("reasoning_items"))
    body = {"input": [{"role": "user", "content": "o-1"},
                      {"type": "function_call", "id": "fc_1", "call_id": "call-1", "name": "read_order",
                       "arguments": "{}"}]}
    exchange = provider.send(HttpRequest("POST", "fake://provider/v1/responses", {}, body, 30000))
    assert exchange.status == 400
    assert "without its required 'reasoning' item" in exchange.body["error"]["message"]


def test_truncation_is_an_input_the_user_can_change():
    inputs = build_inputs("truncated")
    inputs["budgets"]["max_output_tokens"] = 500
    assert run_inputs("t", inputs).status == "answer_ready"


# ---- ablations -----------------------------------------------------------------------------
ABLATED = {
    "complete": ("answer_ready", None),
    "drop_assistant_call": ("request_rejected", "http"),
    "mismatch_call_id": ("request_rejected", "http"),
    "flatten_roles": ("loop_detected", "generation"),
    "sliding_window": ("unverified_answer", "answer"),
}


@pytest.mark.parametrize("ablation", list(ABLATIONS))
def test_ablations_of_single(ablation):
    status, lane = ABLATED[ablation]
    result = run_scenario("single", ablation)
    assert result.status == status
    assert (result.summary["first_failure"] or {}).get("lane") == lane


def test_unknown_call_id_is_rejected_like_a_real_api():
    result = run_scenario("single", "mismatch_call_id")
    http = [e for e in result.events if e["lane"] == "http"][-1]
    assert http["data"]["response"]["status"] == 400
    assert "No tool call found for function call output with call_id call-1-x" in http["summary"]


def test_ablation_damage_is_reported_over_a_failure_being_handled():
    # the schema error was sent back for repair; the 400 that followed is what ended the run
    result = run_scenario("invalid_args", "drop_assistant_call")
    assert result.summary["first_failure"]["lane"] == "http"


# ---- HTTP faults ---------------------------------------------------------------------------
@pytest.mark.parametrize("fault,status,lane,attempts", [
    ("429", "answer_ready", None, 3),
    ("5xx", "answer_ready", None, 3),
    ("timeout", "answer_ready", None, 3),
    ("html", "unexpected_body", "http", 1),
    ("vendor", "unexpected_body", "http", 1),
])
def test_faults(fault, status, lane, attempts):
    result = run_scenario("single", faults=(fault,))
    assert result.status == status
    assert (result.summary["first_failure"] or {}).get("lane") == lane
    assert result.summary["metrics"]["http_attempts"] == attempts


def test_429_waits_for_retry_after_in_logical_time():
    result = run_scenario("single", faults=("429",))
    first = result.events[0]
    assert first["outcome"] == "recovered" and first["code"] == "rate_limited"
    assert first["data"]["backoff_ms"] == 2000 and first["data"]["backoff_source"] == "retry-after"
    assert result.events[1]["t_ms"] >= first["t_ms"] + 2000


def test_retries_are_bounded():
    result = run_scenario("single", transient_failures=3)
    http = [e for e in result.events if e["lane"] == "http"]
    assert len(http) == 3 and all(e["outcome"] == "failed" for e in http)
    failure = result.summary["first_failure"]
    assert (failure["seq"], failure["decided_at"], failure["code"]) == (1, 3, "server_error")
    assert "retries exhausted after 3 attempts" in failure["reason"]


def test_html_body_is_never_repaired_or_retried():
    result = run_scenario("single", faults=("html",))
    assert len(result.events) == 1
    assert "HTML page" in result.events[0]["summary"]


def test_a_repair_never_made_is_the_first_failure_not_the_unbacked_answer_it_led_to():
    # the schema error was sent back for repair; then the window lost the user's goal and the model
    # answered instead: the call never ran because of its arguments, so the arguments decide
    result = run_scenario("invalid_args", "sliding_window")
    ff = result.summary["first_failure"]
    assert result.status == "schema_error" and ff["lane"] == "arguments"
    assert ff["reason"].endswith("never repaired: the model answered instead")
    assert result.events[-1]["lane"] == "answer" and result.events[-1]["code"] == "unverified_answer"
    # a tool failure the model could not fix is likewise the cause of the unbacked answer
    assert run_scenario("tool_failure").summary["first_failure"]["lane"] == "receipt"


class SpyTransport:
    """Wraps the fake provider and keeps every request body the model was sent."""

    def __init__(self, inputs):
        self.inner = FakeProvider(inputs)
        self.bodies = []

    def send(self, request):
        self.bodies.append(request.body)
        return self.inner.send(request)


def test_no_protected_field_of_another_tenant_ever_reaches_the_model():
    import orjson

    inputs = build_inputs("cross_tenant")
    spy = SpyTransport(inputs)
    result = run_inputs("x", inputs, spy)
    assert result.status == "permission_denied" and spy.bodies
    sent = b"".join(orjson.dumps(b) for b in spy.bodies)
    o2 = inputs["tool_data"]["orders"]["o-2"]
    assert o2["status"].encode() not in sent and str(o2["paid"]).encode() not in sent
    assert b"function_call_output" not in sent  # no result of any kind went back for the denied call


_ANSWER = {"status": "completed", "output": [{"type": "message", "role": "assistant", "status": "completed",
                                             "content": [{"type": "output_text", "text": "hi"}]}]}


def test_header_names_are_matched_case_insensitively_the_last_spelling_winning():
    """A recorded exchange may spell a header twice: read like one header, as an HTTP client would fold it."""
    limited = {"status": 429, "headers": {"retry-after": "1", "Retry-After": "3", "x-request-id": "lower",
                                          "X-Request-Id": "Upper"}, "body": {"error": {"message": "slow down"}}}
    result = run_inputs("h", responses_inputs([limited, _ANSWER]))
    first, second = result.events[0], result.events[1]
    assert first["data"]["backoff_ms"] == 3000 and first["data"]["backoff_source"] == "retry-after"
    assert second["kind"] == "http.attempt" and second["outcome"] == "ok"
    assert result.events[2]["data"]["request_id"] == "Upper"


def test_a_vendor_body_is_each_runs_own():
    first = run_scenario("single", faults=("vendor",))
    first.events[0]["data"]["response"]["body"]["model"] = "changed by an earlier run"
    again = run_scenario("single", faults=("vendor",))
    assert again.events[0]["data"]["response"]["body"]["model"] == "other-model"
