"""Legitimate runs that the readers of raw ``output.value`` and of tool-result error strings must not fail: an
answer that talks about finish reasons, a tool argument named ``refusal``, a tool that ran and answered with
an error string that reads like an unknown tool. (The producers' own failures stay read:
test_sdk_producers.py, test_framework_producers.py.)"""
from __future__ import annotations

import json

from otel_builders import span, traces_data, write

from tracetui.otel.detect import read_any

ROOT_ID = "00000000000000a1"


def _chat(span_id: str, start: int, out: str | None = None, calls=(), inputs=(), raw: str | None = None):
    """An OpenInference LLM span (the LangChain/openai SDK form) under the root."""
    attrs = {"openinference__span__kind": "LLM", "llm__output_messages__0__message__role": "assistant"}
    for i, message in enumerate(inputs):
        attrs.update({f"llm__input_messages__{i}__message__{k}": v for k, v in message.items()})
    if out is not None:
        attrs["llm__output_messages__0__message__content"] = out
    for j, (call_id, name, arguments) in enumerate(calls):
        key = f"llm__output_messages__0__message__tool_calls__{j}__tool_call__"
        attrs.update({key + "id": call_id, key + "function__name": name, key + "function__arguments": arguments})
    if raw is not None:
        attrs["output__value"] = raw
    return span("ChatOpenAI", span_id, ROOT_ID, start, start + 1, **attrs)


def _tool(span_id: str, start: int, name: str, result: str, call_id: str | None = None):
    attrs = {"openinference__span__kind": "TOOL", "tool__name": name, "output__value": result}
    if call_id:
        attrs["tool_call__id"] = call_id
    return span(name, span_id, ROOT_ID, start, start + 1, **attrs)


def _verdict(tmp_path, *spans):
    root = span("orders", ROOT_ID, "", 0, 100, openinference__span__kind="AGENT")
    trace = read_any(write(tmp_path / "spans.jsonl", traces_data(root, *spans)))
    [run] = trace.runs.values()
    return run.verdict()


def test_a_tool_that_ran_and_answered_an_error_string_is_no_unknown_tool(tmp_path):
    said = "Error: a hammer is not a valid tool for this job; use a screwdriver."
    asked = {"role": "user", "content": "which tool for screws?"}
    for call_id in ("c1", None):  # matched by call id, or by name (smolagents' tool spans carry no id)
        verdict = _verdict(tmp_path,
                           _chat("00000000000000b1", 1, calls=[("c1", "advise", '{"job": "screws"}')], inputs=[asked]),
                           _tool("00000000000000b2", 3, "advise", said, call_id),
                           _chat("00000000000000b3", 5, out="Use a screwdriver.",
                                 inputs=[asked, {"role": "tool", "tool_call_id": "c1", "content": said}]))
        assert verdict["status"] == "answer_ready", verdict["first_failure"]


def test_an_error_string_about_another_tool_is_not_this_calls_unknown_tool(tmp_path):
    said = "Error: search_web is not a valid tool, try one of [read_order]."  # not the tool this call named
    verdict = _verdict(tmp_path,
                       _chat("00000000000000b1", 1, calls=[("c1", "read_order", '{"order_id": "o-1"}')]),
                       _chat("00000000000000b3", 5, out="o-1 is delivered.",
                             inputs=[{"role": "tool", "tool_call_id": "c1", "content": said}]))
    assert (verdict["first_failure"] or {}).get("code") != "unknown_tool"


def test_a_tool_argument_named_refusal_is_no_refusal(tmp_path):
    raw = json.dumps({"generations": [[{"message": {"kwargs": {
        "content": "", "additional_kwargs": {"refusal": None},
        "tool_calls": [{"name": "log_refusal", "id": "c2", "args": {"refusal": "customer declined the offer"}}],
        "invalid_tool_calls": [], "response_metadata": {"finish_reason": "tool_calls"}}}}]]})
    verdict = _verdict(tmp_path,
                       _chat("00000000000000c1", 1, calls=[("c2", "log_refusal", '{"refusal": "declined"}')], raw=raw),
                       _tool("00000000000000c2", 3, "log_refusal", "logged", "c2"),
                       _chat("00000000000000c3", 5, out="Logged.",
                             inputs=[{"role": "tool", "tool_call_id": "c2", "content": "logged"}]))
    assert verdict["status"] == "answer_ready", verdict["first_failure"]


def test_invalid_tool_calls_inside_a_tool_argument_are_not_the_models(tmp_path):
    raw = json.dumps({"generations": [[{"message": {"kwargs": {
        "content": "", "invalid_tool_calls": [],
        "tool_calls": [{"name": "file_bug", "id": "c3", "args": {"invalid_tool_calls": [{"name": "x", "args": "{"}]}}],
    }}}]]})
    verdict = _verdict(tmp_path,
                       _chat("00000000000000c1", 1, calls=[("c3", "file_bug", '{"invalid_tool_calls": []}')], raw=raw),
                       _tool("00000000000000c2", 3, "file_bug", "filed", "c3"),
                       _chat("00000000000000c3", 5, out="Filed.",
                             inputs=[{"role": "tool", "tool_call_id": "c3", "content": "filed"}]))
    assert verdict["status"] == "answer_ready", verdict["first_failure"]


def test_an_answer_that_talks_about_finish_reasons_is_not_cut_short(tmp_path):
    answer = 'When finish_reason: "length" comes back, raise max_tokens; check stop_reason=\'max_tokens\' too.'
    langchain = json.dumps({"generations": [[{"message": {"kwargs": {
        "content": answer, "response_metadata": {"finish_reason": "stop"}}}}]]})
    smolagents = json.dumps({"role": "assistant", "content": answer,
                             "raw": "ChatCompletion(id='x', choices=[Choice(finish_reason='stop', index=0)])"})
    for raw in (langchain, smolagents):
        verdict = _verdict(tmp_path, _chat("00000000000000d1", 1, out=answer, raw=raw))
        assert verdict["status"] == "answer_ready", verdict["first_failure"]


def test_a_finish_reason_only_in_the_raw_output_is_still_read(tmp_path):
    cut = "o-1 is deliv"
    langchain = json.dumps({"generations": [[{"message": {"kwargs": {
        "content": cut, "response_metadata": {"finish_reason": "length"}}}}]]})
    smolagents = json.dumps({"role": "assistant", "content": cut,
                             "raw": "ChatCompletion(id='x', choices=[Choice(finish_reason='length', index=0)])"})
    not_json = "ChatCompletion(id='x', choices=[Choice(finish_reason='length', index=0)])"
    for raw in (langchain, smolagents, not_json):
        verdict = _verdict(tmp_path, _chat("00000000000000d1", 1, out=cut, raw=raw))
        assert verdict["first_failure"]["code"] == "incomplete", raw
