"""Grouping the provider-neutral transcript into the turns a chat-style API expects.

The neutral transcript is a flat list (messages, tool calls, tool results,
reasoning). Chat Completions, Anthropic and Gemini all want the model's output of
one response as one assistant message, and results as the message after it; this
module does that grouping once, faithfully: it never reorders, drops or repairs
items, so a damaged transcript (an ablation) reaches the API damaged.
"""
from __future__ import annotations

from typing import Any, Iterator

#: items the model produced; consecutive ones form one assistant turn
MODEL_SIDE = ("tool_call", "reasoning")


def is_model_side(item: dict[str, Any]) -> bool:
    return item["type"] in MODEL_SIDE or (item["type"] == "message" and item.get("role") == "assistant")


def turns(transcript: list[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yield ``(kind, items)``: ``system``, ``user`` (one message), ``assistant`` or ``results`` runs."""
    run_kind: str | None = None
    run: list[dict[str, Any]] = []
    for item in transcript:
        if item["type"] == "message" and item.get("role") in ("developer", "system"):
            kind = "system"
        elif is_model_side(item):
            kind = "assistant"
        elif item["type"] == "tool_result":
            kind = "results"
        else:
            kind = "user"
        if run and (kind != run_kind or kind == "user"):
            yield run_kind, run  # type: ignore[misc]
            run = []
        run_kind = kind
        run.append(item)
    if run:
        yield run_kind, run  # type: ignore[misc]


def call_names(transcript: list[dict[str, Any]]) -> dict[str, str]:
    """call id → tool name, for APIs whose results must repeat the name (Gemini)."""
    return {i["call_id"]: i["name"] for i in transcript if i["type"] == "tool_call" and i.get("call_id")}
