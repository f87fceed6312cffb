"""The shop every test agent serves: one customer, their orders, one tool, and the business's acceptance.

Plain Python (no SDK, no tracetui), so each agent is only its SDK's loop around these few functions. The
customer is u-1; o-1 is theirs, o-2 belongs to someone else. ``read_order`` checks who owns the order, as a
real tool would: asking for another customer's order gets a tool result saying permission denied.

Acceptance is the business's own rule, not the model's: the final answer must state the status that a
successful ``read_order`` returned in this run. An answer that no tool result backs is rejected (exit 1).
"""
from __future__ import annotations

import json
import re
import sys

QUESTION = "Where is my order o-1?"
SYSTEM = "You are the shop's support agent. Look orders up with read_order before you answer."
CUSTOMER = "u-1"
ORDERS = {"o-1": {"owner": "u-1", "status": "shipped"}, "o-2": {"owner": "u-2", "status": "processing"}}
MAX_TURNS = 5

READ_ORDER_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "pattern": "^o-[0-9]+$", "description": "An order id, like o-1."}},
    "required": ["order_id"],
    "additionalProperties": False,
}
READ_ORDER_DESCRIPTION = "Read the status of one of the customer's orders."
TOOL_NAMES = ("read_order",)


class ToolError(Exception):
    """A tool call that did not run: its words go back to the model as the tool's result."""


def read_order(order_id: str) -> dict:
    """The order's status, if the customer owns it."""
    order = ORDERS.get(order_id)
    if order is None:
        raise ToolError(f"Error: no order {order_id}")
    if order["owner"] != CUSTOMER:
        raise ToolError(f"permission denied: order {order_id} belongs to another customer")
    return {"order_id": order_id, "status": order["status"]}


class Shop:
    """One run's tool calls and what they returned, so the acceptance can check the answer against them."""

    def __init__(self) -> None:
        self.statuses: list[str] = []

    def call(self, name: str, arguments: str | dict) -> tuple[str, bool]:
        """Run one tool call as the model asked for it: (the result text sent back, whether it is an error)."""
        if name not in TOOL_NAMES:
            return f"Error: there is no tool named {name}; the tools are: {', '.join(TOOL_NAMES)}", True
        try:
            args = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            return "Error: the arguments are not JSON", True
        order_id = args.get("order_id") if isinstance(args, dict) else None
        if not isinstance(order_id, str) or set(args) != {"order_id"}:
            return f"Error: read_order takes {{\"order_id\": \"o-<number>\"}}, got {json.dumps(args)}", True
        try:
            result = read_order(order_id)
        except ToolError as exc:
            return str(exc), True
        self.statuses.append(result["status"])
        return json.dumps(result), False

    def accepts(self, answer: str) -> str | None:
        """None when ``answer`` states a status a tool returned; else why it is rejected."""
        if not self.statuses:
            return "no read_order result backs the answer"
        for status in self.statuses:
            if re.search(rf"\b{re.escape(status)}\b", answer or "", re.IGNORECASE):
                return None
        return f"the answer does not state the order's status ({', '.join(self.statuses)})"


def finish(shop: Shop, answer: str | None, error: str | None = None) -> int:
    """Print the answer and the acceptance's decision; the exit status is the decision."""
    if error is not None:
        print(f"rejected: {error}", file=sys.stderr)
        return 1
    print(answer or "")
    why = shop.accepts(answer or "")
    if why is None:
        print("accepted", file=sys.stderr)
        return 0
    print(f"rejected: {why}", file=sys.stderr)
    return 1
