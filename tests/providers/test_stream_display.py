"""Watching a live stream: text deltas reach the display while the stream is still arriving.

Over the real loopback server, per provider: the ``on_text`` callback gets the
model's text in order before the rest of the stream was even sent (the server
holds the stream until the callback fired), never a tool call's arguments, and
the recorded exchange (so the trace and its replay) is exactly what it is
without a display.
"""
from __future__ import annotations

import io
import json

import orjson
import pytest
from click.testing import CliRunner

import tracetui.providers.http_transport as http_transport
from tracetui.cli import main
from tracetui.providers.fake_wire.responses import responses_to_events
from tracetui.providers.base import Exchange, HttpRequest
from tracetui.providers.http_transport import FOLDERS, REDACTED, HttpTransport
from tracetui.loop.live import TextEcho, http_inputs, run_http
from tracetui.providers.registry import get_adapter
from tracetui.providers.sse import to_event

from scripted_server import Reply, ScriptedServer
from wire import ANSWER, PROVIDERS, base_url, streams

KEY = "sk-test-display-0123456789abcdef"
MARK = "ARGMARK-7f3"  # only ever inside tool-call arguments
PATHS = {"openai-responses": "/v1/responses", "openai-chat": "/v1/chat/completions", "anthropic": "/v1/messages",
         "gemini": "/v1beta/models/m:streamGenerateContent?alt=sse"}


def recorded(events):
    """Wire form → what the SSE parser records (bare ``[DONE]`` becomes ``{"data": "[DONE]"}``)."""
    return [to_event(e) if isinstance(e, str) else e for e in events]


def folded(provider, events):
    """The deltas the API's folder shows for these events, one list per event, computed offline."""
    folder = FOLDERS[provider]()
    per_event = []
    for event in recorded(events):
        before = len(folder.shown)
        folder.feed(event)
        per_event.append([d for d in folder.shown[before:] if d])
    return per_event


def mixed_stream(provider):
    """Text first, then a tool call whose arguments carry MARK, as each API streams it."""
    if provider == "openai-responses":
        return responses_to_events({
            "id": "resp_m", "object": "response", "status": "completed", "output": [
                {"type": "message", "id": "msg_m", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "Let me look that up.", "annotations": []}]},
                {"type": "function_call", "id": "fc_m", "call_id": "call_m", "name": "read_order",
                 "arguments": json.dumps({"order_id": MARK}), "status": "completed"}]})
    call, _ = streams(provider)
    events = json.loads(json.dumps(call).replace("o-1", MARK).replace("Checking.", "Let me look that up."))
    if provider == "openai-chat":
        events[0]["choices"][0]["delta"]["content"] = "Let me look that up."
    if provider == "gemini":
        text = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me look that up."}]}, "index": 0}]}
        events = [text, *events]
    assert MARK in json.dumps(events)
    return events


def stream_request(url, timeout_ms=2000):
    return HttpRequest("POST", url, {"content-type": "application/json"}, {"stream": True}, timeout_ms, stream=True)


def send(provider, reply, **hooks):
    with ScriptedServer([reply]) as server:
        transport = HttpTransport(provider, KEY, trust_env=False, **hooks)
        try:
            return transport.send(stream_request(server.url + PATHS[provider]))
        finally:
            transport.close()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_text_reaches_the_callback_before_the_rest_of_the_stream_is_sent(provider):
    _, answer = streams(provider)
    per_event = folded(provider, answer)
    first = next(n for n, shown in enumerate(per_event) if shown)
    assert first < len(answer) - 1  # there is a rest to hold back, final event included
    reply = Reply(events=answer, pause_after=first)
    seen: list[tuple[str, int]] = []

    def on_text(delta):
        seen.append((delta, reply.sent))
        reply.resume.set()  # only now may the server send the rest

    exchange = send(provider, reply, on_text=on_text)
    assert reply.resumed is True, "the server had to give up waiting: no delta was shown while it held the stream"
    assert seen[0][1] == first + 1 < len(answer)  # shown while the final event was not even written
    # pieces may be regrouped (a token that may still be a key is held back until it ends), never changed
    assert "".join(d for d, _ in seen) == "".join(d for shown in per_event for d in shown) == ANSWER
    assert exchange.error is None and exchange.events == recorded(answer)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tool_arguments_never_reach_the_callback(provider):
    events = mixed_stream(provider)
    deltas, ends = [], []
    watched = send(provider, Reply(events=events), on_text=deltas.append, on_stream_end=ends.append)
    plain = send(provider, Reply(events=events))
    assert "".join(deltas) == "Let me look that up."
    assert not any(MARK in d for d in deltas)
    assert MARK in orjson.dumps(watched.events).decode()  # the arguments did stream, and were recorded
    assert watched.events == plain.events == recorded(events)
    assert ends == [watched]
    body, error = get_adapter(provider).assemble_stream(watched.events)  # the loop still gets the call
    assert error is None and MARK in orjson.dumps(body).decode()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_tool_call_only_stream_shows_nothing_and_ends_nothing(provider):
    call, _ = streams(provider)
    if provider == "openai-chat":  # its first chunk opens with empty content: still nothing to show
        assert not any(folded(provider, call))
    deltas, ends = [], []
    exchange = send(provider, Reply(events=call), on_text=deltas.append, on_stream_end=ends.append)
    shown = [d for e in folded(provider, call) for d in e]
    assert deltas == shown and not any("o-1" in d for d in deltas)
    assert ends == ([exchange] if shown else [])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_cut_stream_keeps_what_was_shown_and_records_the_interruption(provider):
    _, answer = streams(provider)
    per_event = folded(provider, answer)
    cut = next(n for n, shown in enumerate(per_event) if shown) + 1  # the socket closes mid-event after the first text
    deltas, ends = [], []
    watched = send(provider, Reply(events=answer, cut_after=cut), on_text=deltas.append, on_stream_end=ends.append)
    plain = send(provider, Reply(events=answer, cut_after=cut))
    assert "".join(deltas) == "".join(d for shown in per_event[:cut] for d in shown) and deltas
    assert watched.error == plain.error == "stream_interrupted"
    assert watched.events == plain.events == recorded(answer)[:cut]
    assert ends == [watched]


def test_an_error_event_ends_the_display_but_not_the_recording():
    events = [{"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
              {"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"},
              {"type": "error", "code": "server_error", "message": "boom"},
              {"type": "response.output_text.delta", "output_index": 0, "delta": "lo"}]
    deltas = []
    exchange = send("openai-responses", Reply(events=events), on_text=deltas.append)
    assert "".join(deltas) == "Hel"
    assert exchange.events == events and exchange.error is None


def test_a_failing_display_changes_nothing_recorded():
    _, answer = streams("anthropic")

    def broken(delta):
        raise OSError(32, "Broken pipe")  # stderr went away

    watched = send("anthropic", Reply(events=answer), on_text=broken, on_stream_end=broken)
    plain = send("anthropic", Reply(events=answer))
    assert watched.events == plain.events == recorded(answer) and watched.error is None


def test_the_key_echoed_in_text_is_redacted_on_the_display_too():
    events = [{"type": "response.output_text.delta", "output_index": 0, "delta": f"your key is {KEY}."},
              {"type": "response.completed", "response": {"id": "r", "status": "completed", "output": []}}]
    deltas = []
    exchange = send("openai-responses", Reply(events=events), on_text=deltas.append)
    assert "".join(deltas) == f"your key is {REDACTED}."
    assert KEY not in orjson.dumps(exchange.events).decode()


def test_json_replies_and_unstreamed_requests_never_call_back():
    deltas = []
    with ScriptedServer([Reply(body={"ok": 1})]) as server:
        transport = HttpTransport("openai-chat", KEY, trust_env=False, on_text=deltas.append,
                                  on_stream_end=deltas.append)
        transport.send(HttpRequest("POST", server.url, {}, {}, 1000))
    assert deltas == []


def test_echo_renders_text_safely_and_ends_each_exchange_on_its_own_line():
    out = io.StringIO()
    echo = TextEcho(out)
    for delta in ("Hi \x1b[2J", "there\r\x07", "\u202eevil\n"):
        echo.text(delta)
    echo.end(Exchange(200))  # ended with a newline already
    echo.text("cut")
    echo.end(Exchange(200, error="stream_interrupted"))
    assert out.getvalue() == "Hi \\x1b[2Jthere\\x0d\\x07\\u202eevil\ncut\n[stream interrupted]\n"
    assert not any(ord(c) < 32 and c != "\n" for c in out.getvalue())


# -- a whole run, and the command line ---------------------------------------------------------

class _FrozenClock(HttpTransport):
    """Latency is the one wall-clock value in a trace; freeze it so two runs can be compared byte for byte."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, clock=lambda: 0.0, **kwargs)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_watched_run_records_the_same_trace(provider):
    first, second = streams(provider)

    deltas = []
    with ScriptedServer([Reply(events=first), Reply(events=second)] * 2) as server:  # one URL for both runs

        def run(**hooks):
            inputs = http_inputs(provider, "m", base_url(provider, server.url), stream=True, api_key_env="K", seed=0)
            return run_http("watched", inputs, _FrozenClock(provider, KEY, trust_env=False, **hooks))

        watched, plain = run(on_text=deltas.append), run()
    assert watched.status == "answer_ready"
    assert b"".join(map(orjson.dumps, watched.records)) == b"".join(map(orjson.dumps, plain.records))
    assert "".join(deltas).endswith(ANSWER)


def _cli(server, tmp_path, name, *flags):
    out = tmp_path / f"{name}.jsonl"
    res = CliRunner().invoke(main, ["run", "--provider", "anthropic", "--base-url", server.url, "--model", "c",
                                    "--run-id", "same", "--seed", "0", "-o", str(out), *flags],
                             env={"ANTHROPIC_API_KEY": KEY})
    return res, out.read_bytes() if out.exists() else b""


def test_cli_show_stream_writes_text_to_stderr_and_the_trace_is_unchanged(monkeypatch, tmp_path):
    first, second = streams("anthropic")
    first = json.loads(json.dumps(first).replace("Checking.", "Check\\u001b]8;;x\\u0007ing.\\r"))
    monkeypatch.setattr(http_transport, "HttpTransport", _FrozenClock)  # what _run_live imports
    with ScriptedServer([Reply(events=first), Reply(events=second)] * 3) as server:  # one URL for all three runs
        shown, shown_trace = _cli(server, tmp_path, "shown", "--stream", "--show-stream")
        hidden, hidden_trace = _cli(server, tmp_path, "hidden", "--stream", "--no-show-stream")
        default, default_trace = _cli(server, tmp_path, "default", "--stream")  # stderr is no terminal here
    assert shown.exit_code == hidden.exit_code == default.exit_code == 0, shown.output
    assert shown_trace and shown_trace == hidden_trace == default_trace
    verdict = hidden.stderr
    assert verdict.startswith("✓ same  answer_ready") and default.stderr == verdict
    assert shown.stderr == "Check\\x1b]8;;x\\x07ing.\\x0d\n" + ANSWER + "\n" + verdict
    assert "\x1b" not in shown.stderr and "o-1\"}" not in shown.stderr.split(ANSWER)[0]


@pytest.mark.parametrize("args, message", [
    (["--base-url", "http://127.0.0.1:9", "--model", "m", "--show-stream"], "--show-stream needs --stream"),
    (["--responses", "RESP", "--show-stream"], "--show-stream only apply with --base-url"),
])
def test_cli_show_stream_usage_errors(tmp_path, args, message):
    f = tmp_path / "r.json"
    f.write_text("[{}]")
    res = CliRunner().invoke(main, ["run", *[str(f) if a == "RESP" else a for a in args]])
    assert res.exit_code == 2 and message in res.output
