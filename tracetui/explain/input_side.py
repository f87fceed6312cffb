"""Candidate edits on the run's inputs: the caller, the tool data and tools, the budgets and settings.

Each generator reads one kind of failure's evidence (the denied resource and its
owner, the budget that ran out, the injected failure, the guard that was off) and
proposes the input that would have let the run through.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from tracetui.explain.arguments import parse_or_close
from tracetui.explain.candidate import OBJECT, Candidate, one
from tracetui.explain.evidence import Evidence, as_int as _int, event_data as _data
from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.inputs import BUDGET_LIMITS
from tracetui.loop.world import BUDGETS


def caller(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """Denied: the principal that owns the resource (the check that failed says which part)."""
    data = _data(e)
    tenant, user, check = data.get("resource_tenant"), data.get("resource_user"), data.get("failed_check")
    lane = e.get("lane")
    if check == "tenant" and isinstance(tenant, str):
        yield one(["inputs", "principal", "tenant"], tenant, f"the caller would need tenant {tenant}", "caller", lane)
    elif check == "user" and isinstance(user, str):
        yield one(["inputs", "principal", "user"], user, f"the caller would need user {user}", "caller", lane)
    elif check == "tenant and user" and isinstance(tenant, str) and isinstance(user, str):
        yield one(["inputs", "principal"], {**ev.principal, "tenant": tenant, "user": user},
                  f"the caller would need tenant {tenant} and user {user}", "caller", lane, OBJECT)


def owner(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """Denied: the resource belonging to the caller instead."""
    data = _data(e)
    resource, check = data.get("resource"), data.get("failed_check")
    order = ev.orders.get(resource) if isinstance(resource, str) else None
    tenant, user = ev.principal.get("tenant"), ev.principal.get("user")
    if order is None or not isinstance(tenant, str) or not isinstance(user, str):
        return
    lane = e.get("lane")
    if check == "tenant":
        yield one(["inputs", "tool_data", "orders", resource, "tenant"], tenant,
                  f"{resource} should belong to tenant {tenant}", "data", lane)
    elif check == "user":
        yield one(["inputs", "tool_data", "orders", resource, "user"], user,
                  f"{resource} should belong to user {user}", "data", lane)
    elif check == "tenant and user":
        yield one(["inputs", "tool_data", "orders", resource], {**order, "tenant": tenant, "user": user},
                  f"{resource} should belong to the caller (tenant {tenant}, user {user})", "data", lane, OBJECT)


def injected_failure(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A tool failed because the run injects a failure for it: the run without that failure."""
    tool = _data(e).get("tool")
    call = ev.call_of(e)
    arguments = (call.arguments or "") if call else ""
    keys = [k for k in ev.failures if isinstance(k, str) and k.startswith(f"{tool}:")]
    keys = [k for k in keys if k.split(":", 1)[1] in arguments] or keys
    for key in keys[:2]:
        rest = {k: v for k, v in ev.failures.items() if k != key}
        target = key.split(":", 1)[1]
        yield one(["inputs", "tool_data", "failures"], rest,
                  f"{tool} on {target} should succeed (the run injects {ev.failures[key]})", "data", e.get("lane"),
                  OBJECT)


def guard(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A write ran twice (or its outcome was lost) with the idempotency guard off: the guard on."""
    if ev.inputs.get("idempotency_guard") is False:
        tool = _data(e).get("tool")
        what = "refund" if tool == "refund_order" else f"{tool} write"
        yield one(["inputs", "idempotency_guard"], True, f"the idempotency guard prevents the second {what}",
                  "setting", e.get("lane"))


def balance(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A refund over the balance: an order paid enough to refund it."""
    call = ev.call_of(e)
    parsed = parse_or_close(call.arguments) if call and call.arguments else None
    args = parsed[0] if parsed and isinstance(parsed[0], dict) else {}
    order_id, amount = args.get("order_id"), args.get("amount")
    order = ev.orders.get(order_id) if isinstance(order_id, str) else None
    if order is None or not isinstance(amount, (int, float)) or isinstance(amount, bool):
        return
    refunded = order.get("refunded", 0)
    if not isinstance(refunded, (int, float)) or not isinstance(order.get("paid"), (int, float)):
        return
    paid = round(float(refunded) + float(amount), 2)
    yield one(["inputs", "tool_data", "orders", order_id, "paid"], paid,
              f"{order_id} would need {paid:.2f} paid to refund {float(amount):.2f}", "data", e.get("lane"))


_EXTRA = re.compile(r"\('([^']{1,80})' was unexpected\)")
_WRONG_TYPE = re.compile(r"^([A-Za-z0-9_]{1,80}): .* is not of type '([a-z]+)'")


def schema(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """Arguments the schema refused: a schema that accepts them (which side is wrong is for the user to say)."""
    data = _data(e)
    summary = e.get("summary") if isinstance(e.get("summary"), str) else ""
    tool = data.get("tool")
    index = ev.tool_index(tool)
    if index is None or index >= len(ev.tools) or not isinstance(ev.tools[index].get("parameters"), dict):
        return
    params = ev.tools[index]["parameters"]
    lane = e.get("lane")
    extra = _EXTRA.search(summary)
    if extra and params.get("additionalProperties") is False:
        yield one(["inputs", "tools", index, "parameters", "additionalProperties"], True,
                  f"{tool} should accept {extra.group(1)}", "tools", lane)
    wrong = _WRONG_TYPE.search(summary.split(": ", 1)[-1] if summary.startswith(("schema_error", "repair")) else summary)
    props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
    if wrong and isinstance(props.get(wrong.group(1)), dict):
        name = wrong.group(1)
        raw = data.get("arguments")
        parsed = parse_or_close(raw) if isinstance(raw, str) else None
        value = parsed[0].get(name) if parsed and isinstance(parsed[0], dict) else None
        actual = {str: "string", bool: "boolean", int: "integer", float: "number"}.get(type(value))
        if actual and actual != wrong.group(2):
            yield one(["inputs", "tools", index, "parameters", "properties", name, "type"], [wrong.group(2), actual],
                      f"{tool}'s {name} should also accept a {actual}", "tools", lane, OBJECT)


def _ladder(current: int, need: int, limit: int, default: int | None) -> list[int]:
    """Values to try for a budget, smallest first: what the evidence says is needed, then doublings."""
    values = {need, need + 1}
    v = max(current, 1)
    while v < limit and len(values) < 10:
        v *= 2
        values.add(v)
    if default is not None:
        values.add(default)
    return sorted(x for x in values if current < x <= limit)


def raise_budget(ev: Evidence, key: str, need: int, words: str, lane: str | None) -> Iterator[Candidate]:
    current = ev.budget(key)
    if current is None:
        return
    for value in _ladder(current, need, BUDGET_LIMITS[key], BUDGETS.get(key)):
        yield one(["inputs", "budgets", key], value, words.format(value=value, current=current), "budget", lane,
                  group=f"budget:{key}")


_CUT_BY_TOKENS = ("max_output_tokens", "max_tokens", "length", "MAX_TOKENS", "maxOutputTokens")


def output_budget(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """Cut off at the output limit: a limit the response fits in (a recording cannot answer a new limit)."""
    if ev.recorded:
        return
    data = _data(e)
    said = " ".join(str(x) for x in (data.get("finish_reason"), e.get("summary")) if x)
    current = ev.budget("max_output_tokens")
    if current is not None and any(word in said for word in _CUT_BY_TOKENS):
        yield from raise_budget(ev, "max_output_tokens", current * 2,
                                "max_output_tokens {value} is enough ({current} cut the response off)", e.get("lane"))


def loop_budget(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A turn or call budget ran out: the budget the run needed."""
    data = _data(e)
    key, limit = data.get("budget"), _int(data.get("limit"))
    if key == "max_calls" and limit is not None:
        wanted = len(ev.calls(e.get("turn")))
        used = _int(data.get("used")) or 0
        yield from raise_budget(ev, key, used + max(wanted, 1),
                                "a call budget of {value} covers the calls the model makes ({current} ran out)",
                                e.get("lane"))
    elif key == "max_turns" and limit is not None:
        yield from raise_budget(ev, key, limit + 1, "max_turns {value} leaves room for the answer ({current} ran out)",
                                e.get("lane"))


def repair_budget(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    current = ev.budget("repair_budget")
    if current is not None:
        yield from raise_budget(ev, "repair_budget", current + 1,
                                "a repair budget of {value} gives the model room to fix its arguments", e.get("lane"))


_BURSTS = {"server_error": "5xx burst", "overloaded": "overload", "rate_limited": "rate limiting",
           "timeout": "timeouts", "connection_error": "dropped connections", "conflict": "conflicts"}


def retries(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """Retries exhausted on a retryable failure: a retry budget that outlasts the streak."""
    summary = e.get("summary") if isinstance(e.get("summary"), str) else ""
    attempt = _int(_data(e).get("attempt"))
    if "retries exhausted" not in summary or attempt is None:
        return
    what = _BURSTS.get(str(e.get("code")), "failures")
    yield from raise_budget(ev, "max_retries", attempt, "a retry budget of {value} rides out the " + what,
                            e.get("lane"))


def faults(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A built-in run failed at an HTTP fault the run injects: the run without it."""
    if ev.recorded:
        return
    injected = ev.inputs.get("faults")
    if isinstance(injected, list) and injected:
        yield one(["inputs", "faults"], [], f"the run is ready without its injected {', '.join(map(str, injected[:3]))} "
                  f"fault{'s' if len(injected) > 1 else ''}", "provider", e.get("lane"), OBJECT)
    transient = _int(ev.inputs.get("transient_failures"))
    if transient:
        yield one(["inputs", "transient_failures"], 0,
                  f"the run is ready without its {transient} injected 5xx failures", "provider", e.get("lane"),
                  OBJECT)  # removing a test's injected fault is a bigger change than a budget


def gateway_status(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A 200 whose body is not the API's (an HTML page, another vendor): an error status would have been retried."""
    k = _data(e).get("exchange")
    if isinstance(k, int) and not isinstance(k, bool) and ev.exchange(k) is not None:
        yield one(["responses", k, "status"], 502, "an error status (502) instead of a 200 with a foreign body "
                  "would have been retried", "provider", e.get("lane"))


def streaming(ev: Evidence, e: dict[str, Any]) -> Iterator[Candidate]:
    """A stream that broke or ended badly: the same run without streaming."""
    if ev.inputs.get("stream") is True:
        yield one(["inputs", "stream"], False, "the run is ready without streaming (the stream itself broke)",
                  "setting", e.get("lane"))


def whole_context(ev: Evidence) -> Iterator[Candidate]:
    """A damaged context (an ablation): the model sent its whole transcript."""
    ablation = ev.inputs.get("ablation")
    if isinstance(ablation, str) and ablation != "complete" and ablation in ABLATIONS:
        yield one(["inputs", "ablation"], "complete",
                  f"the model needs its whole transcript (the {ablation} ablation: {ABLATIONS[ablation][1]})",
                  "context", ev.lane)

