"""The replay server over real loopback sockets, read by real SDK clients: recorded responses in order,
streams re-framed as each SDK reads them, requests compared, a clear error past the end."""
from __future__ import annotations

import json

import httpx
import orjson
import pytest

from wire_helpers import KEY, Reply, ScriptedServer, anthropic_events, chat_body, chat_chunks
from wire_helpers import loopback_only  # noqa: F401  (autouse fixture)

from tracetui.providers.sse import SSEParser
from tracetui.record.exchange import WireExchange
from tracetui.record.proxy import RecordingProxy
from tracetui.record.replay_server import ReplayServer, sse_frame
from tracetui.record.request_record import request_record

SAFETY = 10
MESSAGES = [{"role": "user", "content": "hi"}]


def _recorded(path: str, body: dict, response: dict) -> WireExchange:
    raw = orjson.dumps(body)
    request = request_record("POST", path, [], raw)
    return WireExchange(0, request["provider"], request, response, request["stream"])


def _json(body, status=200) -> dict:
    return {"status": status, "headers": {"content-type": "application/json"}, "body": body, "latency_ms": 7}


def _events(events) -> dict:
    return {"status": 200, "headers": {"content-type": "text/event-stream"}, "events": events, "latency_ms": 9}


def _chat(client, **kw):
    return client.chat.completions.create(model="gpt-x", messages=MESSAGES, **kw)


def test_responses_are_served_in_order_and_each_request_compared_with_the_recorded_one():
    openai = pytest.importorskip("openai")
    first = {"model": "gpt-x", "messages": MESSAGES}
    recorded = [_recorded("/v1/chat/completions", first, _json(chat_body("one")))]
    responses = [_json(chat_body("one")), _json(chat_body("two"))]
    with ReplayServer(recorded * 2, responses) as server:
        client = openai.OpenAI(base_url=server.env()["OPENAI_BASE_URL"], api_key=KEY, max_retries=0, timeout=SAFETY)
        texts = [_chat(client).choices[0].message.content,
                 client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "bye"}])
                 .choices[0].message.content]
        got = server.exchanges()
    assert texts == ["one", "two"]
    assert [ex.index for ex in got] == [0, 1] and [ex.provider for ex in got] == ["openai-chat"] * 2
    assert got[0].response == responses[0]  # the response served, with its recorded latency (deterministic)
    assert got[0].request_match["match"] in ("exact", "changed") and got[0].request["body"] == first
    assert got[1].request_match["match"] == "changed" and "/messages/0/content" in got[1].request_match["words"]
    assert KEY.encode() not in orjson.dumps([ex.request for ex in got])


def test_an_unedited_request_recorded_through_the_proxy_matches_exactly():
    body = json.dumps({"model": "gpt-x", "messages": MESSAGES}).encode()
    with ScriptedServer([Reply(body=chat_body("one"))]) as up, RecordingProxy({"openai": up.url}) as proxy:
        httpx.post(f"{proxy.url}/v1/chat/completions", content=body, timeout=SAFETY)
        recorded = proxy.exchanges()
    with ReplayServer(recorded, [recorded[0].response]) as server:
        again = httpx.post(f"{server.url}/v1/chat/completions", content=body, timeout=SAFETY)
        [ex] = server.exchanges()
    assert again.json() == chat_body("one")
    assert ex.request_match["match"] == "exact"


def test_a_chat_stream_is_reframed_as_the_openai_sdk_reads_it():
    openai = pytest.importorskip("openai")
    events = [*map(_parsed, chat_chunks(["str", "eam"]))]
    with ReplayServer([], [_events(events)]) as server:
        client = openai.OpenAI(base_url=server.env()["OPENAI_BASE_URL"], api_key=KEY, max_retries=0, timeout=SAFETY)
        text = "".join(c.choices[0].delta.content or "" for c in _chat(client, stream=True) if c.choices)
        [ex] = server.exchanges()
    assert text == "stream" and ex.stream and ex.response["events"] == events


def test_an_anthropic_stream_is_reframed_with_its_named_events():
    anthropic = pytest.importorskip("anthropic")
    with ReplayServer([], [_events(anthropic_events("salut"))]) as server:
        client = anthropic.Anthropic(base_url=server.env()["ANTHROPIC_BASE_URL"], api_key=KEY, max_retries=0,
                                     timeout=SAFETY)
        with client.messages.stream(model="claude-x", max_tokens=5, messages=MESSAGES) as stream:
            text = "".join(stream.text_stream)
    assert text == "salut"


def test_a_gemini_stream_is_reframed_as_google_genai_reads_it():
    genai = pytest.importorskip("google.genai")
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}]}
              for piece in ("gem", "ini")]
    with ReplayServer([], [_events(chunks)]) as server:
        client = genai.Client(api_key=KEY, http_options={"base_url": server.env()["GOOGLE_GEMINI_BASE_URL"]})
        text = "".join(c.text or "" for c in client.models.generate_content_stream(model="gemini-x", contents="hi"))
        [ex] = server.exchanges()
    assert text == "gemini"
    assert (ex.provider, ex.stream, ex.request["model"]) == ("gemini", True, "gemini-x")


def test_past_the_end_the_agent_gets_a_400_recording_ended_and_the_exchange_says_so():
    openai = pytest.importorskip("openai")
    with ReplayServer([], []) as server:
        client = openai.OpenAI(base_url=server.env()["OPENAI_BASE_URL"], api_key=KEY, timeout=SAFETY)
        with pytest.raises(openai.BadRequestError) as caught:
            _chat(client)  # default retries: a 400 is never retried
        got = server.exchanges()
    assert "the recording has no response for request 0 (it holds 0)" in str(caught.value)
    assert len(got) == 1
    assert got[0].response["status"] is None and got[0].response["error"] == "cassette_exhausted"
    assert got[0].request_match["match"] == "past_end"


def test_recorded_failures_are_met_again_as_the_proxy_answered_them():
    events = [_parsed(e) for e in chat_chunks(["cut"])][:2]
    responses = [{"status": None, "headers": {}, "body": None, "error": "connect", "latency_ms": 3},
                 {"status": 200, "headers": {"content-type": "text/event-stream"}, "events": events,
                  "error": "stream_interrupted", "latency_ms": 4}]
    with ReplayServer([], responses) as server:
        refused = httpx.post(f"{server.url}/v1/chat/completions", json={"model": "m", "messages": []}, timeout=SAFETY)
        lines = []
        with pytest.raises(httpx.HTTPError):
            with httpx.stream("POST", f"{server.url}/v1/chat/completions", timeout=SAFETY,
                              json={"model": "m", "messages": [], "stream": True}) as response:
                for line in response.iter_lines():
                    lines.append(line)
        got = server.exchanges()
    assert refused.status_code == 502
    assert [line for line in lines if line] == [f"data: {json.dumps(e, separators=(',', ':'))}" for e in events]
    assert [ex.response["error"] for ex in got] == ["connect", "stream_interrupted"]


def test_sse_frames_parse_back_into_the_recorded_events():
    events = [{"type": "message_start", "x": "a\nb"}, {"data": "[DONE]"}, {"data": "line1\nline2"}]
    for provider in ("anthropic", "openai-chat", "openai-responses", "gemini"):
        parser = SSEParser()
        parsed = [e for event in events for e in parser.feed(sse_frame(provider, event))] + parser.close()
        assert parsed == events, provider
    assert sse_frame("anthropic", events[0]).startswith(b"event: message_start\ndata: ")
    assert sse_frame("openai-chat", events[1]) == b"data: [DONE]\n\n"


def _parsed(event):
    """An event as the recorder keeps it (the SSE parser's shape: text data as ``{"data": …}``)."""
    return {"data": event} if isinstance(event, str) else event
