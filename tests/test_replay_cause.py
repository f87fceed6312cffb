"""The field `e` offers first: where a failure came from, never a safeguard (tracetui.replay.cause)."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tracetui.replay.cause import REQUEST, cause_path, is_safeguard
from tracetui.replay.replay import replay
from tracetui.trace.reader import RunData, read_trace
from tracetui.trace.responsibility import GUARD, MODEL, responsibility


@pytest.fixture(scope="module")
def scenarios():
    return read_trace(Path(__file__).parent.parent / "sample_traces" / "scenarios.jsonl")


def first_failure_event(run: RunData) -> dict:
    seq = run.verdict()["first_failure"]["seq"]
    return next(e for e in run.events if e.get("seq") == seq)


@pytest.mark.parametrize("path", [
    "/inputs", "/inputs/principal", "/inputs/principal/tenant", "/inputs/principal/user",
    "/inputs/tool_data", "/inputs/tool_data/orders", "/inputs/tool_data/orders/o-2",
    "/inputs/tool_data/orders/o-2/tenant", "/inputs/tool_data/orders/o-2/user", "/inputs/tool_data/orders/o-1/paid",
    "/inputs/tool_data/orders/o-1/refunded", "/inputs/idempotency_guard", "/inputs/permissions/0",
])
def test_who_the_caller_is_who_owns_what_balances_and_guards_are_safeguards(path):
    assert is_safeguard(path)


@pytest.mark.parametrize("path", [
    "/inputs/user_input", "/inputs/tool_data/failures", "/inputs/tool_data/failures/read_order:o-1",
    "/inputs/tool_data/orders/o-1/status", "/inputs/budgets/max_calls", "/responses/0/body/output/0/arguments",
    "/responses/0/status", "not a pointer", "",
])
def test_the_request_the_model_s_output_the_environment_and_budgets_are_not(path):
    assert not is_safeguard(path)


def test_a_denial_of_what_the_caller_asked_for_offers_the_request_never_the_principal(scenarios):
    run = scenarios.runs["cross_tenant"]  # "What is the status of order o-2?", asked by a caller of shop-a
    denial = first_failure_event(run)
    assert denial["lane"] == "authorization"
    assert responsibility(run.verdict()["first_failure"], run.inputs) == GUARD
    assert cause_path(denial, run) == REQUEST


def test_a_denial_of_a_resource_the_model_made_up_offers_the_model_s_tool_call(scenarios):
    run = scenarios.runs["cross_tenant"]
    made_up = replay(run, [("/inputs/user_input", "What is the status of order o-1?"),
                           ("/responses/0/body/output/0/arguments", '{"order_id":"o-2"}')]).replayed
    denial = first_failure_event(made_up)
    assert denial["lane"] == "authorization"
    assert responsibility(made_up.verdict()["first_failure"], made_up.inputs) == MODEL
    assert cause_path(denial, made_up) == "/responses/0/body/output/0/arguments"


def test_no_run_s_first_failure_offers_a_safeguard(scenarios):
    failed = [run for run in scenarios.runs.values() if run.verdict()["first_failure"]]
    assert len(failed) > 10
    for run in failed:
        path = cause_path(first_failure_event(run), run)
        assert path.startswith(("/inputs/", "/responses/")) and not is_safeguard(path), (run.run_id, path)


def test_elsewhere_the_path_is_what_decided_the_event(scenarios):
    run = scenarios.runs["cross_tenant"]
    by_lane = {e["lane"]: e for e in run.events}
    assert cause_path(by_lane["arguments"], run) == "/responses/0/body/output/0/arguments"
    assert cause_path(by_lane["http"], run) == "/responses/0/status"
    failing = scenarios.runs["tool_failure"]  # a tool service failed (injected): not a safeguard, offered as it was
    assert cause_path(first_failure_event(failing), failing) == "/inputs/tool_data/failures"


@pytest.mark.parametrize("odd", [None, True, -1, "", "x", [], {}, {"a": None}])
def test_a_hostile_denial_gives_a_path_never_a_crash(scenarios, odd):
    run = scenarios.runs["cross_tenant"]
    events = copy.deepcopy(run.events)
    for event in events:
        event["call_id"] = odd
        if isinstance(event.get("data"), dict) and isinstance(event["data"].get("response"), dict):
            event["data"]["response"]["body"] = odd
    hostile = RunData(run.run_id, run=run.run, events=events, summary=run.summary)
    for event in events:
        path = cause_path(event, hostile)
        assert path.startswith(("/inputs/", "/responses/")) and not is_safeguard(path)
