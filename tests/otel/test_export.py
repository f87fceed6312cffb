"""Export: runs as GenAI spans, in the file-exporter format and as OTLP protobuf, idempotent, content opt-in."""
from __future__ import annotations

from pathlib import Path

import base64
import copy

import orjson
import pytest
from click.testing import CliRunner
from google.protobuf import json_format
from opentelemetry.proto.trace.v1 import trace_pb2

ROOT = Path(__file__).resolve().parents[2]
from tracetui.cli import main
from tracetui.otel import ids
from tracetui.otel.export_json import traces_data, traces_line
from tracetui.otel.export_map import run_spans
from tracetui.otel.export_proto import export_request
from tracetui.otel.spans import STATUS_ERROR, attributes_of
from tracetui.trace.reader import read_trace

CONTENT_KEYS = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.tool.definitions"}


@pytest.fixture(scope="module")
def scenarios():
    return read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs


def _hex_ids_as_base64(doc):
    """OTLP/JSON differs from protobuf's JSON mapping in one way: ids are hex, not base64."""
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return doc


def test_each_line_is_a_traces_data_that_the_protobuf_json_decoder_accepts(scenarios):
    """The JSON parses into opentelemetry-proto's TracesData (strict field names, integer enums, int64 strings)
    and says exactly what the protobuf export says."""
    for run in scenarios.values():
        spans = run_spans(run, content=True)
        line = traces_line(spans)
        parsed = json_format.Parse(orjson.dumps(_hex_ids_as_base64(orjson.loads(line))), trace_pb2.TracesData())
        assert list(parsed.resource_spans) == list(export_request(spans).resource_spans)
        proto_spans = parsed.resource_spans[0].scope_spans[0].spans
        assert [s.span_id.hex() for s in proto_spans] == [s.span_id for s in spans]
        assert all(s.trace_id.hex() == ids.trace_id(run.run_id) for s in proto_spans)


def test_file_format_keys_enums_and_64_bit_integers(scenarios):
    doc = traces_data(run_spans(scenarios["cross_tenant"]))
    span = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert set(span) >= {"traceId", "spanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano", "attributes",
                         "status"}
    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16 and int(span["traceId"], 16)
    assert isinstance(span["kind"], int) and span["status"]["code"] == STATUS_ERROR
    assert isinstance(span["startTimeUnixNano"], str) and span["startTimeUnixNano"].isdigit()
    seq = next(a for a in span["attributes"] if a["key"] == "tracetui.failure.seq")
    assert seq["value"] == {"intValue": "4"}


def test_genai_mapping_of_a_failed_run(scenarios):
    run = scenarios["cross_tenant"]
    spans = run_spans(run)
    root, rest = spans[0], spans[1:]
    assert root.name == "invoke_agent tracetui" and root.parent_span_id == ""
    assert root.status_code == STATUS_ERROR and root.attributes["error.type"] == "permission_denied"
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert (root.attributes["tracetui.failure.lane"], root.attributes["tracetui.failure.seq"]) == ("authorization", 4)
    assert root.attributes["tracetui.failure.reason"] == run.summary["first_failure"]["reason"]
    chats = [s for s in rest if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert [s.name for s in chats] == ["chat fake-model"] * run.summary["metrics"]["model_calls"]
    assert chats[0].attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert chats[0].attributes["gen_ai.response.id"] == "resp_1"
    assert chats[0].attributes["http.response.status_code"] == 200
    http = [s for s in rest if s.name == "POST"]
    assert len(http) == run.summary["metrics"]["http_attempts"] and all(s.parent_span_id == chats[0].span_id for s in http)
    tool = next(s for s in rest if s.name == "execute_tool read_order")
    assert tool.attributes["gen_ai.tool.call.id"] == "call-1" and tool.status_code == STATUS_ERROR
    assert [e.name for e in tool.events] == ["arguments.validate", "authorization.check"]
    assert tool.events[1].attributes["tracetui.outcome"] == "failed"
    # every event of the run is on some span, once
    seqs = sorted([e.attributes["tracetui.seq"] for s in spans for e in s.events]
                  + [s.attributes["tracetui.seq"] for s in spans if "tracetui.seq" in s.attributes])
    assert seqs == [e["seq"] for e in run.events]


def test_retried_attempts_are_child_spans_with_resend_count(root):
    run = next(iter(read_trace(root / "sample_traces" / "retries-then-ok.jsonl").runs.values()))
    http = [s for s in run_spans(run) if s.name == "POST"]
    assert [s.attributes.get("http.request.resend_count", 0) for s in http[:3]] == [0, 1, 2]
    assert http[0].attributes["error.type"] == "429" and http[0].attributes["tracetui.outcome"] == "recovered"
    assert http[0].status_code == STATUS_ERROR and http[2].status_code == 0


def test_ids_derive_from_the_run_so_exporting_twice_is_idempotent(scenarios):
    first = b"".join(traces_line(run_spans(r)) for r in scenarios.values())
    again = b"".join(traces_line(run_spans(r)) for r in scenarios.values())
    assert first == again
    span_ids = [s.span_id for r in scenarios.values() for s in run_spans(r)]
    assert len(set(span_ids)) == len(span_ids)
    assert len({ids.trace_id(name) for name in scenarios}) == len(scenarios)


def test_content_is_off_unless_asked(scenarios):
    run = scenarios["single"]
    without = {k for s in run_spans(run) for k in s.attributes}
    with_content = {k for s in run_spans(run, content=True) for k in s.attributes}
    assert not without & CONTENT_KEYS
    assert with_content >= CONTENT_KEYS
    tool = next(s for s in run_spans(run, content=True) if s.name.startswith("execute_tool"))
    assert orjson.loads(tool.attributes["gen_ai.tool.call.result"])["status"] == "delivered"


def test_secrets_are_redacted_in_anything_exported(scenarios):
    run = copy.deepcopy(scenarios["single"])
    run.run["inputs"]["user_input"] = "use key sk-proj-abcdefghijklmnopqrstuvwx please"
    run.events[2]["summary"] = "Authorization: Bearer abcdefgh12345678"
    run.events[4]["data"]["result"]["api_key"] = "hunter2-secret"
    out = b"".join(traces_line(run_spans(run, content=True)) for _ in range(1))
    for secret in (b"sk-proj-abcdefghijklmnop", b"abcdefgh12345678", b"hunter2-secret"):
        assert secret not in out
    assert b"<redacted>" in out


def test_cli_writes_the_file_atomically_and_checks_its_input(root, tmp_path):
    runner = CliRunner()
    out = tmp_path / "spans.jsonl"
    result = runner.invoke(main, ["export", str(root / "sample_traces" / "scenarios.jsonl"), "--run", "refusal",
                                  "--run", "single", "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_bytes().splitlines()
    assert len(lines) == 2
    roots = [attributes_of(orjson.loads(l)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"])
             for l in lines]
    assert [r["tracetui.run.id"] for r in roots] == ["refusal", "single"]
    bad = runner.invoke(main, ["export", str(root / "sample_traces" / "scenarios.jsonl"), "--run", "nope",
                               "-o", str(tmp_path / "x.jsonl")])
    assert bad.exit_code == 2 and "no run 'nope'" in bad.output and not (tmp_path / "x.jsonl").exists()
    assert runner.invoke(main, ["export", str(out)]).exit_code == 2  # neither -o nor --endpoint
    same = runner.invoke(main, ["export", str(out), "-o", str(out)])
    assert same.exit_code == 2 and out.read_bytes().count(b"\n") == 2
    when = runner.invoke(main, ["export", str(out), "--start", "2026-03-01T12:00:00Z", "-o", str(tmp_path / "t.jsonl")])
    assert when.exit_code == 0
    first = orjson.loads((tmp_path / "t.jsonl").read_bytes().splitlines()[0])
    assert first["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] == "1772366400000000000"


@pytest.mark.parametrize("calls", [5, 1.5, True, "x", {"a": 1}])
def test_calls_of_an_odd_json_type_export_with_content_as_no_call(scenarios, calls):
    """A trace from another tool may hold anything where tool calls are expected: export, never a traceback."""
    from tracetui.trace.reader import RunData

    run = scenarios["single"]
    events = copy.deepcopy(run.events)
    for event in events:
        if event["kind"] == "generation.classify":
            event["data"]["calls"] = calls
    odd = RunData(run.run_id, run=run.run, events=events, summary=run.summary)
    spans = run_spans(odd, content=True)
    chat = next(s for s in spans if s.name.startswith("chat"))
    messages = orjson.loads(chat.attributes["gen_ai.output.messages"])
    assert not any(p["type"] == "tool_call" for m in messages for p in m["parts"])
    json_format.ParseDict(_hex_ids_as_base64(orjson.loads(traces_line(spans))), trace_pb2.TracesData())


def test_times_and_integers_stay_in_otlp_s_64_bit_ranges(scenarios):
    """A trace's integers may be any 64-bit value: spans still encode, as protobuf and as OTLP/JSON."""
    from tracetui.otel.export import DEFAULT_START_NS, start_ns
    from tracetui.trace.reader import RunData

    run = scenarios["single"]
    events = copy.deepcopy(run.events)
    events[1].update(t_ms=2**63 - 1, turn=2**64 - 1)
    events[2]["seq"] = 2**64 - 1
    summary = {**run.summary, "metrics": {**run.summary["metrics"], "model_calls": 2**64 - 1}}
    odd = RunData(run.run_id, run=run.run, events=events, summary=summary)
    for start in (DEFAULT_START_NS, start_ns("2099-12-31T23:59:59Z")):
        spans = run_spans(odd, start_ns=start)
        export_request(spans).SerializeToString()
        json_format.ParseDict(_hex_ids_as_base64(orjson.loads(traces_line(spans))), trace_pb2.TracesData())


@pytest.mark.parametrize("when", ["1900-01-01", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00+14:00"])
def test_a_start_outside_what_otlp_holds_is_refused_in_words(root, tmp_path, when):
    out = CliRunner().invoke(main, ["export", str(root / "sample_traces" / "scenarios.jsonl"), "--run", "single",
                                    "--start", when, "-o", str(tmp_path / "t.jsonl")])
    assert out.exit_code == 2 and "--start" in out.output and "Traceback" not in out.output
    assert not (tmp_path / "t.jsonl").exists()


def test_the_root_span_says_who_is_responsible_for_the_failure(scenarios):
    assert run_spans(scenarios["cross_tenant"])[0].attributes["tracetui.failure.responsibility"] == "guard"
    assert run_spans(scenarios["tool_failure"])[0].attributes["tracetui.failure.responsibility"] == "environment"
    assert "tracetui.failure.responsibility" not in run_spans(scenarios["single"])[0].attributes
