"""The provider boundary: what the loop sends, what comes back, and what it means.

Shaped like httpx: a *transport* turns an :class:`HttpRequest` into an
:class:`Exchange` (the fake provider, a cassette of recorded responses, or real
HTTP), and an *adapter* knows one API's JSON: it builds that API's request from
the provider-neutral transcript and parses its response into a :class:`ModelTurn`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from tracetui.providers.shapes import json_type
from tracetui.trace.format import CODE_RECORDING_ENDED
from tracetui.trace.limits import MAX_DEPTH, too_deep
from tracetui.trace.safe_text import cut_text


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
    error: str | None = None  # one of EXCHANGE_ERRORS: "timeout", "connection", "stream_interrupted", …
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
        """Accept a recorded exchange, or a bare response body (an HTTP 200).

        Recorded exchanges come from untrusted files, so every field is checked:
        headers keep only string names with scalar values (as text), a latency that
        is not a non-negative integer becomes 0. A record whose status, error or
        events cannot be meant as written becomes a ``malformed_exchange`` failure
        (no status, not retried), with the reason as its error body.
        """
        if too_deep(rec):  # JSON output stops at 254 levels: such a record could be neither sent nor traced
            return cls(status=None, error=MALFORMED_EXCHANGE, body={"error": {
                "type": MALFORMED_EXCHANGE, "message": f"recorded exchange nests deeper than {MAX_DEPTH} levels"}})
        if not _looks_recorded(rec):
            return cls(status=200, headers={"content-type": "application/json"}, body=rec)
        headers = _clean_headers(rec.get("headers"))
        latency = _clean_latency(rec.get("latency_ms"))
        problem = _record_problem(rec)
        if problem is not None:
            return cls(status=None, headers=headers, latency_ms=latency, error=MALFORMED_EXCHANGE, body={
                "error": {"type": MALFORMED_EXCHANGE, "message": f"recorded exchange is malformed: {problem}"}})
        return cls(
            status=rec["status"],
            headers=headers,
            body=rec.get("body"),
            latency_ms=latency,
            error=rec.get("error") or None,
            events=rec.get("events"),
        )


#: ``Exchange.error`` of a recorded exchange that cannot be used as one
MALFORMED_EXCHANGE = "malformed_exchange"
#: ``Exchange.error`` of the attempt a recorded run makes once its recording has no response left
CASSETTE_EXHAUSTED = CODE_RECORDING_ENDED
#: ``Exchange.error`` of an attempt whose response outgrew the caps on what a run reads and records
RESPONSE_TOO_LARGE = "response_too_large"
#: ``Exchange.error`` of the attempt during (or before) which the user stopped a live run (Ctrl-C)
INTERRUPTED = "interrupted"
#: What went wrong with an attempt that has no (whole) response, in words a trace records
EXCHANGE_ERRORS: dict[str, str] = {
    "timeout": "no response (or no headers, or no next byte) before the timeout",
    "connection": "the connection failed or closed early",
    "connect": "no connection could be made (refused, unreachable, or the name did not resolve)",
    "stream_interrupted": "the event stream broke off",
    RESPONSE_TOO_LARGE: "the response was larger than the run may read and record; reading stopped at the cap",
    INTERRUPTED: "the run was interrupted (Ctrl-C); nothing was sent or read after that",
    CASSETTE_EXHAUSTED: "the recording had no response left",
    MALFORMED_EXCHANGE: "the recorded exchange could not be used",
}
def _looks_recorded(rec: Any) -> bool:
    """A recorded exchange rather than a bare body: a non-text ``status`` next to a body, events or error.

    A textual ``status`` is a body's own field (a Responses object), so that dict is a bare body,
    unless the text is a number (``"200"``): that is a record with a mistyped status.
    """
    if not (isinstance(rec, dict) and "status" in rec and ("body" in rec or "events" in rec or "error" in rec)):
        return False
    status = rec["status"]
    return not isinstance(status, str) or status.strip().isdigit()


def _record_problem(rec: dict[str, Any]) -> str | None:
    status, error, events = rec["status"], rec.get("error"), rec.get("events")
    if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
        return f"status is a JSON {json_type(status)}, not an integer or null"
    if status is not None and not 100 <= status <= 599:
        return f"status {status} is not an HTTP status code"
    if error is not None and not isinstance(error, str):
        return f"error is a JSON {json_type(error)}, not a string or null"
    if error and error not in EXCHANGE_ERRORS:  # "" is no error, as null is
        return f"error {brief_text(error)} is not one of {', '.join(EXCHANGE_ERRORS)} (or null)"
    if status is None and not error:
        return "an attempt without a status needs an error (timeout or connection)"
    if events is not None and not isinstance(events, list):
        return f"events is a JSON {json_type(events)}, not a list"
    return None


def exchange_problem(rec: Any) -> str | None:
    """Why a recorded exchange (as an edit leaves it) cannot be played, in words; None when it can.

    The same checks :meth:`Exchange.from_record` makes, for an exchange that must be
    a whole record (an edited one), not a bare response body.
    """
    if not isinstance(rec, dict):
        return f"an exchange is an object with status, headers and body, not a JSON {json_type(rec)}"
    if "status" not in rec:
        return "an exchange needs a status (an HTTP status code, or null with an error)"
    if too_deep(rec):
        return f"the exchange nests deeper than {MAX_DEPTH} levels"
    headers = rec.get("headers")
    if headers is not None and not isinstance(headers, dict):
        return f"headers is a JSON {json_type(headers)}, not an object"
    latency = rec.get("latency_ms")
    if latency is not None and (isinstance(latency, bool) or not isinstance(latency, int) or latency < 0):
        return "latency_ms must be a whole number ≥ 0"
    return _record_problem(rec)


def brief_text(value: str, limit: int = 40) -> str:
    return repr(cut_text(value, limit))


def _clean_headers(raw: Any) -> dict[str, str]:
    """String names only; string values as they are, other scalars as their JSON text, the rest dropped."""
    if not isinstance(raw, dict):
        return {}
    headers: dict[str, str] = {}
    for name, value in raw.items():
        if not isinstance(name, str):
            continue
        if isinstance(value, str):
            headers[name] = value
        elif isinstance(value, bool):
            headers[name] = "true" if value else "false"
        elif isinstance(value, (int, float)) and math.isfinite(value):
            headers[name] = str(value)
    return headers


def _clean_latency(raw: Any) -> int:
    if isinstance(raw, bool):
        return 0
    if isinstance(raw, str) and raw.strip().isdecimal() and len(raw.strip()) <= 16:
        raw = int(raw.strip())
    if isinstance(raw, float) and math.isfinite(raw):
        raw = int(raw)
    if isinstance(raw, int) and 0 <= raw <= _MAX_LATENCY_MS:
        return raw
    return 0


_MAX_LATENCY_MS = 2 ** 53


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
    #: a failure code more exact than the kind's own (a Gemini finish reason, say); None: the kind's
    code: str | None = None


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
