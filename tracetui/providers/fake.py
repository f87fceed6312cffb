"""The built-in provider: a fake Responses API with a scripted model behind it.

Like a mock transport in httpx, it answers requests in-process. It enforces the
request rules a real API enforces (a tool result must answer a call the request
contains; a call from a reasoning model travels with its reasoning item) and
injects the HTTP faults a run asks for, so every failure is reproducible offline.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from tracetui.loop.stream import responses_to_events
from tracetui.providers.base import Exchange, HttpRequest
from tracetui.providers.fake_model import model_respond

HTML_ERROR = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
              "<body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>")
VENDOR_BODY = {"id": "msg_01", "type": "message", "role": "assistant", "model": "other-model",
               "content": [{"type": "text", "text": "Hello from a different API."}], "stop_reason": "end_turn"}
FAULTS = ("429", "5xx", "timeout", "html", "vendor")
STREAM_FAULTS = {"stream_cut", "stream_no_completion", "stream_bad_json"}


@lru_cache(maxsize=1024)
def _mix(seed: int, call_index: int, attempt: int) -> int:
    """A cheap, stable pseudo-random number for logical latencies (no RNG object per run; pure, so memoised)."""
    x = (seed * 0x9E3779B1 + call_index * 0x85EBCA77 + attempt * 0xC2B2AE3D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) & 0xFFFFFFFF
    return x ^ (x >> 12)


def _highest_call_number(body: dict[str, Any]) -> int:
    """The largest N of the ``call-N`` ids the request already holds (an edit may have added some)."""
    highest = 0
    for item in body.get("input") or ():
        call_id = item.get("call_id") if isinstance(item, dict) else None
        if isinstance(call_id, str) and call_id.startswith("call-") and call_id[5:].isdigit():
            highest = max(highest, int(call_id[5:]))
    return highest


class FakeProvider:
    """A :class:`~tracetui.providers.base.Transport` for scenario runs."""

    def __init__(self, inputs: dict[str, Any]):
        self.scenario = inputs.get("scenario") or "single"
        self.reasoning = self.scenario == "reasoning_items"
        # the first model call fails once per injected fault, in order
        self.faults = list(inputs.get("faults") or []) + ["5xx"] * int(inputs.get("transient_failures") or 0)
        self.seed = int(inputs.get("seed", 0))
        self.issued_ids = 0
        self.responses = 0

    def send(self, request: HttpRequest) -> Exchange:
        latency = 180 + _mix(self.seed, request.call_index, request.attempt) % 640
        rid = {"x-request-id": f"req_{request.call_index + 1}_{request.attempt}"}
        if request.call_index == 0 and request.attempt <= len(self.faults):
            return self._fault(self.faults[request.attempt - 1], request, latency, rid)
        problem = self._reject(request.body)
        if problem:
            return Exchange(400, {**rid, "content-type": "application/json"},
                            {"error": {"message": problem, "type": "invalid_request_error", "param": "input",
                                       "code": None}}, latency)
        body = model_respond(self.scenario, request.body, max(self.issued_ids, _highest_call_number(request.body)))
        self.responses += 1
        body = {"id": f"resp_{self.responses}", **body}
        self.issued_ids += len([i for i in body["output"] if i.get("type") == "function_call"])
        headers = {**rid, "content-type": "application/json"}
        if not request.stream:
            return Exchange(200, headers, body, latency)
        events = responses_to_events(body)
        headers["content-type"] = "text/event-stream"
        if self.scenario in STREAM_FAULTS:
            return self._stream_fault(events, headers, latency)
        return Exchange(200, headers, None, latency, events=events)

    def _fault(self, kind: str, request: HttpRequest, latency: int, rid: dict[str, str]) -> Exchange:
        if kind == "429":
            return Exchange(429, {**rid, "retry-after": "2", "content-type": "application/json"},
                            {"error": {"message": "Rate limit reached for requests per minute. Try again in 2s.",
                                       "type": "requests", "code": "rate_limit_exceeded"}}, latency)
        if kind == "5xx":
            return Exchange(503, {**rid, "content-type": "application/json"},
                            {"error": {"message": "The server is overloaded. Please try again later.",
                                       "type": "server_error", "code": None}}, latency)
        if kind == "timeout":
            return Exchange(None, {}, None, request.timeout_ms, error="timeout")
        if kind == "html":
            return Exchange(200, {"content-type": "text/html"}, HTML_ERROR, latency)
        if kind == "vendor":
            return Exchange(200, {**rid, "content-type": "application/json"}, VENDOR_BODY, latency)
        raise ValueError(f"unknown fault {kind!r}; choose from {', '.join(FAULTS)}")

    def _stream_fault(self, events: list[dict[str, Any]], headers: dict[str, str], latency: int) -> Exchange:
        if self.scenario == "stream_cut":
            cut_at = next(i for i, e in enumerate(events) if e["type"] == "response.function_call_arguments.delta") + 1
            return Exchange(200, headers, None, latency, error="stream_interrupted", events=events[:cut_at])
        if self.scenario == "stream_no_completion":
            return Exchange(200, headers, None, latency, events=events[:-1])
        broken = []
        for e in events:
            if e["type"] == "response.function_call_arguments.done":
                e = {**e, "arguments": e["arguments"][:-2]}
            broken.append(e)
        return Exchange(200, headers, None, latency, events=broken)

    def _reject(self, body: dict[str, Any]) -> str | None:
        """The request checks a real Responses API makes before any model runs."""
        seen: set[str] = set()
        previous_type = None
        for item in body.get("input") or []:
            kind = item.get("type")
            if kind == "function_call":
                if self.reasoning and previous_type != "reasoning" and previous_type != "function_call":
                    return (f"Item '{item.get('id')}' of type 'function_call' was provided without its required "
                            f"'reasoning' item.")
                seen.add(item.get("call_id"))
            elif kind == "function_call_output" and item.get("call_id") not in seen:
                return f"No tool call found for function call output with call_id {item.get('call_id')}."
            previous_type = kind
        return None
