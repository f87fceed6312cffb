"""Real SDK traffic, in process: each official SDK talks to an httpx MockTransport that answers from a script
and keeps every exchange as the recording proxy keeps it (a WireExchange). The request bodies are the SDKs' own
bytes; the responses are rendered by the built-in fake servers (shaped as the SDKs' types say). A small hand loop
per provider runs tools and sends their results back, as a user's agent does.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable

import httpx

from tracetui.providers.fake_model import fn_call, message, response
from tracetui.providers.fake_wire import WIRES
from tracetui.providers.sse import SSEParser
from tracetui.record.exchange import AgentExit, WireExchange

PROVIDERS = ("openai-responses", "openai-chat", "anthropic", "gemini")
MODEL = "fake-model"
KEY = "sk-test-wire-0123456789abcdefghij"
USER = "What is the status of order o-1?"
READ_ORDER = {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^o-[0-9]+$"}},
              "required": ["order_id"], "additionalProperties": False}
DESCRIPTION = "Read the status of an order the caller may see."
LATENCY = 100
KEPT_HEADERS = ("content-type", "retry-after", "retry-after-ms", "x-request-id", "request-id")
SKIP = object()  # a tool result the agent does not send back

EXITED_0 = AgentExit(0, None, False, True, None)
EXITED_1 = AgentExit(1, None, False, True, None)
KILLED = AgentExit(None, "SIGKILL", False, True, None)
CTRL_C = AgentExit(None, "SIGINT", True, True, None)


def call_reply(*calls: tuple[str, Any, str]) -> dict[str, Any]:
    """A neutral model reply calling tools: (name, arguments as an object or raw text, call id) each."""
    return response([fn_call(name, args, call_id) for name, args, call_id in calls])


def text_reply(text: str) -> dict[str, Any]:
    return response([message(text)])


def refusal_reply() -> dict[str, Any]:
    return response([{"type": "refusal", "text": "I can't help with that.", "status": "completed"}])


def truncated_reply() -> dict[str, Any]:
    return response([message("The order o-1 is d")], status="incomplete",
                    incomplete_details={"reason": "max_output_tokens"})


@dataclass
class Reply:
    """One scripted answer: a model reply (rendered for the provider), or a bare HTTP status."""

    reply: dict[str, Any] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None


def status_reply(status: int, **headers: str) -> Reply:
    return Reply(None, status, {"content-type": "application/json", **headers},
                 {"error": {"message": "Rate limit reached. Try again soon.", "type": "rate_limit_error"}})


def route(path: str) -> str | None:
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/v1/messages"):
        return "anthropic"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return None


class Wire:
    """The model side: answers each request from the script, keeps each exchange."""

    def __init__(self, script: list[Reply | dict[str, Any]]):
        self.script = [s if isinstance(s, Reply) else Reply(s) for s in script]
        self.exchanges: list[WireExchange] = []

    def handle(self, request: Any) -> Any:
        raw = request.content
        provider = route(request.url.path)
        body = json.loads(raw) if raw else None
        stream = bool(isinstance(body, dict) and body.get("stream")) or "streamGenerateContent" in request.url.path
        retry = request.headers.get("x-stainless-retry-count")
        model = body.get("model") if isinstance(body, dict) else None
        if provider == "gemini":
            model = request.url.path.rsplit("/", 1)[-1].split(":", 1)[0]
        query = "&".join(p for p in request.url.query.decode().split("&") if p and not p.startswith("key="))
        url = request.url.path + (f"?{query}" if query else "")
        wire_request = {"method": request.method, "url": url, "provider": provider, "model": model, "stream": stream,
                        "body": body, "body_sha256": hashlib.sha256(raw).hexdigest(),
                        "retry_count": int(retry) if retry is not None else None}
        step = self.script[len(self.exchanges)] if len(self.exchanges) < len(self.script) else status_reply(500)
        n = len(self.exchanges) + 1
        headers = {"content-type": "application/json", "x-request-id": f"req_{n}", **step.headers}
        if step.reply is None:
            status, payload = step.status, step.body
        else:
            status, payload = WIRES[provider].render(step.reply, n, 10)
        make = _response_class(request)
        if stream and status == 200:
            events, data = self._sse(provider, WIRES[provider].events(payload))
            headers["content-type"] = "text/event-stream"
            recorded = {"status": 200, "headers": _kept(headers), "events": events, "latency_ms": LATENCY}
            self.exchanges.append(WireExchange(len(self.exchanges), provider, wire_request, recorded, stream))
            return make(200, headers=headers, content=data)
        recorded = {"status": status, "headers": _kept(headers), "body": payload, "latency_ms": LATENCY}
        self.exchanges.append(WireExchange(len(self.exchanges), provider, wire_request, recorded, stream))
        return make(status, headers=headers, content=json.dumps(payload).encode())

    @staticmethod
    def _sse(provider: str, events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bytes]:
        frames = []
        for event in events:
            if set(event) == {"data"}:
                frames.append(f"data: {event['data']}\n\n")
            elif provider in ("openai-responses", "anthropic"):
                frames.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
            else:
                frames.append(f"data: {json.dumps(event)}\r\n\r\n" if provider == "gemini"
                              else f"data: {json.dumps(event)}\n\n")
        data = "".join(frames).encode()
        parser = SSEParser()
        return parser.feed(data) + parser.close(), data  # the events exactly as the proxy's parser keeps them

    def client(self, provider: str, max_retries: int | None = None) -> Any:
        http = httpx.Client(transport=httpx.MockTransport(self.handle))
        if provider == "anthropic":  # this anthropic SDK is built on httpx2 (httpx's successor), same interface
            import httpx2
            http = httpx2.Client(transport=httpx2.MockTransport(self.handle))
        retries = {} if max_retries is None else {"max_retries": max_retries}
        if provider.startswith("openai"):
            import openai
            return openai.OpenAI(api_key=KEY, base_url="http://wire.test/v1", http_client=http, **retries)
        if provider == "anthropic":
            import anthropic
            return anthropic.Anthropic(api_key=KEY, base_url="http://wire.test", http_client=http, **retries)
        from google import genai
        from google.genai import types as gt
        return genai.Client(api_key=KEY, http_options=gt.HttpOptions(base_url="http://wire.test",
                                                                    api_version="v1beta", httpx_client=http))


def _response_class(request: Any) -> Any:
    """The Response class of the HTTP library the SDK sent ``request`` with (httpx, or httpx2 for anthropic)."""
    if type(request).__module__.startswith("httpx2"):
        import httpx2
        return httpx2.Response
    return httpx.Response


def _kept(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k in KEPT_HEADERS}


Tool = Callable[[dict[str, Any]], Any]  # returns (text, is_error), or SKIP


def read_order(args: dict[str, Any]) -> Any:
    return json.dumps({"order_id": args.get("order_id"), "status": "delivered"}), False


def run_agent(provider: str, script: list[Reply | dict[str, Any]], tools: dict[str, Tool] | None = None,
              stream: bool = False, max_retries: int | None = None, max_turns: int = 4) -> tuple[list[WireExchange], str]:
    """Run a hand-written tool loop on the provider's SDK against the script; the exchanges and the final text.
    An SDK error ends the loop (as an agent that lets it raise), with the text so far."""
    wire = Wire(script)
    tools = tools if tools is not None else {"read_order": read_order}
    loop = {"openai-chat": _chat, "openai-responses": _responses, "anthropic": _anthropic, "gemini": _gemini}[provider]
    text = ""
    try:
        text = loop(wire.client(provider, max_retries), tools, stream, max_turns)
    except Exception:  # noqa: BLE001 - an SDK error (a status it gave up on, a stream it rejects) crashes the agent
        pass
    return wire.exchanges, text


def _result(tools: dict[str, Tool], name: str, raw: str | dict[str, Any]) -> Any:
    tool = tools.get(name)
    if tool is None:
        return f"Error: no tool named {name}", True
    try:
        args = raw if isinstance(raw, dict) else json.loads(raw)
    except json.JSONDecodeError as exc:
        return f"Error: arguments are not JSON: {exc}", True
    return tool(args)


def _chat(client: Any, tools: dict[str, Tool], stream: bool, max_turns: int) -> str:
    declared = [{"type": "function", "function": {"name": "read_order", "description": DESCRIPTION,
                                                  "parameters": READ_ORDER}}]
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Answer from tool results."},
                                      {"role": "user", "content": USER}]
    for _ in range(max_turns):
        if stream:
            with client.chat.completions.stream(model=MODEL, messages=messages, tools=declared) as events:
                choice = events.get_final_completion().choices[0]
        else:
            choice = client.chat.completions.create(model=MODEL, messages=messages, tools=declared).choices[0]
        calls = choice.message.tool_calls or []
        if not calls:
            return choice.message.content or ""
        messages.append({"role": "assistant", "content": choice.message.content,
                         "tool_calls": [{"id": c.id, "type": "function", "function": {
                             "name": c.function.name, "arguments": c.function.arguments}} for c in calls]})
        for c in calls:
            result = _result(tools, c.function.name, c.function.arguments)
            if result is not SKIP:
                messages.append({"role": "tool", "tool_call_id": c.id, "content": result[0]})
    return ""


def _responses(client: Any, tools: dict[str, Tool], stream: bool, max_turns: int) -> str:
    declared = [{"type": "function", "name": "read_order", "description": DESCRIPTION, "parameters": READ_ORDER,
                 "strict": True}]
    items: list[Any] = [{"role": "user", "content": USER}]
    for _ in range(max_turns):
        if stream:
            with client.responses.stream(model=MODEL, input=items, tools=declared) as events:
                answer = events.get_final_response()
        else:
            answer = client.responses.create(model=MODEL, input=items, tools=declared)
        calls = [o for o in answer.output if o.type == "function_call"]
        if not calls:
            return answer.output_text
        for c in calls:
            items.append({"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments})
            result = _result(tools, c.name, c.arguments)
            if result is not SKIP:
                items.append({"type": "function_call_output", "call_id": c.call_id, "output": result[0]})
    return ""


def _anthropic(client: Any, tools: dict[str, Tool], stream: bool, max_turns: int) -> str:
    declared = [{"name": "read_order", "description": DESCRIPTION, "input_schema": READ_ORDER}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": USER}]
    for _ in range(max_turns):
        if stream:
            with client.messages.stream(model=MODEL, max_tokens=500, messages=messages, tools=declared) as events:
                answer = events.get_final_message()
        else:
            answer = client.messages.create(model=MODEL, max_tokens=500, messages=messages, tools=declared)
        calls = [b for b in answer.content if b.type == "tool_use"]
        if not calls:
            return "".join(b.text for b in answer.content if b.type == "text")
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
        results = []
        for c in calls:
            result = _result(tools, c.name, c.input)
            if result is not SKIP:
                results.append({"type": "tool_result", "tool_use_id": c.id, "content": result[0],
                                "is_error": result[1]})
        messages.append({"role": "user", "content": results})
    return ""


def _gemini(client: Any, tools: dict[str, Tool], stream: bool, max_turns: int) -> str:
    from google.genai import types as gt
    config = gt.GenerateContentConfig(tools=[gt.Tool(function_declarations=[gt.FunctionDeclaration(
        name="read_order", description=DESCRIPTION, parameters_json_schema=READ_ORDER)])],
        automatic_function_calling=gt.AutomaticFunctionCallingConfig(disable=True))
    contents: list[Any] = [gt.Content(role="user", parts=[gt.Part(text=USER)])]
    for _ in range(max_turns):
        if stream:
            parts = [p for chunk in client.models.generate_content_stream(model=MODEL, contents=contents,
                                                                          config=config)
                     for c in chunk.candidates or () if c.content for p in c.content.parts or ()]
        else:
            answer = client.models.generate_content(model=MODEL, contents=contents, config=config)
            parts = [p for c in answer.candidates or () if c.content for p in c.content.parts or ()]
        calls = [p.function_call for p in parts if p.function_call]
        if not calls:
            return "".join(p.text or "" for p in parts)
        contents.append(gt.Content(role="model", parts=parts))
        replies = []
        for c in calls:
            result = _result(tools, c.name, dict(c.args or {}))
            if result is not SKIP:
                try:
                    value = json.loads(result[0])
                except json.JSONDecodeError:
                    value = {"error": result[0]} if result[1] else {"output": result[0]}
                replies.append(gt.Part(function_response=gt.FunctionResponse(
                    id=c.id, name=c.name, response=value if isinstance(value, dict) else {"output": value})))
        contents.append(gt.Content(role="user", parts=replies))
    return ""
