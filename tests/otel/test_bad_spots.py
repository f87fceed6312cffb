"""An OTLP/JSON file with one bad spot opens: the spot is a problem saying where and why, the rest is read.

An invalid byte, half a surrogate pair or an empty ``traceId`` refused a whole file
with "N line(s) could not be read" (a pretty-printed document counted each of its
lines).
"""
from __future__ import annotations

import json

import orjson
import pytest

from tracetui.otel.detect import read_any
from tracetui.trace.reader import TraceReadError

TRACE = "0af7651916cd43dd8448eb211c80319c"
MARK = "MARKED-NAME"


def _span(i: int, name: str = "chat m", trace: str = TRACE) -> dict:
    op = "invoke_agent" if i == 1 else "chat"
    span = {"traceId": trace, "spanId": f"{i:016x}", "name": name, "startTimeUnixNano": str(i),
            "endTimeUnixNano": str(100 - i),
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]}
    if i > 1:
        span["parentSpanId"] = f"{1:016x}"
    return span


def _doc(*spans: dict) -> dict:
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]}


def _three(**second) -> dict:
    return _doc(_span(1, "invoke_agent a"), {**_span(2, MARK), **second}, _span(3))


def _line_of(data: bytes, needle: bytes) -> int:
    return data[:data.index(needle)].count(b"\n") + 1


@pytest.mark.parametrize("pretty", [True, False], ids=["one pretty document", "JSON lines"])
@pytest.mark.parametrize("spot, said", [(b"\xff", "byte 0xff at column"), (b"\xed\xa0\x80", "are not UTF-8"),
                                        (b"\\ud800", "half a UTF-16 surrogate pair"),
                                        (b"\\udc00", "half a UTF-16 surrogate pair")],
                         ids=["invalid byte", "an encoded surrogate", "lone high surrogate", "lone low surrogate"])
def test_a_bad_character_costs_one_character(tmp_path, pretty, spot, said):
    text = json.dumps(_three(), indent=2 if pretty else None).encode()
    data = text.replace(MARK.encode(), b"MARKED" + spot + b"NAME")
    path = tmp_path / "spans.json"
    path.write_bytes(data + b"\n")
    trace = read_any(path)
    (run,) = trace.runs.values()
    assert run.summary is not None and run.run["otel"]["spans"] == 3
    (problem,) = trace.problems
    assert said in problem.message and "U+FFFD" in problem.message
    assert problem.line == _line_of(data, b"MARKED")


def test_an_escaped_backslash_before_u_is_not_a_surrogate(tmp_path):
    path = tmp_path / "spans.jsonl"
    data = json.dumps(_three()).replace(MARK, "a\\\\ud800b").encode()  # the text a\ud800b, escaped, nothing lone
    path.write_bytes(data + b"\n" + json.dumps(_doc(_span(5, "x", trace="1" * 32))).replace(
        '"x"', '"\\ud83d\\ude00 \\ud83d"').encode() + b"\n")
    trace = read_any(path)
    assert [p.line for p in trace.problems] == [2]  # only the lone \ud83d of line 2, not the pair before it
    assert len(trace.runs) == 2


@pytest.mark.parametrize("pretty", [True, False], ids=["one pretty document", "JSON lines"])
@pytest.mark.parametrize("trace_id, why", [
    ("", "its traceId is empty"), (None, "it has no traceId"), ("0" * 32, "its traceId is all zeros"),
    ("xyz", "its traceId is not 16 bytes"), (7, "its traceId is a number, not text")])
def test_a_span_without_a_trace_id_is_skipped_saying_where_and_why(tmp_path, pretty, trace_id, why):
    doc = _three(traceId=trace_id)
    if trace_id is None:
        del doc["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["traceId"]
    data = json.dumps(doc, indent=2 if pretty else None).encode()
    path = tmp_path / "spans.json"
    path.write_bytes(b"\n" + data + b"\n")  # (a blank first line: line numbers count from the file's start)
    trace = read_any(path)
    (run,) = trace.runs.values()
    assert run.run["otel"]["spans"] == 2
    (problem,) = trace.problems
    assert why in problem.message
    assert "resourceSpans[0].scopeSpans[0].spans[1]" in problem.message and MARK in problem.message
    assert problem.line == _line_of(data, b'"spanId": "0000000000000002"' if pretty else b"{") + 1


def test_a_file_with_nothing_readable_says_why_not_how_many(tmp_path):
    path = tmp_path / "spans.jsonl"
    path.write_bytes(orjson.dumps(_doc(_span(1, trace=""))) + b"\n")
    with pytest.raises(TraceReadError) as caught:
        read_any(path)
    assert "its traceId is empty" in str(caught.value) and "could not be read" not in str(caught.value)
    assert caught.value.problems and caught.value.problems[0].line == 1


def test_a_broken_document_is_one_problem_at_its_line_not_one_per_line(tmp_path):
    data = json.dumps(_three(), indent=2).encode()
    cut = data[:data.index(MARK.encode())]
    path = tmp_path / "spans.json"
    path.write_bytes(cut)
    with pytest.raises(TraceReadError) as caught:
        read_any(path)
    (problem,) = caught.value.problems
    assert problem.line == cut.count(b"\n") + 1
    assert "malformed JSON: " in problem.message and "(column " in problem.message
    assert f"line {problem.line}: malformed JSON" in str(caught.value)


def test_check_lists_the_spot_and_reads_the_rest(tmp_path):
    from click.testing import CliRunner

    from tracetui.cli import main

    path = tmp_path / "spans.json"
    path.write_bytes(json.dumps(_three(), indent=2).encode().replace(MARK.encode(), b"MARKED\xffNAME"))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1, result.output  # a problem line, and the run read
    assert "answer_ready" in result.output and "0xff" in result.output


def _problems(tmp_path, doc: dict) -> list[str]:
    path = tmp_path / "spans.json"
    path.write_bytes(orjson.dumps(doc) + b"\n")
    try:
        return [p.message for p in read_any(path).problems]
    except TraceReadError as error:  # nothing was read: the reason names the spot
        return [str(error)]


def test_a_root_span_whose_attributes_are_null_is_a_problem_not_a_silently_different_run(tmp_path):
    messages = _problems(tmp_path, _doc({**_span(1, "invoke_agent a"), "attributes": None}, _span(2), _span(3)))
    assert any("'invoke_agent a'" in m and "its attributes are null, not a list: read without them" in m
               for m in messages), messages
    assert _problems(tmp_path, _doc(_span(1, "invoke_agent a"), {**_span(2), "attributes": None})) == []


def test_spans_given_as_an_object_are_a_problem(tmp_path):
    doc = {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "t"}, "spans": {"a": _span(1, "invoke_agent a")}}]}]}
    messages = _problems(tmp_path, doc)
    assert any("resourceSpans[0].scopeSpans[0].spans is an object, not a list" in m for m in messages), messages


def test_spans_that_are_each_other_s_parents_are_a_problem(tmp_path):
    ring = _doc({**_span(1, "invoke_agent a"), "parentSpanId": f"{2:016x}"}, _span(2), _span(3))
    messages = _problems(tmp_path, ring)
    assert [m for m in messages if "parent cycle" in m] == [
        f"span 'invoke_agent a' (spanId {1:016x}) and 1 other(s) are each other's parents (a parent cycle): "
        f"that part of trace {TRACE} has no root"]  # named once, by the first span of the ring in the file
    assert not any("parent cycle" in m for m in _problems(tmp_path, _three()))
