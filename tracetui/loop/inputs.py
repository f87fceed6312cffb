"""A run's inputs: the complete, editable record from which the run is reproduced."""
from __future__ import annotations

import copy
from typing import Any

import orjson

from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.retry import policy_for
from tracetui.loop.scenarios import SCENARIOS
from tracetui.loop.world import (
    BUDGETS, INSTRUCTIONS, PRINCIPAL, READ_ORDER, default_tool_data, default_tools,
)
from tracetui.trace.safe_text import redacted_prefix

RECORDED_BUDGETS = {**BUDGETS, "max_turns": 3, "max_calls": 2}
RECORDED_QUESTION = "What is the status of order o-1?"


def build_inputs(scenario: str, ablation: str = "complete", faults: tuple[str, ...] | list[str] = (),
                 transient_failures: int = 0, seed: int = 0, provider: str = "openai-responses") -> dict[str, Any]:
    sc = SCENARIOS[scenario]
    if ablation not in ABLATIONS:
        raise KeyError(ablation)
    tool_data = default_tool_data()
    tool_data["failures"] = dict(sc.failures)
    return {
        "source": "scenario",
        "scenario": sc.name,
        "ablation": ablation,
        "provider": provider,
        "model": "fake-model",
        "instructions": INSTRUCTIONS,
        "user_input": sc.user_input,
        "task": copy.deepcopy(sc.task),
        "principal": dict(PRINCIPAL),
        "tools": default_tools(),
        "tool_data": tool_data,
        "budgets": {**BUDGETS, **sc.budgets},
        "faults": list(faults),
        "transient_failures": transient_failures,
        "stream": sc.stream,
        "idempotency_guard": sc.idempotency_guard,
        "seed": seed,
    }


def run_id_for(scenario: str, ablation: str = "complete", faults=(), transient_failures: int = 0,
               seed: int = 0) -> str:
    parts = [scenario]
    if ablation != "complete":
        parts.append(ablation)
    parts.extend(f"fault-{f}" for f in faults)
    if transient_failures:
        parts.append(f"transient-{transient_failures}")
    if seed:
        parts.append(f"seed-{seed}")
    return "-".join(parts)


def responses_inputs(responses: list[Any], provider: str = "openai-responses", max_turns: int | None = None,
                     max_calls: int | None = None, user_input: str = RECORDED_QUESTION) -> dict[str, Any]:
    """Inputs for a run over recorded raw responses (a cassette), with the read-only tool set.

    Retries follow the provider's SDK default (none for Gemini), as a live run's do.
    """
    budgets = {**RECORDED_BUDGETS, "max_retries": policy_for(provider).default_max_retries}
    if max_turns is not None:
        budgets["max_turns"] = max_turns
    if max_calls is not None:
        budgets["max_calls"] = max_calls
    return {
        "source": "responses",
        "scenario": None,
        "ablation": "complete",
        "provider": provider,
        "model": "recorded-model",
        "instructions": INSTRUCTIONS,
        "user_input": user_input,
        "task": {"kind": "order_facts"},
        "principal": dict(PRINCIPAL),
        "tools": [copy.deepcopy(READ_ORDER)],
        "tool_data": default_tool_data(),
        "budgets": budgets,
        "faults": [],
        "transient_failures": 0,
        "stream": False,
        "idempotency_guard": True,
        "seed": 0,
        "responses": responses,
    }


#: Every budget, with the largest value a run may ask for: beyond these a run is not a
#: test of anything but patience (and a trace can hold 1e9 in a few bytes).
BUDGET_LIMITS = {"max_turns": 100, "max_calls": 1000, "max_retries": 10, "repair_budget": 10,
                 "timeout_ms": 3_600_000, "max_output_tokens": 10_000_000}
BUDGET_KEYS = tuple(BUDGET_LIMITS)
#: Other whole-number inputs and their largest values (transient failures as `generate` allows).
COUNT_LIMITS = {"transient_failures": 50, "seed": 2 ** 63 - 1}
MAX_FAULTS = 20
#: The whole inputs, as JSON: recorded responses included, well under the reader's line limit.
MAX_INPUTS_BYTES = 8 * 1024 * 1024


def _whole(value: Any, limit: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit


def inputs_problem(inputs: Any) -> str | None:
    """Why these inputs cannot be run (after an edit, say), in words; None when they can.

    Every path that runs recorded inputs (replay, the explorer's editor, explain)
    asks this first, so a trace cannot make the loop run for ever or out of memory.
    """
    from tracetui.providers.base import exchange_problem
    from tracetui.providers.fake import FAULTS
    from tracetui.providers.registry import ADAPTERS
    from tracetui.trace.limits import MAX_DEPTH, too_deep

    if not isinstance(inputs, dict):
        return "inputs must be a JSON object"
    if too_deep(inputs):
        return f"inputs nest deeper than {MAX_DEPTH} levels"
    try:
        size = len(orjson.dumps(inputs))
    except (TypeError, orjson.JSONEncodeError) as exc:
        return f"inputs cannot be written as JSON: {exc}"
    if size > MAX_INPUTS_BYTES:
        return f"inputs are {size:,} bytes as JSON, over the {MAX_INPUTS_BYTES:,}-byte limit"
    budgets = inputs.get("budgets")
    if not isinstance(budgets, dict):
        return "budgets must be an object"
    for key, limit in BUDGET_LIMITS.items():
        value = budgets.get(key)
        if not _whole(value, limit):
            return f"budgets.{key} must be a whole number from 0 to {limit:,} (got {_shown(value)})"
    if inputs.get("ablation", "complete") not in ABLATIONS:
        return f"unknown ablation {_shown(inputs.get('ablation'))}; choose from {', '.join(ABLATIONS)}"
    if inputs.get("provider") not in ADAPTERS:
        return f"unknown provider {_shown(inputs.get('provider'))}; choose from {', '.join(sorted(ADAPTERS))}"
    if inputs.get("source", "scenario") == "scenario" and inputs.get("scenario") not in SCENARIOS:
        return f"unknown scenario {_shown(inputs.get('scenario'))}"
    faults = inputs.get("faults") or []
    if not isinstance(faults, list) or len(faults) > MAX_FAULTS or any(f not in FAULTS for f in faults):
        return f"faults must be a list of at most {MAX_FAULTS} of {', '.join(FAULTS)}"
    for key, limit in COUNT_LIMITS.items():
        value = inputs.get(key, 0)
        if not _whole(value, limit):
            return f"{key} must be a whole number from 0 to {limit:,} (got {_shown(value)})"
    tools = inputs.get("tools")
    if not isinstance(tools, list) or not all(
            isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("parameters"), dict)
            for t in tools):
        return "tools must be a list of objects, each with a name and a parameters schema"
    for key in ("principal", "task", "tool_data"):
        if not isinstance(inputs.get(key), dict):
            return f"{key} must be an object"
    orders = inputs["tool_data"].get("orders", {})
    if not isinstance(orders, dict) or not all(isinstance(o, dict) for o in orders.values()):
        return "tool_data.orders must map order ids to objects"
    failures = inputs["tool_data"].get("failures", {})
    if not isinstance(failures, dict) or not all(isinstance(v, str) for v in failures.values()):
        return "tool_data.failures must map 'tool:order' to a failure name"
    for key in ("instructions", "user_input", "model"):
        if not isinstance(inputs.get(key), str):
            return f"{key} must be a string (got {_shown(inputs.get(key))})"
    overrides = inputs.get("response_overrides", {})
    if not isinstance(overrides, dict) or not all(k.isascii() and k.isdigit() and len(k) <= 6 for k in overrides):
        return "response_overrides must map exchange numbers to exchanges"
    for k, exchange in overrides.items():
        problem = exchange_problem(exchange)
        if problem:
            return f"/responses/{int(k)}: {problem}"
    return None


def _shown(value: Any) -> str:
    """A value in an error message: its JSON, cut short."""
    try:
        text = orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = type(value).__name__
    return text if len(text) <= 40 else redacted_prefix(text, 39) + "…"
