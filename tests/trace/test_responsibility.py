"""Who is responsible for each built-in failure: one class per scenario, ablation and fault, from the summary alone."""
from __future__ import annotations

import pytest

from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.inputs import responses_inputs
from tracetui.loop.runner import run_inputs, run_scenario
from tracetui.loop.scenarios import FAULT_CHOICES, SCENARIOS
from tracetui.trace.responsibility import ENVIRONMENT, GUARD, HARNESS, MODEL, RESPONSIBILITIES, responsibility
from tracetui.trace.verdict import decide

#: every built-in scenario that fails, and who is responsible for its failure
FAILING = {
    "tool_failure": ENVIRONMENT, "repeat": GUARD, "refusal": MODEL, "truncated": HARNESS,
    "duplicate_ids": MODEL, "truncated_tool_call": HARNESS, "unknown_tool": MODEL, "cross_tenant": GUARD,
    "reused_call_id": MODEL, "no_receipt": MODEL, "response_failed": ENVIRONMENT,
    "response_cancelled": HARNESS, "call_budget": HARNESS, "turn_budget": HARNESS,
    "repair_exhausted": MODEL, "business_rule": GUARD, "write_unguarded": HARNESS,
    "stream_cut": ENVIRONMENT, "stream_no_completion": ENVIRONMENT, "stream_bad_json": ENVIRONMENT,
}


def test_every_failing_scenario_has_a_class():
    assert set(FAILING) == {n for n, s in SCENARIOS.items() if s.expect != "answer_ready"}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_class_of_each_scenario(name):
    result = run_scenario(name)
    failure = result.summary["first_failure"]
    assert responsibility(failure) == FAILING.get(name)
    assert responsibility(failure, result.run["inputs"]) == FAILING.get(name)  # the summary alone says the same
    assert decide(result.summary, result.events).as_dict(name)["responsibility"] == FAILING.get(name)


@pytest.mark.parametrize("scenario", ["single", "parallel"])
@pytest.mark.parametrize("ablation", [a for a in ABLATIONS if a != "complete"])
def test_a_damaged_context_is_the_harness_s_doing(scenario, ablation):
    result = run_scenario(scenario, ablation)
    assert result.status != "answer_ready"
    assert responsibility(result.summary["first_failure"]) == HARNESS
    assert "the context was ablated" in result.summary["first_failure"]["reason"]


def test_a_first_response_the_ablation_did_not_change_stays_the_model_s():
    """Before any history exists, drop_assistant_call, mismatch_call_id and sliding_window send the very request
    an undamaged run sends: a failure of that first response is the model's, as without the ablation.
    flatten_roles changes even the first request (the instructions lose their role): it stays the harness's."""
    for ablation in ("drop_assistant_call", "mismatch_call_id", "sliding_window"):
        failure = run_scenario("duplicate_ids", ablation).summary["first_failure"]
        assert "the context was ablated" not in failure["reason"]
        assert responsibility(failure) == MODEL == responsibility(run_scenario("duplicate_ids").summary["first_failure"])
    flattened = run_scenario("duplicate_ids", "flatten_roles").summary["first_failure"]
    assert "the context was ablated (flatten_roles)" in flattened["reason"] and responsibility(flattened) == HARNESS


def test_the_class_never_depends_on_the_inputs():
    """The strict check scan and an imported OTLP trace have no inputs: the class comes from the reason alone,
    so an old trace without the ablation phrase gets the same class on every surface."""
    failure = {"lane": "answer", "seq": 8, "code": "unverified_answer", "reason": "answer claims o-1 delivered"}
    assert responsibility(failure) == responsibility(failure, {"ablation": "sliding_window"}) == MODEL


#: a foreign vendor's body is a wrong base URL or adapter (yours); an HTML page is a gateway's
FAULT_CLASSES = {"429": ENVIRONMENT, "5xx": ENVIRONMENT, "timeout": ENVIRONMENT, "html": ENVIRONMENT, "vendor": HARNESS}


def test_every_fault_has_a_class():
    assert set(FAULT_CLASSES) == set(FAULT_CHOICES)


@pytest.mark.parametrize("fault", FAULT_CHOICES)
def test_the_class_of_each_injected_fault(fault):
    result = run_scenario("single", faults=(fault, fault, fault))
    failure = result.summary["first_failure"] if result.status != "answer_ready" else None
    assert responsibility(failure) == FAULT_CLASSES[fault]


def test_a_denial_of_an_order_the_model_made_up_is_the_model_s():
    inputs = responses_inputs([{"status": 200, "headers": {}, "body": {"object": "response", "status": "completed",
                               "output": [{"type": "function_call", "call_id": "c1", "name": "read_order",
                                           "arguments": '{"order_id":"o-2"}'}]}}])
    failure = run_inputs("made-up", inputs).summary["first_failure"]
    assert failure["code"] == "permission_denied"
    assert failure["reason"].endswith("o-2 is not what the request asked for (it names o-1)")
    assert responsibility(failure) == MODEL


def test_a_refund_over_the_balance_the_model_made_up_is_the_model_s():
    from tracetui.loop.world import default_tools

    call = {"type": "function_call", "call_id": "c1", "name": "refund_order",
            "arguments": '{"order_id":"o-1","amount":80.0,"reason":"damaged"}'}
    inputs = responses_inputs([{"status": 200, "headers": {}, "body": {"object": "response", "status": "completed",
                                                                       "output": [call]}}],
                              user_input="Refund 20.00 on order o-1: it arrived damaged.")
    inputs["tools"] = default_tools()
    failure = run_inputs("made-up-amount", inputs).summary["first_failure"]
    assert failure["code"] == "business_rule_violation"
    assert failure["reason"].endswith("80.00 is not what the request asked for (it asks for 20.00)")
    assert responsibility(failure) == MODEL
    asked = run_scenario("business_rule").summary["first_failure"]  # the user asked for 80.00 themselves
    assert "not what the request asked for" not in asked["reason"] and responsibility(asked) == GUARD


@pytest.mark.parametrize("request_text,guard", [
    ("Refund $80 on order o-1.", True), ("Refund €80.00 on order o-1.", True), ("refund 80 dollars on o-1", True),
    ("Refund order o-1 in full.", False), ("Refund $20 on order o-1.", False), ("Refund 1,080.00 on o-1", False),
])
def test_a_refused_refund_is_the_guard_s_only_when_the_request_names_that_amount(request_text, guard):
    from tracetui.loop.world import default_tools

    call = {"type": "function_call", "call_id": "c1", "name": "refund_order",
            "arguments": '{"order_id":"o-1","amount":80.0,"reason":"damaged"}'}
    inputs = responses_inputs([{"status": 200, "headers": {}, "body": {"object": "response", "status": "completed",
                                                                       "output": [call]}}], user_input=request_text)
    inputs["tools"] = default_tools()
    failure = run_inputs("amount", inputs).summary["first_failure"]
    assert failure["code"] == "business_rule_violation"
    assert responsibility(failure) == (GUARD if guard else MODEL)


@pytest.mark.parametrize("failure,expected", [
    (None, None),
    ({"lane": "http", "seq": 1, "code": "made_up", "reason": ""}, ENVIRONMENT),  # unknown code: by its boundary
    ({"lane": "answer", "seq": 1, "code": 7, "reason": None}, MODEL),  # a trace's code may be any JSON
    ({"lane": "generation", "seq": 2, "code": "incomplete", "reason": "response incomplete: content_filter"},
     ENVIRONMENT),
])
def test_any_failure_gets_a_class_or_none(failure, expected):
    assert responsibility(failure) == expected
    assert expected is None or expected in RESPONSIBILITIES


def test_check_says_whose_failure_each_failed_run_is(root):
    import json

    from click.testing import CliRunner

    from tracetui.cli import main

    path = str(root / "sample_traces" / "scenarios.jsonl")
    lines = CliRunner().invoke(main, ["check", path]).stdout.splitlines()
    assert next(line for line in lines if line.startswith("✗ cross_tenant ")).endswith("  [guard]")
    assert next(line for line in lines if line.startswith("✗ tool_failure ")).endswith("  [environment]")
    assert not any("[" in line for line in lines if line.startswith("✓"))
    runs = {r["run_id"]: r for r in json.loads(CliRunner().invoke(main, ["check", path, "--json"]).stdout)["runs"]}
    assert {k: runs[k]["responsibility"] for k in ("single", "cross_tenant", "truncated", "refusal")} == {
        "single": None, "cross_tenant": GUARD, "truncated": HARNESS, "refusal": MODEL}
