"""Proof (c): the same SSE bytes, read by each SDK's stream accumulator and by tracetui, give the same turn.

The streams are the built-in provider's, in each API's shape, for turns with text,
parallel tool calls, reasoning, a refusal and a truncation, plus every stream
fixture; they go over the scripted loopback server framed as each API frames them
(event names for Responses and Anthropic, ``[DONE]`` for Chat, CRLF for Gemini).
The SDK side is its own accumulator: ``responses.stream(...).get_final_response()``,
``chat.completions.stream(...).get_final_completion()``,
``messages.stream(...).get_final_message()``, and google-genai's
``generate_content_stream`` chunks joined as its docs show. Compared: the text,
and each tool call's id, name and arguments.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracetui.loop.inputs import build_inputs
from tracetui.loop.runner import run_inputs
from tracetui.providers.base import INCOMPLETE, HttpRequest
from tracetui.providers.fake import FakeProvider
from tracetui.providers.http_transport import HttpTransport
from tracetui.providers.registry import get_adapter

from scripted_server import Reply, ScriptedServer
from sdk_types import PROVIDERS
from wire import base_url, sse_frames

KEY = "sk-test-sdk-streams-0123456789abcdef"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCENARIOS = ("text", "single", "parallel", "reasoning_items", "refusal", "truncated", "refund", "stream")
#: the openai helpers raise on a turn the output limit cut short; tracetui calls it incomplete
CUT_SHORT = ("cut short", [])


def fake_streams(provider: str) -> list[list[dict[str, Any]]]:
    """Every complete event stream the built-in provider sends in these scenarios, streamed."""
    out = []
    for name in SCENARIOS:
        inputs = build_inputs(name, provider=provider)
        inputs["stream"] = True
        fake = FakeProvider(inputs)
        seen = []

        class Keep:
            def send(self, request, fake=fake, seen=seen):
                exchange = fake.send(request)
                seen.append(exchange)
                return exchange

        run_inputs(name, inputs, Keep())
        out += [e.events for e in seen if e.events is not None and e.error is None]
    return out


def fixture_streams(provider: str) -> list[list[dict[str, Any]]]:
    path = FIXTURES / f"{provider}_stream_tool_then_answer.json"
    return [r["events"] for r in json.loads(path.read_text())] if path.exists() else []


def arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def tracetui_turn(provider: str, events: list[dict[str, Any]], url: str) -> tuple[str, list[tuple]]:
    transport = HttpTransport(provider, KEY, trust_env=False)
    exchange = transport.send(HttpRequest("POST", url, {}, {"stream": True}, 5000, stream=True))
    transport.close()
    assert exchange.error is None, exchange.error
    adapter = get_adapter(provider)
    body, error = adapter.assemble_stream(exchange.events)
    assert error is None, error
    turn = adapter.parse_response(body)
    if turn.kind == INCOMPLETE and provider.startswith("openai"):
        return CUT_SHORT
    return turn.text, [(c.call_id, c.name, arguments(c.arguments)) for c in turn.calls]


def sdk_turn(provider: str, root: str) -> tuple[str, list[tuple]]:
    if provider == "openai-responses":
        import openai

        client = openai.OpenAI(api_key=KEY, base_url=base_url(provider, root), max_retries=0)
        with client.responses.stream(model="m", input="hi") as stream:
            try:
                response = stream.get_final_response()
            except RuntimeError as exc:  # the helper accepts only response.completed
                assert "response.completed" in str(exc)
                return CUT_SHORT
        calls = [(i.call_id, i.name, arguments(i.arguments)) for i in response.output if i.type == "function_call"]
        text = "".join(p.text for i in response.output if i.type == "message" for p in i.content
                       if p.type == "output_text")
        return text, calls
    if provider == "openai-chat":
        import openai

        client = openai.OpenAI(api_key=KEY, base_url=base_url(provider, root), max_retries=0)
        with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}]) as stream:
            try:
                message = stream.get_final_completion().choices[0].message
            except openai.LengthFinishReasonError:  # the helper refuses a turn cut at the length limit
                return CUT_SHORT
        calls = [(c.id, c.function.name, arguments(c.function.arguments)) for c in message.tool_calls or []]
        return message.content or "", calls
    if provider == "anthropic":
        import anthropic

        client = anthropic.Anthropic(api_key=KEY, base_url=root, max_retries=0)
        with client.messages.stream(model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as stream:
            message = stream.get_final_message()
        calls = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
        return "".join(b.text for b in message.content if b.type == "text"), calls
    from google import genai
    from google.genai import types as gt

    client = genai.Client(api_key=KEY, http_options=gt.HttpOptions(base_url=root, api_version="v1beta"))
    text, calls = "", []
    for chunk in client.models.generate_content_stream(model="m", contents="hi"):
        for candidate in chunk.candidates or []:
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.function_call is not None:
                    calls.append((part.function_call.id, part.function_call.name, part.function_call.args))
                elif part.text and not part.thought:
                    text += part.text
    return text, calls


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_sdk_accumulator_and_tracetui_read_the_same_turn_from_the_same_bytes(provider):
    distinct = {json.dumps(events): events for events in fake_streams(provider) + fixture_streams(provider)}
    streams = list(distinct.values())
    assert len(streams) >= 8
    texts = calls = 0
    replies = [Reply(frames=sse_frames(provider, events)) for events in streams for _ in "ab"]
    path = "/v1beta/models/m:streamGenerateContent?alt=sse" if provider == "gemini" else ""
    with ScriptedServer(replies) as server:
        for events in streams:
            ours = tracetui_turn(provider, events, base_url(provider, server.url) + path)
            theirs = sdk_turn(provider, server.url)
            assert ours == theirs, (ours, theirs, events)
            texts += bool(ours[0])
            calls += len(ours[1])
    assert texts >= 3 and calls >= 4  # the comparison covered text and tool calls alike
