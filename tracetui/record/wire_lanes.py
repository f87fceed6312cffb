"""The six lanes of a recorded agent run, read from the wire: what the built-in loop records, seen from outside.

The loop decides each boundary itself; a recorded agent decided them in its own code, and all that
is left is the HTTP it spoke. So each lane is read from the exchanges, in arrival order:

- http: each exchange is an attempt; an SDK's retries are repeated requests (:mod:`.wire_http`);
- generation: each answered model response, classified by the provider's own adapter;
- arguments: each tool call against the schema the request of its turn declared (:mod:`.wire_calls`);
- authorization and receipt: from the tool results the agent sent back in its next request;
- answer: the agent's exit status, which is the business's acceptance (:mod:`.wire_answer`).

The events have the loop's kinds, codes, words and data, so every reader (the verdict rule, explain's
evidence, the explorer) reads these runs as it reads the loop's.
"""
from __future__ import annotations

from typing import Any, Sequence

from tracetui.loop.loop import GENERATION_FAILURES
from tracetui.providers import base
from tracetui.providers.base import CASSETTE_EXHAUSTED, Adapter, ModelTurn
from tracetui.providers.registry import ADAPTERS, get_adapter
from tracetui.record.exchange import AgentExit, WireExchange
from tracetui.record.request_match import match
from tracetui.record.wire_answer import answer_event
from tracetui.record.wire_calls import CallReader
from tracetui.record.wire_http import attempt_label, attempts, http_words, latency_of
from tracetui.trace.format import FAILED, OK, RECOVERED


class Lanes:
    """Collects one recorded run's events (the loop's :class:`~tracetui.loop.recorder.Recorder`, plus turns)."""

    def __init__(self, run_id: str = "") -> None:
        self.run_id = run_id
        self.events: list[dict[str, Any]] = []
        self.turn = 0
        self.clock = 0

    def add(self, lane: str, kind: str, outcome: str, summary: str, call_id: str | None = None,
            code: str | None = None, data: dict[str, Any] | None = None) -> dict[str, Any]:
        event = {"rec": "event", "run_id": self.run_id, "seq": len(self.events) + 1, "lane": lane, "kind": kind,
                 "outcome": outcome, "turn": max(self.turn, 1), "t_ms": self.clock, "call_id": call_id,
                 "code": code, "summary": summary, "data": data or {}}
        self.events.append(event)
        return event

    @staticmethod
    def recover(events: Sequence[dict[str, Any]]) -> None:
        for event in events:
            if event["outcome"] == FAILED:
                event["outcome"] = RECOVERED


def events_of(exchanges: Sequence[WireExchange], agent_exit: AgentExit, recorded: Sequence[WireExchange] | None = None,
              run_id: str = "") -> list[dict[str, Any]]:
    """The events of a recorded run: its exchanges read lane by lane, then the agent's exit.

    ``recorded`` is given when these exchanges are a replay's: each request is then compared with
    the recorded one at its index (``data.request_match``, and an ``http.request_changed`` event
    when it differs). ``run_id`` fills each event's ``run_id``.
    """
    exchanges = [_checked(ex) for ex in exchanges]
    lanes = Lanes(run_id)
    adapters: dict[str, Adapter] = {}  # one per provider for the run: Gemini's made-up call ids count over it
    calls = CallReader(lanes, exchanges)
    unanswered: dict[Any, list[dict[str, Any]]] = {}  # API -> its failed attempts no later attempt overcame
    classify_failed: list[dict[str, Any]] = []
    last_turn: ModelTurn | None = None
    chain = attempts(exchanges)
    for i, (ex, attempt) in enumerate(zip(exchanges, chain)):
        lanes.clock += latency_of(ex.response)
        model = ex.provider in ADAPTERS
        if model and attempt.number == 1:
            lanes.turn += 1
        turn, code, summary = None, *http_words(ex, attempt, i)
        if model and code is None:
            turn = _parse(adapters.setdefault(ex.provider, get_adapter(ex.provider)), ex.response)
            if turn.kind == base.FOREIGN_BODY:
                code = "unexpected_body"
                summary = f"{attempt_label(ex, attempt)}: {ex.response.get('status')} but {turn.detail}; not retried"
        data: dict[str, Any] = {"exchange": i, "attempt": attempt.number, "request": ex.request,
                                "response": ex.response}
        if recorded is not None:
            data["request_match"] = match(_checked(recorded[i]).request if i < len(recorded) else None, ex.request,
                                          len(recorded))
        elif isinstance(ex.request_match, dict):  # a replay server compared it as it arrived
            data["request_match"] = ex.request_match
        event = lanes.add("http", "http.attempt", OK if code is None else FAILED, summary, code=code, data=data)
        api = ex.provider if model else (ex.provider, _path(ex.request.get("url")))
        if code is None:  # the agent got past its earlier failures here: by its SDK's retry, or by its own code
            Lanes.recover(unanswered.pop(api, ()))
        elif code != CASSETTE_EXHAUSTED:  # a replay that ran out proves nothing, whatever follows
            unanswered.setdefault(api, []).append(event)
        found = data.get("request_match", {})
        if found.get("match", "exact") not in ("exact", "past_end"):
            lanes.add("http", "http.request_changed", OK,
                      f"request {i} differs from the recording: {found.get('words') or found.get('match')}",
                      data={"exchange": i, "request_match": data["request_match"]})
        if turn is None or turn.kind == base.FOREIGN_BODY:
            continue
        last_turn = turn
        failed = _classify(lanes, turn, _request_id(ex.response))
        if failed is not None:
            classify_failed.append(failed)
            continue
        Lanes.recover(classify_failed)
        if turn.kind == base.TOOL_CALLS:
            calls.read(i, ex, turn, _request_id(ex.response))
    text = last_turn.text if last_turn is not None and last_turn.kind == base.TEXT else ""
    answer_event(lanes, agent_exit, text, len(exchanges))
    return lanes.events


def _checked(ex: WireExchange) -> WireExchange:
    """The exchange with the types every lane relies on: a replay rebuilds recorded exchanges from a trace,
    which anyone may have written. A field of the wrong type reads as absent (an error of no known kind
    as a dropped connection), never as an exception."""
    request = ex.request if isinstance(ex.request, dict) else {}
    wrong = [k for k in _REQUEST_TEXT if request.get(k) is not None and not isinstance(request[k], str)]
    count = request.get("retry_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
        wrong.append("retry_count")
    if wrong:
        request = {**request, **dict.fromkeys(wrong)}
    response = dict(ex.response) if isinstance(ex.response, dict) else {"status": None, "error": "connection"}
    status = response.get("status")
    if not (isinstance(status, int) and not isinstance(status, bool)):
        response["status"] = None
    if response.get("error") is not None and not isinstance(response.get("error"), str):
        response["error"] = "connection"
    if response["status"] is None and not response.get("error"):
        response["error"] = "connection"
    provider = ex.provider if isinstance(ex.provider, str) else None
    if (request, response, provider) == (ex.request, ex.response, ex.provider):
        return ex
    return WireExchange(ex.index, provider, request, response, bool(ex.stream), ex.request_match)


NAMED_CALLS = 10  # a summary is one line: a response of thousands of calls names its first ones
_REQUEST_TEXT = ("method", "url", "provider", "model", "body_sha256")  # fields that are text or null


def _parse(adapter: Adapter, response: dict[str, Any]) -> ModelTurn:
    """The model's response as its adapter reads it; a stream is folded first, as the loop folds it."""
    events = response.get("events")
    if isinstance(events, list):
        body, error = adapter.assemble_stream(events)
        if error:
            return ModelTurn(base.PROTOCOL_ERROR, detail=f"stream protocol error: {error}")
        return adapter.parse_response(body)
    return adapter.parse_response(response.get("body"))


def _classify(lanes: Lanes, mt: ModelTurn, request_id: str | None) -> dict[str, Any] | None:
    """The generation lane's event for one response, in the loop's words; the event when it failed."""
    data: dict[str, Any] = {"kind": mt.kind, "status": mt.status, "finish_reason": mt.finish_reason,
                            "item_types": mt.item_types,
                            "calls": [{"call_id": c.call_id, "name": c.name, "arguments": c.arguments} for c in mt.calls],
                            "text": mt.text, "request_id": request_id}
    if mt.usage:
        data["usage"] = mt.usage
    code = GENERATION_FAILURES.get(mt.kind)
    if code is not None and mt.code:
        code = mt.code
    if mt.detail and code is None:
        data["detail"] = mt.detail
    if code is not None:
        why = mt.detail or code
        if mt.kind == base.INCOMPLETE and mt.calls:
            why += f"; {len(mt.calls)} partial tool call(s) not executed"
        return lanes.add("generation", "generation.classify", FAILED, why, code=code, data=data)
    if mt.kind == base.TOOL_CALLS:
        named = [str(c.name) for c in mt.calls[:NAMED_CALLS]]
        more = f", … ({len(mt.calls) - len(named)} more)" if len(mt.calls) > len(named) else ""
        summary = f"{len(mt.calls)} tool call(s): {', '.join(named)}{more}"
    else:
        summary = "final text answer"
    lanes.add("generation", "generation.classify", OK, summary, data=data)
    return None


def _path(url: Any) -> Any:
    return url.split("?", 1)[0] if isinstance(url, str) else None


def _request_id(response: dict[str, Any]) -> str | None:
    headers = response.get("headers")
    if not isinstance(headers, dict):
        return None
    value = headers.get("x-request-id") or headers.get("request-id")
    return value if isinstance(value, str) else None
