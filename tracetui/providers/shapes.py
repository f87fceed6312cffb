"""Telling APIs apart by their bodies, so a 200 that is not ours is named, never parsed.

A gateway can answer with an HTML error page, or a misconfigured base URL can
point one adapter at another vendor: the body is then ``foreign_body``, and the
detail says what it looks like instead.
"""
from __future__ import annotations

from typing import Any

import orjson

from tracetui.trace.redact import redact_text, redact_value
from tracetui.trace.safe_text import redacted_prefix

LABELS = {
    "openai-responses": "a Responses API object",
    "openai-chat": "a Chat Completions response",
    "anthropic": "an Anthropic Messages response",
    "gemini": "a Gemini generateContent response",
}


def identify(body: Any) -> str | None:
    """Which API a response body looks like: an adapter name, ``"html"``, ``"text"`` or None."""
    if isinstance(body, str):
        head = body.lstrip()[:15].lower()
        return "html" if head.startswith("<!doctype") or head.startswith("<html") else "text"
    if not isinstance(body, dict):
        return None
    if body.get("object") == "response" or (body.get("object") is None and "output" in body and "status" in body):
        return "openai-responses"
    if "choices" in body and body.get("object") in (None, "chat.completion", "chat.completion.chunk"):
        return "openai-chat"
    if body.get("type") == "message" and "content" in body:
        return "anthropic"
    if "candidates" in body or "promptFeedback" in body:
        return "gemini"
    return None


def foreign_detail(body: Any, expected: str) -> str:
    """Words for a body that is not ``expected``'s shape."""
    want = LABELS[expected]
    kind = identify(body)
    if kind == "html":
        return f"body is an HTML page, not {want}"
    if kind == "text":
        return "body is not JSON"
    if kind in LABELS:
        return f"body looks like {LABELS[kind]}, not {want}"
    if isinstance(body, dict):
        return f"body has keys {', '.join(sorted(map(str, body))[:6]) or 'none'}, not {want}"
    return f"body is a JSON {type(body).__name__}, not an object"


def canonical_json(value: Any) -> str:
    """Arguments as JSON text with sorted keys and no spaces: one spelling per value."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def error_message(body: Any) -> str | None:
    """``error.message`` of an error envelope every vendor here uses, if the body is one."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        return plain(err.get("message") or err.get("status") or err.get("type") or "error")
    return None


def json_type(value: Any) -> str:
    """What a parsed JSON value is, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def brief(value: Any, limit: int = 120) -> str:
    """A value for a message, as ``repr`` would show it: scalars as they are (long text cut), an array or
    object only by its type, so an untrusted value of any size or depth is safe to mention."""
    if isinstance(value, str):
        shown = repr(value)
        if len(shown) <= limit:  # (redacted before repr: its escapes would hide a keyed secret)
            shown = repr(redact_text(value))
            return shown if len(shown) <= limit else shown[:limit - 1] + "…"
        head = redacted_prefix(value, limit)
        return (shown if head == value[:limit] else repr(head))[:limit - 1] + "…"
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    return f"a JSON {json_type(value)}"


def plain(value: Any, limit: int = 200) -> str:
    """A value that should be text, as text: a string as it is, anything else as ``str`` would show it
    (cut at ``limit``), or only its type when it nests too deeply to print."""
    if isinstance(value, str):
        return value
    try:
        try:
            value = redact_value(value)  # (``str`` of a dict quotes no key as JSON does: redacted first)
        except (TypeError, ValueError):  # (a number JSON cannot hold: shown as it is, its text redacted below)
            pass
        shown = str(value)
    except RecursionError:
        return f"a deeply nested JSON {json_type(value)}"
    return shown if len(shown) <= limit else redacted_prefix(shown, limit - 1) + "…"


def text_or_none(value: Any) -> str | None:
    """``value`` if it is a string, else None: for fields reported from an untrusted body."""
    return value if isinstance(value, str) else None


def try_canonical_json(value: Any) -> str | None:
    """:func:`canonical_json`, or None when the value cannot be written (nested deeper than JSON output allows)."""
    try:
        return canonical_json(value)
    except orjson.JSONEncodeError:
        return None
