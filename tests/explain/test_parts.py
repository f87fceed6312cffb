"""The pieces explain is built from: argument repair, response bodies per API, hostile traces."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tracetui.explain import explain
from tracetui.explain.arguments import parse_or_close, repaired
from tracetui.explain.wire import CallSpec, answer_body, call_places, calls_body, finished_place
from tracetui.loop.world import READ_ORDER, REFUND_ORDER
from tracetui.providers import base
from tracetui.providers.registry import ADAPTERS, get_adapter
from tracetui.replay.replay import replay
from tracetui.trace.reader import RunData, read_trace

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize("raw,schema,expected,notes", [
    ('{"order_id": "o-1", "include_notes": true}', READ_ORDER["parameters"], {"order_id": "o-1"}, ["without include_notes"]),
    ('{"orderId": "o-1"}', READ_ORDER["parameters"], {"order_id": "o-1"}, ["order_id, not orderId"]),
    ('{"order_id": "o-1"', READ_ORDER["parameters"], {"order_id": "o-1"}, ["its JSON closed"]),
    ('{"order_id":"o-1","amount":"20.00","reason":"x"}', REFUND_ORDER["parameters"],
     {"order_id": "o-1", "amount": 20.0, "reason": "x"}, ["amount as a number"]),
])
def test_arguments_are_repaired_by_the_schema_and_the_change_is_said(raw, schema, expected, notes):
    assert repaired(raw, schema) == (expected, notes)


def test_arguments_that_cannot_be_repaired_give_nothing():
    assert repaired('{"order_id": "o-1"}', READ_ORDER["parameters"]) is None  # nothing to change
    assert repaired("not json at all", READ_ORDER["parameters"]) is None
    assert repaired("[1, 2]", READ_ORDER["parameters"]) is None
    assert parse_or_close('{"a": [1, 2') is None or parse_or_close('{"a": [1, 2')[1]


@pytest.mark.parametrize("provider", sorted(ADAPTERS))
def test_every_api_s_adapter_reads_the_bodies_explain_writes(provider):
    adapter = get_adapter(provider)
    text = adapter.parse_response(answer_body(provider, '{"order_id":"o-1"}'))
    assert (text.kind, text.text) == (base.TEXT, '{"order_id":"o-1"}')
    body = calls_body(provider, [CallSpec("call-fix-1", "read_order", {"order_id": "o-1"})])
    calls = adapter.parse_response(body)
    assert calls.kind == base.TOOL_CALLS
    assert [(c.name, c.arguments) for c in calls.calls] == [("read_order", '{"order_id":"o-1"}')]
    places = call_places(body)
    assert len(places) == 1  # and explain can find the call again to edit one of its fields
    assert finished_place(provider, body, True) is not None


@pytest.mark.parametrize("fixture", ["anthropic_refusal", "gemini_truncation", "openai-chat_refusal"])
def test_recorded_runs_of_other_apis_are_explained_in_their_own_shape(fixture):
    import orjson

    from tracetui.loop.inputs import responses_inputs
    from tracetui.loop.runner import run_inputs
    from tracetui.trace.source import run_data_from_records

    provider = fixture.split("_")[0]
    responses = orjson.loads((ROOT / "tests" / "providers" / "fixtures" / f"{fixture}.json").read_bytes())
    run = run_data_from_records(run_inputs(fixture, responses_inputs(responses, provider)).records)
    result = explain(run)
    assert result.best is not None and result.best.outcome.after["ready"]
    again = replay(run, [(e.path, e.value) for e in result.best.edits])
    assert again.after["ready"] and again.replayed.inputs["provider"] == provider


def _failing_runs() -> list[RunData]:
    trace = read_trace(ROOT / "sample_traces" / "scenarios.jsonl")
    return [r for r in trace.runs.values() if not r.verdict()["ready"]]


FAILING = _failing_runs()
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8), st.lists(st.integers(), max_size=3),
                 st.dictionaries(st.text(max_size=4), st.integers(), max_size=3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FAILING), st.data())
def test_explain_never_crashes_on_damaged_evidence_and_still_proves_what_it_shows(run, data):
    """Event data is untrusted: any field of the deciding events may hold anything."""
    events = copy.deepcopy(run.events)
    for event in events:
        if event.get("outcome") == "failed" or data.draw(st.booleans()):
            fields = event.setdefault("data", {})
            if isinstance(fields, dict) and fields:
                key = data.draw(st.sampled_from(sorted(fields)))
                fields[key] = data.draw(JUNK)
            elif data.draw(st.booleans()):
                event["data"] = data.draw(JUNK)
    damaged = RunData(run.run_id, run=run.run, events=events, summary=run.summary)
    result = explain(damaged)
    for proof in result.fixes + result.partials:
        assert replay(damaged, [(e.path, e.value) for e in proof.edits]).after == proof.outcome.after


def _damaged(run_id: str, damage) -> RunData:
    run = next(r for r in FAILING if r.run_id == run_id)
    events = copy.deepcopy(run.events)
    for event in events:
        damage(event)
    return RunData(run.run_id, run=run.run, events=events, summary=run.summary)


def _many_call_ids(event: dict) -> None:
    if event.get("kind") == "generation.classify":
        event["data"]["calls"] += [{"call_id": f"call-{n}", "name": "read_order", "arguments": "{}"}
                                   for n in range(2, 10_001)]


@pytest.mark.parametrize("run_id,damage", [
    ("duplicate_ids", lambda e: e.update(turn=[1]) if e["seq"] == 1 else None),  # a turn that is a list
    ("no_receipt", lambda e: e["data"].update(claims=[{"order_id": ["o-1"]}]) if e.get("lane") == "answer" else None),
    ("duplicate_ids", _many_call_ids),  # every call-N a fix could pick is taken
], ids=["unhashable turn", "unhashable claimed order", "no free call id"])
def test_explain_never_crashes_on_odd_types_outside_event_data(run_id, damage):
    """Turns, claims and call ids come from the file: any JSON there yields fewer candidates, never an error."""
    damaged = _damaged(run_id, damage)
    result = explain(damaged)
    for proof in result.fixes + result.partials:
        assert replay(damaged, [(e.path, e.value) for e in proof.edits]).after == proof.outcome.after


def _with_turns(n: int) -> RunData:
    """duplicate_ids, followed by ``n`` classified responses of turns of their own (a long or a hand-made trace)."""
    run = next(r for r in FAILING if r.run_id == "duplicate_ids")
    events = copy.deepcopy(run.events)
    last = events[-1]["seq"]
    events += [{"rec": "event", "run_id": run.run_id, "seq": last + i, "lane": "generation",
                "kind": "generation.classify", "outcome": "ok", "turn": 100 + i, "t_ms": 0, "call_id": None,
                "code": None, "summary": "text", "data": {"calls": []}} for i in range(1, n + 1)]
    return RunData(run.run_id, run=run.run, events=events, summary=run.summary)


def _explain_work(run: RunData) -> int:
    """The lines of ``tracetui.explain`` that run to explain ``run`` (a deterministic count, not a clock)."""
    import sys

    import tracetui.explain

    here = str(Path(tracetui.explain.__file__).parent)
    lines = 0

    def trace(frame, event, arg):
        nonlocal lines
        if not frame.f_code.co_filename.startswith(here):
            return None
        if event == "line":
            lines += 1
        return trace

    sys.settrace(trace)
    try:
        explain(run, pairs=False)
    finally:
        sys.settrace(None)
    return lines


def test_reading_the_evidence_of_a_long_run_is_linear_work():
    """Each turn's response and each event's exchange are looked up, not rescanned (20,000 events took 37 s)."""
    assert _explain_work(_with_turns(1200)) / _explain_work(_with_turns(600)) < 2.5
