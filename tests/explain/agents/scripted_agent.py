"""A support agent on the openai SDK (Chat Completions) with a hand-written tool loop, for explain's tests.

Run as a user runs theirs: ``python scripted_agent.py [--stream]``; the SDK reads OPENAI_BASE_URL from the environment
and nothing here knows about tracetui. Its one tool, ``read_order``, denies an order that is not the
customer's; its acceptance (the exit status) is the business's: exit 0 only when the final answer states
the status a successful ``read_order`` returned in this run.
"""
from __future__ import annotations

import json
import os
import sys

QUESTION = "What is the status of order o-1?"
ORDERS = {"o-1": {"owner": "u-1", "status": "shipped"}, "o-2": {"owner": "u-2", "status": "processing"}}
SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^o-[0-9]+$"}},
          "required": ["order_id"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "read_order", "description": "Read one order's status.",
                                           "parameters": SCHEMA}}]


def read_order(arguments: str) -> tuple[str, str | None]:
    """The tool's result as sent back to the model, and the status it read (None when it read none)."""
    try:
        order_id = json.loads(arguments)["order_id"]
    except (ValueError, KeyError, TypeError):
        return "Error: order_id is required", None
    order = ORDERS.get(order_id)
    if order is None:
        return f"Error: no order {order_id}", None
    if order["owner"] != "u-1":
        return f"Error: permission denied: {order_id} belongs to another customer", None
    return json.dumps({"order_id": order_id, "status": order["status"]}), order["status"]


def ask(client, messages: list[dict], stream: bool):
    """One model turn: the assistant's text and its tool calls as (id, name, arguments)."""
    if not stream:
        message = client.chat.completions.create(model="gpt-x", messages=messages, tools=TOOLS).choices[0].message
        return message.content, [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()]
    text, calls = [], {}
    for chunk in client.chat.completions.create(model="gpt-x", messages=messages, tools=TOOLS, stream=True):
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for part in choice.delta.tool_calls or ():
                call = calls.setdefault(part.index, ["", "", ""])
                call[0] = part.id or call[0]
                call[1] += (part.function.name or "") if part.function else ""
                call[2] += (part.function.arguments or "") if part.function else ""
    return "".join(text) or None, [tuple(calls[i]) for i in sorted(calls)]


def main() -> int:
    import openai

    client = openai.OpenAI(api_key=os.environ.get("OPENAI_API_KEY", "test-key"), max_retries=2)
    messages: list[dict] = [{"role": "system", "content": "You are a support agent."},
                            {"role": "user", "content": QUESTION}]
    read: list[str] = []
    for _ in range(4):
        try:
            content, calls = ask(client, messages, "--stream" in sys.argv)
        except openai.APIError as exc:
            print(f"model call failed: {exc}", file=sys.stderr)
            return 1
        if not calls:
            answer = content or ""
            print(answer)
            return 0 if read and any(status in answer for status in read) else 1
        messages.append({"role": "assistant", "content": content, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}
            for cid, name, arguments in calls]})
        for cid, name, arguments in calls:
            if name != "read_order":
                result = f"Error: no tool named {name}"
            else:
                result, status = read_order(arguments)
                if status:
                    read.append(status)
            messages.append({"role": "tool", "tool_call_id": cid, "content": result})
    return 1


if __name__ == "__main__":
    sys.exit(main())
