"""A live run against hostile servers: bounded in memory and time, and the trace still written and replayed.

Each server runs on loopback and is hostile in one way: a 100 MB body, a gzip bomb
(1 MB that inflates to 1 GB), an event stream that never ends, headers dripped a
byte at a time. The run must end the attempt at its cap as ``response_too_large``
(or ``timeout``) with the reason in words, hold no more than about the cap in
memory (measured with tracemalloc: Python's own allocations, zlib's output included),
write a trace that ``tracetui replay`` reproduces byte for byte, and leave no file
behind but the trace. A healthy stream that keeps sending is never cut, however
long it runs: the timeout bounds each read, as the SDKs' does.
"""
from __future__ import annotations

import time
import tracemalloc

import orjson
import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.loop.live import http_inputs, run_http
from tracetui.providers.base import HttpRequest
from tracetui.providers.http_transport import HttpTransport
from tracetui.providers.response_caps import ResponseCaps

from hostile_server import HostileServer, chunk, gzip_bomb, head
from scripted_server import Reply, ScriptedServer
from wire import ANSWER, bodies, streams

KEY = "sk-test-bounds-0123456789abcdef"
MIB = 1 << 20


def live_cli(url, tmp_path, *flags, provider="openai-chat"):
    """`tracetui run` against ``url``; returns (result, the trace's records, peak traced memory in bytes)."""
    out = tmp_path / "live.jsonl"
    tracemalloc.start()
    try:
        res = CliRunner().invoke(main, ["run", "--provider", provider, "--base-url", url, "--model", "m",
                                        "--seed", "0", "-o", str(out), *flags], env={"OPENAI_API_KEY": KEY})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    records = [orjson.loads(line) for line in out.read_bytes().splitlines()] if out.exists() else []
    return res, out, records, peak


def attempts(records):
    return [r for r in records if r["rec"] == "event" and r["lane"] == "http"]


def assert_replays_byte_for_byte(out):
    res = CliRunner().invoke(main, ["replay", str(out), "--run", "http-openai-chat"])
    assert "the re-run reproduces the original byte for byte" in res.output, res.output


def assert_only(tmp_path, out):
    """No temporary file (or anything else) was left behind: only the trace."""
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def endless(piece: bytes, *, pause: float = 0.0):
    def respond(conn):
        yield head("200 OK", content_type="text/event-stream", transfer_encoding="chunked")
        while True:
            yield chunk(piece)
            if pause:
                time.sleep(pause)
    return respond


def big_body(total: int, encoding: str | None = None):
    def respond(conn):
        extra = {"content_encoding": encoding} if encoding else {}
        yield head("200 OK", content_type="application/json", transfer_encoding="chunked", **extra)
        if encoding == "gzip":
            for piece in gzip_bomb(total // MIB):
                yield chunk(piece)
        else:
            block = b"x" * 65536
            for _ in range(total // len(block)):
                yield chunk(block)
        yield b"0\r\n\r\n"
    return respond


def test_a_100_mb_body_stops_at_the_cap_in_bounded_memory(tmp_path):
    with HostileServer(big_body(100 * MIB)) as server:
        res, out, records, peak = live_cli(server.url + "/v1", tmp_path, "--max-response-bytes", str(MIB),
                                           "--max-retries", "0")
        sent = server.sent[0]
    assert res.exit_code == 1, res.output
    [attempt] = attempts(records)
    assert attempt["code"] == "response_too_large"
    assert "passed 1,048,576 bytes (1 MiB) once decoded (--max-response-bytes)" in attempt["summary"]
    assert attempt["data"]["response"]["error"] == "response_too_large"
    assert peak < 16 * MIB, f"peak traced memory {peak / MIB:.1f} MiB for a 1 MiB cap"
    assert sent < 50 * MIB  # the client hung up: the rest was never read
    assert records[-1]["status"] == "response_too_large"
    assert_replays_byte_for_byte(out)
    assert_only(tmp_path, out)


def test_a_gzip_bomb_inflates_no_further_than_the_cap(tmp_path):
    with HostileServer(big_body(1024 * MIB, encoding="gzip")) as server:
        res, out, records, peak = live_cli(server.url + "/v1", tmp_path, "--max-response-bytes", str(MIB),
                                           "--max-retries", "0")
    [attempt] = attempts(records)
    assert attempt["code"] == "response_too_large", attempt["summary"]
    assert "once decoded" in attempt["summary"]
    assert peak < 16 * MIB, f"peak traced memory {peak / MIB:.1f} MiB for a 1 MiB cap"
    assert_replays_byte_for_byte(out)
    assert_only(tmp_path, out)


def test_an_endless_event_stream_stops_at_the_event_cap(tmp_path):
    event = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,' \
            b'"delta":{"content":"x"},"finish_reason":null}]}\n\n'
    with HostileServer(endless(event)) as server:
        res, out, records, peak = live_cli(server.url + "/v1", tmp_path, "--stream", "--no-show-stream",
                                           "--max-stream-events", "2000", "--max-retries", "0")
    [attempt] = attempts(records)
    assert attempt["code"] == "response_too_large"
    assert "the stream passed 2,000 events (--max-stream-events)" in attempt["summary"]
    assert peak < 16 * MIB
    assert_replays_byte_for_byte(out)
    assert_only(tmp_path, out)


def test_an_endless_stream_of_large_events_stops_at_the_byte_cap(tmp_path):
    event = b'data: {"pad": "' + b"y" * 60_000 + b'"}\n\n'
    with HostileServer(endless(event)) as server:
        res, out, records, peak = live_cli(server.url + "/v1", tmp_path, "--stream", "--no-show-stream",
                                           "--max-response-bytes", str(MIB), "--max-retries", "0")
    [attempt] = attempts(records)
    assert attempt["code"] == "response_too_large" and "the stream passed 1,048,576 bytes" in attempt["summary"]
    assert peak < 16 * MIB
    assert_replays_byte_for_byte(out)


def test_a_body_announced_over_the_cap_is_not_read_at_all():
    def respond(conn):
        yield head("200 OK", content_type="application/json", content_length=str(100 * MIB))
        yield b"{" * 65536
    with HostileServer(respond) as server:
        exchange = HttpTransport("openai-chat", KEY, trust_env=False, caps=ResponseCaps(max_response_bytes=MIB)).send(
            HttpRequest("POST", server.url + "/v1/chat/completions", {}, {}, 2000))
    assert exchange.error == "response_too_large" and exchange.status == 200
    assert "announced 104,857,600 bytes (100 MiB) (content-length)" in exchange.body["error"]["message"]


def test_headers_dripped_a_byte_at_a_time_end_at_the_header_deadline():
    """Each byte comes well within the per-read timeout; all of them do not come within the deadline."""
    response = head("200 OK", content_type="application/json", content_length="2") + b"{}"

    def respond(conn):
        for n in range(len(response)):
            yield response[n:n + 1]
            time.sleep(0.03)  # ~70 header bytes: over 2 s in all, against a 300 ms deadline

    with HostileServer(respond) as server:
        transport = HttpTransport("openai-chat", KEY, trust_env=False)
        exchange = transport.send(HttpRequest("POST", server.url + "/v1/chat/completions", {}, {}, 300))
        sent = server.sent[0]
    assert (exchange.status, exchange.error) == (None, "timeout")
    assert sent < len(response) - 2  # the client gave up before the headers were through


def test_a_separate_header_deadline_can_be_shorter_than_the_read_timeout():
    with ScriptedServer([Reply(body={"late": True}, delay=0.5)]) as server:
        transport = HttpTransport("openai-chat", KEY, trust_env=False, header_timeout_ms=100)
        exchange = transport.send(HttpRequest("POST", server.url + "/v1/chat/completions", {}, {}, 5000))
    assert exchange.error == "timeout"


def test_a_healthy_stream_longer_than_the_timeout_is_never_cut():
    """The timeout bounds each read, as the SDKs' does: 8 events 100 ms apart pass a 400 ms timeout."""
    _, answer = streams("openai-chat")

    def respond(conn):
        yield head("200 OK", content_type="text/event-stream", transfer_encoding="chunked")
        for event in answer:
            yield chunk(b"data: " + (event.encode() if isinstance(event, str) else orjson.dumps(event)) + b"\n\n")
            time.sleep(0.1)
        yield b"0\r\n\r\n"

    with HostileServer(respond) as server:
        transport = HttpTransport("openai-chat", KEY, trust_env=False)
        exchange = transport.send(HttpRequest("POST", server.url + "/v1/chat/completions", {}, {}, 400, stream=True))
    assert exchange.error is None and exchange.latency_ms > 400
    assert len(exchange.events) == len(answer)
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in exchange.events if e.get("choices"))
    assert text == ANSWER


def test_a_run_records_no_more_than_a_replay_accepts(tmp_path):
    """Past the run-wide cap an attempt is recorded without its body: the trace stays replayable."""
    call, answer = bodies("openai-chat")
    big = orjson.loads(orjson.dumps(answer))
    big["choices"][0]["message"]["content"] = "z" * 20_000
    with ScriptedServer([Reply(body=call), Reply(body=big)]) as server:
        inputs = http_inputs("openai-chat", "m", server.url + "/v1", seed=0)
        transport = HttpTransport("openai-chat", KEY, trust_env=False, caps=ResponseCaps(max_recorded_bytes=8000))
        result = run_http("capped", inputs, transport)
    first, second = [e for e in result.events if e["lane"] == "http"]
    assert first["outcome"] == "ok" and second["code"] == "response_too_large"
    assert "would take the run's recorded responses past 8,000 bytes" in second["summary"]
    assert len(orjson.dumps(result.run["inputs"]["responses"])) < 8000


@pytest.mark.parametrize("provider, retried", [("openai-chat", True), ("anthropic", True), ("gemini", False)])
def test_a_dropped_connection_is_retried_as_each_sdk_does(provider, retried):
    """openai and anthropic retry any connection error; google-genai only a connect that failed."""
    def respond(conn):
        yield b""  # read the request, then hang up without a response
    with HostileServer(respond) as server:
        inputs = http_inputs(provider, "m", server.url + ("/v1" if provider.startswith("openai") else ""),
                             max_retries=1, seed=0, timeout_ms=2000)
        result = run_http("dropped", inputs, HttpTransport(provider, KEY, trust_env=False, sleep=lambda s: None))
    codes = [e["code"] for e in result.events if e["lane"] == "http"]
    assert codes == ["connection_error"] * (2 if retried else 1)
    assert result.run["inputs"]["responses"][0]["error"] == "connection"


@pytest.mark.parametrize("encoding, encode", [
    ("gzip", lambda d: __import__("gzip").compress(d)),
    ("x-gzip", lambda d: __import__("gzip").compress(d)),
    ("deflate", lambda d: __import__("zlib").compress(d)),
    ("deflate", lambda d: __import__("zlib").compress(d)[2:-4]),  # raw deflate, as some servers send it
    ("gzip, gzip", lambda d: __import__("gzip").compress(__import__("gzip").compress(d))),
    ("br", lambda d: d),  # never asked for: left as it is, as httpx leaves it
    ("identity", lambda d: d),
])
def test_content_codings_are_undone_as_httpx_does_and_within_the_cap(encoding, encode):
    from tracetui.providers.response_caps import DecodedBody, TooLarge

    data = b'{"order_id": "o-1"}' * 2000
    raw = encode(data)
    body = DecodedBody(encoding, MIB)
    assert b"".join(body.feed(raw[i:i + 333]) for i in range(0, len(raw), 333)) + body.finish() == data
    if encoding.startswith("gzip"):  # a bomb inside a bomb still stops at the cap
        import gzip
        bomb = gzip.compress(gzip.compress(b"\0" * (64 * MIB)))
        body = DecodedBody("gzip, gzip", MIB)
        with pytest.raises(TooLarge, match="once decoded"):
            for i in range(0, len(bomb), 65536):
                body.feed(bomb[i:i + 65536])


@pytest.mark.parametrize("provider", ["openai-chat", "gemini"])
def test_a_redirect_says_it_was_never_followed_and_where_it_pointed(tmp_path, provider):
    """An http:// base URL that the API answers with a redirect to https:// said only 'HTTP 301; not retryable'."""
    target = "https://api.example.invalid/v1/chat/completions"
    with ScriptedServer([Reply(301, "moved", {"location": target})]) as server:
        out = tmp_path / "live.jsonl"
        res = CliRunner().invoke(main, ["run", "--provider", provider, "--base-url", server.url, "--model", "m",
                                        "--seed", "0", "-o", str(out)], env={"OPENAI_API_KEY": KEY, "GEMINI_API_KEY": KEY})
        asked = len(server.requests)
    assert asked == 1 and res.exit_code == 1
    assert f"HTTP 301; not followed: a redirect is never followed, the key would go with it: the server points to " \
           f"{target}" in res.output
    run = orjson.loads(out.read_bytes().splitlines()[0])
    assert run["inputs"]["responses"][0]["headers"]["location"] == target


def test_a_redirect_is_recorded_never_followed():
    """A 3xx is the server's answer, as recorded; following it could send the key somewhere else."""
    with ScriptedServer([Reply(307, {"error": {"message": "moved"}}, {"location": "http://127.0.0.1:9/elsewhere"}),
                         Reply(body={"never": "asked"})]) as server:
        transport = HttpTransport("openai-chat", KEY, trust_env=False)
        exchange = transport.send(HttpRequest("POST", server.url + "/v1/chat/completions", {}, {}, 2000))
        asked = len(server.requests)
    assert exchange.status == 307 and asked == 1
