"""What every API's fake server does, and the constants their bodies share."""
from __future__ import annotations

from typing import Any

import orjson

#: the model name every fake body carries, as the scenario inputs name it
FAKE_MODEL = "fake-model"
#: a fixed creation time (2026-12-01T00:00:00Z): traces are byte-for-byte repeatable
CREATED_AT = 1796083200
#: text deltas are this many characters, in every API's stream
DELTA_CHARS = 24

HTML_ERROR = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
              "<body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>")
RATE_LIMITED = "Rate limit reached for requests per minute. Try again in 2s."
OVERLOADED = "The server is overloaded. Please try again later."
MODEL_FAILED = "The model failed to generate a response."


def text_pieces(text: str) -> list[str]:
    return [text[start:start + DELTA_CHARS] for start in range(0, len(text), DELTA_CHARS)]


def halves(text: str) -> list[str]:
    half = len(text) // 2
    return [text[:half], text[half:]]


def tokens(value: Any) -> int:
    """A stable stand-in for a token count: a quarter of the value's JSON bytes, at least 1."""
    return max(1, len(orjson.dumps(value)) // 4)


def loads_or(text: Any, default: Any) -> Any:
    try:
        return orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        return default


class FakeWire:
    """One API's fake server. Subclasses implement the reading and the rendering."""

    name = ""
    #: whether this API carries the model's reasoning, which must travel back with the calls it led to
    reasoning = True
    #: scenario → (its status in this API, why it runs differently from the Responses API's, under some
    #: ablation at least)
    differences: dict[str, tuple[str, str]] = {}
    #: fault → (the failure code it gives in this API when retries run out, how this API sends it)
    fault_differences: dict[str, tuple[str, str]] = {}
    #: scripted quirks this API has no wire for: the model answers plainly instead
    unexpressed: frozenset[str] = frozenset()
    #: how a stream fault that this API cannot express runs instead
    stream_faults: frozenset[str] = frozenset({"stream_cut", "stream_no_completion", "stream_bad_json"})

    # -- the request ----------------------------------------------------------------------------
    def read(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
        """The neutral transcript the request carries, and its output token limit."""
        raise NotImplementedError

    def cache_key(self, body: dict[str, Any]) -> list[Any]:
        """What of the request the reply depends on (its conversation and output limit), as JSON-able values."""
        raise NotImplementedError

    # -- the response ---------------------------------------------------------------------------
    def render(self, reply: dict[str, Any], number: int, units: int) -> tuple[int, Any]:
        """(status, body) of the model's neutral reply, the ``number``-th response of the run."""
        raise NotImplementedError

    def finish(self, body: Any, request: dict[str, Any]) -> Any:
        """Fields copied from this request into a (possibly remembered) body: the Responses API echoes its tools."""
        return body

    def events(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The event stream this API sends for ``body``, as the trace records events."""
        raise NotImplementedError

    def broken_arguments(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with its first tool call's arguments cut short of valid JSON (stream_bad_json)."""
        raise NotImplementedError

    def cut_at(self, events: list[dict[str, Any]]) -> int:
        """How many events arrive before the connection drops mid-arguments (stream_cut)."""
        raise NotImplementedError

    def without_completion(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The stream without the event(s) that complete it (stream_no_completion)."""
        raise NotImplementedError

    # -- errors ---------------------------------------------------------------------------------
    def headers(self, request_id: str) -> dict[str, str]:
        return {"x-request-id": request_id, "content-type": "application/json"}

    def rejection(self, problem: str, detail: str) -> dict[str, Any]:
        """The 400 body for a request the API refuses: ``problem`` is ``orphan_result`` or ``missing_reasoning``."""
        raise NotImplementedError

    def fault(self, kind: str, request_id: str) -> tuple[int, dict[str, str], Any]:
        """(status, headers, body) of an injected ``429`` or ``5xx``."""
        raise NotImplementedError

    def foreign_body(self) -> dict[str, Any]:
        """Another vendor's answer, for the ``vendor`` fault."""
        return {"id": "msg_01", "type": "message", "role": "assistant", "model": "other-model",
                "content": [{"type": "text", "text": "Hello from a different API."}], "stop_reason": "end_turn"}
