"""The replay server: the recorded responses played back to the user's agent, in order, never the network.

The i-th request received gets ``responses[i]`` (the recording with the edits applied): a body as JSON
(or text), an event stream re-framed as that provider's SDK reads it (Anthropic and Responses with
``event: TYPE`` lines, Chat Completions and Gemini as ``data:`` lines, Chat's ``[DONE]`` as it was
recorded). A recorded failure is reproduced as the agent met it through the recording proxy: no
connection or no answer in time was a 502 or 504 from the proxy, a broken stream breaks off after the
events that arrived. A request past the end gets HTTP 400 ``recording_ended`` (no SDK retries a 400).

Each request is recorded as the proxy records one, beside the response served, and compared with the
recorded request at its index (:func:`tracetui.record.request_match.match`), so a replay never
approximates silently.
"""
from __future__ import annotations

import re
from typing import Any

import orjson

from tracetui.providers.base import CASSETTE_EXHAUSTED, Exchange
from tracetui.record.endpoint import HOP_BY_HOP, Endpoint, WireHandler
from tracetui.record.exchange import WireExchange
from tracetui.record.request_match import match
from tracetui.record.request_record import Credentials, request_record
from tracetui.record.routes import child_env

#: recorded response headers never played back: they described the recorded bytes, not the ones sent now
NOT_REPLAYED = HOP_BY_HOP | {"content-encoding", "date"}
#: providers whose SDK reads the event's type from an ``event:`` line
NAMED_EVENTS = frozenset({"anthropic", "openai-responses"})
_LINE_ENDS = re.compile(r"\r\n|\r|\n")
#: what the recording proxy answered for a failure that had no response (see proxy.py)
PROXY_STATUS = {"connect": 502, "connection": 502, "timeout": 504}


def recording_ended(index: int, held: int) -> dict[str, Any]:
    return {"error": {"type": "recording_ended",
                      "message": f"tracetui replay: the recording has no response for request {index} "
                                 f"(it holds {held}); edit /responses/{held} to supply one"}}


def sse_frame(provider: str | None, event: Any) -> bytes:
    """One recorded event as the provider's server framed it."""
    if isinstance(event, dict) and set(event) == {"data"} and isinstance(event["data"], str):
        data = event["data"]  # kept as text by the parser ([DONE], a stray string)
    else:
        data = orjson.dumps(event).decode()
    # every line end SSE knows (CR too): a CR kept inside one data line would end it there, and what came
    # after would be read as a field of its own
    lines = "".join(f"data: {line}\n" for line in _LINE_ENDS.split(data))
    kind = event.get("type") if isinstance(event, dict) else None
    if provider in NAMED_EVENTS and isinstance(kind, str) and kind and not _LINE_ENDS.search(kind):
        lines = f"event: {kind}\n" + lines
    return (lines + "\n").encode()


class ReplayServer(Endpoint):
    """``with ReplayServer(recorded, responses) as server:`` run the agent with ``server.env()``; then
    ``server.exchanges()``: what it sent, with what it was served and how each request compares."""

    def __init__(self, recorded: list[WireExchange], responses: list[Any], *, port: int = 0):
        super().__init__(port)
        self.recorded = list(recorded)
        self.responses = list(responses)
        self.credentials = Credentials()
        self._got: dict[int, WireExchange] = {}

    def __enter__(self) -> "ReplayServer":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def env(self) -> dict[str, str]:
        return child_env(self.port)

    def exchanges(self) -> list[WireExchange]:
        with self._lock:
            return [self._got[i] for i in sorted(self._got)]

    def answer(self, handler: WireHandler, method: str, path: str, headers: list[tuple[str, str]],
               body: bytes) -> None:
        self.credentials.learn(path, headers)
        request = self.credentials.scrub(request_record(method, path, headers, body))
        index = self.next_index()
        served = Exchange.from_record(self.responses[index]) if index < len(self.responses) else None
        record = served.to_record() if served is not None else {
            "status": None, "headers": {}, "body": recording_ended(index, len(self.responses)),
            "error": CASSETTE_EXHAUSTED, "latency_ms": 0}
        exchange = WireExchange(index, request["provider"], request, record, request["stream"])
        exchange.request_match = self._match(index, request)
        with self._lock:  # kept before a byte is sent: an agent that has its answer finds it recorded
            self._got[index] = exchange
        self._serve(handler, index, request["provider"], served)

    def _match(self, index: int, request: dict[str, Any]) -> dict[str, Any]:
        recorded = self.recorded[index].request if index < len(self.recorded) else None
        return match(recorded, request, held=len(self.recorded))

    def _serve(self, handler: WireHandler, index: int, provider: str | None, exchange: Exchange | None) -> None:
        if exchange is None or exchange.error == CASSETTE_EXHAUSTED:
            handler.send_json(400, recording_ended(index, len(self.responses)))
            return
        headers = [(k, str(v)) for k, v in exchange.headers.items() if k.lower() not in NOT_REPLAYED]
        if exchange.status is None or not 100 <= exchange.status <= 599:
            if exchange.error in PROXY_STATUS:
                handler.send_json(PROXY_STATUS[exchange.error], {"error": {
                    "type": "tracetui_proxy", "message": f"tracetui replay: recorded {exchange.error} failure"}})
            else:  # interrupted, malformed: the agent met a connection that ended unanswered
                handler.hang_up()
            return
        if exchange.events is not None:
            handler.start_response(exchange.status, _with_type(headers, "text/event-stream"), chunked=True)
            for event in exchange.events:
                handler.write_chunk(sse_frame(provider, event))
            if exchange.error:  # the stream broke off here when it was recorded
                handler.hang_up()
            else:
                handler.end_chunks()
            return
        if isinstance(exchange.body, str):
            payload = exchange.body.encode()
            kind = "text/plain; charset=utf-8"
        else:
            payload = orjson.dumps(exchange.body)
            kind = "application/json"
        handler.send_json(exchange.status, payload, _with_type(headers, kind))


def _with_type(headers: list[tuple[str, str]], default: str) -> list[tuple[str, str]]:
    if any(k.lower() == "content-type" for k, _ in headers):
        return headers
    return [*headers, ("content-type", default)]
