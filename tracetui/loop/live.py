"""A run against a real endpoint, recorded so that it replays offline.

The inputs say ``source: "http"``, name the endpoint (``base_url``, ``provider``,
``model``) and, once the run is over, hold every exchange in ``responses``, in
order: the same cassette a ``source: "responses"`` run plays, so a replay
rebuilds the run without the network. The API key is never part of the inputs;
only the name of the variable it came from is.
"""
from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, TextIO

import orjson

from tracetui.loop.inputs import MAX_INPUTS_BYTES, RECORDED_QUESTION, responses_inputs
from tracetui.loop.loop import RunResult
from tracetui.loop.retry import policy_for
from tracetui.loop.runner import run_inputs
from tracetui.providers.base import INTERRUPTED, Exchange
from tracetui.providers.cassette import CassetteTransport
from tracetui.providers.http_transport import HttpTransport
from tracetui.trace.safe_text import printable

#: the SDKs' default timeout, applied to connecting and to each read (not to the whole exchange)
LIVE_TIMEOUT_MS = 600_000
#: the SDKs' default for connecting, when no timeout is given
LIVE_CONNECT_TIMEOUT_MS = 5_000
#: JSON bytes left for the separators around the recorded exchanges in the run's inputs
RECORD_MARGIN = 64 * 1024


def http_inputs(provider: str, model: str, base_url: str, *, prompt: str | None = None, stream: bool = False,
                timeout_ms: int | None = None, max_retries: int | None = None, max_turns: int | None = None,
                max_calls: int | None = None, api_key_env: str | None = None, seed: int | None = None) -> dict[str, Any]:
    """Inputs of a live run: the recorded-run task (read_order), pointed at a real endpoint.

    The base URL is kept as given: each adapter appends its API path to it, as that
    provider's SDK does (``…/v1`` for OpenAI-compatible servers, the API root for
    Anthropic and Gemini). Without ``max_retries`` the provider's SDK default applies
    (none for Gemini), without ``timeout_ms`` the SDKs' 600 s per read; without a
    ``seed`` one is drawn at random, so concurrent live runs never back off in step,
    and recorded, so the run still replays exactly.
    """
    inputs = responses_inputs([], provider, max_turns, max_calls, user_input=prompt or RECORDED_QUESTION)
    if seed is None:
        seed = random.SystemRandom().randrange(1 << 32)
    inputs.update(source="http", model=model, base_url=base_url.rstrip("/"), stream=stream, seed=seed)
    if api_key_env:
        inputs["key_variable"] = api_key_env  # the variable's name, never its value
    inputs["budgets"]["timeout_ms"] = LIVE_TIMEOUT_MS if timeout_ms is None else timeout_ms
    inputs["budgets"]["max_retries"] = policy_for(provider).default_max_retries if max_retries is None \
        else max_retries
    return inputs


def run_http(run_id: str, inputs: dict[str, Any], transport: HttpTransport) -> RunResult:
    """Run the loop over ``transport`` and record its exchanges into the run's inputs.

    The transport's run-wide cap is set so the recorded exchanges, with the rest of
    the inputs, stay within what a replay accepts. Ctrl-C at any point ends the run
    with what it recorded: the exchanges so far are played back offline (the run is
    deterministic given them) and the attempt that was under way, or would have
    come next, is recorded as ``interrupted``; the summary says ``ended_by:
    "interrupt"``.
    """
    if transport.caps.max_recorded_bytes is None:
        room = MAX_INPUTS_BYTES - len(orjson.dumps(inputs)) - RECORD_MARGIN
        transport.caps = replace(transport.caps, max_recorded_bytes=max(room, 0))
    try:
        result = run_inputs(run_id, inputs, transport, inputs["base_url"])
    except KeyboardInterrupt:
        if not transport.exchanges or transport.exchanges[-1].error != INTERRUPTED:
            transport.exchanges.append(Exchange(None, {}, None, 0, error=INTERRUPTED))
        recorded = [e.to_record() for e in transport.exchanges]
        result = run_inputs(run_id, inputs, CassetteTransport(recorded), inputs["base_url"])
    result.run["inputs"] = {**result.run["inputs"], "responses": [e.to_record() for e in transport.exchanges]}
    return result


def was_interrupted(result: RunResult) -> bool:
    """Whether the user stopped this run (Ctrl-C): its trace holds what was recorded up to there."""
    return result.summary.get("ended_by") == "interrupt"


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
