"""A support agent on the anthropic SDK (Messages API) with a hand-written tool loop.

``python anthropic_agent.py [--stream]``; the SDK reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY. A tool
that did not run goes back as a ``tool_result`` with ``is_error``. Exit 0 when the shop accepts the final
answer, 1 otherwise.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # shop.py, also under `python -I`

from shop import MAX_TURNS, QUESTION, READ_ORDER_DESCRIPTION, READ_ORDER_SCHEMA, SYSTEM, Shop, finish  # noqa: E402

MODEL = "claude-sonnet-4-5"
MAX_TOKENS = 512
TOOLS = [{"name": "read_order", "description": READ_ORDER_DESCRIPTION, "input_schema": READ_ORDER_SCHEMA}]


def ask(client, messages: list, stream: bool):
    """One model turn: the SDK's Message (streamed through the SDK's stream helper when ``stream``)."""
    args = dict(model=MODEL, max_tokens=MAX_TOKENS, system=SYSTEM, messages=messages, tools=TOOLS)
    if not stream:
        return client.messages.create(**args)
    with client.messages.stream(**args) as events:
        return events.get_final_message()


def main(argv: list[str]) -> int:
    import anthropic

    stream = "--stream" in argv
    shop = Shop()
    messages: list = [{"role": "user", "content": QUESTION}]
    try:
        client = anthropic.Anthropic()
        for _ in range(MAX_TURNS):
            reply = ask(client, messages, stream)
            blocks = []
            for block in reply.content:
                if block.type == "text":
                    blocks.append({"type": "text", "text": block.text})
                elif block.type == "tool_use":
                    blocks.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
            messages.append({"role": "assistant", "content": blocks})
            calls = [b for b in blocks if b["type"] == "tool_use"]
            if reply.stop_reason != "tool_use" or not calls:
                return finish(shop, "".join(b["text"] for b in blocks if b["type"] == "text"))
            results = []
            for call in calls:
                text, is_error = shop.call(call["name"], call["input"])
                result = {"type": "tool_result", "tool_use_id": call["id"], "content": text}
                if is_error:
                    result["is_error"] = True
                results.append(result)
            messages.append({"role": "user", "content": results})
    except anthropic.AnthropicError as exc:
        return finish(shop, None, f"the model could not be reached: {type(exc).__name__}: {exc}")
    return finish(shop, None, f"no answer after {MAX_TURNS} turns")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
