"""A support agent on the openai SDK (Chat Completions) with a hand-written tool loop.

Run as a user would run theirs: ``python openai_agent.py [--stream]``. The SDK reads OPENAI_BASE_URL and
OPENAI_API_KEY from the environment; nothing here knows about tracetui. Exit 0 when the shop accepts the
final answer (it states the status read_order returned), 1 otherwise.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # shop.py, also under `python -I`

from shop import MAX_TURNS, QUESTION, READ_ORDER_DESCRIPTION, READ_ORDER_SCHEMA, SYSTEM, Shop, finish  # noqa: E402

MODEL = "gpt-4.1-mini"
TOOLS = [{"type": "function", "function": {"name": "read_order", "description": READ_ORDER_DESCRIPTION,
                                           "parameters": READ_ORDER_SCHEMA}}]


def ask(client, messages: list, stream: bool) -> tuple[dict, str | None]:
    """One model turn: the assistant message (as it is sent back next turn) and the finish reason."""
    if not stream:
        choice = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS).choices[0]
        message = {"role": "assistant", "content": choice.message.content}
        if choice.message.tool_calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                     for c in choice.message.tool_calls]
        return message, choice.finish_reason
    text, calls, finish_reason = [], {}, None
    for chunk in client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS, stream=True):
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        finish_reason = choice.finish_reason or finish_reason
        if choice.delta.content:
            text.append(choice.delta.content)
        for part in choice.delta.tool_calls or ():
            call = calls.setdefault(part.index, {"id": None, "type": "function",
                                                 "function": {"name": "", "arguments": ""}})
            call["id"] = part.id or call["id"]
            if part.function and part.function.name:
                call["function"]["name"] += part.function.name
            if part.function and part.function.arguments:
                call["function"]["arguments"] += part.function.arguments
    message = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message, finish_reason


def main(argv: list[str]) -> int:
    import openai

    stream = "--stream" in argv
    shop = Shop()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    try:
        client = openai.OpenAI()
        for _ in range(MAX_TURNS):
            message, _finish = ask(client, messages, stream)
            messages.append(message)
            if not message.get("tool_calls"):
                return finish(shop, message.get("content"))
            for call in message["tool_calls"]:
                result, _is_error = shop.call(call["function"]["name"], call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    except openai.OpenAIError as exc:
        return finish(shop, None, f"the model could not be reached: {type(exc).__name__}: {exc}")
    return finish(shop, None, f"no answer after {MAX_TURNS} turns")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
