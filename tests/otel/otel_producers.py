"""Real instrumentations, run offline, writing their spans as OTLP/JSON: the foreign traces the tests open.

Nothing here reaches the network: pydantic-ai runs a scripted ``FunctionModel``;
the OpenAI Agents SDK runs its real ``OpenAIResponsesModel`` over an httpx
``MockTransport`` that answers with scripted Responses API bodies, and its
spans go to OpenInference's processor only (which replaces the SDK's own
exporter), with no API key in the environment.
"""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx


def write_otlp_json(spans: list[Any], path: Path) -> None:
    """SDK spans → the collector file-exporter format (one TracesData per line, hex ids, integer enums)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = encode_spans(spans)
    doc = MessageToDict(request, use_integers_for_enums=True)
    for resource_spans in doc.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        import base64

                        span[key] = base64.b64decode(span[key]).hex()
    path.write_text(json.dumps(doc) + "\n")


def _tracer_provider(service: str | None = None):
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}) if service else None)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


# -- pydantic-ai ---------------------------------------------------------------------------------
def pydantic_ai_trace(path: Path) -> dict[str, str]:
    """Three runs, one planted failure each; returns {what was planted: the run's question}."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    provider, exporter = _tracer_provider()

    def script(messages, info):
        question = messages[0].parts[-1].content
        turn = sum(1 for m in messages if m.kind == "response")
        if question == "raises":  # a tool that raises
            return ModelResponse(parts=[ToolCallPart("read_order", {"order_id": "o-1"}, tool_call_id="call-raise")])
        if question == "bad-arguments":  # called with an integer where the schema says string, every time
            return ModelResponse(parts=[ToolCallPart("read_order", {"order_id": 42}, tool_call_id=f"call-bad-{turn}")])
        if question == "truncated":  # the answer cut at the token limit
            return ModelResponse(parts=[TextPart("o-1 is deliv")], finish_reason="length")
        raise AssertionError(question)

    agent = Agent(FunctionModel(script, model_name="scripted"), name="orders", retries=1)
    agent.instrument = InstrumentationSettings(tracer_provider=provider)

    @agent.tool_plain
    def read_order(order_id: str) -> str:
        """Read an order's status."""
        if order_id == "o-1":
            raise RuntimeError("order service unavailable")
        return f"{order_id} delivered"

    for question in ("raises", "bad-arguments", "truncated"):
        try:
            agent.run_sync(question)
        except Exception:  # noqa: BLE001 - the planted failures end some runs in an exception
            pass
    write_otlp_json(list(exporter.get_finished_spans()), path)
    return {"raises": "receipt", "bad-arguments": "arguments", "truncated": "generation"}


# -- OpenAI Agents SDK ---------------------------------------------------------------------------
def _response(n: int, request: dict[str, Any], output: list[dict[str, Any]], status: str = "completed",
              incomplete: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": f"resp_{n}", "object": "response", "created_at": 0, "status": status, "model": "scripted",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": request.get("tools", []),  # the real API echoes the tools it was offered
            "incomplete_details": incomplete,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": arguments, "status": "completed"}


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _scripted_reply(request: dict[str, Any], n: int) -> dict[str, Any]:
    items = request.get("input") or []
    question = next((i.get("content") for i in items if isinstance(i, dict) and i.get("role") == "user"), "")
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    if question == "raises":
        return _response(n, request, [_call("call-raise", "explode", '{"order_id": "o-1"}')] if not outputs
                         else [_message("o-1 is delivered")])
    if question == "unknown-tool":
        return _response(n, request, [_call("call-unknown", "cancel_order", '{"order_id": "o-1"}')])
    if question == "bad-json-repaired":
        if not outputs:
            return _response(n, request, [_call("call-bad", "read_order", '{"order_id": ')])
        if len(outputs) == 1:
            return _response(n, request, [_call("call-good", "read_order", '{"order_id": "o-2"}')])
        return _response(n, request, [_message("o-2 is delivered")])
    if question == "truncated":
        return _response(n, request, [_message("o-2 is deliv")], status="incomplete",
                         incomplete={"reason": "max_output_tokens"})
    raise AssertionError(question)


def openai_agents_trace(path: Path) -> dict[str, str]:
    """Five runs: four planted failures and one the model repairs; returns {question: lane}."""
    os.environ.pop("OPENAI_API_KEY", None)
    from agents import (Agent, GuardrailFunctionOutput, OpenAIResponsesModel, Runner, function_tool,
                        input_guardrail)
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    provider, exporter = _tracer_provider()
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)  # exclusive: the SDK's own exporter is replaced
    counter = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        counter["n"] += 1
        return httpx.Response(200, json=_scripted_reply(json.loads(request.content), counter["n"]))

    client = AsyncOpenAI(api_key="sk-test-not-a-key", base_url="http://127.0.0.1:9/v1",
                         http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    model = OpenAIResponsesModel(model="scripted", openai_client=client)

    @function_tool
    def read_order(order_id: str) -> str:
        """Read an order's status."""
        return f"{order_id} delivered"

    @function_tool
    def explode(order_id: str) -> str:
        """Read an order from a service that is down."""
        raise RuntimeError("order service unavailable")

    @input_guardrail
    async def no_refunds(ctx, agent, text):
        return GuardrailFunctionOutput(output_info={"why": "refunds need a person"}, tripwire_triggered=True)

    orders = Agent(name="orders", instructions="Answer from tool results.", model=model, tools=[read_order, explode])
    guarded = Agent(name="refunds", instructions="Refund orders.", model=model, tools=[read_order],
                    input_guardrails=[no_refunds])

    async def run_all() -> None:
        for agent, question in ((orders, "raises"), (orders, "unknown-tool"), (orders, "bad-json-repaired"),
                                (orders, "truncated"), (guarded, "refund o-1")):
            try:
                await Runner.run(agent, question)
            except Exception:  # noqa: BLE001 - planted failures end some runs in an exception
                pass

    try:
        asyncio.run(run_all())
    finally:
        instrumentor.uninstrument()
    write_otlp_json(list(exporter.get_finished_spans()), path)
    return {"raises": "receipt", "unknown-tool": "arguments", "bad-json-repaired": "",
            "truncated": "generation", "refund o-1": "authorization"}
