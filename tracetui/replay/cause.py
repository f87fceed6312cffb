"""The field the explorer's ``e`` offers first for an event: where its failure came from.

A denial is the authorization check doing its job. The edit that explains it is on the
side that asked for the resource: the model's tool call when the model chose it, the
caller's request when the caller named it (a guard that held). Offered first, an edit
of who the caller is, who owns what, a balance, a permission or a guard's switch would
teach the user to weaken a safeguard; such fields are never the default, and stay one
typed path away.
"""
from __future__ import annotations

from typing import Any, Mapping

from tracetui.replay.edit import event_path, exchanges_of
from tracetui.replay.pointer import EditError, format_pointer, parse_pointer
from tracetui.trace.reader import RunData
from tracetui.trace.responsibility import GUARD, responsibility

REQUEST = "/inputs/user_input"
#: inputs that decide who may do what: the caller, a guard's switch
GUARDED_INPUTS = frozenset({"principal", "idempotency_guard", "permissions", "roles", "scopes"})
#: fields of a record in the tool data that say who owns it or what it is worth
GUARDED_FIELDS = frozenset({"tenant", "user", "owner", "paid", "refunded", "balance", "permissions", "roles",
                            "scopes"})


def is_safeguard(path: str) -> bool:
    """Whether ``path`` is (or holds) an input that decides access: the caller, ownership, balances,
    permissions, a guard's switch. A whole object holding one counts (``/inputs/tool_data/orders``)."""
    try:
        parts = parse_pointer(path)
    except EditError:
        return False
    if not parts or parts[0] != "inputs":
        return False
    if len(parts) == 1:
        return True
    if parts[1] in GUARDED_INPUTS:
        return True
    if parts[1] != "tool_data":
        return False
    if parts[2:3] == ["failures"]:  # injected tool failures: the environment, not a safeguard
        return False
    # /inputs/tool_data, …/orders and …/orders/o-2 hold who owns what; below them, the fields that say it
    return len(parts) <= 4 or any(p in GUARDED_FIELDS for p in parts[4:])


def cause_path(event: dict[str, Any], run: RunData) -> str:
    """The field to offer for editing ``event``: what decided it, never a safeguard (see the module)."""
    if event.get("lane") == "authorization":
        path = _denied_call(event, run)
        if path is None or _guard_held(event, run):
            path = REQUEST
    else:
        path = event_path(event, run) or REQUEST
    if is_safeguard(path):
        path = _denied_call(event, run) or REQUEST
    return path


def _guard_held(event: Mapping[str, Any], run: RunData) -> bool:
    """Whether the run's own verdict says a guard held here (the caller asked for what it may not have)."""
    failure = run.verdict().get("first_failure")
    if not isinstance(failure, Mapping) or failure.get("seq") != event.get("seq"):
        failure = {"lane": event.get("lane"), "seq": event.get("seq"), "code": event.get("code"),
                   "reason": event.get("summary")}
    return responsibility(failure, run.inputs) == GUARD


def _denied_call(event: Mapping[str, Any], run: RunData) -> str | None:
    """``/responses/k/body/output/i/arguments`` of the model's call ``event`` is about, when the run holds it."""
    call_id = event.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        return None
    for k, response in enumerate(exchanges_of(run)):
        body = response.get("body") if isinstance(response, dict) else None
        output = body.get("output") if isinstance(body, dict) else None
        for i, item in enumerate(output if isinstance(output, list) else ()):
            if isinstance(item, dict) and item.get("call_id") == call_id and "arguments" in item:
                return format_pointer(["responses", k, "body", "output", i, "arguments"])
    return None
