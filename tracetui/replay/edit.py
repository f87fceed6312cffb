"""What a user can edit in a run, and how typed text becomes a value.

A run's *editable document* is ``{"inputs": …, "responses": […]}``: its recorded
inputs and every HTTP exchange in order. An edit to ``/inputs/…`` changes the
inputs; an edit to ``/responses/k/…`` becomes an override of exchange ``k`` that
is recorded in the new run's inputs, so an edited run replays like any other.
"""
from __future__ import annotations

import copy
from typing import Any

import orjson

from tracetui.replay.pointer import (
    EditError, assign, format_pointer, list_index, no_field, parse_pointer, resolve,
)
from tracetui.trace.format import NOT_RERUNNABLE  # noqa: F401 - re-exported: what an imported run says
from tracetui.trace.limits import MAX_DEPTH, too_deep
from tracetui.trace.reader import RunData
from tracetui.trace.safe_text import cut_text

OVERRIDES = "response_overrides"
ANY = "*"  # one path segment, whatever it is
REST = "**"  # this segment and everything below it
#: Objects whose keys are data, not a fixed set of fields: a new key there is a real edit (a new
#: order id, an injected failure, a schema keyword, a vendor's field), anywhere else it is a typo.
FREE_FORM: tuple[tuple[str, ...], ...] = (
    ("inputs", "tool_data", "orders"),
    ("inputs", "tool_data", "failures"),
    ("inputs", "tools", ANY, "parameters", REST),
    ("inputs", "responses", REST),
    ("responses", ANY, "headers"),
    ("responses", ANY, "body", REST),
    ("responses", ANY, "events", REST),
)


def is_free_form(parts: list[str]) -> bool:
    """Whether the object at ``parts`` takes new keys (see :data:`FREE_FORM`)."""
    for pattern in FREE_FORM:
        if REST in pattern:
            head = pattern[:pattern.index(REST)]
            if len(parts) >= len(head) and all(p in (ANY, q) for p, q in zip(head, parts)):
                return True
        elif len(parts) == len(pattern) and all(p in (ANY, q) for p, q in zip(pattern, parts)):
            return True
    return False


def exchanges_of(run: RunData) -> list[dict[str, Any]]:
    """The run's HTTP exchanges, in order, as recorded on its http events."""
    out = []
    for event in run.events:
        if event.get("lane") == "http" and isinstance(event.get("data"), dict) and "response" in event["data"]:
            out.append(event["data"]["response"])
    return out




def editable_document(run: RunData) -> dict[str, Any]:
    source = run.run.get("source") if run.run else None
    if isinstance(source, str) and source in NOT_RERUNNABLE:
        raise EditError(NOT_RERUNNABLE[source])
    if not run.inputs:
        raise EditError(f"run {run.run_id} has no recorded inputs (its run line is missing); it cannot be re-run")
    return {"inputs": run.inputs, "responses": exchanges_of(run)}


def _index(value: Any) -> int | None:
    """A trace's value used as a position (an exchange number, a step): a whole number ≥ 0, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _data(event: dict[str, Any]) -> dict[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def event_path(event: dict[str, Any], run: RunData) -> str | None:
    """The most useful field to edit for an event: what decided it (None when the trace does not say).

    Events come from untrusted files: a field of an unexpected type yields no path, never an error.
    """
    data = _data(event)
    lane = event.get("lane")
    if lane == "http" and _index(data.get("exchange")) is not None:
        return f"/responses/{data['exchange']}/status"
    # model output fields live in the exchange that produced this turn: the last http event before it
    seq = _index(event.get("seq"))
    exchange = None
    for e in run.events:
        if seq is None or (_index(e.get("seq")) or 0) >= seq:
            break
        if e.get("lane") == "http" and _index(_data(e).get("exchange")) is not None:
            exchange = _data(e)["exchange"]
    if exchange is not None and isinstance(run.inputs, dict) and run.inputs.get("source") == "record":
        # a recorded agent: only what the model answered can be edited (a streamed answer is its events)
        responses = exchanges_of(run)
        streamed = exchange < len(responses) and isinstance(responses[exchange], dict) \
            and "body" not in responses[exchange] and "events" in responses[exchange]
        return f"/responses/{exchange}/" + ("events" if streamed else "body")
    if lane == "generation" and exchange is not None:
        return f"/responses/{exchange}/body/status"
    call_id = event.get("call_id")
    if lane == "arguments" and exchange is not None and isinstance(call_id, str) and call_id:
        index = _output_index(run, exchange, call_id)
        if index is not None:
            return f"/responses/{exchange}/body/output/{index}/arguments"
    if lane == "authorization":
        return "/inputs/principal/tenant"
    if lane == "receipt":
        return "/inputs/tool_data/failures"
    if lane == "answer" and exchange is not None:
        return f"/responses/{exchange}/body/output"
    return "/inputs/user_input" if _index(event.get("turn")) else None


def _output_index(run: RunData, exchange: int, call_id: str) -> int | None:
    responses = exchanges_of(run)
    if exchange >= len(responses) or not isinstance(responses[exchange], dict):
        return None
    body = responses[exchange].get("body")
    if not isinstance(body, dict) or not isinstance(body.get("output"), list):
        return None
    for i, item in enumerate(body["output"]):
        if isinstance(item, dict) and item.get("call_id") == call_id:
            return i
    return None


def editable_paths(run: RunData, limit: int = 5000) -> list[str]:
    """Every field a user can edit, as JSON Pointers, in document order (for completion)."""
    out: list[str] = []

    def walk(node: Any, path: list[str | int]) -> None:
        if len(out) >= limit:
            return
        if path:
            out.append(format_pointer(path))
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, [*path, key])
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, [*path, i])

    doc = editable_document(run)
    walk({"inputs": {k: v for k, v in doc["inputs"].items() if k not in (OVERRIDES, "edits")},
          "responses": doc["responses"]}, [])
    return out


def _type_name(value: Any) -> str:
    return {bool: "true or false", int: "a whole number", float: "a number", str: "a string", list: "a JSON list",
            dict: "a JSON object", type(None): "null"}.get(type(value), type(value).__name__)


def parse_value(current: Any, text: str, *, exists: bool = True) -> Any:
    """Turn what the user typed into a value of the field's type, or raise :class:`EditError`.

    A string field takes the text as it is (so tool arguments are typed as the
    model would write them); a JSON string literal is accepted too, and ``null``
    clears the field (type ``"null"`` for the word). Every other field takes JSON
    of the same type; ``null`` fields and new keys take any JSON. Whether the loop
    can run with the value is checked afterwards (:func:`~tracetui.loop.inputs.inputs_problem`).
    """
    if exists and isinstance(current, str):
        if text == "null":
            return None
        if text.startswith('"'):
            try:
                value = orjson.loads(text)
                if isinstance(value, str):
                    return value
            except orjson.JSONDecodeError:
                pass
        return text
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        shown = cut_text(text, 30)
        raise EditError(f"{_expected(current, exists)}; {shown!r} is not valid JSON: {_json_problem(exc)}") from None
    if too_deep(value):
        raise EditError(f"the value nests deeper than {MAX_DEPTH} levels")
    if not exists or current is None or value is None:
        return value
    ok = (isinstance(value, bool) if isinstance(current, bool)
          else isinstance(value, int) and not isinstance(value, bool) if isinstance(current, int)
          else isinstance(value, (int, float)) and not isinstance(value, bool) if isinstance(current, float)
          else isinstance(value, type(current)))
    if not ok:
        raise EditError(f"expected {_type_name(current)}, got {_type_name(value)}")
    return value


_EXAMPLES = {bool: "true", int: "4", float: "2.5", list: '["a", "b"]', dict: '{"key": "value"}'}


def _expected(current: Any, exists: bool) -> str:
    if not exists or current is None:
        return 'type any JSON value: text in double quotes ("like this"), a number, true, false, [...] or {...}'
    example = _EXAMPLES.get(type(current))
    return f"expected {_type_name(current)}" + (f", like {example}" if example else "")


def _json_problem(exc: orjson.JSONDecodeError) -> str:
    """A parser's message in words: where it stopped reading, never its own jargon."""
    pos = getattr(exc, "pos", None)
    if "end of data" in str(exc):
        return "it stops before it is complete: a bracket, brace or quote is not closed"
    if pos == 0:
        return "it cannot be read from its first character"
    if isinstance(pos, int):
        return f"it cannot be read from character {pos + 1} on"
    return "it cannot be read"


def edited_inputs(run: RunData, path: str, value: Any) -> dict[str, Any]:
    """The run's inputs with one edit applied (the original is left untouched)."""
    doc = editable_document(run)
    parts = parse_pointer(path)
    if not parts or parts[0] not in ("inputs", "responses"):
        raise EditError("edit a field under /inputs/… or /responses/<n>/…")
    inputs = copy.deepcopy(doc["inputs"])
    if parts[0] == "inputs":
        if len(parts) == 1:
            raise EditError("pick a field inside /inputs")
        assign({"inputs": inputs}, path, value)
    else:
        k = list_index(parts[1]) if len(parts) >= 2 else None
        count = len(doc["responses"])
        if k is None or k > count or (k == count and len(parts) > 2):
            raise EditError(f"/responses/…: the run has {count} exchange(s), numbered from 0 "
                            f"(/responses/{count} supplies a whole next exchange)")
        exchange = copy.deepcopy(doc["responses"][k]) if k < count else None
        if len(parts) == 2:
            if not isinstance(value, dict):
                raise EditError("an exchange is an object with status, headers and body")
            exchange = value
        else:
            assign({"x": exchange}, format_pointer(["x", *parts[2:]]), value)
        inputs.setdefault(OVERRIDES, {})[str(k)] = exchange
    inputs.setdefault("edits", []).append({"path": path, "value": value})
    return inputs


def current_value(run: RunData, path: str) -> tuple[Any, bool]:
    """The field's value and whether it exists.

    A field that does not exist may be added only where keys are data (:data:`FREE_FORM`),
    or as ``/responses/N`` with N one past the last exchange (a whole exchange the run
    never made, e.g. the answer a recording ran out before). Anywhere else a missing key
    is a typo, refused with the nearest existing name.
    """
    doc = editable_document(run)
    try:
        return resolve(doc, path), True
    except EditError:
        parts = parse_pointer(path)
        if len(parts) == 2 and parts[0] == "responses" and list_index(parts[1]) == len(doc["responses"]):
            return None, False
        parent = resolve(doc, format_pointer(parts[:-1])) if len(parts) > 1 else None
        if isinstance(parent, dict):
            if is_free_form(parts[:-1]):
                return None, False
            raise EditError(no_field(format_pointer(parts[:-1]) or "/", parts[-1], parent)
                            + "; only a field that exists can be edited here") from None
        raise
