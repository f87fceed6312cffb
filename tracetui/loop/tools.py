"""Tool execution against the run's own copy of the tool data.

Authorization binds the caller from the trusted principal, never from the model's
arguments. Writes carry an idempotency key; the ledger records every execution so
two successful executions of one key are detected, not hidden.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class ToolFailure(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Execution:
    key: str
    result: dict[str, Any]
    executed_at: int


class ToolState:
    """Mutable state a run's tools act on; rebuilt from the run's inputs for every (re)run.

    Orders are shared with the inputs until a write touches one: the write copies
    that order first, so a run never changes its inputs and a read-only run copies
    nothing.
    """

    __slots__ = ("orders", "failures", "ledger", "refunds")

    def __init__(self, orders: dict[str, dict[str, Any]], failures: dict[str, str]):
        self.orders = orders
        self.failures = failures
        self.ledger: dict[str, list[Execution]] = {}
        self.refunds = 0

    @classmethod
    def from_inputs(cls, tool_data: dict[str, Any]) -> "ToolState":
        return cls(dict(tool_data.get("orders") or {}), dict(tool_data.get("failures") or {}))

    def authorize(self, args: dict[str, Any], principal: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
        """Decide from trusted data only; a denial reveals nothing about the resource."""
        order_id = args.get("order_id")
        order = self.orders.get(order_id) if isinstance(order_id, str) else None
        facts = {"principal": f"{principal.get('tenant')} / {principal.get('user')}", "resource": order_id}
        if order is None:
            return False, f"{order_id} is not an order the caller may see", facts
        facts["resource_tenant"] = order.get("tenant")
        tenant, user = order.get("tenant"), order.get("user")
        other_tenant, other_user = tenant != principal.get("tenant"), user != principal.get("user")
        if not (other_tenant or other_user):
            return True, f"{order_id} belongs to the caller", facts
        # the reason names the check that failed, so a fix can aim at it (the model never sees this)
        facts["resource_user"] = user
        facts["failed_check"] = "tenant and user" if other_tenant and other_user else "tenant" if other_tenant else "user"
        if other_tenant and other_user:
            why = (f"{order_id} belongs to tenant {tenant}, user {user}; caller is tenant "
                   f"{principal.get('tenant')}, user {principal.get('user')}: tenant and user differ")
        elif other_tenant:
            why = (f"{order_id} belongs to tenant {tenant}, caller is tenant {principal.get('tenant')} "
                   f"(same user {user}): tenant differs")
        else:
            why = (f"{order_id} belongs to user {user} of tenant {tenant}, caller is user "
                   f"{principal.get('user')}: user differs")
        return False, why, facts

    def business_rule(self, name: str, args: dict[str, Any]) -> str | None:
        if name != "refund_order":
            return None
        order = self.orders[args["order_id"]]
        refundable = round(float(order.get("paid", 0)) - float(order.get("refunded", 0)), 2)
        if args["amount"] > refundable:
            return f"refund {args['amount']:.2f} exceeds the refundable balance {refundable:.2f}"
        return None

    def idempotency_key(self, name: str, args: dict[str, Any]) -> str | None:
        if name != "refund_order":
            return None
        return f"refund:{args['order_id']}:{float(args['amount']):.2f}"

    def injected_failure(self, name: str, args: dict[str, Any]) -> str | None:
        return self.failures.get(f"{name}:{args.get('order_id')}")

    def execute(self, name: str, args: dict[str, Any], now: int) -> dict[str, Any]:
        """Run the tool. Raises :class:`ToolFailure`; records writes in the ledger."""
        failure = self.injected_failure(name, args)
        if failure and failure != "timeout_after_commit":
            raise ToolFailure(failure, f"{name} failed: {failure}")
        order = self.orders[args["order_id"]]
        if name == "read_order":
            return {"order_id": args["order_id"], "status": order["status"], "source": "read_order"}
        if name == "refund_order":
            self.refunds += 1
            order = self.orders[args["order_id"]] = dict(order)  # copied on write: the inputs stay as they were
            order["refunded"] = round(float(order.get("refunded", 0)) + float(args["amount"]), 2)
            result = {"order_id": args["order_id"], "refund_id": f"r-{self.refunds}", "amount": args["amount"],
                      "status": "refunded", "source": "refund_order"}
            key = self.idempotency_key(name, args)
            self.ledger.setdefault(key, []).append(Execution(key, result, now))
            if failure == "timeout_after_commit" and len(self.ledger[key]) == 1:
                raise ToolFailure("timeout", "refund_order timed out; the write may have committed")
            return result
        raise ToolFailure("not_implemented", f"{name} has no implementation")

    def lookup(self, key: str) -> Execution | None:
        runs = self.ledger.get(key)
        return runs[0] if runs else None
