"""The recording proxy over real loopback sockets: a scripted upstream, real httpx and real SDK clients."""
from __future__ import annotations

import threading

import httpx
import orjson
import pytest

from wire_helpers import KEY, Reply, ScriptedServer, anthropic_events, chat_body, chat_chunks, free_port, named_frames
from wire_helpers import loopback_only  # noqa: F401  (autouse fixture)

from tracetui.providers.response_caps import ResponseCaps
from tracetui.record.endpoint import EndpointError
from tracetui.record.proxy import RecordingProxy

SAFETY = 10  # seconds: a safety net only, never a pace


def _proxy(upstream: ScriptedServer, **kw) -> RecordingProxy:
    return RecordingProxy({"openai": upstream.url, "anthropic": upstream.url, "gemini": upstream.url}, **kw)


def test_a_chat_request_is_forwarded_answered_and_recorded_without_its_credentials():
    echo = chat_body(f"your key is {KEY}")  # a server that echoes the key back
    with ScriptedServer([Reply(body=echo, headers={"x-request-id": "req-1", "set-cookie": "s=1"})]) as up, \
            _proxy(up) as proxy:
        got = httpx.post(f"{proxy.url}/v1/chat/completions?key={KEY}", json={"model": "gpt-x", "messages": []},
                         headers={"authorization": f"Bearer {KEY}", "x-stainless-retry-count": "0"}, timeout=SAFETY)
        exchanges = proxy.exchanges()
    assert got.status_code == 200 and got.json() == echo  # the agent gets the answer untouched
    assert up.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # the credential reached upstream
    assert up.requests[0]["path"] == f"/v1/chat/completions?key={KEY}"
    [ex] = exchanges
    assert (ex.index, ex.provider, ex.stream) == (0, "openai-chat", False)
    assert ex.request["url"] == "/v1/chat/completions" and ex.request["model"] == "gpt-x"
    assert ex.request["body"] == {"model": "gpt-x", "messages": []} and ex.request["retry_count"] == 0
    assert len(ex.request["body_sha256"]) == 64
    assert ex.response["status"] == 200 and ex.response["headers"]["x-request-id"] == "req-1"
    assert "set-cookie" not in ex.response["headers"]
    assert ex.response["body"]["choices"][0]["message"]["content"] == "your key is<redacted>"
    recorded = orjson.dumps([ex.request, ex.response])
    assert KEY.encode() not in recorded and b"abcdefghijklmnop" not in recorded


def test_a_stream_passes_through_event_by_event_before_the_upstream_has_finished():
    reply = Reply(events=chat_chunks(["Hel", "lo"]), pause_after=1)
    with ScriptedServer([reply]) as up, _proxy(up) as proxy:
        seen_before_resume = None
        with httpx.stream("POST", f"{proxy.url}/v1/chat/completions", timeout=SAFETY,
                          json={"model": "gpt-x", "messages": [], "stream": True}) as response:
            lines = response.iter_lines()
            data = [line for line in (next(lines), next(lines), next(lines), next(lines)) if line]
            seen_before_resume = (len(data), reply.sent)
            reply.resume.set()
            rest = [line for line in lines if line]
        [ex] = proxy.exchanges()
    assert seen_before_resume == (2, 2)  # two events read while the upstream held the rest unsent
    assert reply.resumed is True
    assert rest[-1] == "data: [DONE]" and len(data) + len(rest) == 5
    assert ex.stream is True and ex.response["status"] == 200
    assert ex.response["events"][1]["choices"][0]["delta"]["content"] == "Hel"
    assert ex.response["events"][-1] == {"data": "[DONE]"}


def test_the_openai_sdk_streams_through_the_proxy_as_the_events_arrive():
    openai = pytest.importorskip("openai")
    reply = Reply(events=chat_chunks(["one ", "two"]), pause_after=1)
    with ScriptedServer([reply]) as up, _proxy(up) as proxy:
        client = openai.OpenAI(base_url=proxy.env()["OPENAI_BASE_URL"], api_key=KEY, max_retries=0, timeout=SAFETY)
        stream = client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}],
                                                stream=True)
        first = [next(stream), next(stream)]
        sent_then = reply.sent
        reply.resume.set()
        text = "".join(c.choices[0].delta.content or "" for c in [*first, *stream] if c.choices)
        [ex] = proxy.exchanges()
    assert sent_then == 2 and text == "one two"
    assert up.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert ex.provider == "openai-chat" and ex.stream and len(ex.response["events"]) == 5
    assert KEY.encode() not in orjson.dumps([ex.request, ex.response])


def test_the_anthropic_sdk_streams_and_its_key_header_is_forwarded_never_recorded():
    anthropic = pytest.importorskip("anthropic")
    events = anthropic_events("bonjour")
    with ScriptedServer([Reply(frames=named_frames(events))]) as up, _proxy(up) as proxy:
        client = anthropic.Anthropic(base_url=proxy.env()["ANTHROPIC_BASE_URL"], api_key=KEY, max_retries=0,
                                     timeout=SAFETY)
        with client.messages.stream(model="claude-x", max_tokens=10,
                                    messages=[{"role": "user", "content": "hi"}]) as stream:
            text = "".join(stream.text_stream)
        [ex] = proxy.exchanges()
    assert text == "bonjour"
    sent = up.requests[0]["headers"]
    assert KEY in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))
    assert up.requests[0]["path"] == "/v1/messages"
    assert ex.provider == "anthropic" and ex.stream and ex.response["events"] == events
    assert KEY.encode() not in orjson.dumps([ex.request, ex.response])


def test_a_redirect_goes_back_to_the_agent_and_is_never_followed():
    with ScriptedServer([Reply(status=307, body="moved", headers={"location": "http://127.0.0.1:9/elsewhere"}),
                         Reply(body=chat_body())]) as up, _proxy(up) as proxy:
        got = httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": []}, timeout=SAFETY)
        [ex] = proxy.exchanges()
    assert got.status_code == 307 and got.headers["location"] == "http://127.0.0.1:9/elsewhere"
    assert len(up.requests) == 1  # nobody followed it
    assert ex.response["status"] == 307 and ex.response["headers"]["location"] == "http://127.0.0.1:9/elsewhere"


def test_an_upstream_that_refuses_gets_the_agent_a_502_and_is_recorded_as_connect():
    closed = f"http://127.0.0.1:{free_port()}"
    with RecordingProxy({"openai": closed}) as proxy:
        got = httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": []}, timeout=SAFETY)
        [ex] = proxy.exchanges()
    assert got.status_code == 502 and "no connection to the upstream" in got.json()["error"]["message"]
    assert ex.response["status"] is None and ex.response["error"] == "connect"


def test_an_upstream_that_hangs_is_bounded_by_the_read_timeout():
    with ScriptedServer([Reply(body=chat_body(), delay=1.5)]) as up, _proxy(up, read_timeout=0.2) as proxy:
        got = httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": []}, timeout=SAFETY)
        [ex] = proxy.exchanges()
    assert got.status_code == 504
    assert ex.response["status"] is None and ex.response["error"] == "timeout"


def test_a_stream_the_upstream_cuts_breaks_off_for_the_agent_too_and_keeps_what_arrived():
    with ScriptedServer([Reply(events=chat_chunks(["a", "b"]), cut_after=2)]) as up, _proxy(up) as proxy:
        with pytest.raises(httpx.HTTPError):
            with httpx.stream("POST", f"{proxy.url}/v1/chat/completions", timeout=SAFETY,
                              json={"model": "m", "messages": [], "stream": True}) as response:
                for _ in response.iter_lines():
                    pass
        [ex] = proxy.exchanges()
    assert ex.response["error"] == "stream_interrupted" and len(ex.response["events"]) == 2


def test_caps_bound_what_is_recorded_while_the_agent_gets_everything():
    big = chat_body("x" * 5000)
    with ScriptedServer([Reply(body=big)]) as up, _proxy(up, caps=ResponseCaps(max_response_bytes=1000)) as proxy:
        got = httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": []}, timeout=SAFETY)
        [ex] = proxy.exchanges()
    assert got.json() == big
    assert ex.response["error"] == "response_too_large" and "1,000 bytes" in ex.response["body"]["error"]["message"]


def test_a_port_already_taken_is_refused_in_words():
    with RecordingProxy() as first:
        with pytest.raises(EndpointError) as caught:
            RecordingProxy(port=first.port)
    assert f"port {first.port} on 127.0.0.1 is already taken" in caught.value.strerror


def test_concurrent_requests_are_kept_in_order_of_arrival_each_with_its_own_index():
    slow = Reply(events=chat_chunks(["slow"]), pause_after=0)
    with ScriptedServer([slow, Reply(body=chat_body("fast"))]) as up, _proxy(up) as proxy:
        first_event = threading.Event()
        out: dict[str, str] = {}

        def slow_agent():
            with httpx.stream("POST", f"{proxy.url}/v1/chat/completions", timeout=SAFETY,
                              json={"model": "m", "messages": [{"role": "user", "content": "A"}],
                                    "stream": True}) as response:
                lines = response.iter_lines()
                next(lines)
                first_event.set()
                out["slow"] = "".join(lines)

        agent = threading.Thread(target=slow_agent)
        agent.start()
        assert first_event.wait(SAFETY)
        fast = httpx.post(f"{proxy.url}/v1/chat/completions", timeout=SAFETY,
                          json={"model": "m", "messages": [{"role": "user", "content": "B"}]})
        slow.resume.set()  # the first request finishes after the second
        agent.join(SAFETY)
        exchanges = proxy.exchanges()
    assert fast.json()["choices"][0]["message"]["content"] == "fast" and "[DONE]" in out["slow"]
    assert [ex.index for ex in exchanges] == [0, 1]
    assert [ex.request["body"]["messages"][0]["content"] for ex in exchanges] == ["A", "B"]
    assert [ex.stream for ex in exchanges] == [True, False]


def test_a_path_no_provider_reads_is_forwarded_and_recorded_without_provider():
    with ScriptedServer([Reply(body={"data": []})]) as up, _proxy(up) as proxy:
        got = httpx.post(f"{proxy.url}/v1/embeddings", json={"input": "x"}, timeout=SAFETY)
        [ex] = proxy.exchanges()
    assert got.json() == {"data": []} and up.requests[0]["path"] == "/v1/embeddings"
    assert ex.provider is None and ex.request["provider"] is None


def test_gemini_paths_are_told_apart_and_the_model_read_from_the_path():
    with ScriptedServer([Reply(body={"candidates": []})]) as up, _proxy(up) as proxy:
        httpx.post(f"{proxy.url}/v1beta/models/gemini-x:generateContent", json={"contents": []},
                   headers={"x-goog-api-key": KEY}, timeout=SAFETY)
        [ex] = proxy.exchanges()
    assert up.requests[0]["headers"]["x-goog-api-key"] == KEY
    assert (ex.provider, ex.request["model"], ex.stream) == ("gemini", "gemini-x", False)


def test_an_agent_that_hangs_up_before_the_upstream_answers_is_recorded_as_it_met_it():
    late = chat_body("too late")
    with ScriptedServer([Reply(body=late, delay=1.0)]) as up, _proxy(up) as proxy:  # the proxy would wait 600 s
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": []}, timeout=0.2)
        [ex] = proxy.exchanges(settle=SAFETY)
    assert ex.response["status"] is None and ex.response["error"] == "timeout"
    assert "the agent hung up" in ex.response["body"]["error"]["message"]  # not the answer it never saw


def test_a_compressed_answer_reaches_the_agent_as_sent_and_is_recorded_decoded():
    import gzip
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked = {}

    class Zipped(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["content-length"]))
            asked["accept-encoding"] = self.headers.get("accept-encoding")
            data = gzip.compress(json.dumps(chat_body("zipped")).encode())
            self.send_response(200)
            for name, value in (("content-type", "application/json"), ("content-encoding", "gzip"),
                                ("content-length", str(len(data))), ("connection", "close")):
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Zipped)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with RecordingProxy({"openai": f"http://127.0.0.1:{server.server_address[1]}"}) as proxy:
            got = httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": []},
                             headers={"accept-encoding": "br, zstd, gzip"}, timeout=SAFETY)
            [ex] = proxy.exchanges()
    finally:
        server.shutdown()
        server.server_close()
    assert asked["accept-encoding"] == "gzip"  # only what the recorder can read is offered upstream
    assert got.headers["content-encoding"] == "gzip" and got.json() == chat_body("zipped")
    assert ex.response["body"] == chat_body("zipped")
