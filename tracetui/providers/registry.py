"""Adapters by name: the API shapes the loop can speak."""
from __future__ import annotations

from tracetui.providers.anthropic import AnthropicAdapter
from tracetui.providers.base import Adapter
from tracetui.providers.gemini import GeminiAdapter
from tracetui.providers.openai_chat import OpenAIChatAdapter
from tracetui.providers.openai_responses import OpenAIResponsesAdapter

ADAPTERS: dict[str, type] = {
    "openai-responses": OpenAIResponsesAdapter,
    "openai-chat": OpenAIChatAdapter,
    "anthropic": AnthropicAdapter,
    "gemini": GeminiAdapter,
}


def get_adapter(name: str) -> Adapter:
    """A fresh adapter: one per run, since some keep per-run state (Gemini's synthesized call ids)."""
    try:
        return ADAPTERS[name]()
    except KeyError:
        raise KeyError(f"unknown provider {name!r}; choose from {', '.join(sorted(ADAPTERS))}") from None
