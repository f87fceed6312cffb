"""OTLP/JSON is untrusted input: any shape under resourceSpans opens or is reported, never crashes."""
from __future__ import annotations

import json

import orjson
import pytest

from hypothesis import HealthCheck, given, settings, strategies as st

from tracetui.otel.detect import read_any
from tracetui.trace.reader import TraceReadError

_json = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
                     | st.text(max_size=8),
                     lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children,
                                                                                        max_size=3), max_leaves=12)
_id = st.sampled_from(["", "zz", "00000000000000000000000000000000", "0af7651916cd43dd8448eb211c80319c",
                       "b7ad6b7169203331", "AAAAAAAAAAE=", "a000000000000001"])
_value = st.fixed_dictionaries({}, optional={"stringValue": st.text(max_size=20), "intValue": _json,
                                             "boolValue": _json, "arrayValue": _json, "kvlistValue": _json})
_attrs = st.lists(st.fixed_dictionaries({"key": st.sampled_from(
    ["gen_ai.operation.name", "gen_ai.output.messages", "gen_ai.tool.definitions", "openinference.span.kind",
     "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments", "tool.parameters",
     "http.response.status_code", "gen_ai.response.finish_reasons", "error.type", "tracetui.seq", "tracetui.lane",
     "tracetui.run.id", "gen_ai.tool.call.id"]), "value": _value}), max_size=6)
_span = st.fixed_dictionaries({"traceId": _id, "spanId": _id}, optional={
    "parentSpanId": _id, "name": _json, "kind": _json, "startTimeUnixNano": _json, "endTimeUnixNano": _json,
    "attributes": _attrs, "events": st.lists(st.fixed_dictionaries({"name": st.just("exception"), "attributes": _attrs}),
                                             max_size=2),
    "status": st.fixed_dictionaries({}, optional={"code": _json, "message": _json})})
_doc = st.fixed_dictionaries({"resourceSpans": st.lists(st.fixed_dictionaries({"scopeSpans": st.lists(
    st.fixed_dictionaries({"spans": st.lists(_span, max_size=5)}, optional={"scope": _json}), max_size=2)},
    optional={"resource": _json}), max_size=2)})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(_doc, min_size=1, max_size=3))
def test_any_shape_opens_or_is_reported(tmp_path, docs):
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))  # stdlib: integers past 64 bits too
    try:
        trace = read_any(path)
    except TraceReadError:
        return
    for run in trace.runs.values():
        verdict = run.verdict()
        assert verdict["status"] and (verdict["first_failure"] is None or verdict["first_failure"]["lane"])


_trace_json = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(max_size=8),
                           lambda children: st.lists(children, max_size=3)
                           | st.dictionaries(st.text(max_size=6), children, max_size=3), max_leaves=12)
_ev = st.fixed_dictionaries({
    "rec": st.just("event"), "run_id": st.just("r"), "seq": st.integers(1, 20),
    "lane": st.sampled_from(["http", "generation", "arguments", "authorization", "receipt", "answer"]),
    "outcome": st.sampled_from(["ok", "failed", "recovered"])}, optional={
    "kind": _trace_json, "turn": _trace_json, "t_ms": _trace_json, "call_id": _trace_json, "summary": _trace_json,
    "code": st.none() | st.text(max_size=5),  # (a non-string code trips the shared verdict rule itself)
    "data": _trace_json | st.fixed_dictionaries({}, optional={k: _trace_json for k in (
        "request", "response", "attempt", "calls", "text", "tool", "arguments", "result", "finish_reason",
        "latency_ms", "backoff_ms")})})


@settings(max_examples=100, deadline=None)
@given(events=st.lists(_ev, max_size=8), content=st.booleans(), inputs=_trace_json | st.fixed_dictionaries({}, optional={
    k: _trace_json for k in ("provider", "model", "tools", "budgets", "user_input", "instructions")}))
def test_any_trace_content_exports_and_comes_back(events, inputs, content):
    from tracetui.otel.export_json import traces_line
    from tracetui.otel.export_map import run_spans
    from tracetui.otel.importer import runs_from_spans
    from tracetui.trace.reader import RunData

    run = RunData("r")
    run.add({"rec": "run", "run_id": "r", "trace_version": 1, "inputs": inputs})
    for event in sorted(events, key=lambda e: e["seq"]):  # in seq order, as the explorer's index loads a run
        run.add(event)
    spans = run_spans(run, content=content)
    assert orjson.loads(traces_line(spans))["resourceSpans"]
    before, after = run.verdict()["first_failure"], runs_from_spans(spans)[0].verdict()["first_failure"]
    assert [(f or {}).get(k) for f in (before, after) for k in ("lane", "seq", "code")] == [
        (f or {}).get(k) for f in (before, before) for k in ("lane", "seq", "code")]


def _nested(levels: int) -> dict:
    value: dict = {"stringValue": "x"}
    for _ in range(levels):
        value = {"arrayValue": {"values": [value]}}
    return value


def _one_span_doc(attributes=(), **fields) -> dict:
    """One chat span (its attributes reach the run's events), with ``fields`` and ``attributes`` added."""
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "00f067aa0ba902b7", "name": "chat m",
            "startTimeUnixNano": "1", "endTimeUnixNano": "2",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}, *attributes]}
    span.update(fields)
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


@pytest.mark.parametrize("doc", [
    {"resourceSpans": [{"scopeSpans": [{"spans": 5}]}]},
    {"resourceSpans": [{"scopeSpans": [{"spans": {"a": 1}}]}]},
    _one_span_doc(events=5),
    _one_span_doc(attributes=[{"key": "n", "value": {"intValue": "99999999999999999999999"}}]),
    _one_span_doc(attributes=[{"key": "n", "value": {"intValue": 1e300}}]),
    _one_span_doc(attributes=[{"key": "deep", "value": _nested(300)}]),
], ids=["spans an int", "spans an object", "events an int", "intValue past 64 bits", "intValue a huge float",
        "attribute 300 levels deep"])
def test_odd_shapes_open_or_are_reported_never_a_traceback(tmp_path, doc):
    import sys

    path = tmp_path / "spans.json"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(5000)  # the stdlib encoder recurses; the file is what another tool could write
    try:
        path.write_text(json.dumps(doc))
    finally:
        sys.setrecursionlimit(limit)
    try:
        trace = read_any(path)
    except TraceReadError:
        return
    for run in trace.runs.values():
        assert run.verdict()["status"]
        for record in (run.run, *run.events, run.summary):
            if record is not None:
                orjson.dumps(record)  # what the explorer and export write back
