"""The line above the proposals: a guard held only when it refused exactly what the user asked for, said with
figures that are there; the loop guard's stop says the model caused the repeat."""
from __future__ import annotations

import copy
from pathlib import Path

from tracetui.explain import explain
from tracetui.explain.evidence import Evidence
from tracetui.explain.kinds import guard_held, headline
from tracetui.loop.inputs import responses_inputs
from tracetui.loop.runner import run_inputs
from tracetui.loop.world import default_tools
from tracetui.trace.reader import RunData, read_trace

ROOT = Path(__file__).resolve().parent.parent.parent


def _sample(run_id: str) -> RunData:
    return read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs[run_id]


def _refund_of_80(request: str) -> RunData:
    call = {"type": "function_call", "call_id": "c1", "name": "refund_order",
            "arguments": '{"order_id":"o-1","amount":80.0,"reason":"damaged"}'}
    inputs = responses_inputs([{"status": 200, "headers": {}, "body": {"object": "response", "status": "completed",
                                                                       "output": [call]}}], user_input=request)
    inputs["tools"] = default_tools()
    result = run_inputs("refund-80", inputs)
    run = RunData(result.run["run_id"])
    for record in result.records:
        run.add(record)
    return run


def test_a_refund_the_request_names_no_amount_for_is_not_a_guard_holding():
    ev = Evidence(_refund_of_80("Refund order o-1 in full: it arrived damaged."))
    assert ev.failure["code"] == "business_rule_violation"
    assert not guard_held(ev)
    assert "held" not in (headline(ev) or "")
    result = explain(ev.run)
    assert result.responsibility == "model" and not result.guard_held


def test_a_refund_of_the_amount_the_request_names_is_a_guard_holding_in_any_currency_notation():
    ev = Evidence(_refund_of_80("Please refund $80 on o-1, it arrived damaged."))
    assert guard_held(ev)
    assert headline(ev).startswith("the business rule held: the user asked to refund 80.00 on o-1, more than its "
                                   "refundable balance 50.00;")


def test_a_balance_that_is_not_a_number_is_not_written_twice():
    run = copy.deepcopy(_sample("business_rule"))
    run.inputs["tool_data"]["orders"]["o-1"]["paid"] = "eighty"
    line = headline(Evidence(run))
    assert line == ("the business rule held: the user asked to refund 80.00 on o-1, more than its refundable "
                    "balance; nothing in the model or the harness needs fixing")


def test_the_loop_guard_s_stop_says_who_caused_the_repeat():
    result = explain(_sample("repeat"))
    assert result.responsibility == "guard"
    assert result.headline == "the loop guard stopped a repeated call: the model caused it; the guard did its job"
    assert result.fixes and result.fixes[0].candidate.side == "model"  # the model's side is where to fix it


def test_another_vendor_s_body_points_at_the_base_url_and_rewriting_the_response_is_no_fix():
    run = read_trace(ROOT / "sample_traces" / "fault-vendor.jsonl").runs["single-fault-vendor"]
    result = explain(run)
    assert result.responsibility == "harness"
    assert result.headline.startswith("the server answered in another vendor's API: the loop points at the wrong "
                                      "base URL or adapter")
    assert not result.fixes and result.what_ifs
    assert all("base URL or adapter" in p.why_not for p in result.what_ifs)


def test_a_cancelled_response_is_not_rewritten_as_the_model_s():
    result = explain(_sample("response_cancelled"))
    assert result.responsibility == "harness" and not result.fixes
    assert "find what cancelled it" in result.headline
    assert all(p.candidate.side == "provider" and "cancelled" in p.why_not for p in result.what_ifs)
