"""The teaching world the built-in loop runs in: tools, their data, the caller.

Everything here is plain JSON so a run's inputs can record it and a user can edit it.
"""
from __future__ import annotations

import copy
from typing import Any

READ_ORDER = {
    "name": "read_order",
    "description": "Read the status of an order the caller is allowed to see.",
    "effect": "read",
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string", "pattern": "^o-[0-9]+$"}},
        "required": ["order_id"],
        "additionalProperties": False,
    },
}

REFUND_ORDER = {
    "name": "refund_order",
    "description": "Refund part of a paid order. A write: guarded by an idempotency key.",
    "effect": "write",
    "parameters": {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "pattern": "^o-[0-9]+$"},
            "amount": {"type": "number", "exclusiveMinimum": 0},
            "reason": {"type": "string"},
        },
        "required": ["order_id", "amount", "reason"],
        "additionalProperties": False,
    },
}

ORDERS = {
    "o-1": {"tenant": "shop-a", "user": "u-1", "status": "delivered", "paid": 50.0, "refunded": 0.0},
    "o-2": {"tenant": "shop-b", "user": "u-2", "status": "processing", "paid": 80.0, "refunded": 0.0},
    "o-3": {"tenant": "shop-a", "user": "u-1", "status": "shipped", "paid": 30.0, "refunded": 0.0},
}

PRINCIPAL = {"tenant": "shop-a", "user": "u-1"}

INSTRUCTIONS = (
    "Use read_order for order facts and refund_order for refunds. Tool access is checked by the "
    "application. Answer with a JSON object (or a list of them) holding order_id, status and source, "
    "copied from tool results. Never invent order facts."
)

BUDGETS = {
    "max_turns": 4,
    "max_calls": 4,
    "max_retries": 2,
    "repair_budget": 2,
    "timeout_ms": 30000,
    "max_output_tokens": 500,
}


def default_tools() -> list[dict[str, Any]]:
    return [copy.deepcopy(READ_ORDER), copy.deepcopy(REFUND_ORDER)]


def default_tool_data() -> dict[str, Any]:
    return {"orders": copy.deepcopy(ORDERS), "failures": {}}
