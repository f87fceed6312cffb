"""A server that echoes the API key back, in any form, never puts it in a trace or on the terminal.

Over the loopback server: the key split across two stream events (and two TCP
chunks), used as a JSON object key, in another letter case, base64 or
URL-encoded; in the recorded exchange, the streamed display and the CLI's output.
"""
from __future__ import annotations

import base64
from urllib.parse import quote

import orjson
import pytest
from click.testing import CliRunner

import tracetui.providers.http_transport as http_transport
from tracetui.cli import main
from tracetui.providers.base import HttpRequest
from tracetui.providers.http_transport import HttpTransport

from scripted_server import Reply, ScriptedServer

KEY = "sk-test-Echo7xT2mV9pL4kR8wZ1nB6/c+Y3h"
FORMS = {"as sent": KEY, "lower case": KEY.lower(), "upper case": KEY.upper(),
         "base64": base64.b64encode(KEY.encode()).decode(), "inside Basic": base64.b64encode(b"u:" + KEY.encode()).decode(),
         "url-encoded": quote(KEY, safe="")}


def exchange_of(reply: Reply, stream: bool = False, on_text=None):
    with ScriptedServer([reply]) as server:
        transport = HttpTransport("openai-responses", KEY, trust_env=False, on_text=on_text)
        try:
            return transport.send(HttpRequest("POST", server.url + "/v1/responses", {}, {"stream": stream}, 2000,
                                              stream=stream))
        finally:
            transport.close()


@pytest.mark.parametrize("form", list(FORMS.values()), ids=list(FORMS))
def test_the_key_echoed_in_an_error_body_in_any_form_is_scrubbed(form):
    body = {"error": {"message": f"Incorrect API key provided: {form}.", "param": None}, form: "as a key"}
    exchange = exchange_of(Reply(status=401, body=body))
    recorded = orjson.dumps(exchange.to_record()).decode()
    assert exchange.status == 401 and form not in recorded and KEY not in recorded
    assert "<redacted>" in exchange.body["error"]["message"] and exchange.body["<redacted>"] == "as a key"


def _deltas(*parts: str) -> list[dict]:
    events = [{"type": "response.output_text.delta", "output_index": 0, "delta": part} for part in parts]
    return [*events, {"type": "response.completed", "response": {"id": "r", "status": "completed", "output": []}}]


@pytest.mark.parametrize("form", list(FORMS.values()), ids=list(FORMS))
@pytest.mark.parametrize("cut", [1, 9, 20])
def test_the_key_split_across_stream_events_is_scrubbed_and_never_shown(form, cut):
    shown: list[str] = []
    exchange = exchange_of(Reply(events=_deltas(f"your key is {form[:cut]}", f"{form[cut:]}, right?")), stream=True,
                           on_text=shown.append)
    text = "".join(e.get("delta", "") for e in exchange.events)
    assert form not in text and text == "your key is <redacted>, right?"
    display = "".join(shown)  # a base64 text's first letters may show before the key is recognised in it
    assert form not in display and display.startswith("your key is ") and display.endswith("<redacted>, right?")
    assert len(display) <= len("your key is <redacted>, right?") + 2


def test_the_cli_never_prints_or_writes_an_echoed_key(monkeypatch, tmp_path):
    first = _deltas("Checking ", f"{KEY[:10]}", f"{KEY[10:]} now.")
    reply_401 = Reply(status=401, body={"error": {"message": f"bad key {KEY.lower()} ({FORMS['base64']})"}})
    out = tmp_path / "t.jsonl"
    with ScriptedServer([Reply(events=first)] * 2) as server:
        res = CliRunner().invoke(main, ["run", "--base-url", server.url, "--model", "m", "--stream", "--show-stream",
                                        "--max-turns", "1", "-o", str(out)], env={"OPENAI_API_KEY": KEY})
    assert "Checking <redacted> now." in res.stderr
    with ScriptedServer([reply_401]) as server:
        res401 = CliRunner().invoke(main, ["run", "--base-url", server.url, "--model", "m", "-o", str(tmp_path / "u")],
                                    env={"OPENAI_API_KEY": KEY})
    assert res401.exit_code == 1 and "auth_error" in res401.stderr
    for blob in (res.stderr, res.stdout, out.read_text(), res401.stderr, (tmp_path / "u").read_text()):
        for form in FORMS.values():
            assert form not in blob and form.lower() not in blob.lower()
    assert http_transport.MIN_SECRET_CHARS <= len(KEY)


def test_the_docs_say_how_short_a_key_is_not_searched_for():
    """A key under MIN_SECRET_CHARS echoed by a server is recorded as sent: the README and the format say so."""
    from pathlib import Path

    from tracetui.providers.http_transport import MIN_SECRET_CHARS

    root = Path(__file__).resolve().parents[2]
    assert f"A key shorter than {MIN_SECRET_CHARS} characters is not searched for" in \
        " ".join((root / "docs" / "trace-format.md").read_text().split())
    assert f"of {MIN_SECRET_CHARS} characters or more" in " ".join((root / "README.md").read_text().split())
