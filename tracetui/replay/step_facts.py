"""What one event says, in terms that mean the same whichever wire or producer wrote it.

Two runs of one scenario on two providers differ in every byte of their HTTP exchanges (paths,
ids, latencies, the shape of the JSON), yet they agree or disagree on the things a person compares:
which tool the model called, with which arguments, what HTTP status came back, what the
authorization check decided, what the answer said. :func:`step_facts` reads those from an event of
any origin: tracetui's own loop (``data.calls``, ``data.tool``, ``data.response``), a recording of
the user's agent (the same fields, read from the wire), and an OTLP import (the span's GenAI
attributes, or the fields the importer put beside them). What cannot be read is None, never a guess.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

import orjson

#: the importer's and the loop's words for a model call that asked for tools ("2 tool call(s): a, b")
_CALLS_SUMMARY = re.compile(r"^\d+ tool call\(s\): (.+)$")
_STATUS_SUMMARY = re.compile(r"(?:HTTP |: )([1-5]\d\d)\b")
_ERROR_SUMMARY = re.compile(r": (timeout|connection|connect|stream_interrupted|response_too_large)\b")


@dataclass(frozen=True, slots=True)
class StepFacts:
    """The comparable content of one event (None: the event does not say)."""

    lane: str
    kind: str
    outcome: str
    code: str | None
    calls: tuple[str, ...] | None = None  # generation: the tools the model asked for, in order
    tool: str | None = None  # arguments, authorization, receipt: the tool the step is about
    arguments: str | None = None  # the arguments as canonical JSON (or as sent, when not JSON)
    status: int | None = None  # http: the response's status
    error: str | None = None  # http: why no whole response came (timeout, connection…)
    answer: str | None = None  # generation or answer: the model's text
    resource: str | None = None  # authorization: what the check was about
    result: str | None = None  # receipt: the tool's result as canonical JSON

    def same_as(self, other: "StepFacts") -> bool:
        """Whether two aligned steps read the same. The lane, outcome, code and the tools called always count
        (the kind is the wire's word: not compared); the rest only where both events say it (an OTLP
        import may not record what the check was about), and a call that failed is not judged by its
        arguments (a response cut short holds whatever part of them arrived)."""
        if (self.lane, self.outcome, self.code, self.calls) != (other.lane, other.outcome, other.code, other.calls):
            return False
        cut = self.lane == "generation" and self.outcome == "failed"
        return all(x is None or y is None or x == y for name in OPTIONAL if not (cut and name == "arguments")
                   for x, y in [(getattr(self, name), getattr(other, name))])


#: the facts compared only where both events hold them
OPTIONAL = ("tool", "arguments", "status", "error", "answer", "resource", "result")


def canonical(value: Any) -> str | None:
    """JSON text with sorted keys, so ``{"a":1,"b":2}`` and ``{"b": 2, "a": 1}`` read the same; a string
    that is not JSON is kept as it is."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return str(value)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _status(value: Any) -> int | None:
    return value if type(value) is int else None


def _messages(attributes: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """GenAI semantic-convention messages (a JSON array of {role, parts}) held in a span attribute."""
    raw = attributes.get(key)
    if isinstance(raw, str):
        try:
            raw = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return []
    return [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []


def _parts(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p for m in _messages(attributes, "gen_ai.output.messages") for p in (m.get("parts") or [])
            if isinstance(p, dict)]


def _generation(event: Mapping[str, Any], data: Mapping[str, Any], attributes: Mapping[str, Any]) -> dict[str, Any]:
    calls = data.get("calls")
    if isinstance(calls, list):
        named = [c for c in calls if isinstance(c, dict)]
        args = [canonical(c.get("arguments")) for c in named]
        return {"calls": tuple(str(c.get("name")) for c in named) or None,
                "arguments": " ".join(a for a in args if a) or None,
                "answer": _text(data.get("text")) or None if data.get("kind") == "text" else None}
    parts = _parts(attributes)
    called = [p for p in parts if p.get("type") == "tool_call"]
    if called:
        args = [canonical(p.get("arguments")) for p in called]
        return {"calls": tuple(str(p.get("name")) for p in called), "arguments": " ".join(a for a in args if a) or None}
    said = _CALLS_SUMMARY.match(str(event.get("summary") or ""))
    if said:
        return {"calls": tuple(n.strip() for n in said.group(1).split(","))}
    texts = [p.get("content") for p in parts if p.get("type") == "text" and isinstance(p.get("content"), str)]
    return {"answer": "".join(texts) or None} if texts else {}


def _http(event: Mapping[str, Any], data: Mapping[str, Any], attributes: Mapping[str, Any]) -> dict[str, Any]:
    response = data.get("response")
    if isinstance(response, dict):
        return {"status": _status(response.get("status")), "error": _text(response.get("error"))}
    status = _status(attributes.get("http.response.status_code"))
    summary = str(event.get("summary") or "")
    if status is None:
        said = _STATUS_SUMMARY.search(summary)
        status = int(said.group(1)) if said else None
    error = _ERROR_SUMMARY.search(summary)
    return {"status": status, "error": error.group(1) if error and status is None else None}


def step_facts(event: Mapping[str, Any]) -> StepFacts:
    """The comparable content of one event of any origin."""
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    attributes = data.get("attributes") if isinstance(data.get("attributes"), dict) else {}
    lane = str(event.get("lane"))
    code = event.get("code")
    found: dict[str, Any] = {}
    if lane == "http":
        found = _http(event, data, attributes)
    elif lane == "generation" and event.get("kind") == "generation.classify":  # not a budget's or a guard's step
        found = _generation(event, data, attributes)
    else:
        tool = _text(data.get("tool")) or _text(attributes.get("gen_ai.tool.name"))
        found["tool"] = tool
        if lane == "arguments":
            found["arguments"] = canonical(data.get("arguments", attributes.get("gen_ai.tool.call.arguments")))
        elif lane == "authorization":
            found["resource"] = _text(data.get("resource"))
        elif lane == "receipt":
            result = data.get("result")
            found["result"] = canonical(result) if result is not None else None
        elif lane == "answer":
            found["answer"] = _text(data.get("text")) or None
            found["tool"] = None
    return StepFacts(lane, str(event.get("kind")), str(event.get("outcome")),
                     code if isinstance(code, str) or code is None else str(code), **found)
