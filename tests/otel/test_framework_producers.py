"""LangGraph's create_agent (a fake chat model, and ChatOpenAI against a scripted loopback server) and
smolagents, under OpenInference: a planted failure per lane and a clean run, each flagged first on its lane."""
from __future__ import annotations

from framework_producers import langgraph_fake_trace, langgraph_openai_trace, smolagents_trace
from producer_checks import failure, first_lanes


def test_langgraph_with_a_fake_model(offline):
    path = offline / "langgraph-fake.jsonl"
    runs = first_lanes(path, langgraph_fake_trace(path))
    assert runs["clean"].verdict()["status"] == "answer_ready"
    # ToolNode answers an unknown tool with an error string and runs no tool span
    assert failure(runs["unknown-tool"])["code"] == "unknown_tool"
    assert "cancel_order is not a valid tool" in failure(runs["unknown-tool"])["reason"]
    # invalid_tool_calls reach only the raw output.value
    assert failure(runs["invalid-tool-call"])["code"] == "invalid_json"
    # a refusal only in additional_kwargs.refusal
    assert failure(runs["refused"])["code"] == "refused"
    assert failure(runs["tool-fails"])["code"] == "tool_failed"


def test_langgraph_with_chat_openai_against_a_scripted_server(offline):
    path = offline / "langgraph-openai.jsonl"
    runs = first_lanes(path, langgraph_openai_trace(path))
    assert runs["clean"].verdict()["status"] == "answer_ready"
    assert failure(runs["server-error"])["code"] == "server_error"
    assert failure(runs["refused"])["code"] == "refused"
    assert failure(runs["bad-json"])["code"] == "invalid_json"


def test_smolagents(offline):
    path = offline / "smolagents.jsonl"
    runs = first_lanes(path, smolagents_trace(path))
    # the answer comes through the final_answer tool
    answer = [e for e in runs["clean"].events if e["lane"] == "answer"][-1]
    assert answer["outcome"] == "ok" and answer["data"]["text"] == "o-1 is delivered."
    assert not [e for e in runs["clean"].events if e["lane"] == "receipt" and "final_answer" in e["summary"]]
    # a step in error (AgentParsingError) makes an event
    assert failure(runs["parsing-error"])["code"] == "invalid_json"
    assert "AgentParsingError" in failure(runs["parsing-error"])["reason"]
    # the cut answer: the finish reason is only in the raw response
    assert failure(runs["truncated"])["code"] == "incomplete"
    # on an exception smolagents leaks its context: the runs whose agent span never ended are listed,
    # incomplete, each apart, never dropped
    for question, code in (("rate-limited", "rate_limited"), ("server-error", "server_error")):
        assert not runs[question].verdict()["complete"] and failure(runs[question])["code"] == code
    assert runs["rate-limited"].run_id != runs["server-error"].run_id
