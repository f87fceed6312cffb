"""The openai and anthropic SDKs under OpenInference and OpenLLMetry, run offline: OTLP/JSON with a planted
failure per lane and a clean run.

The SDKs are the real ones, over an httpx ``MockTransport`` answering scripted bodies keyed by the run's
question; the instrumentations are the real ones, writing to an in-memory exporter. The agent loop around
the SDK is this file's (an SDK has no loop of its own): it opens the run's root span and a span per tool
call, in the dialect of the instrumentation under test, as a user of that instrumentation would.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import httpx
from otel_producers import _tracer_provider, write_otlp_json

TOOLS = [{"type": "function", "function": {
    "name": "read_order", "description": "Read an order's status.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"],
                   "additionalProperties": False}}}]

#: question → the lane tracetui must name first ("" for a clean run); the same plan for every SDK
PLAN = {"clean": "", "rate-limited": "http", "refused": "generation", "truncated": "generation",
        "bad-json": "arguments", "unknown-tool": "arguments", "tool-fails": "receipt", "denied": "authorization",
        "empty": "answer"}


def _openai_body(question: str, turn: int) -> tuple[int, dict[str, Any]]:
    def reply(message: dict[str, Any], finish: str = "stop") -> tuple[int, dict[str, Any]]:
        return 200, {"id": f"chatcmpl-{question}-{turn}", "object": "chat.completion", "created": 0,
                     "model": "scripted", "choices": [{"index": 0, "message": {"role": "assistant", **message},
                                                       "finish_reason": finish, "logprobs": None}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    def call(name: str, arguments: str) -> tuple[int, dict[str, Any]]:
        return reply({"content": None, "tool_calls": [{"id": f"call-{question}", "type": "function",
                                                       "function": {"name": name, "arguments": arguments}}]},
                     "tool_calls")

    if question == "rate-limited":
        return 429, {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}
    if question == "refused":
        return reply({"content": None, "refusal": "I can't help with that request."})
    if question == "truncated":
        return reply({"content": "o-1 is deliv"}, "length")
    if question == "empty":
        return reply({"content": ""})
    if question == "bad-json" and turn == 0:
        return call("read_order", '{"order_id": ')
    if question == "unknown-tool" and turn == 0:
        return call("cancel_order", '{"order_id": "o-1"}')
    if turn == 0:
        return call("read_order", '{"order_id": "o-1"}')
    return reply({"content": "o-1 is delivered."})


def _anthropic_body(question: str, turn: int) -> tuple[int, dict[str, Any]]:
    def reply(content: list[dict[str, Any]], stop: str = "end_turn") -> tuple[int, dict[str, Any]]:
        return 200, {"id": f"msg_{question}_{turn}", "type": "message", "role": "assistant", "model": "scripted",
                     "content": content, "stop_reason": stop, "stop_sequence": None,
                     "usage": {"input_tokens": 10, "output_tokens": 5}}

    def use(name: str, arguments: Any) -> tuple[int, dict[str, Any]]:
        return reply([{"type": "tool_use", "id": f"toolu_{question}", "name": name, "input": arguments}], "tool_use")

    if question == "rate-limited":
        return 429, {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limit reached"}}
    if question == "refused":
        return reply([], "refusal")
    if question == "truncated":
        return reply([{"type": "text", "text": "o-1 is deliv"}], "max_tokens")
    if question == "empty":
        return reply([{"type": "text", "text": ""}])
    if question == "bad-json" and turn == 0:  # the API sends parsed input: a wrong type is its "bad JSON"
        return use("read_order", {"order_id": 42})
    if question == "unknown-tool" and turn == 0:
        return use("cancel_order", {"order_id": "o-1"})
    if turn == 0:
        return use("read_order", {"order_id": "o-1"})
    return reply([{"type": "text", "text": "o-1 is delivered."}])


def _transport(body: Callable[[str, int], tuple[int, dict[str, Any]]], question_of: Callable[[dict], str],
               turn_of: Callable[[dict], int], http: Any = httpx) -> Any:
    """A mock transport of ``http`` (httpx, or the anthropic SDK's httpx2) answering from ``body``."""
    def handler(request: Any) -> Any:
        sent = json.loads(request.content)
        status, payload = body(question_of(sent), turn_of(sent))
        return http.Response(status, json=payload)

    return http.MockTransport(handler)


def _first_user(messages: list[dict[str, Any]]) -> str:
    content = next(m["content"] for m in messages if m["role"] == "user")
    return content if isinstance(content, str) else content[0]["text"]


class _Loop:
    """The agent loop: a root span per run, a tool span per executed call, in the instrumentation's dialect."""

    def __init__(self, tracer: Any, dialect: str):
        self.tracer, self.dialect = tracer, dialect

    def root(self, question: str):
        attrs = ({"openinference.span.kind": "AGENT", "agent.name": "orders", "input.value": question}
                 if self.dialect == "openinference" else
                 {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "orders"})
        return self.tracer.start_as_current_span("orders" if self.dialect == "openinference"
                                                 else "invoke_agent orders", attributes=attrs)

    def tool(self, question: str, call_id: str, name: str, arguments: Any) -> str:
        if name != "read_order":  # no such tool: the loop answers with an error, as frameworks do
            return f"Error: {name} is not a valid tool, try one of [read_order]."
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        attrs = ({"openinference.span.kind": "TOOL", "tool.name": name, "input.value": text,
                  "tool_call.id": call_id} if self.dialect == "openinference" else
                 {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                  "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.arguments": text})
        if question == "denied":  # the Agent Action Gate said no: the call is simulated, never run
            attrs["gen_ai.agent.tool.disposition"] = "deny"
        with self.tracer.start_as_current_span(f"{name}" if self.dialect == "openinference"
                                               else f"execute_tool {name}", attributes=attrs) as span:
            if question == "denied":
                result = "denied by policy: read_order needs approval"
            elif question == "tool-fails":
                try:
                    raise RuntimeError("order service unavailable")
                except RuntimeError as exc:
                    span.record_exception(exc)
                    from opentelemetry.trace import Status, StatusCode
                    span.set_status(Status(StatusCode.ERROR, str(exc)))
                    return f"error: {exc}"
            else:
                result = "o-1 delivered"
            span.set_attribute("output.value" if self.dialect == "openinference" else "gen_ai.tool.call.result",
                               result)
            return result


def openai_chat_trace(path: Path, instrumentation: str) -> dict[str, str]:
    """The openai SDK (chat completions) under ``openinference``, ``openinference-genai`` (dual-write) or
    ``openllmetry``; returns {question: lane}."""
    from openai import OpenAI

    provider, exporter = _tracer_provider("orders-service")
    if instrumentation == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
    else:
        from openinference.instrumentation import TraceConfig
        from openinference.instrumentation.openai import OpenAIInstrumentor
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider, config=TraceConfig(
            enable_genai_semconv=instrumentation == "openinference-genai"))
    loop = _Loop(provider.get_tracer("orders-app"), "genai" if instrumentation == "openllmetry" else "openinference")
    transport = _transport(_openai_body, lambda sent: _first_user(sent["messages"]),
                           lambda sent: sum(1 for m in sent["messages"] if m["role"] == "tool"))
    client = OpenAI(api_key="sk-test-not-a-key", base_url="http://127.0.0.1:9/v1", max_retries=0,
                    http_client=httpx.Client(transport=transport))
    try:
        for question in PLAN:
            with loop.root(question):
                messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
                for _turn in range(3):
                    try:
                        answer = client.chat.completions.create(model="scripted", messages=messages, tools=TOOLS)
                    except Exception:  # noqa: BLE001 - the planted 429 ends its run
                        break
                    message = answer.choices[0].message
                    if not message.tool_calls:
                        break
                    messages.append(message.model_dump(exclude_none=True))
                    for call in message.tool_calls:
                        try:
                            json.loads(call.function.arguments)
                        except ValueError:
                            result = "error: the arguments are not JSON"
                        else:
                            result = loop.tool(question, call.id, call.function.name, call.function.arguments)
                        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    finally:
        instrumentor.uninstrument()
    write_otlp_json(list(exporter.get_finished_spans()), path)
    return dict(PLAN)


def anthropic_trace(path: Path) -> dict[str, str]:
    """The anthropic SDK (messages) under OpenInference; returns {question: lane}."""
    from anthropic import Anthropic
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    provider, exporter = _tracer_provider("orders-service")
    instrumentor = AnthropicInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    loop = _Loop(provider.get_tracer("orders-app"), "openinference")
    tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
              "input_schema": t["function"]["parameters"]} for t in TOOLS]

    def turns(sent: dict[str, Any]) -> int:
        return sum(1 for m in sent["messages"] if m["role"] == "user" and isinstance(m["content"], list)
                   and any(b.get("type") == "tool_result" for b in m["content"]))

    import httpx2

    transport = _transport(_anthropic_body, lambda sent: _first_user(sent["messages"]), turns, httpx2)
    client = Anthropic(api_key="sk-ant-test-not-a-key", base_url="http://127.0.0.1:9", max_retries=0,
                       http_client=httpx2.Client(transport=transport))
    plan = {**PLAN, "bad-json": "arguments"}
    try:
        for question in plan:
            with loop.root(question):
                messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
                for _turn in range(3):
                    try:
                        answer = client.messages.create(model="scripted", max_tokens=64, messages=messages,
                                                        tools=tools)
                    except Exception:  # noqa: BLE001 - the planted 429 ends its run
                        break
                    uses = [b for b in answer.content if b.type == "tool_use"]
                    if not uses:
                        break
                    messages.append({"role": "assistant", "content": [b.model_dump() for b in answer.content]})
                    results = [{"type": "tool_result", "tool_use_id": b.id,
                                "content": loop.tool(question, b.id, b.name, b.input)} for b in uses]
                    messages.append({"role": "user", "content": results})
    finally:
        instrumentor.uninstrument()
    write_otlp_json(list(exporter.get_finished_spans()), path)
    return plan
