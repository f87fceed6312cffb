"""The endpoint serves the agent's SDK only: what a web page, another local program or a trace file could
send through it is refused or made harmless (review 21b)."""
from __future__ import annotations

import socket

import httpx
import orjson
import pytest

from wire_helpers import KEY, Reply, ScriptedServer, chat_body, free_port
from wire_helpers import loopback_only  # noqa: F401  (autouse fixture)

from tracetui.record.proxy import RecordingProxy
from tracetui.record.replay_server import ReplayServer

SAFETY = 10  # seconds: a safety net only


def _raw(port: int, request: bytes) -> bytes:
    """What the endpoint answers to ``request`` sent as it is (the connection is closed by the answer)."""
    with socket.create_connection(("127.0.0.1", port), timeout=SAFETY) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def _post(target: bytes, host: bytes, extra: bytes = b"") -> bytes:
    return (b"POST " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\n" + extra +
            b"Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")


@pytest.mark.parametrize("name, request_of, status", [
    ("a DNS-rebinding page names its own domain", lambda p: _post(b"/v1/chat/completions", b"evil.example:%d" % p), 421),
    ("a web page's cross-site POST carries Origin",
     lambda p: _post(b"/v1/chat/completions", b"127.0.0.1:%d" % p, b"Origin: https://evil.example\r\n"), 403),
    ("an absolute-form target names another host", lambda p: _post(b"http://example.com/x", b"example.com"), 400),
    ("a target without its slash names another host (root + '@host/x')",
     lambda p: _post(b"@localhost:%d/x" % free_port(), b"127.0.0.1:%d" % p), 400),
    ("CONNECT asks for a tunnel", lambda p: b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 405),
])
def test_a_request_the_agents_sdk_never_sends_is_refused_unforwarded_and_unrecorded(name, request_of, status):
    with ScriptedServer([Reply(body=chat_body("relayed"))] * 2) as up, \
            RecordingProxy({"openai": up.url, "anthropic": up.url, "gemini": up.url}) as proxy:
        answer = _raw(proxy.port, request_of(proxy.port))
        sdk = httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": []}, timeout=SAFETY)
        exchanges = proxy.exchanges()
    assert answer.startswith(b"HTTP/1.1 %d " % status), (name, answer[:200])
    assert b"tracetui_refused" in answer
    assert sdk.status_code == 200  # the agent's own request still goes through ...
    assert [ex.index for ex in exchanges] == [0] and len(up.requests) == 1  # ... and is the only one, number 0


def test_the_words_an_agent_gets_for_an_unreachable_upstream_never_hold_the_key_of_its_url():
    dead = f"http://127.0.0.1:{free_port()}"
    with RecordingProxy({"gemini": dead}, connect_timeout=2) as proxy:
        got = httpx.post(f"{proxy.url}/v1beta/models/gemini-x:generateContent?key={KEY}&alt=json",
                         json={"contents": []}, timeout=SAFETY)
        [ex] = proxy.exchanges()
    assert got.status_code == 502
    assert KEY not in got.text and "generateContent?alt=json" in got.text  # the SDK raises this text on the terminal
    assert KEY.encode() not in orjson.dumps([ex.request, ex.response])


def test_a_header_from_the_trace_cannot_split_the_response_the_agent_reads():
    served = {"status": 200, "headers": {"x-note": "a\r\nx-injected: 1\r\n\r\nHTTP/1.1 200 OK", "x-request-id": "r-1",
                                         "bad name": "v", "x-wide": "\u4e2d"},
              "body": chat_body("fine")}
    with ReplayServer([], [served]) as server:
        got = httpx.post(f"{server.url}/v1/chat/completions", json={"model": "m", "messages": []}, timeout=SAFETY)
    assert got.status_code == 200 and got.json() == chat_body("fine")
    assert got.headers.get("x-request-id") == "r-1"
    assert "x-injected" not in got.headers and "x-note" not in got.headers and "x-wide" not in got.headers


def test_a_content_length_that_is_no_number_gets_an_answer_saying_so():
    with RecordingProxy({"openai": f"http://127.0.0.1:{free_port()}"}) as proxy:
        answer = _raw(proxy.port, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \u00b2"
                                  "\r\n\r\n{}".encode("latin-1"))
        exchanges = proxy.exchanges()
    assert answer.startswith(b"HTTP/1.1 400 ") and b"is not a number" in answer
    assert exchanges == []


def test_closing_after_the_exchanges_were_read_does_not_wait_for_a_request_still_on_the_wire():
    import threading
    import time

    with ScriptedServer([Reply(body=chat_body("late"), delay=20)]) as up:
        proxy = RecordingProxy({"openai": up.url}).__enter__()
        def send() -> None:  # its answer never comes (the proxy closes under it): a timeout is all it can get
            try:
                httpx.post(f"{proxy.url}/v1/chat/completions", json={"messages": []}, timeout=60)
            except httpx.HTTPError:
                pass
        threading.Thread(target=send, daemon=True).start()
        deadline = time.monotonic() + SAFETY  # readiness: the request reached the upstream (polled, bounded)
        while not up.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        [ex] = proxy.exchanges(settle=0)
        closing = threading.Thread(target=proxy.close, kwargs={"settle": 60}, daemon=True)
        closing.start()
        closing.join(SAFETY)  # a safety net: closing takes no time at all now
        assert not closing.is_alive()
    assert ex.response["error"] == "interrupted"


def test_an_edited_stream_event_with_a_carriage_return_is_framed_as_one_event():
    from tracetui.providers.sse import SSEParser
    from tracetui.record.replay_server import sse_frame

    parser = SSEParser()
    frame = sse_frame("anthropic", {"type": "a\rdata: injected", "x": 1}) + sse_frame("openai-chat", {"data": "one\rtwo"})
    parsed = parser.feed(frame) + parser.close()
    assert parsed == [{"type": "a\rdata: injected", "x": 1}, {"data": "one\ntwo"}]
