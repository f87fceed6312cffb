"""A step in ERROR that no span under it explains (smolagents' AgentParsingError) is an event of its own; when
a later step calls a tool with valid arguments, the agent recovered from it (visible, never decisive), as bad
arguments followed by good ones are."""
from __future__ import annotations

import json

from otel_builders import exception, span, traces_data, write

from tracetui.otel.detect import read_any

ROOT = "00000000000000a1"


def _llm(span_id: str, parent: str, start: int, text: str | None = None, call: tuple | None = None):
    attrs = {"openinference__span__kind": "LLM", "llm__output_messages__0__message__role": "assistant"}
    if text is not None:
        attrs["llm__output_messages__0__message__content"] = text
    if call:
        key = "llm__output_messages__0__message__tool_calls__0__tool_call__"
        attrs.update({key + "id": call[0], key + "function__name": call[1], key + "function__arguments": call[2]})
    return span("OpenAIModel.generate", span_id, parent, start, start + 1, **attrs)


def _run(tmp_path, recovered: bool):
    spans = [span("ToolCallingAgent.run", ROOT, "", 0, 100, openinference__span__kind="AGENT"),
             span("Step 1", "00000000000000b1", ROOT, 1, 5, openinference__span__kind="CHAIN", status=2,
                  message="AgentParsingError: no tool call found",
                  events=[exception("AgentParsingError", "Error while parsing tool call from model output")]),
             _llm("00000000000000b2", "00000000000000b1", 2, text="I will now call the tool")]
    if recovered:
        answer = json.dumps({"answer": "o-1 is delivered."})
        spans += [span("Step 2", "00000000000000c1", ROOT, 10, 20, openinference__span__kind="CHAIN"),
                  _llm("00000000000000c2", "00000000000000c1", 11, call=("call-1", "read_order", '{"order_id": "o-1"}')),
                  span("read_order", "00000000000000c3", "00000000000000c1", 14, 15, openinference__span__kind="TOOL",
                       tool__name="read_order", output__value="o-1 delivered"),
                  span("Step 3", "00000000000000d1", ROOT, 30, 40, openinference__span__kind="CHAIN"),
                  _llm("00000000000000d2", "00000000000000d1", 31, call=("call-2", "final_answer", answer)),
                  span("final_answer", "00000000000000d3", "00000000000000d1", 34, 35,
                       openinference__span__kind="TOOL", tool__name="final_answer", output__value="o-1 is delivered.")]
    [run] = read_any(write(tmp_path / "smol.jsonl", traces_data(*spans))).runs.values()
    return run


def test_a_parsing_error_the_agent_recovered_from_is_visible_but_not_decisive(tmp_path):
    run = _run(tmp_path, recovered=True)
    [step] = [e for e in run.events if e["code"] == "invalid_json"]
    assert step["outcome"] == "recovered" and "AgentParsingError" in step["summary"]
    assert run.verdict()["status"] == "answer_ready", run.verdict()["first_failure"]


def test_a_parsing_error_nothing_came_after_stays_the_failure(tmp_path):
    failure = _run(tmp_path, recovered=False).verdict()["first_failure"]
    assert (failure["lane"], failure["code"]) == ("arguments", "invalid_json")
