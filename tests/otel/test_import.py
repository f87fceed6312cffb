"""Import: OTLP/JSON told apart by content, read in three dialects, mapped onto the six lanes."""
from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner
from otel_builders import exception, span, traces_data, write

from tracetui.cli import main
from tracetui.otel.detect import is_otlp, open_any, read_any
from tracetui.trace.reader import TraceReadError, read_trace
from tracetui.trace.writer import write_trace

TOOLS = json.dumps([{"type": "function", "name": "read_order", "parameters": {
    "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"],
    "additionalProperties": False}}])


def _chat(span_id, parent, start, calls=(), text=None, finish="stop", **extra):
    parts = [{"type": "tool_call", "id": c[0], "name": c[1], "arguments": c[2]} for c in calls]
    if text is not None:
        parts.append({"type": "text", "content": text})
    return span("chat gpt-x", span_id, parent, start, start + 5, kind=3, gen_ai__operation__name="chat",
                gen_ai__request__model="gpt-x", gen_ai__tool__definitions=TOOLS,
                gen_ai__response__finish_reasons=[finish],
                gen_ai__output__messages=json.dumps([{"role": "assistant", "parts": parts, "finish_reason": finish}]),
                **extra)


def _agent(span_id="a000000000000001", status=0, message="", end=100, **extra):
    return span("invoke_agent shop", span_id, "", 0, end, status=status, message=message,
                gen_ai__operation__name="invoke_agent", gen_ai__agent__name="shop", **extra)


def _tool(span_id, parent, start, name, call_id, arguments=None, status=0, message="", events=None):
    attrs = {"gen_ai__operation__name": "execute_tool", "gen_ai__tool__name": name, "gen_ai__tool__call__id": call_id}
    if arguments is not None:
        attrs["gen_ai__tool__call__arguments"] = arguments
    return span(f"execute_tool {name}", span_id, parent, start, start + 2, status=status, message=message,
                events=events, **attrs)


def _only_run(path):
    trace = read_any(path)
    assert len(trace.runs) == 1
    return next(iter(trace.runs.values()))


def _lanes(run):
    return [(e["lane"], e["outcome"], e["code"]) for e in run.events]


def test_told_apart_by_content_not_by_name(tmp_path, root):
    otlp = write(tmp_path / "run.trace.jsonl", traces_data(_agent()))
    native = tmp_path / "spans.otlp.json"
    native.write_bytes((root / "sample_traces" / "recorded-normal.jsonl").read_bytes())
    pretty = tmp_path / "doc.json"
    pretty.write_text(json.dumps(traces_data(_agent()), indent=2))
    assert is_otlp(otlp) and is_otlp(pretty) and not is_otlp(native)
    assert read_any(native).runs.keys() == read_trace(native).runs.keys()
    assert [r.verdict() for r in read_any(pretty).runs.values()] == [r.verdict() for r in read_any(otlp).runs.values()]
    with pytest.raises(TraceReadError, match="no such file"):
        is_otlp(tmp_path / "missing.json")


def test_a_successful_agent_run(tmp_path):
    path = write(tmp_path / "t.jsonl", traces_data(
        _agent(),
        _chat("c000000000000001", "a000000000000001", 1, calls=[("call_1", "read_order", '{"order_id": "o-1"}')]),
        _tool("d000000000000001", "a000000000000001", 7, "read_order", "call_1"),
        _chat("c000000000000002", "a000000000000001", 10, text="o-1 is delivered"),
    ))
    run = _only_run(path)
    assert run.run["source"] == "otel" and "inputs" not in run.run and run.run["otel"]["agent"] == "shop"
    assert run.run_id.startswith("shop-0af76519")
    assert _lanes(run) == [("generation", "ok", None), ("arguments", "ok", None), ("receipt", "ok", None),
                           ("generation", "ok", None), ("answer", "ok", None)]
    assert run.verdict()["status"] == "answer_ready" and run.verdict()["complete"]
    assert [e["turn"] for e in run.events] == [1, 1, 1, 2, 2]
    # the detail pane shows what the decision was read from: the span's raw attributes
    assert run.events[1]["data"]["attributes"]["gen_ai.tool.definitions"] == TOOLS
    assert run.events[2]["data"]["span"]["name"] == "execute_tool read_order"


@pytest.mark.parametrize("calls, code", [
    ([("call_1", "cancel_order", "{}")], "unknown_tool"),
    ([("call_1", "read_order", '{"order_id": ')], "invalid_json"),
    ([("call_1", "read_order", '{"orderId": "o-1"}')], "schema_error"),
])
def test_arguments_lane(tmp_path, calls, code):
    path = write(tmp_path / "t.jsonl", traces_data(
        _agent(status=2, message="model gave up"), _chat("c000000000000001", "a000000000000001", 1, calls=calls)))
    run = _only_run(path)
    failure = run.verdict()["first_failure"]
    assert (failure["lane"], failure["code"]) == ("arguments", code)
    assert run.events[-1]["call_id"] == "call_1"


def test_bad_arguments_the_model_repairs_are_recovered(tmp_path):
    path = write(tmp_path / "t.jsonl", traces_data(
        _agent(),
        _chat("c000000000000001", "a000000000000001", 1, calls=[("call_1", "read_order", '{"order_id": 1}')]),
        _chat("c000000000000002", "a000000000000001", 10, calls=[("call_2", "read_order", '{"order_id": "o-1"}')]),
        _tool("d000000000000002", "a000000000000001", 16, "read_order", "call_2"),
        _chat("c000000000000003", "a000000000000001", 20, text="o-1 is delivered"),
    ))
    run = _only_run(path)
    assert ("arguments", "recovered", "schema_error") in _lanes(run)
    assert run.verdict()["status"] == "answer_ready"


def test_generation_lane_from_finish_reasons_and_refusals(tmp_path):
    for finish, code in (("length", "incomplete"), ("content_filter", "content_filter"), ("refusal", "refused")):
        path = write(tmp_path / f"{finish}.jsonl", traces_data(
            _agent(), _chat("c000000000000001", "a000000000000001", 1, text="o-1 is deliv", finish=finish)))
        failure = _only_run(path).verdict()["first_failure"]
        assert (failure["lane"], failure["code"]) == ("generation", code), finish


def test_http_lane_retries_recovered_and_exhausted(tmp_path):
    chat = "c000000000000001"
    retried = traces_data(
        _agent(),
        span("chat gpt-x", chat, "a000000000000001", 1, 50, kind=3, gen_ai__operation__name="chat",
             gen_ai__response__finish_reasons=["stop"]),
        span("POST", "e000000000000001", chat, 1, 5, kind=3, status=2, http__request__method="POST",
             http__response__status_code=429),
        span("POST", "e000000000000002", chat, 10, 20, kind=3, http__request__method="POST",
             http__response__status_code=200),
    )
    run = _only_run(write(tmp_path / "retried.jsonl", retried))
    assert _lanes(run)[:2] == [("http", "recovered", "rate_limited"), ("http", "ok", None)]
    assert run.verdict()["status"] == "answer_ready"
    exhausted = traces_data(
        _agent(status=2, message="RateLimitError"),
        span("chat gpt-x", chat, "a000000000000001", 1, 50, kind=3, status=2, gen_ai__operation__name="chat",
             events=[exception("openai.RateLimitError", "Error code: 429")]),
        span("POST", "e000000000000001", chat, 1, 5, kind=3, status=2, http__request__method="POST",
             http__response__status_code=429),
    )
    run = _only_run(write(tmp_path / "exhausted.jsonl", exhausted))
    assert _lanes(run) == [("http", "failed", "rate_limited")]
    no_http_span = traces_data(
        _agent(status=2),
        span("chat gpt-x", chat, "a000000000000001", 1, 50, kind=3, status=2, gen_ai__operation__name="chat",
             error__type="APITimeoutError", message="Request timed out."))
    assert _lanes(_only_run(write(tmp_path / "t.jsonl", no_http_span))) == [("http", "failed", "timeout")]


def test_receipt_and_authorization_lanes(tmp_path):
    def run_with(tool_span):
        path = write(tmp_path / "t.jsonl", traces_data(
            _agent(),
            _chat("c000000000000001", "a000000000000001", 1, calls=[("call_1", "read_order", '{"order_id": "o-2"}')]),
            tool_span,
            _chat("c000000000000002", "a000000000000001", 10, text="o-2 is processing")))
        return _only_run(path)

    raised = run_with(_tool("d000000000000001", "a000000000000001", 7, "read_order", "call_1", status=2,
                            events=[exception("TimeoutError", "orders db timed out")]))
    failure = raised.verdict()["first_failure"]
    assert (failure["lane"], failure["code"]) == ("receipt", "tool_failed")
    assert "orders db timed out" in failure["reason"]
    assert ("answer", "failed", "unverified_answer") in _lanes(raised)  # nothing backs the answer
    denied = run_with(_tool("d000000000000001", "a000000000000001", 7, "read_order", "call_1", status=2,
                            events=[exception("PermissionError", "o-2 belongs to another tenant")]))
    assert denied.verdict()["first_failure"]["lane"] == "authorization"
    missing = run_with(span("noop", "d000000000000009", "a000000000000001", 7))  # no tool span: no result
    failure = missing.verdict()["first_failure"]
    assert (failure["lane"], failure["code"]) == ("receipt", "no_result")


def test_guardrail_trip_is_an_authorization_failure(tmp_path):
    path = write(tmp_path / "t.jsonl", traces_data(
        span("workflow", "a000000000000001", "", 0, 10, openinference__span__kind="AGENT"),
        span("no_refunds", "b000000000000001", "a000000000000001", 1, 2, openinference__span__kind="GUARDRAIL"),
        span("turn", "b000000000000002", "a000000000000001", 1, 3, status=2, openinference__span__kind="CHAIN",
             message="Guardrail tripwire triggered: {'guardrail': 'no_refunds'}")))
    assert _lanes(_only_run(path)) == [("authorization", "failed", "guardrail_triggered")]


def test_older_indexed_attributes_and_openinference(tmp_path):
    old = traces_data(
        _agent(),
        span("openai.chat", "c000000000000001", "a000000000000001", 1, 5, kind=3, gen_ai__system="openai",
             gen_ai__request__model="gpt-x", **{"gen_ai__prompt__0__role": "user", "gen_ai__prompt__0__content": "hi",
                                               "gen_ai__completion__0__role": "assistant",
                                               "gen_ai__completion__0__finish_reason": "tool_calls",
                                               "gen_ai__completion__0__tool_calls__0__id": "call_1",
                                               "gen_ai__completion__0__tool_calls__0__name": "read_order",
                                               "gen_ai__completion__0__tool_calls__0__arguments": "{oops",
                                               "llm__request__functions__0__name": "read_order"}))
    run = _only_run(write(tmp_path / "old.jsonl", old))
    assert ("arguments", "failed", "invalid_json") in _lanes(run)
    oi = traces_data(
        span("agent", "a000000000000001", "", 0, 30, openinference__span__kind="AGENT", agent__name="shop"),
        span("response", "c000000000000001", "a000000000000001", 1, 5, openinference__span__kind="LLM",
             llm__finish_reason="stop", **{
                 "llm__output_messages__0__message__role": "assistant",
                 "llm__output_messages__0__message__tool_calls__0__tool_call__id": "call_1",
                 "llm__output_messages__0__message__tool_calls__0__tool_call__function__name": "read_order",
                 "llm__output_messages__0__message__tool_calls__0__tool_call__function__arguments": '{"order_id": 7}',
                 "llm__tools__0__tool__json_schema": json.dumps(
                     {"type": "function", "name": "read_order", "parameters": json.loads(TOOLS)[0]["parameters"]})}),
        span("read_order", "d000000000000001", "a000000000000001", 6, 8, status=2, openinference__span__kind="TOOL",
             tool__name="read_order", input__value='{"order_id": 7}', message="bad input"))
    run = _only_run(write(tmp_path / "oi.jsonl", oi))
    assert run.run_id.startswith("shop-")
    assert _lanes(run) == [("generation", "ok", None), ("arguments", "failed", "schema_error")]


def test_without_content_the_rules_are_left_undecided(tmp_path):
    path = write(tmp_path / "t.jsonl", traces_data(
        _agent(),
        span("chat gpt-x", "c000000000000001", "a000000000000001", 1, 5, kind=3, gen_ai__operation__name="chat"),
        span("execute_tool read_order", "d000000000000001", "a000000000000001", 6, 8,
             gen_ai__operation__name="execute_tool", gen_ai__tool__name="read_order")))
    run = _only_run(path)
    assert [e["lane"] for e in run.events] == ["generation", "receipt"]  # no arguments check, no answer check
    assert "not recorded" in run.events[0]["summary"]


def test_a_trace_without_its_root_is_incomplete_and_bad_lines_are_problems(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(orjson.dumps(traces_data(
        _chat("c000000000000001", "a0000000000000ff", 1, text="hi"))) + b"\n{not json\n"
        + orjson.dumps({"hello": 1}) + b"\n")
    trace = read_any(path)
    run = next(iter(trace.runs.values()))
    assert run.verdict()["complete"] is False and run.verdict()["status"] == "incomplete"
    assert [(p.line, p.message.split(":")[0]) for p in trace.problems] == [
        (2, "malformed JSON"), (3, "not an OTLP TracesData object (no resourceSpans list)")]


def test_each_top_level_agent_is_a_run_and_names_stay_distinct(tmp_path):
    path = write(tmp_path / "t.jsonl", traces_data(
        span("job", "f000000000000001", "", 0, 100),
        span("invoke_agent shop", "a000000000000001", "f000000000000001", 1, 40,
             gen_ai__operation__name="invoke_agent", gen_ai__agent__name="shop"),
        span("invoke_agent shop", "a000000000000002", "f000000000000001", 50, 90,
             gen_ai__operation__name="invoke_agent", gen_ai__agent__name="shop")))
    assert len(set(read_any(path).runs)) == 2


def test_check_and_open_accept_otlp(tmp_path):
    path = write(tmp_path / "t.jsonl", traces_data(
        _agent(), _chat("c000000000000001", "a000000000000001", 1, text="ok", finish="length")))
    result = CliRunner().invoke(main, ["check", path])
    assert result.exit_code == 1 and "incomplete  generation@1" in result.output
    ok = write(tmp_path / "ok.jsonl", traces_data(_agent(), _chat("c000000000000001", "a000000000000001", 1, text="fine")))
    assert CliRunner().invoke(main, ["check", ok]).exit_code == 0
    source = open_any([path, ok])
    assert len(source.runs()) == 2 and source.load(source.runs()[0]).events
    again = tmp_path / "again.jsonl"  # export takes OTLP too: an imported run goes out with its verdict
    assert CliRunner().invoke(main, ["export", path, "-o", str(again)]).exit_code == 0
    assert [r.verdict() for r in read_any(again).runs.values()] == [r.verdict() for r in read_any(path).runs.values()]


def test_mixed_sources_open_together(tmp_path, root):
    otlp = write(tmp_path / "t.jsonl", traces_data(_agent(), _chat("c000000000000001", "a000000000000001", 1, text="x")))
    native = tmp_path / "n.jsonl"
    write_trace(native, [r for run in read_trace(root / "sample_traces" / "recorded-normal.jsonl").runs.values()
                         for r in (run.run, *run.events, run.summary)])
    source = open_any([otlp, str(native)])
    assert len(source.runs()) == 2


def test_imported_runs_are_valid_trace_lines(root):
    """An imported run written out (the explorer's `w`) is a trace like any other: the schema accepts it."""
    from jsonschema import Draft202012Validator

    from tracetui.trace.schema import SCHEMA

    validator = Draft202012Validator(SCHEMA)
    trace = read_any(root / "sample_traces" / "otel-scenarios.jsonl")
    records = [r for run in trace.runs.values() for r in (run.run, *run.events, run.summary)]
    assert all(not list(validator.iter_errors(r)) for r in records)
    assert list(validator.iter_errors({"rec": "run", "run_id": "x", "trace_version": 1}))  # neither inputs nor source


def test_replay_of_an_imported_run_says_why_in_plain_words(root):
    """No field was edited: the error is why the run cannot be re-run, not "cannot edit"."""
    out = CliRunner().invoke(main, ["replay", str(root / "sample_traces" / "otel-scenarios.jsonl"), "--run", "single"])
    assert out.exit_code == 2
    assert out.output.startswith("error: imported from OpenTelemetry: its inputs are not recorded, so it cannot be "
                                 "re-run"), out.output


@pytest.mark.parametrize("pretty", [False, True])
def test_otlp_on_standard_input_is_told_apart_by_content(root, tmp_path, pretty):
    """``cat spans.json | tracetui check -`` (and replay -): the same verdicts as the file, whether JSON
    lines or one pretty-printed document."""
    sample = root / "sample_traces" / "otel-scenarios.jsonl"
    path = sample
    if pretty:  # one document of every line's spans
        spans = [s for line in sample.read_bytes().splitlines()
                 for s in orjson.loads(line)["resourceSpans"]]
        path = tmp_path / "doc.json"
        path.write_bytes(orjson.dumps({"resourceSpans": spans}, option=orjson.OPT_INDENT_2))
    data = path.read_bytes()
    from_file = CliRunner().invoke(main, ["check", str(path)])
    piped = CliRunner().invoke(main, ["check", "-"], input=data)
    assert piped.exit_code == from_file.exit_code == 1
    assert piped.stdout == from_file.stdout and piped.stdout.count("\n") == 30
    as_json = orjson.loads(CliRunner().invoke(main, ["check", "-", "--json"], input=data).stdout)
    assert as_json["file"] == "-" and len(as_json["runs"]) == 30
    replayed = CliRunner().invoke(main, ["replay", "-", "--run", "single"], input=data)
    assert replayed.exit_code == 2 and "imported from OpenTelemetry" in replayed.stderr


def test_a_trace_on_standard_input_is_not_waited_for_to_tell_its_kind(root):
    """A writer still running (``tail -f trace | tracetui check -``): its first line says it is a trace,
    and the check streams from there without waiting for more."""
    import os
    import threading

    from tracetui.otel.detect import spooled_for_check
    from tracetui.trace.spool import Spool

    first = (root / "sample_traces" / "scenarios.jsonl").read_bytes().splitlines(keepends=True)[0]
    reordered = orjson.dumps(dict(reversed(list(orjson.loads(first).items()))))  # the reader takes any key order
    for start in (first[:30], reordered[:30]):
        read_fd, write_fd = os.pipe()
        spool = Spool(read_fd)
        os.write(write_fd, start)
        told = threading.Event()
        threading.Thread(target=lambda: (spooled_for_check(spool), told.set()), daemon=True).start()
        assert told.wait(10), start  # decided on 30 bytes, the pipe still open
        os.close(write_fd)
        spool.close()


def test_otlp_on_standard_input_with_a_line_over_the_limit_says_so(root, monkeypatch):
    from tracetui.trace import limits

    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 5000)
    line = orjson.dumps({"resourceSpans": [{"scopeSpans": [], "x": "y" * 6000}]}) + b"\n"
    result = CliRunner().invoke(main, ["check", "-"], input=line)
    assert result.exit_code == 2 and "line over 5,000 bytes" in result.stderr and "file's name" in result.stderr


def test_otlp_on_standard_input_into_a_closed_pipe_is_not_blamed_on_the_input(root):
    import subprocess
    import sys

    data = (root / "sample_traces" / "otel-scenarios.jsonl").read_bytes()
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-m", "tracetui", "check", "-"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdin.write(data)
        proc.stdin.close()
        proc.stdout.readline()
        proc.stdout.close()  # as `| head -1` does
        err = proc.stderr.read()
        proc.wait(timeout=30)
        assert b"-: Broken pipe" not in err and proc.returncode != 2, err


def test_open_says_when_standard_input_was_otlp_that_came_too_late(root):
    from tracetui.otel.detect import otlp_hint
    from tracetui.trace.index import IndexedSource
    from tracetui.trace.spool import Spool
    import io

    spool = Spool(io.BytesIO((root / "sample_traces" / "otel-scenarios.jsonl").read_bytes()))
    spool.wait()
    assert "OTLP/JSON" in otlp_hint(IndexedSource([spool]))
    trace = Spool(io.BytesIO((root / "sample_traces" / "scenarios.jsonl").read_bytes()))
    trace.wait()
    assert otlp_hint(IndexedSource([trace])) is None
