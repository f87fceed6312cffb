"""The built-in provider: a fake API server with a scripted model behind it, in any of the four wire shapes.

Like a mock transport in httpx, it answers requests in-process. Its server side is
the run's provider (:mod:`tracetui.providers.fake_wire`): it reads the request
back into the neutral transcript, enforces the request rules the real APIs share
(a tool result must answer a call the request contains; a call from a reasoning
model travels with its reasoning), lets the provider-neutral scripted model answer,
and renders that answer as the API's body or event stream. It injects the HTTP
faults a run asks for, so every failure is reproducible offline.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from tracetui.providers.base import Exchange, HttpRequest
from tracetui.providers.fake_model import View, model_respond
from tracetui.providers.fake_wire import wire_for
from tracetui.providers.fake_wire.base import HTML_ERROR

FAULTS = ("429", "5xx", "timeout", "html", "vendor")
STREAM_FAULTS = {"stream_cut", "stream_no_completion", "stream_bad_json"}
#: how many distinct requests the provider remembers its replies to (0: answer every request afresh)
REPLY_CACHE_SIZE = 1024
#: a request whose input is larger than this is answered afresh, so the cache stays under about 16 MiB
#: (a scenario's requests are a few KiB)
REPLY_CACHE_MAX_REQUEST = 1 << 14
#: (provider, scenario, responses so far, call ids issued so far, JSON of the conversation) -> reply
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
        self.wire = wire_for(inputs.get("provider"))
        self.reasoning = self.scenario == "reasoning_items" and self.wire.reasoning
        # the first model call fails once per injected fault, in order
        self.faults = list(inputs.get("faults") or []) + ["5xx"] * int(inputs.get("transient_failures") or 0)
        self.seed = int(inputs.get("seed", 0))
        self.issued_ids = 0
        self.responses = 0

    def send(self, request: HttpRequest) -> Exchange:
        latency = 180 + _mix(self.seed, request.call_index, request.attempt) % 640
        request_id = f"req_{request.call_index + 1}_{request.attempt}"
        if request.call_index == 0 and request.attempt <= len(self.faults):
            return self._fault(self.faults[request.attempt - 1], request, latency, request_id)
        headers = self.wire.headers(request_id)
        status, body = self._reply(request.body)
        if status != 200 or not request.stream:
            return Exchange(status, headers, body, latency)
        headers["content-type"] = "text/event-stream"
        if self.scenario in STREAM_FAULTS and self.scenario in self.wire.stream_faults:
            return self._stream_fault(body, headers, latency)
        return Exchange(200, headers, None, latency, events=self.wire.events(body))

    def _fault(self, kind: str, request: HttpRequest, latency: int, request_id: str) -> Exchange:
        if kind in ("429", "5xx"):
            status, headers, body = self.wire.fault(kind, request_id)
            return Exchange(status, headers, body, latency)
        if kind == "timeout":
            return Exchange(None, {}, None, request.timeout_ms, error="timeout")
        if kind == "html":
            return Exchange(200, {"content-type": "text/html"}, HTML_ERROR, latency)
        if kind == "vendor":
            return Exchange(200, self.wire.headers(request_id), self.wire.foreign_body(), latency)
        raise ValueError(f"unknown fault {kind!r}; choose from {', '.join(FAULTS)}")

    def _stream_fault(self, body: dict[str, Any], headers: dict[str, str], latency: int) -> Exchange:
        if self.scenario == "stream_cut":
            events = self.wire.events(body)
            return Exchange(200, headers, None, latency, error="stream_interrupted",
                            events=events[:self.wire.cut_at(events)])
        if self.scenario == "stream_no_completion":
            return Exchange(200, headers, None, latency, events=self.wire.without_completion(self.wire.events(body)))
        return Exchange(200, headers, None, latency, events=self.wire.events(self.wire.broken_arguments(body)))

    def _reply(self, body: dict[str, Any]) -> tuple[int, Any]:
        """The server's answer to a request: its status and its (fresh) JSON body.

        The scripted model and the request checks are a pure function of the
        request's conversation and output limit, the scenario, and how many
        responses and call ids this run has had, so each distinct request is
        answered once and the answer's bytes are kept, as a caching gateway would;
        a repeated request gets them parsed into fresh objects.
        """
        key: tuple[Any, ...] | None = None
        if REPLY_CACHE_SIZE > 0:
            try:
                request = orjson.dumps(self.wire.cache_key(body))
            except TypeError:  # not JSON (an edit can put anything in a run's inputs): answered, not remembered
                request = None
            if request is not None and len(request) <= REPLY_CACHE_MAX_REQUEST:
                key = (self.wire.name, self.scenario, self.responses, self.issued_ids, request)
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
        return status, self.wire.finish(answer, body)

    def _render(self, body: dict[str, Any]) -> tuple[int, Any, int]:
        """Check the request, then let the model answer: (status, JSON body, function calls issued)."""
        items, limit = self.wire.read(body)
        problem, detail, highest_call = self._inspect(items)
        if problem:
            return 400, self.wire.rejection(problem, detail), 0
        view = View.from_request(items, limit, max(self.issued_ids, highest_call))
        reply = model_respond(self.scenario, view, self.wire.unexpressed)
        units = max(1, len(orjson.dumps(self.wire.cache_key(body))) // 4)
        status, answer = self.wire.render(reply, self.responses + 1, units)
        calls = sum(1 for item in reply["output"] if item["type"] == "call") if status == 200 else 0
        return status, answer, calls

    def _inspect(self, items: list[dict[str, Any]]) -> tuple[str | None, str, int]:
        """The checks every API makes before any model runs, in one pass over the request's transcript.

        Returns the problem (``orphan_result``, ``missing_reasoning`` or None), its
        words, and the largest N of the ``call-N`` ids the request already holds
        (an edit may have added some), so new ids stay unique.
        """
        seen: set[Any] = set()
        previous_type = None
        highest = 0
        for item in items:
            kind = item.get("type")
            if kind == "tool_call":
                if self.reasoning and previous_type != "reasoning" and previous_type != "tool_call":
                    return "missing_reasoning", (f"Item '{item.get('id')}' of type 'function_call' was provided "
                                                 f"without its required 'reasoning' item."), highest
                call_id = item.get("call_id")
                seen.add(call_id)
                if isinstance(call_id, str) and call_id.startswith("call-") and call_id[5:].isdigit():
                    highest = max(highest, int(call_id[5:]))
            elif kind == "tool_result" and item.get("call_id") not in seen:
                call_id = item.get("call_id")
                return "orphan_result", f"No tool call found for function call output with call_id {call_id}.", \
                    highest
            previous_type = kind
        return None, "", highest
