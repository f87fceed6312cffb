"""Context ablations: change one thing about the transcript the model is sent.

Each is applied to the provider-neutral transcript just before the adapter builds
the request, so the loop's own bookkeeping stays intact and only what the model
(and the API) sees is damaged.
"""
from __future__ import annotations

from typing import Any, Callable

Transcript = list[dict[str, Any]]


def complete(items: Transcript) -> Transcript:
    return items


def drop_assistant_call(items: Transcript) -> Transcript:
    """Delete the model's earlier tool calls; their results stay, orphaned."""
    return [i for i in items if i["type"] != "tool_call"]


def mismatch_call_id(items: Transcript) -> Transcript:
    """Point every tool result at a call that does not exist."""
    return [{**i, "call_id": i["call_id"] + "-x"} if i["type"] == "tool_result" else i for i in items]


def flatten_roles(items: Transcript) -> Transcript:
    """Flatten roles and structure into one block of user text."""
    lines = []
    for i in items:
        t = i["type"]
        if t == "message":
            lines.append(f"{i['role']}: {i['content']}")
        elif t == "tool_call":
            lines.append(f"assistant called {i['name']} {i['arguments']}")
        elif t == "tool_result":
            lines.append(f"result: {i['output']}")
    return [{"type": "message", "role": "user", "content": "\n".join(lines)}]


def sliding_window(items: Transcript, keep: int = 2) -> Transcript:
    """Keep only the newest messages, cutting the user's goal from its evidence."""
    return items[-keep:]


ABLATIONS: dict[str, tuple[Callable[[Transcript], Transcript], str]] = {
    "complete": (complete, "the full structured transcript: the baseline"),
    "drop_assistant_call": (drop_assistant_call, "delete the model's earlier tool calls, keep their results"),
    "mismatch_call_id": (mismatch_call_id, "point tool results at call ids that do not exist"),
    "flatten_roles": (flatten_roles, "flatten every role and item into one user text"),
    "sliding_window": (sliding_window, "keep only the newest two items, losing the user's goal"),
}
