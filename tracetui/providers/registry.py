"""Adapters by name: the API shapes the loop can speak."""
from __future__ import annotations

from tracetui.providers.base import Adapter
from tracetui.providers.openai_responses import OpenAIResponsesAdapter

ADAPTERS: dict[str, type] = {
    "openai-responses": OpenAIResponsesAdapter,
}


def get_adapter(name: str) -> Adapter:
    try:
        return ADAPTERS[name]()
    except KeyError:
        raise KeyError(f"unknown provider {name!r}; choose from {', '.join(sorted(ADAPTERS))}") from None
