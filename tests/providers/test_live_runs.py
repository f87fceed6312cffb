"""The loop end to end over real sockets, per provider: faults land on the right lane, and replay offline."""
from __future__ import annotations

import orjson
import pytest

from tracetui.loop.runner import run_inputs
from tracetui.providers.cassette import CassetteTransport
from tracetui.providers.http_transport import HttpTransport
from tracetui.loop.live import http_inputs, run_http
from tracetui.trace.writer import write_trace

from scripted_server import Reply, ScriptedServer
from wire import HTML, OVERLOADED, PROVIDERS, RATE_LIMITED, args_index, base_url, bodies, streams

KEY = "sk-test-0123456789abcdefABCDEF"
PATHS = {"openai-responses": "/v1/responses", "openai-chat": "/v1/chat/completions", "anthropic": "/v1/messages",
         "gemini": "/v1beta/models/test-model:generateContent"}


class Sleeps:
    def __init__(self):
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def live(provider, replies, *, stream=False, timeout_ms=2000, max_retries=2, seed=0):
    """Run the loop against a scripted server; return (result, server requests, sleeps)."""
    sleeps = Sleeps()
    with ScriptedServer(replies) as server:
        inputs = http_inputs(provider, "test-model", base_url(provider, server.url), stream=stream, timeout_ms=timeout_ms,
                             max_retries=max_retries, api_key_env="TEST_KEY", seed=seed)
        transport = HttpTransport(provider, KEY, sleep=sleeps, trust_env=False)
        try:
            result = run_http(f"live-{provider}", inputs, transport)
        finally:
            transport.close()
        return result, server.requests, sleeps


def assert_replays(result):
    """The trace alone re-runs the same run offline: same events, same verdict."""
    inputs = orjson.loads(orjson.dumps(result.run["inputs"]))  # as it would be read back from the file
    assert inputs["source"] == "http" and inputs["responses"]
    again = run_inputs(result.run["run_id"], inputs)  # the runner picks the cassette for source "http"
    assert again.summary == result.summary
    assert again.events == result.events
    explicit = run_inputs(result.run["run_id"], inputs, CassetteTransport(inputs["responses"]))
    assert explicit.summary == result.summary


def http_events(result):
    return [e for e in result.events if e["lane"] == "http"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_overload_then_tool_call_then_answer(provider):
    call, answer = bodies(provider)
    status, error = OVERLOADED[provider]
    result, requests, sleeps = live(provider, [Reply(status, error), Reply(body=call), Reply(body=answer)])
    assert result.status == "answer_ready", result.summary
    attempts = http_events(result)
    assert [e["outcome"] for e in attempts] == ["recovered", "ok", "ok"]
    assert attempts[0]["data"]["response"]["status"] == status
    assert attempts[0]["code"] == ("overloaded" if status == 529 else "server_error")
    assert len(sleeps.calls) == 1 and sleeps.calls[0] * 1000 == attempts[0]["data"]["backoff_ms"]
    assert [e["lane"] for e in result.events if e["outcome"] != "failed"][-1] == "answer"
    assert requests[0]["path"] == PATHS[provider]
    assert any(e["lane"] == "receipt" for e in result.events)
    assert_replays(result)


@pytest.mark.parametrize("provider", ["openai-responses", "openai-chat", "anthropic"])
def test_rate_limit_waits_as_retry_after_says(provider):
    call, answer = bodies(provider)
    result, _, sleeps = live(provider, [Reply(429, RATE_LIMITED, {"retry-after": "3"}), Reply(body=call),
                                        Reply(body=answer)])
    assert result.status == "answer_ready"
    first = http_events(result)[0]
    assert first["code"] == "rate_limited" and first["data"]["backoff_source"] == "retry-after"
    assert first["data"]["response"]["headers"]["retry-after"] == "3"
    assert sleeps.calls == [3.0]
    assert_replays(result)


def test_retry_after_as_a_date_is_measured_against_the_servers_clock():
    call, answer = bodies("openai-chat")
    # the scripted server's Date header is Mon, 30 Nov 2026 00:00:00 GMT
    result, _, sleeps = live("openai-chat", [Reply(429, RATE_LIMITED, {"retry-after": "Mon, 30 Nov 2026 00:00:04 GMT"}),
                                             Reply(body=call), Reply(body=answer)])
    first = http_events(result)[0]
    assert first["data"]["backoff_source"] == "retry-after date" and first["data"]["backoff_ms"] == 4000
    assert sleeps.calls == [4.0] and result.status == "answer_ready"
    assert_replays(result)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_html_page_with_status_200_is_a_foreign_body(provider):
    result, _, sleeps = live(provider, [Reply(200, HTML)])
    ff = result.summary["first_failure"]
    assert (ff["lane"], ff["code"]) == ("http", "unexpected_body")
    assert "HTML" in ff["reason"]
    assert len(http_events(result)) == 1 and sleeps.calls == []  # not retried
    assert_replays(result)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_another_vendors_body_is_foreign(provider):
    other = "gemini" if provider != "gemini" else "anthropic"
    result, _, _ = live(provider, [Reply(body=bodies(other)[0])])
    ff = result.summary["first_failure"]
    assert (ff["lane"], ff["code"]) == ("http", "unexpected_body")
    assert "looks like" in ff["reason"]


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
def test_slow_responses_time_out_and_retries_run_out(provider):
    call, _ = bodies(provider)
    slow = [Reply(body=call, delay=0.5) for _ in range(2)]
    result, _, sleeps = live(provider, slow, timeout_ms=150, max_retries=1)
    attempts = http_events(result)
    assert [e["code"] for e in attempts] == ["timeout", "timeout"]
    assert all(e["data"]["response"]["status"] is None for e in attempts)
    assert all(140 <= e["data"]["response"]["latency_ms"] < 450 for e in attempts)
    ff = result.summary["first_failure"]
    assert ff["lane"] == "http" and "retries exhausted" in ff["reason"]
    assert len(sleeps.calls) == 1
    assert not any(e["lane"] == "receipt" for e in result.events)
    assert_replays(result)


def test_a_slow_attempt_then_a_fast_one_recovers():
    call, answer = bodies("gemini")
    result, _, _ = live("gemini", [Reply(body=call, delay=0.5), Reply(body=call), Reply(body=answer)], timeout_ms=150)
    assert result.status == "answer_ready"
    assert [e["outcome"] for e in http_events(result)] == ["recovered", "ok", "ok"]
    assert_replays(result)


def test_connection_refused_is_a_connection_error():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    inputs = http_inputs("openai-chat", "m", f"http://127.0.0.1:{port}/v1", timeout_ms=500, max_retries=1)
    sleeps = Sleeps()
    transport = HttpTransport("openai-chat", KEY, sleep=sleeps, trust_env=False)
    result = run_http("refused", inputs, transport)
    assert [e["code"] for e in http_events(result)] == ["connection_error", "connection_error"]
    assert result.summary["first_failure"]["lane"] == "http"
    assert_replays(result)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_streamed_run_reaches_a_verified_answer(provider):
    first, second = streams(provider)
    result, requests, _ = live(provider, [Reply(events=first), Reply(events=second)], stream=True)
    assert result.status == "answer_ready", result.summary["first_failure"]
    assert all("events" in e["data"]["response"] for e in http_events(result))
    if provider == "gemini":
        assert requests[0]["path"] == "/v1beta/models/test-model:streamGenerateContent?alt=sse"
    else:
        assert requests[0]["body"]["stream"] is True
    assert requests[0]["headers"]["accept"] == "text/event-stream"
    assert_replays(result)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_cut_mid_arguments_runs_no_tool(provider):
    first, _ = streams(provider)
    cut = args_index(first)
    result, _, sleeps = live(provider, [Reply(events=first, cut_after=cut)], stream=True)
    attempt = http_events(result)[0]
    assert attempt["code"] == "stream_interrupted"
    assert attempt["data"]["response"]["error"] == "stream_interrupted"
    assert len(attempt["data"]["response"]["events"]) == cut  # what arrived is kept, nothing more
    assert result.summary["first_failure"]["lane"] == "http"
    assert not any(e["lane"] in ("arguments", "receipt") for e in result.events)
    assert sleeps.calls == []
    assert_replays(result)


ERROR_EVENTS = {
    "openai-responses": {"type": "error", "code": "server_error", "message": "The server had an error"},
    "openai-chat": {"error": {"message": "The server had an error while processing", "type": "server_error"}},
    "anthropic": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    "gemini": {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}},
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_error_event_mid_stream_is_a_protocol_error(provider):
    first, _ = streams(provider)
    cut = args_index(first)
    events = first[:cut] + [ERROR_EVENTS[provider]]
    result, _, _ = live(provider, [Reply(events=events)], stream=True)
    ff = result.summary["first_failure"]
    assert (ff["lane"], ff["code"]) == ("generation", "protocol_error")
    assert "error event mid-stream" in ff["reason"]
    assert not any(e["lane"] == "receipt" for e in result.events)
    assert_replays(result)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_without_its_final_event_is_a_protocol_error(provider):
    first, _ = streams(provider)
    final = len(first) - 1
    if provider == "openai-chat":
        final = first.index("[DONE]")
    if provider == "gemini":
        final = 0
    events = [e for n, e in enumerate(first) if n != final]
    if provider == "gemini":  # its only chunk carries the finish reason: send it without one
        chunk = orjson.loads(orjson.dumps(first[0]))
        del chunk["candidates"][0]["finishReason"]
        events = [chunk]
    result, _, _ = live(provider, [Reply(events=events)], stream=True)
    ff = result.summary["first_failure"]
    assert (ff["lane"], ff["code"]) == ("generation", "protocol_error"), ff
    assert not any(e["lane"] == "receipt" for e in result.events)


def test_no_secret_reaches_the_trace_even_when_the_server_echoes_it(tmp_path):
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}. You can find your API key at ...",
                      "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}
    result, requests, _ = live("openai-chat", [Reply(401, echo, {"set-cookie": f"session={KEY}",
                                                                 "x-request-id": "req_401"})])
    assert requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # it was sent...
    raw = b"".join(orjson.dumps(r) for r in result.records)
    assert KEY.encode() not in raw  # ...but not recorded, before any redaction pass
    path = tmp_path / "live.jsonl"
    write_trace(path, result.records)
    assert KEY.encode() not in path.read_bytes()
    attempt = http_events(result)[0]
    assert attempt["code"] == "auth_error"
    assert "set-cookie" not in attempt["data"]["response"]["headers"]
    assert attempt["data"]["response"]["headers"]["x-request-id"] == "req_401"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_key_goes_in_the_header_each_api_expects_and_nowhere_else(provider):
    plain = "plainsecretvalue42"  # no shape any redaction pattern knows: only structure keeps it out
    call, answer = bodies(provider)
    sleeps = Sleeps()
    with ScriptedServer([Reply(body=call), Reply(body=answer)]) as server:
        inputs = http_inputs(provider, "test-model", base_url(provider, server.url))
        transport = HttpTransport(provider, plain, sleep=sleeps, trust_env=False)
        result = run_http("k", inputs, transport)
        headers = server.requests[0]["headers"]
    expected = {"openai-responses": ("authorization", f"Bearer {plain}"), "openai-chat": ("authorization", f"Bearer {plain}"),
                "anthropic": ("authorization", f"Bearer {plain}"), "gemini": ("x-goog-api-key", plain)}[provider]
    assert headers[expected[0]] == expected[1]
    if provider == "anthropic":
        assert headers["anthropic-version"] == "2026-10-21"  # what the anthropic SDK pins
    assert plain not in server.requests[0]["path"]
    assert plain.encode() not in b"".join(orjson.dumps(r) for r in result.records)
    assert result.status == "answer_ready"


def test_backoff_jitter_is_seeded():
    call, answer = bodies("openai-chat")
    status, error = OVERLOADED["openai-chat"]

    def waits(seed):
        result, _, sleeps = live("openai-chat", [Reply(status, error), Reply(status, error), Reply(body=call),
                                                 Reply(body=answer)], seed=seed)
        assert result.status == "answer_ready"
        return sleeps.calls

    assert waits(7) == waits(7)
    assert waits(7) != waits(8)


def test_x_should_retry_false_is_obeyed_over_a_real_socket():
    status, error = OVERLOADED["anthropic"]
    result, _, sleeps = live("anthropic", [Reply(status, error, {"x-should-retry": "false"})])
    attempts = http_events(result)
    assert len(attempts) == 1 and sleeps.calls == []
    assert attempts[0]["data"]["response"]["headers"]["x-should-retry"] == "false"
    assert "not retried: the server said x-should-retry: false" in result.summary["first_failure"]["reason"]
