"""The provider boundary: what the loop sends, what comes back, and what it means.

Shaped like httpx: a *transport* turns an :class:`HttpRequest` into an
:class:`Exchange` (the fake provider, a cassette of recorded responses, or real
HTTP), and an *adapter* knows one API's JSON: it builds that API's request from
the provider-neutral transcript and parses its response into a :class:`ModelTurn`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(slots=True)
class HttpRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    timeout_ms: int
    #: 0-based index of this model call in the run, and 1-based attempt within it.
    call_index: int = 0
    attempt: int = 1
    stream: bool = False


@dataclass(slots=True)
class Exchange:
    """One HTTP attempt as it was observed; ``status`` is None when no response came."""

    status: int | None
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    latency_ms: int = 0
    error: str | None = None  # "timeout", "connection", "stream_interrupted"
    events: list[dict[str, Any]] | None = None  # server-sent events, when streamed

    def to_record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {"status": self.status, "headers": self.headers}
        if self.events is not None:
            rec["events"] = self.events
        else:
            rec["body"] = self.body
        if self.error:
            rec["error"] = self.error
        rec["latency_ms"] = self.latency_ms
        return rec

    @classmethod
    def from_record(cls, rec: Any) -> "Exchange":
        """Accept a recorded exchange, or a bare response body (an HTTP 200)."""
        if isinstance(rec, dict) and "status" in rec and ("body" in rec or "events" in rec or "error" in rec) \
                and (rec["status"] is None or isinstance(rec["status"], int)) and not isinstance(rec.get("status"), bool):
            return cls(
                status=rec["status"],
                headers=dict(rec.get("headers") or {}),
                body=rec.get("body"),
                latency_ms=int(rec.get("latency_ms") or 0),
                error=rec.get("error"),
                events=rec.get("events"),
            )
        return cls(status=200, headers={"content-type": "application/json"}, body=rec)


class Transport(Protocol):
    """Sends one request.

    The loop keeps time logically and computes retry waits itself. In-process
    transports never sleep; a real one may offer ``wait(ms)``, which the loop calls
    before a retry so the server is really given that time.
    """

    def send(self, request: HttpRequest) -> Exchange: ...


@dataclass(slots=True)
class ToolCall:
    call_id: str | None
    name: str | None
    arguments: str | None  # raw JSON text exactly as the model produced it


# ModelTurn.kind values
TOOL_CALLS = "tool_calls"
TEXT = "text"
REFUSED = "refused"
INCOMPLETE = "incomplete"
FAILED = "failed"
CANCELLED = "cancelled"
UNSUPPORTED = "unsupported"
EMPTY = "empty"
INVALID_TOOL_CALL = "invalid_tool_call"
PROTOCOL_ERROR = "protocol_error"
FOREIGN_BODY = "foreign_body"  # a 200 whose body is not this API at all (HTML page, another vendor)


@dataclass(slots=True)
class ModelTurn:
    """One model response, provider-neutral."""

    kind: str
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    detail: str | None = None  # why, in words, for refusals, truncation, unsupported bodies
    #: transcript items to keep verbatim for the next request (reasoning, calls, messages)
    items: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    status: str | None = None  # the API's own status field, if it has one
    item_types: list[str] = field(default_factory=list)


class Adapter(Protocol):
    """One API's wire shape."""

    name: str
    path: str  # request path appended to the base URL

    def build_request(self, model: str, transcript: list[dict[str, Any]], tools: list[dict[str, Any]],
                      max_output_tokens: int, stream: bool) -> dict[str, Any]: ...

    def parse_response(self, body: Any) -> ModelTurn: ...

    def assemble_stream(self, events: list[dict[str, Any]]) -> tuple[Any, str | None]:
        """Fold server-sent events into a response body; return (body, protocol error or None)."""
        ...
