"""LangChain/LangGraph and smolagents under OpenInference, run offline: OTLP/JSON with a planted failure per
lane and a clean run.

LangGraph's ``create_agent`` runs twice: with a fake chat model whose scripted messages carry tool calls (and
the shapes only LangChain has: ``invalid_tool_calls``, ``additional_kwargs.refusal``), and with the real
``ChatOpenAI`` against a scripted server on 127.0.0.1. smolagents' ``ToolCallingAgent`` runs a scripted
``Model``. The instrumentations are OpenInference's, writing to an in-memory exporter.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from otel_producers import _tracer_provider, write_otlp_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))


def read_order(order_id: str) -> str:
    """Read an order's status.

    Args:
        order_id: the order's id, such as o-1.
    """
    if order_id == "o-boom":
        raise RuntimeError("order service unavailable")
    return f"{order_id} delivered"


# -- LangGraph, a fake chat model ------------------------------------------------------------------
def _fake_script(question: str) -> list[Any]:
    from langchain_core.messages import AIMessage

    def call(name: str, args: dict[str, Any]) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"id": f"call-{question}", "name": name, "args": args}])

    answer = AIMessage(content="o-1 is delivered.", response_metadata={"finish_reason": "stop"})
    return {
        "clean": [call("read_order", {"order_id": "o-1"}), answer],
        "unknown-tool": [call("cancel_order", {"order_id": "o-1"}), answer],
        "invalid-tool-call": [AIMessage(content="", invalid_tool_calls=[
            {"id": "call-invalid", "name": "read_order", "args": '{"order_id": ', "error": "not JSON"}])],
        "tool-fails": [call("read_order", {"order_id": "o-boom"}), answer],
        "refused": [AIMessage(content="", additional_kwargs={"refusal": "I can't help with that request."})],
        "truncated": [AIMessage(content="o-1 is deliv", response_metadata={"finish_reason": "length"})],
        "empty": [AIMessage(content="", response_metadata={"finish_reason": "stop"})],
    }[question]


FAKE_PLAN = {"clean": "", "unknown-tool": "arguments", "invalid-tool-call": "arguments", "tool-fails": "receipt",
             "refused": "generation", "truncated": "generation", "empty": "answer"}


def _langchain_instrumented():
    from openinference.instrumentation.langchain import LangChainInstrumentor

    provider, exporter = _tracer_provider()
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    return instrumentor, exporter


def _run_agent(agent: Any, question: str) -> None:
    try:
        agent.invoke({"messages": [{"role": "user", "content": question}]})
    except Exception:  # noqa: BLE001 - planted failures end some runs in an exception
        pass


def langgraph_fake_trace(path: Path) -> dict[str, str]:
    """``create_agent`` with a fake chat model emitting tool calls; returns {question: lane}."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # the fake ignores tools; the agent needs them bound
            return self

    instrumentor, exporter = _langchain_instrumented()
    try:
        for question in FAKE_PLAN:
            model = ToolCallingFake(messages=iter(_fake_script(question)))
            _run_agent(create_agent(model, tools=[read_order], name="orders"), question)
    finally:
        instrumentor.uninstrument()
    write_otlp_json(list(exporter.get_finished_spans()), path)
    return dict(FAKE_PLAN)


# -- LangGraph, ChatOpenAI against a scripted server -------------------------------------------------
def _completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _tool_call(name: str, arguments: str, call_id: str = "call-1") -> dict[str, Any]:
    return _completion({"content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}, "tool_calls")


OPENAI_PLAN = {"clean": "", "server-error": "http", "refused": "generation", "unknown-tool": "arguments",
               "bad-json": "arguments"}


def langgraph_openai_trace(path: Path) -> dict[str, str]:
    """``create_agent`` with ``ChatOpenAI`` against a scripted server on 127.0.0.1; returns {question: lane}."""
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from scripted_server import Reply, ScriptedServer

    answer = Reply(body=_completion({"content": "o-1 is delivered."}))
    replies = {
        "clean": [Reply(body=_tool_call("read_order", '{"order_id": "o-1"}')), answer],
        "server-error": [Reply(500, {"error": {"message": "internal error", "type": "server_error"}})],
        "refused": [Reply(body=_completion({"content": None, "refusal": "I can't help with that request."}))],
        "unknown-tool": [Reply(body=_tool_call("cancel_order", '{"order_id": "o-1"}')), answer],
        "bad-json": [Reply(body=_tool_call("read_order", '{"order_id": ')), answer],
    }
    os.environ.pop("OPENAI_API_KEY", None)
    instrumentor, exporter = _langchain_instrumented()
    try:
        for question, script in replies.items():
            with ScriptedServer(script) as server:
                model = ChatOpenAI(model="scripted", api_key="sk-test-not-a-key", base_url=f"{server.url}/v1",
                                   max_retries=0, timeout=10)
                _run_agent(create_agent(model, tools=[read_order], name="orders"), question)
    finally:
        instrumentor.uninstrument()
    write_otlp_json(list(exporter.get_finished_spans()), path)
    return dict(OPENAI_PLAN)


# -- smolagents --------------------------------------------------------------------------------------
SMOL_PLAN = {"clean": "", "tool-fails": "receipt", "parsing-error": "arguments", "truncated": "generation",
             "rate-limited": "http", "server-error": "http"}


def _smol_reply(question: str, turn: int) -> tuple[int, dict[str, Any]]:
    """The chat completion smolagents' OpenAIModel gets for a run's question at its turn."""
    if question == "rate-limited":
        return 429, {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}
    if question == "server-error":
        return 500, {"error": {"message": "internal error", "type": "server_error"}}
    if question == "truncated":  # the final answer cut at the token limit, mid-arguments
        return 200, _completion({"content": None, "tool_calls": [{"id": "call-final", "type": "function", "function": {
            "name": "final_answer", "arguments": '{"answer": "o-1 is deliv'}}]}, "length")
    if question == "parsing-error":  # never a tool call, only text no tool call can be read from (a parsing
        # error the agent recovers from in a later step is recovered: tests/otel/test_step_errors.py)
        return 200, _completion({"content": "I will now call the tool"})
    if turn == 0:
        order = "o-boom" if question == "tool-fails" else "o-1"
        return 200, _tool_call("read_order", json.dumps({"order_id": order}), f"call-{question}")
    return 200, _completion({"content": None, "tool_calls": [{"id": f"call-final-{turn}", "type": "function",
                                                              "function": {"name": "final_answer", "arguments":
                                                                           '{"answer": "o-1 is delivered."}'}}]})


def smolagents_trace(path: Path) -> dict[str, str]:
    """smolagents' ToolCallingAgent with its OpenAIModel over a scripted transport; returns {question: lane}."""
    import httpx
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import OpenAIModel, ToolCallingAgent, tool

    @tool
    def read_order(order_id: str) -> str:
        """Read an order's status.

        Args:
            order_id: the order's id, such as o-1.
        """
        if order_id == "o-boom":
            raise RuntimeError("order service unavailable")
        return f"{order_id} delivered"

    asked: dict[str, int] = {}  # model calls so far, by question

    def handler(request: httpx.Request) -> httpx.Response:
        sent = json.loads(request.content)
        text = json.dumps(sent["messages"])
        question = next(q for q in SMOL_PLAN if f"New task:\\n{q}" in text or f'"{q}"' in text)
        turn = asked[question] = asked.get(question, -1) + 1
        status, body = _smol_reply(question, turn)
        return httpx.Response(status, json=body)

    from opentelemetry import context

    provider, exporter = _tracer_provider()
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    # a run that raises leaves its spans' context attached (the leak under test): the runs after it in this
    # call are parented to it, and this call starts from, and leaves behind, an empty context
    fresh = context.attach(context.Context())
    try:
        for question in SMOL_PLAN:
            model = OpenAIModel(model_id="scripted", api_base="http://127.0.0.1:9/v1", api_key="sk-test-not-a-key",
                                retry=False, client_kwargs={"max_retries": 0,
                                               "http_client": httpx.Client(transport=httpx.MockTransport(handler))})
            agent = ToolCallingAgent(tools=[read_order], model=model, name="orders", max_steps=3, verbosity_level=0)
            try:
                agent.run(question)
            except Exception:  # noqa: BLE001 - planted failures end some runs in an exception
                pass
    finally:
        context.detach(fresh)
        instrumentor.uninstrument()
    write_otlp_json(list(exporter.get_finished_spans()), path)
    return dict(SMOL_PLAN)
