"""A support agent on a framework: a pydantic-ai Agent with an OpenAI (Chat Completions) model.

``python pydantic_ai_agent.py [--stream]``; pydantic-ai's OpenAI provider reads OPENAI_BASE_URL and
OPENAI_API_KEY. The framework runs the tool loop itself (and its own retries: a tool call with arguments its
schema refuses, or an unknown tool, goes back to the model as a retry prompt). Exit 0 when the shop accepts the
final answer, 1 otherwise.
"""
from __future__ import annotations

import os
import sys
from typing import Annotated

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # shop.py, also under `python -I`

from pydantic import Field  # noqa: E402  (module level: pydantic-ai reads the tool's annotations from here)
from shop import QUESTION, READ_ORDER_DESCRIPTION, SYSTEM, Shop, finish  # noqa: E402

MODEL = "gpt-4.1-mini"


def build(shop: Shop):
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    agent = Agent(OpenAIChatModel(MODEL, provider=OpenAIProvider()), system_prompt=SYSTEM)

    @agent.tool_plain(description=READ_ORDER_DESCRIPTION)
    def read_order(order_id: Annotated[str, Field(pattern="^o-[0-9]+$", description="An order id, like o-1.")]) -> str:
        text, _is_error = shop.call("read_order", {"order_id": order_id})
        return text  # a denial or an error goes back as the tool's result, as the hand-written agents send it

    return agent


def main(argv: list[str]) -> int:
    stream = "--stream" in argv
    shop = Shop()
    agent = build(shop)
    from pydantic_ai.exceptions import AgentRunError
    from openai import OpenAIError

    try:
        if stream:
            with agent.run_stream_sync(QUESTION) as result:
                answer = "".join(result.stream_text(delta=True))
        else:
            answer = agent.run_sync(QUESTION).output
    except (AgentRunError, OpenAIError) as exc:
        return finish(shop, None, f"the agent run failed: {type(exc).__name__}: {exc}")
    return finish(shop, answer)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
