"""A run's inputs: the complete, editable record from which the run is reproduced."""
from __future__ import annotations

import copy
from typing import Any

from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.scenarios import SCENARIOS
from tracetui.loop.world import (
    BUDGETS, INSTRUCTIONS, PRINCIPAL, READ_ORDER, default_tool_data, default_tools,
)

RECORDED_BUDGETS = {**BUDGETS, "max_turns": 3, "max_calls": 2}
RECORDED_QUESTION = "What is the status of order o-1?"


def build_inputs(scenario: str, ablation: str = "complete", faults: tuple[str, ...] | list[str] = (),
                 transient_failures: int = 0, seed: int = 0) -> dict[str, Any]:
    sc = SCENARIOS[scenario]
    if ablation not in ABLATIONS:
        raise KeyError(ablation)
    tool_data = default_tool_data()
    tool_data["failures"] = dict(sc.failures)
    return {
        "source": "scenario",
        "scenario": sc.name,
        "ablation": ablation,
        "provider": "openai-responses",
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
    """Inputs for a run over recorded raw responses (a cassette), with the read-only tool set."""
    budgets = dict(RECORDED_BUDGETS)
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
