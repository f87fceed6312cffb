"""Candidate edits on the model's side: what the model (or the recording of it) should have said.

One field of a recorded call where that is enough (its arguments, its tool name, its id),
else the turn's whole response: the tool calls the request needed, or an answer built
only from the receipts the run really produced.
"""
from __future__ import annotations

import copy
import difflib
from typing import Any, Iterator

import orjson

from tracetui.explain.arguments import parse_or_close, repaired
from tracetui.explain.candidate import RESPONSE, Candidate, brief, one
from tracetui.explain.evidence import Call, Evidence, _data, _int
from tracetui.explain.wire import (
    CallSpec, answer_body, call_places, calls_body, exchange_record, finished_place, streamed_record, text_places,
)
from tracetui.loop.validation import validate_arguments

_DEFAULT_CALLS = ("read_order",)


def call_edit(ev: Evidence, call: Call, field: str, value: Any, words: str, lane: str | None) -> Candidate | None:
    """Change one field of a recorded call: in place when the body holds it, else by rewriting the response."""
    exchange = ev.exchange(call.exchange)
    if exchange is None or call.exchange is None:
        return None
    body = exchange.get("body")
    places = call_places(body) if isinstance(body, dict) and "events" not in exchange else []
    if call.position < len(places):
        place = places[call.position]
        parts = {"name": place.name, "arguments": place.arguments, "call_id": place.call_id}[field]
        if parts is not None:
            if field == "arguments":
                value = orjson.dumps(value).decode() if place.arguments_as_text else value
            return one(["responses", call.exchange, "body", *parts], value, words, "model", lane)
    specs = []
    for other in ev.calls(call.turn):
        spec = _spec(other)
        if spec is None:
            return None
        if other.position == call.position:
            spec = CallSpec(value if field == "call_id" else spec.call_id, value if field == "name" else spec.name,
                            value if field == "arguments" else spec.arguments)
        specs.append(spec)
    return respond(ev, call.exchange, calls_body(ev.provider, specs), words, lane)


def _spec(call: Call) -> CallSpec | None:
    parsed = parse_or_close(call.arguments) if isinstance(call.arguments, str) else None
    if parsed is None or not isinstance(parsed[0], dict) or not call.name or not call.call_id:
        return None
    return CallSpec(call.call_id, call.name, parsed[0])


def respond(ev: Evidence, k: int | None, body: dict[str, Any], words: str, lane: str | None,
            side: str = "model") -> Candidate | None:
    """Replace what exchange ``k`` answered (or supply it, one past the last) with ``body``."""
    if k is None or not 0 <= k <= len(ev.exchanges):
        return None
    if ev.agent and ev.streamed(k):  # the user's agent asked for a stream: it reads only a stream
        return one(["responses", k], streamed_record(ev.provider, body), words, side, lane, RESPONSE)
    if ev.agent:
        body = enveloped(ev, k, body)
    exchange = ev.exchange(k)
    old = exchange.get("body") if exchange else None
    if (exchange is not None and exchange.get("status") == 200 and not exchange.get("error")
            and "events" not in exchange and isinstance(old, dict)):
        if ev.provider == "openai-responses" and old.get("status") == "completed" and isinstance(old.get("output"), list):
            return one(["responses", k, "body", "output"], body["output"], words, side, lane, RESPONSE)
        return one(["responses", k, "body"], body, words, side, lane, RESPONSE)
    return one(["responses", k], exchange_record(body), words, side, lane, RESPONSE)


#: the fields of a response body that say what the model answered (and how it stopped); the others are its
#: envelope (id, model, created, usage …), which a framework validating the body requires
_ANSWER_FIELDS = {
    "openai-chat": ("choices",),
    "anthropic": ("content", "stop_reason", "stop_sequence"),
    "gemini": ("candidates", "promptFeedback"),
    "openai-responses": ("output", "status", "incomplete_details", "error", "output_text"),
}


def enveloped(ev: Evidence, k: int, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` inside the envelope of a response the recording holds (exchange ``k``'s own, else the nearest
    answered one before it, else after): a recorded agent's SDK or framework may check the id and model of
    what it gets (pydantic-ai does), and a body written afresh has neither."""
    order = [k, *range(k - 1, -1, -1), *range(k + 1, len(ev.exchanges))]
    for i in order:
        exchange = ev.exchange(i)
        old = exchange.get("body") if exchange and "events" not in exchange else None
        if isinstance(old, dict) and exchange.get("status") == 200 and _answered_like(ev.provider, old):
            drop = _ANSWER_FIELDS.get(ev.provider, ())
            envelope = {key: value for key, value in old.items() if key not in drop}
            return {**copy.deepcopy(envelope), **body}
    return body


def _answered_like(provider: str, body: dict[str, Any]) -> bool:
    """A body in ``provider``'s answer shape (never an error body, which has no envelope to lend)."""
    key = {"openai-chat": "choices", "anthropic": "content", "gemini": "candidates"}.get(provider, "output")
    return isinstance(body.get(key), list) and "error" not in body


def _fresh_ids(n: int) -> list[str]:
    """Ids for calls a fix adds: never a ``call-N`` a scripted model or a recording would issue."""
    return [f"call-fix-{i + 1}" for i in range(n)]


def answer_text(receipts: list[dict[str, Any]]) -> str:
    """An answer that states exactly what the receipts say (what the verifier accepts)."""
    return orjson.dumps(receipts[0] if len(receipts) == 1 else receipts).decode()


def _facts(receipts: list[dict[str, Any]]) -> str:
    words = [" ".join(str(r[k]) for k in ("order_id", "status") if k in r) or brief(r, 30) for r in receipts[:3]]
    return ", ".join(words) + (" …" if len(receipts) > 3 else "")


def _tools_of(receipts: list[dict[str, Any]]) -> str:
    names = list(dict.fromkeys(str(r.get("source") or "tool") for r in receipts))
    return " and ".join(names[:2])


def needed_calls(ev: Evidence, receipts: list[dict[str, Any]], orders: list[str] | None = None) -> list[CallSpec]:
    """The calls the user's request needs that the receipts do not cover yet."""
    declared = {t.get("name") for t in ev.tools}
    done = {r.get("order_id") for r in receipts}
    amount = ev.refund_asked()
    asked = orders if orders else ev.orders_asked()
    if amount is not None and "refund_order" in declared and not any(r.get("source") == "refund_order" for r in receipts):
        todo = [o for o in asked if o in ev.orders][:1]
        names = [("refund_order", {"order_id": o, "amount": amount, "reason": "customer request"}) for o in todo]
    else:
        tool = next((n for n in _DEFAULT_CALLS if n in declared), None)
        names = [(tool, {"order_id": o}) for o in asked if o not in done][:4] if tool else []
    return [CallSpec(i, n, a) for i, (n, a) in zip(_fresh_ids(len(names)), names)]


def _calls_words(calls: list[CallSpec]) -> str:
    def one_call(c: CallSpec) -> str:
        if set(c.arguments) == {"order_id"}:
            return f"{c.name} with order_id {c.arguments['order_id']}"
        return f"{c.name} with {brief(c.arguments)}"
    return " and ".join(one_call(c) for c in calls)


#: How a rewritten response is said: by the model that answered, or by a recording that ran out early.
VOICES = {"model": ("the model should have answered {what}", "the model should have called {what}"),
          "recording": ("the recording ends too early: the next response should answer {what}",
                        "the recording ends too early: the next response should call {what}")}


def next_steps(ev: Evidence, k: int | None, before_seq: int, lane: str | None, side: str = "model",
               orders: list[str] | None = None) -> Iterator[Candidate]:
    """Response ``k`` rewritten as the step the run needed: answer from its receipts, or make the missing calls."""
    answered, called = VOICES.get(side, VOICES["model"])
    task = ev.inputs.get("task")
    if isinstance(task, dict) and task.get("kind") == "chat":
        text = "I can look up the status of your orders or refund one. Which order?"
        c = respond(ev, k, answer_body(ev.provider, text), answered.format(what="in plain text"), lane, side)
        if c:
            yield c
        return
    receipts = ev.receipts(before_seq)
    if receipts:
        what = f"from the {_tools_of(receipts)} receipt ({_facts(receipts)})"
        c = respond(ev, k, answer_body(ev.provider, answer_text(receipts)), answered.format(what=what), lane, side)
        if c:
            yield c
    calls = needed_calls(ev, receipts, orders)
    if calls:
        c = respond(ev, k, calls_body(ev.provider, calls), called.format(what=_calls_words(calls)), lane, side)
        if c:
            yield c


# -- one generator per kind of failure ------------------------------------------------------------
def denied(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """Asked for a resource the caller may not see: the same call for an order the caller owns."""
    call = ev.call_of(e)
    parsed = parse_or_close(call.arguments) if call and call.arguments else None
    if call is None or parsed is None or not isinstance(parsed[0], dict) or "order_id" not in parsed[0]:
        return
    denied_id = parsed[0]["order_id"]
    own = ev.own_orders()
    asked = [o for o in ev.orders_asked() if o in own]
    for order in [o for o in [*asked, *own] if o != denied_id][:1]:  # an order the user asked for, if any
        c = call_edit(ev, call, "arguments", {**parsed[0], "order_id": order},
                      f"the model should have called {call.name} with order_id {order}", e.get("lane"))
        if c:
            yield c


def bad_arguments(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """Arguments the tool's schema refused: the same call with the arguments repaired by the schema."""
    call = ev.call_of(e)
    index = ev.tool_index(call.name) if call else None
    if call is None or index is None:
        return
    fixed = repaired(call.arguments, ev.tools[index].get("parameters") if index < len(ev.tools) else None)
    if fixed is None:
        return
    args, notes = fixed
    words = f"the model should have called {call.name} with {brief(args)} ({', '.join(notes)})"
    c = call_edit(ev, call, "arguments", args, words, e.get("lane"))
    if c:
        yield c


def unknown_tool(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A tool that is not offered: the same call to a declared tool, the closest name first."""
    call = ev.call_of(e)
    if call is None or not call.name:
        return
    # the declared tools whose schema these arguments fit, the closest name first; any tool when none fits
    tools = [t for t in ev.tools if isinstance(t.get("name"), str) and isinstance(t.get("parameters"), dict)]
    fitting = [t for t in tools if _fits(t, call.arguments)]
    names = [t["name"] for t in (fitting or tools)]
    ranked = sorted(names, key=lambda n: -difflib.SequenceMatcher(None, n, call.name).ratio())
    for name in ranked[:3]:
        c = call_edit(ev, call, "name", name, f"the model should have called {name} ({call.name} is not offered)",
                      e.get("lane"))
        if c:
            yield c


def _fits(tool: dict[str, Any], arguments: str | None) -> bool:
    if not isinstance(arguments, str):
        return False
    try:
        return validate_arguments(tool, tool["name"], arguments)[1] is None
    except Exception:  # noqa: BLE001 - a schema the validator cannot use fits nothing
        return False


def duplicate_id(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A call id used twice: the later call gets an id of its own."""
    dup = e.get("call_id")
    calls = [c for c in ev.calls(e.get("turn")) if c.call_id == dup]
    if not calls:
        return
    call = calls[-1]
    turns = {x["turn"] for x in ev.events if _int(x.get("turn")) is not None}  # a trace's turn may be any JSON
    taken = {c.call_id for t in turns for c in ev.calls(t)}
    fresh = next((f"call-{n}" for n in range(2, 10_000) if f"call-{n}" not in taken), None)
    if fresh is None:
        return
    which = "second " if len(calls) > 1 else ""
    c = call_edit(ev, call, "call_id", fresh, f"the model should have given the {which}{call.name} call its own id "
                  f"({fresh}, not {dup})", e.get("lane"))
    if c:
        yield c


def over_balance(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A refund over the refundable balance: the same refund for at most the balance."""
    call = ev.call_of(e)
    parsed = parse_or_close(call.arguments) if call and call.arguments else None
    if call is None or parsed is None or not isinstance(parsed[0], dict):
        return
    order = ev.orders.get(parsed[0].get("order_id"))
    try:
        balance = round(float(order.get("paid", 0)) - float(order.get("refunded", 0)), 2) if order else None
    except (TypeError, ValueError):
        return
    if balance is None or balance <= 0:
        return
    c = call_edit(ev, call, "arguments", {**parsed[0], "amount": balance},
                  f"the model should have refunded at most {balance:.2f} (the refundable balance)", e.get("lane"))
    if c:
        yield c


def answer_instead(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """The model kept calling tools (a loop, a budget): it should have answered from what it had."""
    receipts = ev.receipts(e["seq"])
    if not receipts:
        return
    k = ev.exchange_of(e)
    tool = _data(e).get("tool")
    words = f"the model should have answered from the {_tools_of(receipts)} receipt ({_facts(receipts)})"
    if isinstance(tool, str):
        words += f" instead of calling {tool} again"
    c = respond(ev, k, answer_body(ev.provider, answer_text(receipts)), words, e.get("lane"))
    if c:
        yield c


def unbacked_answer(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """An answer no receipt backs: say what the receipts say, or read the facts first."""
    data = _data(e)
    k = ev.exchange_of(e)
    receipts = ev.receipts(e["seq"])
    generation = ev.generation(e.get("turn"))
    text = _data(generation).get("text") if generation else None
    exchange = ev.exchange(k)
    if receipts and isinstance(text, str) and text and exchange and isinstance(exchange.get("body"), dict):
        places = list(text_places(exchange["body"], text))
        if len(places) == 1:
            yield one(["responses", k, "body", *places[0]], answer_text(receipts),
                      f"the model should have answered with what {_tools_of(receipts)} returned ({_facts(receipts)})",
                      "model", e.get("lane"))
    claimed = [c.get("order_id") for c in data.get("claims", []) if isinstance(c, dict)] if isinstance(
        data.get("claims"), list) else []
    claimed = list(dict.fromkeys(o for o in claimed if isinstance(o, str)))
    yield from _before_answering(ev, k, e, claimed)


def _before_answering(ev: Evidence, k: int | None, e: dict[str, Any], claimed: list[str]) -> Iterator[Candidate]:
    receipts = ev.receipts(e["seq"])
    calls = needed_calls(ev, receipts, claimed or None)
    if calls:
        c = respond(ev, k, calls_body(ev.provider, calls),
                    f"the model should have called {_calls_words(calls)} before answering", e.get("lane"))
        if c:
            yield c
    elif receipts:
        c = respond(ev, k, answer_body(ev.provider, answer_text(receipts)),
                    f"the model should have answered from the {_tools_of(receipts)} receipt ({_facts(receipts)})",
                    e.get("lane"))
        if c:
            yield c


def bad_response(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A response that refused, failed, broke or was cut off: the step the run needed instead."""
    k = ev.exchange_of(e)
    data = _data(e)
    if e.get("code") == "incomplete":
        exchange = ev.exchange(k)
        body = exchange.get("body") if exchange else None
        place = finished_place(ev.provider, body, bool(data.get("calls"))) if isinstance(body, dict) else None
        if place is not None:
            reason = data.get("finish_reason") or data.get("status") or "its limit"
            yield one(["responses", k, "body", *place[0]], place[1],
                      f"the response should have finished (it stopped at {reason})", "model", e.get("lane"))
    yield from next_steps(ev, k, e["seq"], e.get("lane"))


def recording_ended(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """The recording ran out: supply the response the run was waiting for."""
    k = _data(e).get("exchange")
    if not isinstance(k, int) or isinstance(k, bool):
        return
    yield from next_steps(ev, k, e["seq"], e.get("lane"), side="recording")
