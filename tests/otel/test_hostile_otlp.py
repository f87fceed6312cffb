"""OTLP/JSON is untrusted input: any shape under resourceSpans opens or is reported, never crashes."""
from __future__ import annotations

import json

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
