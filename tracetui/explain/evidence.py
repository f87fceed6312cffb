"""What a run shows about its own failure: the events that decided it, its calls, receipts and inputs.

Every candidate edit is read from here, so each fix ``explain`` proposes is grounded in
the run itself. A trace is untrusted input: every field is checked for its type
before it is used, and anything unexpected simply yields no evidence.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from tracetui.loop.answer import orders_named, refund_named
from tracetui.record.wire_requests import declared_tools, first_user_text
from tracetui.replay.edit import exchanges_of
from tracetui.trace.format import FAILED, LANES, OK
from tracetui.trace.reader import RunData


@dataclass(frozen=True)
class Call:
    """One tool call the model made, and where it sits in the exchange that carried it."""

    turn: int
    exchange: int | None  # index into the run's exchanges (``/responses/<exchange>``)
    position: int  # its place among the calls of that response
    call_id: str | None
    name: str | None
    arguments: str | None  # the raw text the model produced


def event_data(event: dict[str, Any]) -> dict[str, Any]:
    """An event's ``data`` when it is an object, else empty (a trace's data may be any JSON)."""
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def as_int(value: Any) -> int | None:
    """``value`` when it is an int (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_data, _int = event_data, as_int  # the names this module's own code uses


class Evidence:
    """A run, read for what explains its verdict. Built once per run; everything is computed lazily."""

    def __init__(self, run: RunData) -> None:
        self.run = run
        self.inputs: dict[str, Any] = run.inputs if isinstance(run.inputs, dict) else {}
        self.verdict = run.verdict()
        failure = self.verdict.get("first_failure")
        self.failure: dict[str, Any] = failure if isinstance(failure, dict) else {}
        self.events = sorted((e for e in run.events if isinstance(e, dict) and _int(e.get("seq")) is not None),
                             key=lambda e: e["seq"])

    # -- the verdict ----------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return bool(self.verdict.get("ready"))

    @property
    def lane(self) -> str | None:
        """The first failing boundary."""
        lane = self.failure.get("lane")
        return lane if lane in LANES else None

    def event(self, seq: Any) -> dict[str, Any] | None:
        return next((e for e in self.events if e["seq"] == seq), None)

    @cached_property
    def failing(self) -> list[dict[str, Any]]:
        """The events that decided the run: where the first failure began, where it gave up, and the
        last failure (a consequence, such as an unbacked answer or the end of a recording), in order."""
        failed = [e for e in self.events if e.get("outcome") == FAILED]
        picked = [self.event(self.failure.get("seq")), self.event(self.failure.get("decided_at")),
                  failed[-1] if failed else None]
        out: list[dict[str, Any]] = []
        for event in picked:
            if event is not None and all(event is not e for e in out):
                out.append(event)
        return out

    @property
    def provider(self) -> str:
        provider = self.inputs.get("provider")
        return provider if isinstance(provider, str) else "openai-responses"

    @property
    def recorded(self) -> bool:
        """Whether the model's side is a recording (it cannot react to an edit) rather than the scripted model."""
        return self.inputs.get("source") in ("responses", "http", "record")

    @property
    def agent(self) -> bool:
        """A run of the user's own agent (``tracetui record``): nothing in its inputs can be edited, and its
        tools and its user's request are read from the requests it sent."""
        return self.inputs.get("source") == "record"

    @cached_property
    def _requests(self) -> list[tuple[int, Any, dict[str, Any]]]:
        """(step, turn, request body) of each HTTP attempt whose request body was kept, in order (a record run's)."""
        out = []
        for e in self.events:
            request = _data(e).get("request") if e.get("lane") == "http" else None
            body = request.get("body") if isinstance(request, dict) else None
            if isinstance(body, dict):
                out.append((e["seq"], e.get("turn"), body))
        return out

    def streamed(self, k: int | None) -> bool:
        """Whether a record run's agent asked for exchange ``k`` as a stream (its request said ``stream``)."""
        for e in self.events:
            data = _data(e)
            if e.get("lane") == "http" and data.get("exchange") == k and isinstance(data.get("request"), dict):
                return data["request"].get("stream") is True
        return False

    def request_body(self, turn: Any = None) -> dict[str, Any] | None:
        """The body a record run's agent sent for ``turn`` (None: the first request it sent)."""
        for _, t, body in self._requests:
            if turn is None or t == turn:
                return body
        return None

    # -- exchanges and calls --------------------------------------------------------------
    @cached_property
    def exchanges(self) -> list[dict[str, Any]]:
        return exchanges_of(self.run)

    @cached_property
    def _attempts(self) -> tuple[list[int], list[int | None]]:
        """The steps of the HTTP attempts, in order, and the exchange each names (looked up, never rescanned)."""
        attempts = [e for e in self.events if e.get("lane") == "http"]
        return [e["seq"] for e in attempts], [_int(_data(e).get("exchange")) for e in attempts]

    def exchange_of(self, event: dict[str, Any]) -> int | None:
        """The exchange an event belongs to: an attempt's own, else the last answered attempt before it."""
        own = _int(_data(event).get("exchange"))
        if event.get("lane") == "http" and own is not None:
            return own
        steps, exchanges = self._attempts
        at = bisect_right(steps, event["seq"])
        return exchanges[at - 1] if at else None

    def exchange(self, index: int | None) -> dict[str, Any] | None:
        if index is None or not 0 <= index < len(self.exchanges):
            return None
        exchange = self.exchanges[index]
        return exchange if isinstance(exchange, dict) else None

    @cached_property
    def _generations(self) -> dict[Any, dict[str, Any]]:
        """Each turn's first ``generation.classify`` event, by turn (a turn of an unhashable type is left out)."""
        out: dict[Any, dict[str, Any]] = {}
        for e in self.events:
            if e.get("kind") == "generation.classify":
                try:
                    out.setdefault(e.get("turn"), e)
                except TypeError:
                    continue
        return out

    def generation(self, turn: Any) -> dict[str, Any] | None:
        """The classified response of a turn (its ``generation.classify`` event)."""
        try:
            return self._generations.get(turn)
        except TypeError:  # a turn that is a list or an object names no turn
            return None

    def calls(self, turn: Any) -> list[Call]:
        event = self.generation(turn)
        if event is None:
            return []
        exchange = self.exchange_of(event)
        raw = _data(event).get("calls")
        out = []
        for i, c in enumerate(raw if isinstance(raw, list) else []):
            if isinstance(c, dict):
                out.append(Call(turn, exchange, i, *(c.get(k) if isinstance(c.get(k), str) else None
                                                      for k in ("call_id", "name", "arguments"))))
        return out

    def call_of(self, event: dict[str, Any]) -> Call | None:
        """The call an event is about; for a repeated id, the last call with that id up to the event."""
        wanted = event.get("call_id") or _data(event).get("tool_call_id")  # a record run's events may say it in data
        matches = [c for c in self.calls(event.get("turn")) if c.call_id == wanted]
        return matches[-1] if matches else None

    # -- what the run established --------------------------------------------------------------
    def receipts(self, before_seq: int | None = None) -> list[dict[str, Any]]:
        """Tool results this run really produced (what an answer may state), before ``before_seq`` if given."""
        out = []
        for e in self.events:
            if before_seq is not None and e["seq"] >= before_seq:
                break
            result = _data(e).get("result")
            if e.get("lane") == "receipt" and e.get("outcome") == OK and isinstance(result, dict) and result not in out:
                out.append(result)
        return out

    @property
    def user_input(self) -> str:
        if self.agent:
            return first_user_text(self.provider, self.request_body()) or ""
        text = self.inputs.get("user_input")
        return text if isinstance(text, str) else ""

    @property
    def orders(self) -> dict[str, dict[str, Any]]:
        data = self.inputs.get("tool_data")
        orders = data.get("orders") if isinstance(data, dict) else None
        return {k: v for k, v in orders.items() if isinstance(v, dict)} if isinstance(orders, dict) else {}

    @property
    def principal(self) -> dict[str, Any]:
        principal = self.inputs.get("principal")
        return principal if isinstance(principal, dict) else {}

    def orders_asked(self) -> list[str]:
        """The order ids the user's request names, first mention first."""
        return orders_named(self.user_input)  # as the answer rule reads it

    def own_orders(self) -> list[str]:
        """Orders the caller may read: same tenant and user."""
        p = self.principal
        return [k for k, o in self.orders.items() if o.get("tenant") == p.get("tenant") and o.get("user") == p.get("user")]

    def refund_asked(self) -> float | None:
        return refund_named(self.user_input)

    @cached_property
    def tools(self) -> list[dict[str, Any]]:
        """The tools offered; for a record run, those the failing turn's request declared (else the last request
        that declared any before the failure)."""
        if self.agent:
            failing = self.event(self.failure.get("seq")) or {}
            tools = declared_tools(self.provider, self.request_body(failing.get("turn")))
            last = _int(self.failure.get("seq"))
            for seq, _, body in reversed(self._requests):
                if tools:
                    break
                if last is None or seq <= last:
                    tools = declared_tools(self.provider, body)
            return list(tools.values())
        tools = self.inputs.get("tools")
        return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []

    def tool_index(self, name: Any) -> int | None:
        if self.agent:
            return next((i for i, t in enumerate(self.tools) if t.get("name") == name), None)
        tools = self.inputs.get("tools")
        if not isinstance(tools, list):
            return None
        return next((i for i, t in enumerate(tools) if isinstance(t, dict) and t.get("name") == name), None)

    def budget(self, key: str) -> int | None:
        budgets = self.inputs.get("budgets")
        return _int(budgets.get(key)) if isinstance(budgets, dict) else None

    @property
    def failures(self) -> dict[str, Any]:
        data = self.inputs.get("tool_data")
        failures = data.get("failures") if isinstance(data, dict) else None
        return failures if isinstance(failures, dict) else {}

    def progress(self) -> tuple[int, int]:
        """How far the run got before it gave up: the step of its deciding failure, then of its first failure."""
        if self.ready:
            return (10 ** 9, 10 ** 9)
        failed = [e["seq"] for e in self.events if e.get("outcome") == FAILED]
        first = _int(self.failure.get("seq"))
        return (failed[-1] if failed else 0, first or 0)

    @property
    def failure_key(self) -> tuple[Any, ...]:
        """What failed first, and how: two runs with the same key failed the same way."""
        return (self.lane, self.failure.get("code"), self.failure.get("seq"))
