"""Proof (b), second half: given the same call, each SDK sends what tracetui sends.

The requests the loop builds in real runs (several scenarios, plain and streamed,
after tool results came back) go out twice to the scripted loopback server: once
through tracetui's transport, once through the official SDK called with the same
arguments. The server sees the same JSON body, the same path (the base URL as the
SDK takes it, the API path appended as the SDK does) and the same credential
header.
"""
from __future__ import annotations

from typing import Any

import orjson
import pytest

from tracetui.loop.inputs import build_inputs
from tracetui.loop.runner import offline_base_url, run_inputs
from tracetui.providers.base import HttpRequest
from tracetui.providers.fake import FakeProvider
from tracetui.providers.http_transport import HttpTransport
from tracetui.providers.registry import get_adapter

from scripted_server import Reply, ScriptedServer
from sdk_types import PROVIDERS
from wire import base_url, bodies, streams

KEY = "sk-test-sdk-requests-0123456789abcdef"
MODEL = "fake-model"
AUTH = {"openai-responses": ("authorization", f"Bearer {KEY}"), "openai-chat": ("authorization", f"Bearer {KEY}"),
        "anthropic": ("authorization", f"Bearer {KEY}"), "gemini": ("x-goog-api-key", KEY)}
SCENARIOS = ("single", "parallel", "reasoning_items", "refund", "invalid_args", "stream", "truncated")


class Keep:
    """The fake provider, keeping each request the loop built (body and path) for the SDKs to repeat."""

    def __init__(self, inputs):
        self.inner = FakeProvider(inputs)
        self.requests: list[HttpRequest] = []

    def send(self, request):
        self.requests.append(request)
        return self.inner.send(request)


def loop_requests(provider: str) -> list[tuple[str, dict[str, Any], bool]]:
    """(API path, body, stream) of every request the loop sent in a few real runs."""
    out = []
    root = offline_base_url(get_adapter(provider))
    for name in SCENARIOS:
        keep = Keep(inputs := build_inputs(name, provider=provider))
        run_inputs(name, inputs, keep)
        out += [(r.url[len(root):], r.body, r.stream) for r in keep.requests]
    return out


def sdk_call(provider: str, base: str, body: dict[str, Any], stream: bool) -> None:
    """Make the same call with the official SDK, given ``base`` as its base URL."""
    if provider.startswith("openai"):
        import openai

        client = openai.OpenAI(api_key=KEY, base_url=base, max_retries=0)
        create = client.responses.create if provider == "openai-responses" else client.chat.completions.create
        result = create(**body)
    elif provider == "anthropic":
        import anthropic

        client = anthropic.Anthropic(api_key=KEY, base_url=base, max_retries=0)
        result = client.messages.create(**body)
    else:
        from google import genai
        from google.genai import types as gt

        client = genai.Client(api_key=KEY, http_options=gt.HttpOptions(base_url=base, api_version="v1beta"))
        config = gt.GenerateContentConfig(
            system_instruction=gt.Content.model_validate(body["systemInstruction"]),
            tools=[gt.Tool.model_validate(t) for t in body["tools"]],
            max_output_tokens=body["generationConfig"]["maxOutputTokens"])
        contents = [gt.Content.model_validate(c) for c in body["contents"]]
        call = client.models.generate_content_stream if stream else client.models.generate_content
        result = call(model=MODEL, contents=contents, config=config)
    if stream:
        for _ in result:  # read the stream to its end, as a caller would
            pass


def reply(provider: str, stream: bool) -> Reply:
    return Reply(events=streams(provider)[1]) if stream else Reply(body=bodies(provider)[1])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_sdk_sends_the_same_request_as_tracetui(provider):
    requests = loop_requests(provider)
    assert len(requests) >= 12 and any(stream for _, _, stream in requests)
    replies = [reply(provider, stream) for _, _, stream in requests for _ in "ab"]
    with ScriptedServer(replies) as server:
        transport = HttpTransport(provider, KEY, trust_env=False)
        for path, body, stream in requests:
            ours = transport.send(HttpRequest("POST", base_url(provider, server.url) + path,
                                              {"content-type": "application/json"}, body, 5000, stream=stream))
            assert ours.status == 200 and ours.error is None
            sdk_call(provider, base_url(provider, server.url), orjson.loads(orjson.dumps(body)), stream)
        transport.close()
        sent = server.requests
    header, value = AUTH[provider]
    for mine, theirs in zip(sent[::2], sent[1::2]):
        assert theirs["path"] == mine["path"], (theirs["path"], mine["path"])
        assert theirs["body"] == mine["body"]
        assert theirs["headers"][header] == mine["headers"][header] == value
        if provider == "anthropic":
            assert theirs["headers"]["anthropic-version"] == mine["headers"]["anthropic-version"]
    assert len(sent) == 2 * len(requests)


@pytest.mark.parametrize("model, path", [
    ("gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:generateContent"),
    ("models/gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:generateContent"),
    ("tunedModels/my-tune-7", "/v1beta/tunedModels/my-tune-7:generateContent"),
])
def test_gemini_model_names_become_the_path_google_genai_builds(model, path):
    from google import genai
    from google.genai import types as gt

    adapter = get_adapter("gemini")
    adapter.build_request(model, [{"type": "message", "role": "user", "content": "hi"}], [], 16, False)
    with ScriptedServer([Reply(body=bodies("gemini")[1])]) as server:
        client = genai.Client(api_key=KEY, http_options=gt.HttpOptions(base_url=server.url, api_version="v1beta"))
        client.models.generate_content(model=model, contents="hi")
        sdk_path = server.requests[0]["path"]
    assert adapter.path == sdk_path == path


@pytest.mark.parametrize("provider, base, path", [
    ("openai-chat", "/v1beta/openai", "/v1beta/openai/chat/completions"),  # Gemini's OpenAI-compatible endpoint
    ("openai-chat", "/api/v1", "/api/v1/chat/completions"),  # a server not rooted at /v1
    ("openai-chat", "/v1/", "/v1/chat/completions"),
    ("openai-responses", "/v1", "/v1/responses"),
    ("anthropic", "/proxy", "/proxy/v1/messages"),
    ("gemini", "/proxy", "/proxy/v1beta/models/fake-model:generateContent"),
])
def test_the_base_url_is_kept_as_given_and_the_api_path_appended_as_the_sdk_does(provider, base, path):
    from tracetui.loop.live import http_inputs, run_http

    requests = [(p, b, s) for p, b, s in loop_requests(provider) if not s][:1]
    call, answer = bodies(provider)
    with ScriptedServer([Reply(body=call), Reply(body=answer), Reply(body=answer)]) as server:
        result = run_http("b", http_inputs(provider, MODEL, server.url + base, seed=0),
                          HttpTransport(provider, KEY, trust_env=False))
        sdk_call(provider, server.url + base, orjson.loads(orjson.dumps(requests[0][1])), False)
        ours, sdk = server.requests[0]["path"], server.requests[-1]["path"]
    assert result.status == "answer_ready"
    assert ours == sdk == path
