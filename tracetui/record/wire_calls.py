"""The arguments, authorization and receipt lanes of a recorded agent: its tool calls, and what came back.

Each call the model made is checked against the tool its turn's request declared, with the loop's
own check (:func:`tracetui.loop.validation.validate_arguments`: the same budget, RE2 patterns, no
``$ref`` fetched). A call whose arguments pass was run by the agent, which sent its result back in
its next request to the same provider: that result is read for a denial, an error or a receipt
(:mod:`.wire_tools`). Events of one call follow each other, as the loop records them.

A failure is ``recovered`` when the run went on past it: arguments by a later valid call of the same
tool (the repair the loop asks for), a denial or a failed tool by a later call of the same tool that
got a receipt.
"""
from __future__ import annotations

from bisect import bisect_right
from collections import deque
from typing import Any, Sequence

import orjson

from tracetui.loop.validation import SCHEMA_UNCHECKED, validate_arguments
from tracetui.providers.base import ModelTurn, ToolCall
from tracetui.record.exchange import WireExchange
from tracetui.record.wire_requests import ToolResult, declared_tools, first_user_text, results_after_last_model_turn
from tracetui.record.wire_tools import brief, denial, error_of, receipt_value
from tracetui.trace.format import FAILED, OK
from tracetui.trace.responsibility import NOT_ASKED
from tracetui.trace.tool_schema import SchemaUnusable

NO_TOOL_RESULT = "no_tool_result"


class CallReader:
    """Reads the calls of each tool-calling turn into events on ``lanes`` (a :class:`~.wire_lanes.Lanes`)."""

    def __init__(self, lanes: Any, exchanges: Sequence[WireExchange]) -> None:
        self.lanes = lanes
        self.exchanges = exchanges
        self.seen_ids: set[str] = set()
        self.validations: dict[str, int] = {}  # tool name -> calls of it checked so far
        self.args_pending: dict[str, list[dict[str, Any]]] = {}  # tool name -> argument failures not yet repaired
        self.tool_pending: dict[str, list[dict[str, Any]]] = {}  # tool name -> denials/failures not yet overcome
        self.tool_calls = 0  # calls whose result the agent sent back
        self.user_text: dict[str | None, str] = {}  # provider -> the user's question, as last seen
        #: provider -> (its exchanges' indexes, call id -> indexes of its exchanges that carry a result for it)
        self._results_index: dict[str | None, tuple[list[int], dict[str, list[int]]]] = {}

    def read(self, index: int, ex: WireExchange, mt: ModelTurn, request_id: str | None) -> None:
        body = ex.request.get("body")
        tools = declared_tools(ex.provider, body)
        ids = [c.call_id for c in mt.calls]
        self._batch(ids)
        found = self._next_request(index, ex.provider, ids)
        results = _answers(mt.calls, found[1]) if found else {}
        # a request chained to the previous response (Responses' previous_response_id) does not repeat the
        # user's message: the question asked earlier in the run still is the one
        user = first_user_text(ex.provider, body) or self.user_text.get(ex.provider, "")
        self.user_text[ex.provider] = user
        for n, call in enumerate(mt.calls):
            args = self._validate(call, tools, body, request_id)
            if call.call_id is not None:
                self.seen_ids.add(call.call_id)
            if args is None or found is None:
                continue  # not run (the loop would not run it either), or the agent ended after the call
            if _omitted(self.exchanges[found[0]].request.get("body")):
                continue  # the next request was too large to keep: what it said of the call is unknown, not absent
            self._outcome(call, args, results.get(n), found[0], user, request_id)

    # -- arguments ------------------------------------------------------------------------------
    def _batch(self, ids: list[str | None]) -> None:
        dup, seen = None, set()
        for call_id in ids:
            if call_id is not None and call_id in seen:
                dup = call_id
                break
            seen.add(call_id)
        if dup is not None:
            self.lanes.add("arguments", "arguments.batch", FAILED,
                           f"call id {dup} appears twice in one response; their results cannot be told apart",
                           call_id=dup, code="duplicate_call_id", data={"call_ids": ids})
            return
        reused = next((i for i in ids if i in self.seen_ids), None)
        if reused is not None:
            self.lanes.add("arguments", "arguments.batch", FAILED,
                           f"call id {reused} was already used in an earlier turn; results could not be told apart",
                           call_id=reused, code="duplicate_call_id", data={"call_ids": ids})

    def _validate(self, call: ToolCall, tools: dict[str, dict[str, Any]], body: Any,
                  request_id: str | None) -> Any:
        """Check one call's arguments; their parsed value when they pass, else None."""
        name = call.name or ""
        self.validations[name] = self.validations.get(name, 0) + 1
        raw = call.arguments if call.arguments is not None else ""
        if not isinstance(body, dict) or ("omitted" in body and len(body) == 1):
            args, error_type, message = None, SCHEMA_UNCHECKED, (
                "arguments not checked: the request that declared the tools was not kept as JSON (too large, "
                "or not JSON), so their schemas are unknown")
        else:
            try:
                args, error_type, message = validate_arguments(tools.get(name), name, raw)
            except SchemaUnusable as exc:
                args, error_type, message = None, SCHEMA_UNCHECKED, f"arguments not accepted unchecked: {exc}"
            except Exception:  # noqa: BLE001 - the agent's schema: {"type": {...}}, a list, … give no verdict
                args, error_type, message = None, SCHEMA_UNCHECKED, (
                    f"arguments not checked: the schema the request declared for {name!r} is not one tracetui "
                    f"can check arguments with")
        log = {"request_id": request_id, "tool_call_id": call.call_id, "tool": call.name, "arguments": call.arguments,
               "error_type": error_type, "attempt": self.validations[name], "validated_at": self.lanes.clock}
        if error_type is not None:
            if error_type not in ("unknown_tool", SCHEMA_UNCHECKED):
                message = f"{error_type}: {message}"
            event = self.lanes.add("arguments", "arguments.validate", FAILED, message or error_type,
                                   call_id=call.call_id, code=error_type, data=log)
            self.args_pending.setdefault(name, []).append(event)
            return None
        self.lanes.add("arguments", "arguments.validate", OK, f"{name} arguments valid", call_id=call.call_id,
                       data=log)
        self.lanes.recover(self.args_pending.pop(name, ()))
        return args

    # -- authorization and receipt ---------------------------------------------------------------
    def _next_request(self, index: int, provider: str | None,
                      ids: list[str | None]) -> tuple[int, list[ToolResult]] | None:
        """The agent's next request to this provider (the first that answers one of these calls, if any does),
        and the tool results it carries for the turn; None when the agent sent none.

        Looked up in an index of which requests carry a result for which call id, built once per
        provider: a run of many turns or a turn of many calls costs no search per pair."""
        positions, carried_by = self._index(provider)
        after = bisect_right(positions, index)
        if after == len(positions):
            return None
        answering = []
        for call_id in {i for i in ids if i is not None}:
            carriers = carried_by.get(call_id)
            if carriers:
                at = bisect_right(carriers, index)
                if at < len(carriers):
                    answering.append(carriers[at])
        j = min(answering) if answering else positions[after]
        return j, self._results_of(j)

    def _results_of(self, j: int) -> list[ToolResult]:
        ex = self.exchanges[j]
        return results_after_last_model_turn(ex.provider, ex.request.get("body"))

    def _index(self, provider: str | None) -> tuple[list[int], dict[str, list[int]]]:
        built = self._results_index.get(provider)
        if built is None:
            positions: list[int] = []
            carried_by: dict[str, list[int]] = {}
            for j, ex in enumerate(self.exchanges):
                if ex.provider != provider:
                    continue
                positions.append(j)
                for result in self._results_of(j):
                    if result.call_id is not None:
                        carriers = carried_by.setdefault(result.call_id, [])
                        if not carriers or carriers[-1] != j:
                            carriers.append(j)
            built = self._results_index[provider] = (positions, carried_by)
        return built

    def _outcome(self, call: ToolCall, args: Any, result: ToolResult | None, where: int, user: str,
                 request_id: str | None) -> None:
        name = call.name or ""
        data: dict[str, Any] = {"tool_call_id": call.call_id, "tool": call.name, "request_id": request_id,
                                "result_exchange": where, "attempt": 1}
        if result is None:
            event = self.lanes.add("receipt", "receipt.execute", FAILED,
                                   f"no result for call {call.call_id} ({name}) in the agent's next request "
                                   f"(exchange {where}): the model was never told what the tool did",
                                   call_id=call.call_id, code=NO_TOOL_RESULT, data=data)
            self.tool_pending.setdefault(name, []).append(event)
            return
        self.tool_calls += 1
        how = denial(result)
        if how is not None:
            facts = {"tool": call.name, "tool_call_id": call.call_id, "result_exchange": where,
                     "text": brief(result.text), "returned_fields": []}
            event = self.lanes.add("authorization", "authorization.check", FAILED,
                                   f"permission denied: the result of {name} {how}{_not_asked(user, args)}",
                                   call_id=call.call_id, code="permission_denied", data=facts)
            self.tool_pending.setdefault(name, []).append(event)
            return
        self.lanes.add("authorization", "authorization.check", OK, "allowed: no denial in the tool result",
                       call_id=call.call_id, data={"tool": call.name, "tool_call_id": call.call_id,
                                                   "result_exchange": where})
        failure = error_of(result)
        if failure is not None:
            event = self.lanes.add("receipt", "receipt.execute", FAILED,
                                   f"{name} failed ({failure}); the agent sent the error back to the model",
                                   call_id=call.call_id, code="tool_failed",
                                   data={**data, "error_type": "tool_error", "text": brief(result.text)})
            self.tool_pending.setdefault(name, []).append(event)
            return
        value = receipt_value(result)
        self.lanes.add("receipt", "receipt.execute", OK, f"{name} returned {brief(_shown(value), 80)}",
                       call_id=call.call_id, data={**data, "result": value})
        self.lanes.recover(self.tool_pending.pop(name, ()))


def _answers(calls: list[ToolCall], results: list[ToolResult]) -> dict[int, ToolResult]:
    """The result of each call (by its place in the turn): by call id, else (Gemini) the next one of its name.

    The latest results with an id answer this turn's calls with it (a request carries the whole
    conversation, so an id reused from an earlier turn also has that turn's result); two calls that
    share an id take them in order."""
    places: dict[str, list[int]] = {}  # call id -> the places of the calls with it
    for n, call in enumerate(calls):
        if call.call_id is not None:
            places.setdefault(call.call_id, []).append(n)
    by_id: dict[str, list[ToolResult]] = {}
    unnamed: dict[str, deque[ToolResult]] = {}  # tool name -> results that answer no call by id, in order
    for r in results:
        if r.call_id is not None and r.call_id in places:
            by_id.setdefault(r.call_id, []).append(r)
        elif r.name is not None:
            unnamed.setdefault(r.name, deque()).append(r)
    out: dict[int, ToolResult] = {}
    for call_id, at in places.items():
        out.update(zip(at, by_id.get(call_id, [])[-len(at):]))
    for n, call in enumerate(calls):
        if n not in out and isinstance(call.name, str) and unnamed.get(call.name):
            out[n] = unnamed[call.name].popleft()
    return out


def _not_asked(user: str, args: Any) -> str:
    """For a denied call: the identifiers it asked for that the user's request does not name (the model
    made them up), said so the verdict's reason tells a guard's denial from a model's error
    (:mod:`tracetui.trace.responsibility` reads it there)."""
    if not isinstance(args, dict) or not user:
        return ""
    made_up = [v for v in args.values() if isinstance(v, str) and _identifier(v) and v not in user]
    if not made_up:
        return ""
    return f"; {', '.join(made_up[:3])} is {NOT_ASKED} (the user's request does not name it)"


def _identifier(value: str) -> bool:
    """A value that names a resource (``o-2``, ``acct_17``): one word with a digit in it, not prose or a choice."""
    return 0 < len(value) <= 80 and any(ch.isdigit() for ch in value) and not any(ch.isspace() for ch in value)


def _shown(value: dict[str, Any]) -> str:
    if set(value) == {"text"} and isinstance(value["text"], str):
        return value["text"]
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _omitted(body: Any) -> bool:
    """A request body not kept (over the size the recording keeps): only its digest is known."""
    return isinstance(body, dict) and len(body) == 1 and "omitted" in body
