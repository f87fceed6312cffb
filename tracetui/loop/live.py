"""A run against a real endpoint, recorded so that it replays offline.

The inputs say ``source: "http"``, name the endpoint (``base_url``, ``provider``,
``model``) and, once the run is over, hold every exchange in ``responses``, in
order: the same cassette a ``source: "responses"`` run plays, so a replay
rebuilds the run without the network. The API key is never part of the inputs;
only the name of the variable it came from is.
"""
from __future__ import annotations

from typing import Any, TextIO

from tracetui.loop.inputs import RECORDED_QUESTION, responses_inputs
from tracetui.loop.loop import RunResult
from tracetui.loop.runner import run_inputs
from tracetui.providers.base import Exchange
from tracetui.providers.http_transport import HttpTransport
from tracetui.trace.safe_text import printable


def api_root(base_url: str) -> str:
    """Accept ``http://host/v1`` as well as ``http://host``: adapters add the version to their paths."""
    base = base_url.rstrip("/")
    for suffix in ("/v1beta", "/v1"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def http_inputs(provider: str, model: str, base_url: str, *, prompt: str | None = None, stream: bool = False,
                timeout_ms: int | None = None, max_retries: int | None = None, max_turns: int | None = None,
                max_calls: int | None = None, api_key_env: str | None = None, seed: int = 0) -> dict[str, Any]:
    """Inputs of a live run: the recorded-run task (read_order), pointed at a real endpoint."""
    inputs = responses_inputs([], provider, max_turns, max_calls, user_input=prompt or RECORDED_QUESTION)
    inputs.update(source="http", model=model, base_url=api_root(base_url), stream=stream, seed=seed)
    if api_key_env:
        inputs["key_variable"] = api_key_env  # the variable's name, never its value
    if timeout_ms is not None:
        inputs["budgets"]["timeout_ms"] = timeout_ms
    if max_retries is not None:
        inputs["budgets"]["max_retries"] = max_retries
    return inputs


def run_http(run_id: str, inputs: dict[str, Any], transport: HttpTransport) -> RunResult:
    """Run the loop over ``transport`` and record its exchanges into the run's inputs."""
    result = run_inputs(run_id, inputs, transport, inputs["base_url"])
    result.run["inputs"] = {**result.run["inputs"], "responses": [e.to_record() for e in transport.exchanges]}
    return result


class TextEcho:
    """Writes a streamed run's text to a terminal as it arrives (``HttpTransport``'s two display hooks).

    The model's text is untrusted: control characters become visible escapes, so
    no escape sequence or carriage return reaches the terminal; newlines stay.
    Every write is flushed, or the point of streaming is lost. Each exchange's text
    ends on its own line, and a stream cut short says so, since a retry may show
    the same text again.
    """

    def __init__(self, out: TextIO):
        self.out = out
        self.at_line_start = True

    def text(self, delta: str) -> None:
        shown = printable(delta, keep_newlines=True)
        self.out.write(shown)
        self.out.flush()
        if shown:
            self.at_line_start = shown.endswith("\n")

    def end(self, exchange: Exchange) -> None:
        tail = "" if self.at_line_start else "\n"
        if exchange.error:
            tail += f"[{exchange.error.replace('_', ' ')}]\n"
        if tail:
            self.out.write(tail)
            self.out.flush()
        self.at_line_start = True
