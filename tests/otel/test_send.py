"""Sending OTLP/HTTP protobuf: the request a collector gets, bounded retries, no redirects followed."""
from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

ROOT = Path(__file__).resolve().parents[2]
from tracetui.otel import send as send_module
from tracetui.otel.export_map import run_spans
from tracetui.otel.send import SendError, batches, env_headers, send, traces_url
from tracetui.trace.reader import read_trace


@pytest.fixture(scope="module")
def runs():
    return [run_spans(r) for r in read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs.values()]


def test_the_collector_gets_protobuf_it_can_decode(runs):
    seen = []

    def collector(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=trace_service_pb2.ExportTraceServiceResponse().SerializeToString())

    report = send("http://127.0.0.1:4318", runs, headers={"x-team": "a"}, transport=httpx.MockTransport(collector))
    assert report.spans == sum(map(len, runs)) and report.requests == len(seen) == 1
    request = seen[0]
    assert str(request.url) == "http://127.0.0.1:4318/v1/traces"
    assert request.headers["content-type"] == "application/x-protobuf" and request.headers["x-team"] == "a"
    decoded = trace_service_pb2.ExportTraceServiceRequest.FromString(request.content)
    names = [s.name for s in decoded.resource_spans[0].scope_spans[0].spans]
    assert names.count("invoke_agent tracetui") == len(runs)


def test_partial_success_is_reported(runs):
    body = trace_service_pb2.ExportTraceServiceResponse(
        partial_success=trace_service_pb2.ExportTracePartialSuccess(rejected_spans=3, error_message="too old"))
    report = send("http://127.0.0.1:4318/v1/traces", runs[:1],
                  transport=httpx.MockTransport(lambda r: httpx.Response(200, content=body.SerializeToString())))
    assert (report.rejected, report.messages) == (3, ("too old",))


def test_redirects_are_refused_not_followed(runs):
    hits = []

    def collector(request):
        hits.append(str(request.url))
        return httpx.Response(307, headers={"location": "http://elsewhere.example/v1/traces"})

    with pytest.raises(SendError, match="not followed"):
        send("http://127.0.0.1:4318", runs[:1], transport=httpx.MockTransport(collector))
    assert hits == ["http://127.0.0.1:4318/v1/traces"]


def test_busy_collector_is_retried_a_bounded_number_of_times(runs, monkeypatch):
    monkeypatch.setattr(send_module.time, "sleep", lambda s: None)
    answers = iter([503, 503, 200])
    ok = send("http://127.0.0.1:4318", runs[:1],
              transport=httpx.MockTransport(lambda r: httpx.Response(next(answers), headers={"retry-after": "1"})))
    assert ok.requests == 1
    calls = []

    def always_busy(request):
        calls.append(1)
        return httpx.Response(429)

    with pytest.raises(SendError, match="429"):
        send("http://127.0.0.1:4318", runs[:1], transport=httpx.MockTransport(always_busy))
    assert len(calls) == send_module.MAX_RETRIES + 1


def test_urls_headers_and_batches():
    assert traces_url("http://localhost:6006/") == "http://localhost:6006/v1/traces"
    assert traces_url("https://otlp.example/api/public/otel/v1/traces").endswith("/otel/v1/traces")
    for bad in ("ftp://x", "http://user:pw@host:4318"):
        with pytest.raises(SendError):
            traces_url(bad)
    assert env_headers({"OTEL_EXPORTER_OTLP_HEADERS": "a=1,Authorization=Basic%20eA%3D%3D"}) == {
        "a": "1", "Authorization": "Basic eA=="}
    assert [len(b) for b in batches([[1] * 3, [1] * 3, [1] * 5], limit=6)] == [6, 5]


class _Endless(httpx.SyncByteStream):
    """A collector's answer that never ends (bounded here only so a failing test still ends)."""

    def __init__(self, chunk: bytes, most: int) -> None:
        self.chunk, self.most, self.sent = chunk, most, 0

    def __iter__(self):
        while self.sent < self.most:
            self.sent += len(self.chunk)
            yield self.chunk


def test_an_answer_without_end_is_cut_at_its_size_limit(runs):
    """Memory stays bounded by the limit, not by the collector (an endless answer reached 7 GB)."""
    endless = _Endless(b"\0" * 65536, 256 * 1024 * 1024)
    with pytest.raises(SendError, match="over .* bytes"):
        send("http://127.0.0.1:4318", runs[:1],
             transport=httpx.MockTransport(lambda r: httpx.Response(200, stream=endless)))
    assert endless.sent <= send_module.MAX_ANSWER_BYTES + 65536


def test_an_answer_that_trickles_ends_at_the_timeout(runs, monkeypatch):
    """A byte at a time restarts a read timeout; the whole answer still has to come within the timeout."""
    clock = iter(range(10 ** 6))
    monkeypatch.setattr(send_module.time, "monotonic", lambda: next(clock))  # a second passes per byte
    trickle = _Endless(b"\0", 10_000)
    with pytest.raises(SendError, match="within the timeout"):
        send("http://127.0.0.1:4318", runs[:1], timeout_s=5,
             transport=httpx.MockTransport(lambda r: httpx.Response(200, stream=trickle)))
    assert trickle.sent <= 10


@pytest.mark.parametrize("name,value", [("X", "ü"), ("X", "a\r\nInjected: 1"), ("Bad Name", "1"), ("", "1")])
def test_a_header_that_http_cannot_carry_is_refused_in_words_without_its_value(runs, name, value):
    """--header and OTEL_EXPORTER_OTLP_HEADERS: a non-ASCII value crashed; an error never repeats a value (a key)."""
    sent = []
    with pytest.raises(SendError, match="header") as refused:
        send("http://127.0.0.1:4318", runs[:1], headers={name: value},
             transport=httpx.MockTransport(lambda r: sent.append(r) or httpx.Response(200)))
    assert not sent and value not in str(refused.value)


def test_a_collector_dripping_its_headers_is_cut_at_the_timeout(runs):
    """Each byte comes well within a per-read timeout; all of them do not come within the timeout."""
    import socket
    import threading
    import time

    answer = (b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n"
              b"x-padding: " + b"a" * 40 + b"\r\n\r\n")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    sent = []

    def drip():
        conn, _ = server.accept()
        conn.settimeout(5)
        conn.recv(1 << 20)
        try:
            for n in range(len(answer)):
                conn.sendall(answer[n:n + 1])
                sent.append(n)
                time.sleep(0.05)  # ~110 bytes: over 5 s in all, against a 0.5 s timeout
        except OSError:
            pass
        finally:
            conn.close()
    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    started = time.monotonic()
    with pytest.raises(SendError, match="no answer within the timeout"):
        send(f"http://127.0.0.1:{server.getsockname()[1]}", runs, timeout_s=0.5)
    assert time.monotonic() - started < 3 and len(sent) < len(answer) - 2
    server.close()
