"""Candidate edits for a run of the user's own agent (``tracetui record``), read from the wire.

A recorded agent's inputs are its own code and its tools: nothing there is tracetui's to
edit, so every candidate here rewrites what the model answered (``/responses/N/…``), the
one side a replay of the recording can change. What the model should have said is read
from the requests the agent sent: the tools the failing turn declared, their schemas,
and the user's text (the first user message of the first request). A value is taken
from the user's text only when the parameter's schema accepts it and either constrains
it (a pattern, an enum, a number) or it has the shape of the value it replaces, so
``o-1`` in "What is the status of order o-1?" fills ``^o-[0-9]+$``.

Nothing here edits a tool's result or anything that decides who may do what: a denial
stays the agent's, and the edit is the call the request needed.
"""
from __future__ import annotations

import re
import weakref
from typing import Any, Iterator

import orjson

from tracetui.explain import model_side as model
from tracetui.explain.arguments import parse_or_close
from tracetui.explain.candidate import Candidate, brief, one
from tracetui.explain.evidence import Evidence, event_data as _data
from tracetui.explain.wire import CallSpec, answer_body, call_places, calls_body, finished_place, text_places
from tracetui.loop.validation import validate_arguments
from tracetui.replay.pointer import format_pointer
from tracetui.trace.format import OK
from tracetui.trace.redact import redact_field
from tracetui.trace.safe_text import redacted_prefix

#: a word of the user's text that could be an argument: letters, digits and the joiners ids use
_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.:/@-]*[A-Za-z0-9])?")
#: the most tools (or values) one failure proposes: each is a re-run of the user's command
MOST = 2
#: a trace is untrusted: the most distinct words of the user's text, declared tools and required parameters read
#: for values, and the most schema checks one run's evidence spends on them (thousands of tools declared against a
#: long request would otherwise stall explain for minutes before its first re-run)
MOST_WORDS, MOST_TOOLS, MOST_REQUIRED, MOST_CHECKS = 2000, 64, 8, 5_000
_checks: "weakref.WeakKeyDictionary[Evidence, list[int]]" = weakref.WeakKeyDictionary()
_needed: "weakref.WeakKeyDictionary[Evidence, list[CallSpec]]" = weakref.WeakKeyDictionary()


def receipts_by_tool(ev: Evidence, before_seq: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(tool, result) of each tool result the agent sent back that was not an error, before ``before_seq``."""
    out: list[tuple[str, dict[str, Any]]] = []
    seen: set[bytes] = set()  # each pair once (a list lookup would be quadratic in a trace of many receipts)
    for e in ev.events:
        if before_seq is not None and e["seq"] >= before_seq:
            break
        data = _data(e)
        result = data.get("result")
        if e.get("lane") == "receipt" and e.get("outcome") == OK and isinstance(result, dict):
            tool = data.get("tool")
            pair = (tool if isinstance(tool, str) else "tool", result)
            try:
                key = orjson.dumps(pair, option=orjson.OPT_SORT_KEYS)
            except (TypeError, orjson.JSONEncodeError):
                continue  # a value no answer could repeat
            if key not in seen:
                seen.add(key)
                out.append(pair)
    return out


def _facts(receipts: list[tuple[str, dict[str, Any]]]) -> str:
    shown = [redacted_prefix(" ".join(str(redact_field(k, v)) for k, v in r.items() if isinstance(v, (str, int, float))), 40) or brief(r, 30)
             for _, r in receipts[:3]]
    return ", ".join(shown) + (" …" if len(receipts) > 3 else "")


def _tools_of(receipts: list[tuple[str, dict[str, Any]]]) -> str:
    return " and ".join(list(dict.fromkeys(t for t, _ in receipts))[:2])


def answer_text(receipts: list[tuple[str, dict[str, Any]]]) -> str:
    """An answer that repeats exactly what the tool results said."""
    results = [r for _, r in receipts]
    return orjson.dumps(results[0] if len(results) == 1 else results).decode()


def _tokens(text: str) -> list[str]:
    return list(dict.fromkeys(_TOKEN.findall(text[:20_000])))[:MOST_WORDS]


def _spend(ev: Evidence) -> bool:
    """Count one schema check against the run's budget; False once it is spent (no more values are found)."""
    left = _checks.setdefault(ev, [MOST_CHECKS])
    left[0] -= 1
    return left[0] >= 0


def _shape(text: str) -> str:
    """A value's shape: letters as ``a``, digit runs as ``9`` (``o-12`` and ``o-1`` have one shape)."""
    return re.sub(r"[0-9]+", "9", re.sub(r"[A-Za-z]+", "a", text))


def _types(prop: Any) -> set[str]:
    kind = prop.get("type") if isinstance(prop, dict) else None
    return {kind} if isinstance(kind, str) else {k for k in kind if isinstance(k, str)} if isinstance(kind, list) else set()


def _constrained(prop: Any) -> bool:
    """Whether a parameter's schema narrows its values enough to pick one out of the user's words."""
    return (isinstance(prop, dict) and any(k in prop for k in ("pattern", "enum", "const", "format"))) \
        or bool(_types(prop) & {"integer", "number"})


#: a parameter named like an identifier (``order_id``, ``orderId``, ``ticket_number``, ``sku``)
_ID_NAME = re.compile(r"(?:^|[_-])(?:id|ids|number|num|no|code|ref|reference|key|sku)$|[a-z](?:Id|ID|Number|Ref)$")


def _looks_like(token: str, like: Any, key: str) -> bool:
    """A word for a parameter whose schema takes any text: of the shape of the value it replaces, or (with none
    to replace) one holding a digit for a parameter named as an identifier."""
    if isinstance(like, str):  # a plain word has the shape of every word of prose: it picks nothing out
        return _shape(like) != "a" and _shape(token) == _shape(like)
    return like is None and bool(_ID_NAME.search(key)) and any(ch.isdigit() for ch in token)


def _as_value(token: str, prop: Any) -> Any:
    kinds = _types(prop)
    if kinds & {"integer", "number"} and re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", token):
        number = float(token)
        return int(number) if "integer" in kinds and number.is_integer() else number
    return token


def _valid(tool: dict[str, Any], args: dict[str, Any]) -> bool:
    try:
        return validate_arguments(tool, tool["name"], orjson.dumps(args).decode())[1] is None
    except Exception:  # noqa: BLE001 - a schema the validator cannot use accepts nothing
        return False


def _checkable(tool: dict[str, Any]) -> dict[str, Any]:
    """``tool`` with its schema serialised once (the validator would serialise it again for every value)."""
    try:
        return {**tool, "_schema_json": orjson.dumps(tool["parameters"], option=orjson.OPT_SORT_KEYS)}
    except (TypeError, orjson.JSONEncodeError):
        return tool  # _valid then accepts nothing


def _props(tool: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    params = tool.get("parameters") if isinstance(tool.get("parameters"), dict) else {}
    props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
    required = params.get("required") if isinstance(params.get("required"), list) else []
    return props, [r for r in required if isinstance(r, str)]


def values_from_request(ev: Evidence, tool: dict[str, Any], key: str, like: Any = None,
                        most: int | None = None) -> list[Any]:
    """Values of the user's text that parameter ``key`` of ``tool`` accepts (the first ``most`` of them): only
    where its schema constrains the value, or the value has the shape of ``like`` (the value it would replace)."""
    prop = _props(tool)[0].get(key)
    alone = _checkable({"name": tool["name"], "parameters": {"type": "object", "properties": {key: prop if isinstance(
        prop, dict) else {}}, "required": [key]}})  # the one parameter, checked by the tool's own rules
    numeric = bool(_types(prop) & {"integer", "number"}) and not _types(prop) & {"string"}
    out: list[Any] = []
    for token in _tokens(ev.user_input):
        if most is not None and len(out) >= most:
            break
        value = _as_value(token, prop)
        if value == like or (not _constrained(prop) and not _looks_like(token, like, key)):
            continue
        if numeric and isinstance(value, str):
            continue  # a word is never a number: no check needed to say so
        if not _spend(ev):
            break
        if _valid(alone, {key: value}):
            out.append(value)
    return out


def _fresh_id(ev: Evidence) -> str:
    """An id for a call a fix adds that no call of the run has (a repeated id is a failure of its own)."""
    turns = {e.get("turn") for e in ev.events if isinstance(e.get("turn"), int)}
    taken = {c.call_id for t in turns for c in ev.calls(t)}
    return next(f"call-fix-{n}" for n in range(1, len(taken) + 2) if f"call-fix-{n}" not in taken)


def needed_calls(ev: Evidence) -> list[CallSpec]:
    """Calls of declared tools whose required arguments the user's text fills, the best supported first:
    the tools whose values the schema constrains, then the others in the order the request declared them."""
    if ev in _needed:
        return _needed[ev]
    found: list[tuple[int, int, CallSpec]] = []
    for position, tool in enumerate(ev.tools[:MOST_TOOLS]):
        props, required = _props(tool)
        args: dict[str, Any] = {}
        strong = 0
        for key in required[:MOST_REQUIRED + 1]:
            values = values_from_request(ev, tool, key, most=1) if len(required) <= MOST_REQUIRED else []
            if not values:
                break
            args[key] = values[0]
            strong += _constrained(props.get(key))
        else:
            if required and _spend(ev) and _valid(tool, args):
                found.append((-strong, position, CallSpec(_fresh_id(ev), tool["name"], args)))
    _needed[ev] = [spec for _, _, spec in sorted(found, key=lambda f: f[:2])][:MOST]
    return _needed[ev]


def _call_words(call: CallSpec) -> str:
    if len(call.arguments) == 1:
        (key, value), = call.arguments.items()
        return f"{call.name} with {key} {brief(value)}"
    return f"{call.name} with {brief(call.arguments)}"


def _answer_edit(ev: Evidence, k: int | None, receipts: list[tuple[str, dict[str, Any]]], words: str,
                 lane: str | None, side: str = "model") -> Candidate | None:
    """Response ``k`` as an answer that repeats the receipts: its answer text alone when the body holds it once."""
    attempt = next((x for x in ev.events if x.get("lane") == "http" and _data(x).get("exchange") == k), None)
    generation = ev.generation(attempt.get("turn")) if attempt is not None and k is not None else None
    text = _data(generation).get("text") if generation else None
    exchange = ev.exchange(k)
    body = exchange.get("body") if exchange and "events" not in exchange else None
    if isinstance(text, str) and text and isinstance(body, dict):
        places = list(text_places(body, text))
        if len(places) == 1:
            return one(["responses", k, "body", *places[0]], answer_text(receipts), words, side, lane)
    return model.respond(ev, k, answer_body(ev.provider, answer_text(receipts)), words, lane, side)


def next_steps(ev: Evidence, k: int | None, before_seq: int, lane: str | None,
               voice: str = "the model should have") -> Iterator[Candidate]:
    """Response ``k`` as the step the run needed: an answer from the tool results so far, or the calls the
    user's request needs."""
    receipts = receipts_by_tool(ev, before_seq)
    if receipts:
        c = _answer_edit(ev, k, receipts, f"{voice} answered from the {_tools_of(receipts)} result "
                                          f"({_facts(receipts)})", lane)
        if c:
            yield c
    called = {t for t, _ in receipts}
    for call in [c for c in needed_calls(ev) if c.name not in called]:
        c = model.respond(ev, k, calls_body(ev.provider, [call]), f"{voice} called {_call_words(call)}", lane)
        if c:
            yield c


# -- one generator per kind of failure ------------------------------------------------------------
def denied_resource(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A denied call: the same call with the value the model made up replaced by the one the request names.

    The denial itself stays the agent's: no tool result and no check is edited, only the argument.
    """
    call = ev.call_of(e)
    parsed = parse_or_close(call.arguments) if call and call.arguments else None
    index = ev.tool_index(call.name) if call else None
    if call is None or parsed is None or not isinstance(parsed[0], dict) or index is None:
        return
    args, tool, asked = parsed[0], ev.tools[index], ev.user_input
    for key, value in args.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool) or str(value) in asked:
            continue  # what the request names is not the model's invention
        fitting = [v for v in values_from_request(ev, tool, key, like=value, most=MOST)
                   if _spend(ev) and _valid(tool, {**args, key: v})]
        for other in fitting[:1]:
            c = model.call_edit(ev, call, "arguments", {**args, key: other},
                                f"the model should have called {call.name} with {key} {other} (what the request "
                                f"names; {value} is not)", e.get("lane"))
            if c:
                yield c


def bad_turn(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A response that was cut off, refused, empty or broken: finished, or the step the request needed."""
    k = ev.exchange_of(e)
    if e.get("code") == "incomplete":
        exchange = ev.exchange(k)
        body = exchange.get("body") if exchange and "events" not in exchange else None
        place = finished_place(ev.provider, body, bool(_data(e).get("calls"))) if isinstance(body, dict) else None
        if place is not None:
            reason = _data(e).get("finish_reason") or _data(e).get("status") or "its limit"
            yield one(["responses", k, "body", *place[0]], place[1],
                      f"the response should have finished (it stopped at {reason})", "model", e.get("lane"))
    yield from next_steps(ev, k, e["seq"], e.get("lane"))


def rejected_answer(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """The agent's own acceptance rejected its answer: an answer the tool results back, or the tool call the
    request needed before answering (when none was made)."""
    k = ev.exchange_of(e)
    receipts = receipts_by_tool(ev, e["seq"])
    if receipts:
        c = _answer_edit(ev, k, receipts, f"the model should have answered with what {_tools_of(receipts)} "
                                          f"returned ({_facts(receipts)})", e.get("lane"))
        if c:
            yield c
        return
    for call in needed_calls(ev):
        c = model.respond(ev, k, calls_body(ev.provider, [call]),
                          f"the model should have called {_call_words(call)} before answering", e.get("lane"))
        if c:
            yield c


def rate_limit(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A request the provider failed and the SDK gave up on: its last attempt answered (only a what-if: the
    provider's failure is the environment's, :func:`tracetui.explain.kinds.why_not` says so)."""
    last = ev.event(ev.failure.get("decided_at"))
    e = last if last is not None and last.get("lane") == "http" else e
    yield from next_steps(ev, ev.exchange_of(e), e["seq"], e.get("lane"))


#: how the pair's second edit is said: the recording had no response for the fixed turn's next request
SUPPLIED = "the recording ends after the fixed turn, so its next response is supplied: it should have"


def recording_ended(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """The re-run went past the recording: supply the next response, an answer repeating the result the fixed
    call got (read from this re-run's own evidence)."""
    k = _data(e).get("exchange")
    if not isinstance(k, int) or isinstance(k, bool):
        return
    for c in next_steps(ev, k, e["seq"], e.get("lane"), voice=SUPPLIED):
        yield Candidate(c.edits, c.words, "recording", c.lane, c.cost)


def edit_path(ev: Evidence, event: dict[str, Any] | None) -> str:
    """The field the explorer's ``e`` offers for ``event`` of a record run: the arguments of the call it is about,
    else the body of the response it follows. Never an input: a recorded agent's inputs are its own code."""
    call = ev.call_of(event) if event else None
    if call is not None and call.exchange is not None:
        exchange = ev.exchange(call.exchange)
        body = exchange.get("body") if exchange and "events" not in exchange else None
        places = call_places(body) if isinstance(body, dict) else []
        if call.position < len(places) and places[call.position].arguments is not None:
            return format_pointer(["responses", call.exchange, "body", *places[call.position].arguments])
    k = ev.exchange_of(event) if event else None
    if k is None or ev.exchange(k) is None:
        k = next((i for i in range(len(ev.exchanges)) if ev.exchange(i) is not None), None)
    if k is None:
        return "/responses/0"
    exchange = ev.exchange(k) or {}
    return format_pointer(["responses", k, "body"] if isinstance(exchange.get("body"), dict) else ["responses", k])
