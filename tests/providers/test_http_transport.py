"""The HTTP transport over a real socket, and the `tracetui run --base-url` command around it."""
from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.providers.base import HttpRequest
from tracetui.providers.http_transport import HttpTransport, is_loopback
from tracetui.providers.sse import SSEParser

from scripted_server import Reply, ScriptedServer
from wire import HTML, bodies, streams

KEY = "sk-test-abcdefghijklmnopqrstuvwxyz"


def request(url, stream=False, timeout_ms=1000):
    return HttpRequest("POST", url, {"content-type": "application/json"}, {"hello": "world"}, timeout_ms, stream=stream)


def test_json_reply_keeps_only_headers_that_matter():
    with ScriptedServer([Reply(body={"ok": 1}, headers={"x-request-id": "req_9", "set-cookie": "a=b",
                                                        "retry-after": "1"})]) as server:
        transport = HttpTransport("openai-chat", KEY, trust_env=False)
        ex = transport.send(request(server.url + "/v1/chat/completions"))
        sent = server.requests[0]
    assert (ex.status, ex.body, ex.error) == (200, {"ok": 1}, None)
    assert ex.headers == {"x-request-id": "req_9", "retry-after": "1", "content-type": "application/json",
                          "date": "Mon, 30 Nov 2026 00:00:00 GMT"}
    assert ex.latency_ms >= 0 and transport.exchanges == [ex]
    assert sent["body"] == {"hello": "world"} and sent["headers"]["authorization"] == f"Bearer {KEY}"


def test_html_reply_stays_text():
    with ScriptedServer([Reply(200, HTML)]) as server:
        ex = HttpTransport("gemini", KEY, trust_env=False).send(request(server.url + "/x", stream=True))
    assert ex.status == 200 and ex.events is None and ex.body.startswith("<!DOCTYPE html>")


def test_timeout_is_recorded_not_raised():
    with ScriptedServer([Reply(body={"late": True}, delay=0.4)]) as server:
        ex = HttpTransport("anthropic", KEY, trust_env=False).send(request(server.url + "/v1/messages", timeout_ms=100))
    assert (ex.status, ex.error, ex.body) == (None, "timeout", None)
    assert 90 <= ex.latency_ms < 400


def test_stream_events_and_a_cut_stream():
    call, _ = streams("openai-chat")
    with ScriptedServer([Reply(events=call), Reply(events=call, cut_after=2)]) as server:
        transport = HttpTransport("openai-chat", KEY, trust_env=False)
        whole = transport.send(request(server.url, stream=True))
        cut = transport.send(request(server.url, stream=True))
    assert whole.error is None and whole.events[-1] == {"data": "[DONE]"} and len(whole.events) == len(call)
    assert whole.headers["content-type"] == "text/event-stream"
    assert (cut.status, cut.error, len(cut.events)) == (200, "stream_interrupted", 2)
    assert cut.events == whole.events[:2]


def test_wait_uses_the_injected_sleep():
    slept = []
    transport = HttpTransport("gemini", None, sleep=slept.append)
    transport.wait(1500)
    transport.wait(0)
    assert slept == [1.5]


def test_sse_parser_handles_split_chunks_crlf_comments_and_multiline_data():
    raw = b': keep-alive\r\nevent: message_start\r\ndata: {"type": "a",\r\ndata:  "n": 1}\r\n\r\ndata: [DONE]\n\ndata: {"x"'
    parser = SSEParser()
    events = []
    for i in range(0, len(raw), 7):  # bytes arrive in arbitrary pieces
        events += parser.feed(raw[i:i + 7])
    assert events == [{"type": "a", "n": 1}, {"data": "[DONE]"}]
    assert parser.close() == []  # an event the stream never ended is discarded, as the SSE spec and the SDKs do
    utf8 = "data: {\"t\": \"é\"}\n\n".encode()
    parser = SSEParser()
    assert parser.feed(utf8[:11]) + parser.feed(utf8[11:]) == [{"t": "é"}]


def test_is_loopback():
    assert is_loopback("http://127.0.0.1:9") and is_loopback("http://localhost") and is_loopback("http://[::1]:8")
    assert not is_loopback("https://api.openai.com")


# -- the command line --------------------------------------------------------------------------

def test_cli_live_run_writes_a_trace_that_replays_offline(tmp_path):
    call, answer = bodies("anthropic")
    out = tmp_path / "live.jsonl"
    with ScriptedServer([Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                               {"retry-after": "0"}),
                         Reply(body=call), Reply(body=answer)]) as server:
        res = CliRunner().invoke(main, ["run", "--provider", "anthropic", "--base-url", server.url, "--model", "claude-x",
                                        "--prompt", "Where is o-1?", "-o", str(out)],
                                 env={"ANTHROPIC_API_KEY": KEY})
        sent = server.requests
    assert res.exit_code == 0, res.output
    assert sent[0]["headers"]["authorization"] == f"Bearer {KEY}" and sent[0]["body"]["messages"][0]["content"] == "Where is o-1?"
    data = out.read_bytes()
    assert KEY.encode() not in data
    run = orjson.loads(data.splitlines()[0])
    inputs = run["inputs"]
    assert (inputs["source"], inputs["provider"], inputs["model"], inputs["base_url"]) == \
        ("http", "anthropic", "claude-x", server.url)
    assert inputs["key_variable"] == "ANTHROPIC_API_KEY" and [r["status"] for r in inputs["responses"]] == [529, 200, 200]
    replayed = CliRunner().invoke(main, ["replay", str(out), "--run", run["run_id"]])
    assert replayed.exit_code == 0, replayed.output
    assert "answer_ready" in replayed.output


def test_cli_live_run_against_a_local_server_needs_no_key(tmp_path):
    call, answer = bodies("openai-chat")
    out = tmp_path / "local.jsonl"
    with ScriptedServer([Reply(body=call), Reply(body=answer)]) as server:
        res = CliRunner().invoke(main, ["run", "--provider", "openai-chat", "--base-url", server.url + "/v1",
                                        "--model", "local-model", "-o", str(out)], env={"OPENAI_API_KEY": None})
        sent = server.requests
    assert res.exit_code == 0, res.output
    assert "authorization" not in sent[0]["headers"]
    assert [r["path"] for r in sent] == ["/v1/chat/completions"] * 2  # a base URL ending in /v1 is accepted


def test_cli_live_stream_with_a_custom_key_variable(tmp_path):
    first, second = streams("gemini")
    out = tmp_path / "g.jsonl"
    with ScriptedServer([Reply(events=first), Reply(events=second)]) as server:
        res = CliRunner().invoke(main, ["run", "--provider", "gemini", "--base-url", server.url + "/", "--model", "gem",
                                        "--stream", "--api-key-env", "MY_GEMINI", "--timeout-ms", "2000",
                                        "-o", str(out)], env={"MY_GEMINI": KEY, "GEMINI_API_KEY": None})
        paths = [r["path"] for r in server.requests]
        assert server.requests[0]["headers"]["x-goog-api-key"] == KEY
    assert res.exit_code == 0, res.output
    assert paths == ["/v1beta/models/gem:streamGenerateContent?alt=sse"] * 2
    assert KEY.encode() not in out.read_bytes()


@pytest.mark.parametrize("args, env, message", [
    (["--base-url", "https://api.example.invalid", "--model", "m"], {"OPENAI_API_KEY": None}, "OPENAI_API_KEY is not set"),
    (["--base-url", "http://127.0.0.1:9"], {"OPENAI_API_KEY": KEY}, "--base-url needs --model"),
    (["--base-url", "http://u:p@127.0.0.1:9", "--model", "m"], {"OPENAI_API_KEY": KEY}, "no credentials"),
    (["--base-url", "ftp://x", "--model", "m"], {"OPENAI_API_KEY": KEY}, "not an http(s) URL"),
    # an empty query or fragment: the API path would follow the '?' (a request to /v1 with a query)
    (["--base-url", "http://127.0.0.1:9/v1?", "--model", "m"], {"OPENAI_API_KEY": KEY}, "no credentials, query"),
    (["--base-url", "http://127.0.0.1:9/v1#", "--model", "m"], {"OPENAI_API_KEY": KEY}, "no credentials, query"),
    # a URL httpx cannot send to is refused in words, not a traceback from the first request
    (["--base-url", "http://127.0.0.1:abc/v1", "--model", "m"], {"OPENAI_API_KEY": KEY}, "not a URL a request can be sent to"),
    (["--base-url", "http://127.0.0.1:99999/v1", "--model", "m"], {"OPENAI_API_KEY": KEY}, "Port out of range"),
    (["--base-url", "http://127.0.0.1:9/\x1b[2Jv1", "--model", "m"], {"OPENAI_API_KEY": KEY}, "non-printable"),
    (["--provider", "gemini", "--base-url", "http://127.0.0.1:9", "--model", "gem\x1bini"], {"GEMINI_API_KEY": KEY},
     "cannot contain control characters"),
    (["--provider", "gemini", "--base-url", "http://127.0.0.1:9", "--model", "gem#ini"], {"GEMINI_API_KEY": KEY},
     "cannot contain '#'"),
    ([], {}, "either --responses FILE or --base-url URL"),
])
def test_cli_live_run_usage_errors(args, env, message):
    res = CliRunner().invoke(main, ["run", "--provider", "openai-chat", *args], env=env)
    assert res.exit_code == 2 if "set" not in message else res.exit_code == 1
    assert message in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception


def test_cli_responses_with_live_only_options_is_refused(tmp_path):
    f = tmp_path / "r.json"
    f.write_text("[{}]")
    res = CliRunner().invoke(main, ["run", "--responses", str(f), "--stream"])
    assert res.exit_code == 2 and "--stream only apply with --base-url" in res.output


def test_a_json_body_behind_a_byte_order_mark_is_read_as_json():
    """httpx's response.json(), and so each SDK, reads past a UTF-8 BOM; the run called the body 'not JSON'."""
    body = {"object": "chat.completion", "choices": []}
    with ScriptedServer([Reply(body="\ufeff" + json.dumps(body), headers={"content-type": "application/json"})]) as server:
        transport = HttpTransport("openai-chat", KEY, trust_env=False)
        try:
            exchange = transport.send(HttpRequest("POST", server.url + "/v1/chat/completions", {}, {}, 2000))
        finally:
            transport.close()
    assert exchange.body == body


@pytest.mark.parametrize("placeholder", ["x", "EMPTY", "ollama"])
def test_a_placeholder_key_does_not_corrupt_the_recording(placeholder):
    from tracetui.providers.base import HttpRequest

    body = {"object": "response", "status": "completed", "index": 1, "output": [
        {"type": "message", "status": "completed", "content": [{"type": "output_text", "text": "x marks EMPTY ollama"}]}]}
    with ScriptedServer([Reply(body=body)]) as server:
        transport = HttpTransport("openai-responses", placeholder, trust_env=False)
        try:
            exchange = transport.send(HttpRequest("POST", server.url + "/v1/responses", {}, {"input": []}, 2000))
        finally:
            transport.close()
    assert exchange.body == body


def test_an_openai_base_url_without_a_path_is_kept_and_the_user_told(tmp_path):
    """As the SDK does, nothing is added: the request goes where the URL says, and a note says where."""
    call, answer = bodies("openai-chat")
    with ScriptedServer([Reply(body=call), Reply(body=answer)]) as server:
        res = CliRunner().invoke(main, ["run", "--provider", "openai-chat", "--base-url", server.url, "--model", "m",
                                        "-o", str(tmp_path / "t.jsonl")], env={"OPENAI_API_KEY": KEY})
        paths = [r["path"] for r in server.requests]
    assert res.exit_code == 0, res.output
    assert paths == ["/chat/completions"] * 2
    assert f"note: requests go to {server.url}/chat/completions" in res.stderr
