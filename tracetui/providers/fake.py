"""The built-in provider: a fake Responses API with a scripted model behind it.

Like a mock transport in httpx, it answers requests in-process. It enforces the
request rules a real API enforces (a tool result must answer a call the request
contains; a call from a reasoning model travels with its reasoning item) and
injects the HTTP faults a run asks for, so every failure is reproducible offline.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from tracetui.providers.openai_responses import responses_to_events
from tracetui.providers.base import Exchange, HttpRequest
from tracetui.providers.fake_model import model_respond

HTML_ERROR = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
              "<body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>")
#: another vendor's answer, as JSON: every run parses its own copy, so no run can change another's
VENDOR_BODY = orjson.dumps({"id": "msg_01", "type": "message", "role": "assistant", "model": "other-model",
                            "content": [{"type": "text", "text": "Hello from a different API."}],
                            "stop_reason": "end_turn"})
FAULTS = ("429", "5xx", "timeout", "html", "vendor")
STREAM_FAULTS = {"stream_cut", "stream_no_completion", "stream_bad_json"}
#: how many distinct requests the provider remembers its replies to (0: answer every request afresh)
REPLY_CACHE_SIZE = 1024
#: a request whose input is larger than this is answered afresh, so the cache stays under about 16 MiB
#: (a scenario's requests are a few KiB)
REPLY_CACHE_MAX_REQUEST = 1 << 14
#: (scenario, responses so far, call ids issued so far, JSON of [output limit, input]) -> reply
_replies: dict[tuple[Any, ...], tuple[int, bytes, int]] = {}


@lru_cache(maxsize=1024)
def _mix(seed: int, call_index: int, attempt: int) -> int:
    """A cheap, stable pseudo-random number for logical latencies (no RNG object per run; pure, so memoised)."""
    x = (seed * 0x9E3779B1 + call_index * 0x85EBCA77 + attempt * 0xC2B2AE3D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) & 0xFFFFFFFF
    return x ^ (x >> 12)


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
        request_id = f"req_{request.call_index + 1}_{request.attempt}"
        if request.call_index == 0 and request.attempt <= len(self.faults):
            return self._fault(self.faults[request.attempt - 1], request, latency, {"x-request-id": request_id})
        headers = {"x-request-id": request_id, "content-type": "application/json"}
        status, body = self._reply(request.body)
        if status != 200 or not request.stream:
            return Exchange(status, headers, body, latency)
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
            return Exchange(200, {**rid, "content-type": "application/json"}, orjson.loads(VENDOR_BODY), latency)
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

    def _reply(self, body: dict[str, Any]) -> tuple[int, Any]:
        """The server's answer to a request: its status and its (fresh) JSON body.

        The scripted model and the request checks are a pure function of the
        request's input and output limit, the scenario, and how many responses and
        call ids this run has had, so each distinct request is answered once and the
        answer's bytes are kept, as a caching gateway would; a repeated request gets
        them parsed into fresh objects.
        """
        key: tuple[Any, ...] | None = None
        if REPLY_CACHE_SIZE > 0:
            try:
                request = orjson.dumps([body.get("max_output_tokens"), body.get("input")])
            except TypeError:  # not JSON (an edit can put anything in a run's inputs): answered, not remembered
                request = None
            if request is not None and len(request) <= REPLY_CACHE_MAX_REQUEST:
                key = (self.scenario, self.responses, self.issued_ids, request)
        cached = _replies.get(key) if key is not None else None
        if cached is not None:
            status, content, calls = cached
            answer = orjson.loads(content)
        else:
            status, answer, calls = self._render(body)
            if key is not None:
                if len(_replies) >= REPLY_CACHE_SIZE:
                    _replies.clear()
                _replies[key] = (status, orjson.dumps(answer), calls)
        if status == 200:
            self.responses += 1
            self.issued_ids += calls
        return status, answer

    def _render(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], int]:
        """Check the request, then let the model answer: (status, JSON body, function calls issued)."""
        problem, highest_call = self._inspect(body)
        if problem:
            return 400, {"error": {"message": problem, "type": "invalid_request_error", "param": "input",
                                   "code": None}}, 0
        answer = {"id": f"resp_{self.responses + 1}",
                  **model_respond(self.scenario, body, max(self.issued_ids, highest_call))}
        calls = [item["type"] for item in answer["output"]].count("function_call")
        return 200, answer, calls

    def _inspect(self, body: dict[str, Any]) -> tuple[str | None, int]:
        """The checks a real Responses API makes before any model runs, in one pass over the input.

        Returns the rejection (or None) and the largest N of the ``call-N`` ids the
        request already holds (an edit may have added some), so new ids stay unique.
        """
        seen: set[str] = set()
        previous_type = None
        highest = 0
        for item in body.get("input") or ():
            kind = item.get("type")
            if kind == "function_call":
                if self.reasoning and previous_type != "reasoning" and previous_type != "function_call":
                    return (f"Item '{item.get('id')}' of type 'function_call' was provided without its required "
                            f"'reasoning' item."), highest
                call_id = item.get("call_id")
                seen.add(call_id)
                if isinstance(call_id, str) and call_id.startswith("call-") and call_id[5:].isdigit():
                    highest = max(highest, int(call_id[5:]))
            elif kind == "function_call_output" and item.get("call_id") not in seen:
                return f"No tool call found for function call output with call_id {item.get('call_id')}.", highest
            previous_type = kind
        return None, highest
