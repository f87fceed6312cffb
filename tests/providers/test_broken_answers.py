"""A server whose answer breaks HTTP: the trace keeps what h11 said was wrong, not only ``connection``."""
from __future__ import annotations

import pytest

from tracetui.loop.live import http_inputs, run_http
from tracetui.providers.http_transport import MAX_ERROR_WORDS, HttpTransport

from hostile_server import HostileServer

KEY = "sk-test-broken-0123456789abcdef"


@pytest.mark.parametrize("answer, words", [
    (b"HTTP/1.1 2OO OK\r\n\r\n", "illegal status line: bytearray(b'HTTP/1.1 2OO OK')"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "illegal header line: bytearray(b'no colon here')"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc",
     "peer closed connection without sending complete message body (received 3 bytes, expected 10)"),
])
def test_a_malformed_answer_is_recorded_with_h11s_reason(answer, words):
    def respond(conn):
        yield answer
    with HostileServer(respond) as server:
        inputs = http_inputs("openai-chat", "m", server.url + "/v1", max_retries=0, seed=0, timeout_ms=2000)
        result = run_http("broken", inputs, HttpTransport("openai-chat", KEY, trust_env=False))
    (attempt,) = [e for e in result.events if e["lane"] == "http"]
    assert attempt["code"] == "connection_error"
    assert words in attempt["summary"]  # the reason a user reads in check, explain and the explorer
    recorded = result.run["inputs"]["responses"][0]
    assert recorded["error"] == "connection" and recorded["body"]["error"]["message"] == words


def test_a_long_unreadable_line_is_quoted_only_in_part():
    def respond(conn):
        yield b"HTTP/1.1 " + b"9" * 5000 + b"\r\n\r\n"
    with HostileServer(respond) as server:
        inputs = http_inputs("openai-chat", "m", server.url + "/v1", max_retries=0, seed=0, timeout_ms=2000)
        result = run_http("long", inputs, HttpTransport("openai-chat", KEY, trust_env=False))
    message = result.run["inputs"]["responses"][0]["body"]["error"]["message"]
    assert message.startswith("illegal status line") and len(message) == MAX_ERROR_WORDS
