"""What a tool result the agent sent back says: a denial, an error, or a result a receipt can hold.

A recorded agent runs its own tools; tracetui sees only what each returned, in the next request.
So the authorization and receipt lanes are read from that text, by one documented rule
(docs/record.md, "How a denial is recognised"):

- an *error* is a result marked ``is_error`` (Anthropic), a JSON object with an ``error`` key (not
  null/false; Gemini's convention), or a text that starts with ``Error``, ``error:`` or ``Exception``;
  a JSON object that only wraps a text (``{"output": "…"}``, ``{"result": "…"}``) is read as that text;
- a *denial* is a JSON result whose ``status`` or ``code`` (or ``error.status``/``error.code``) is
  403; an error whose words read as a refusal of access (``permission denied``, ``forbidden``,
  ``not authorized``/``unauthorized``, ``access denied``, ``not allowed``, ``not permitted``, a
  ``403`` standing alone); or any result whose text *starts* with such words ("permission denied:
  o-2 belongs to another tenant", "403 Forbidden"). A result that merely mentions them later (a
  document about forbidden items, an order numbered 403) is not one;
- anything else is a result, parsed as JSON when it is JSON.
"""
from __future__ import annotations

import re
from typing import Any

from tracetui.record.wire_requests import ToolResult
from tracetui.trace.safe_text import redacted_head

DENIAL_WORDS = re.compile(
    r"permission denied|forbidden|not authori[sz]ed|unauthori[sz]ed|access denied|not allowed|not permitted"
    r"|\b403\b", re.IGNORECASE)
#: a result that opens with a denial (after any brackets, quotes or a word such as "Error:")
OPENS_WITH_DENIAL = re.compile(r"\W*(?:(?:error|exception)\W+)?(?:" + DENIAL_WORDS.pattern + ")", re.IGNORECASE)
ERROR_START = re.compile(r"\s*(?:Error\b|error:|Exception\b)")  # "Exceptionally warm" is no error
WRAPPERS = ("output", "result", "text", "content")
BRIEF_CHARS = 120


def brief(text: str, limit: int = BRIEF_CHARS) -> str:
    """One line of at most ``limit`` characters, for a summary: redacted BEFORE it is cut.

    The writer redacts every line, but a secret cut in half no longer has its shape, and its
    first half would be written. So the text is redacted here, whole up to a window past the cut.
    """
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    shown = redacted_head(line, limit)
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


def denial(result: ToolResult) -> str | None:
    """How the result reads as a denial of access, said after "the result of TOOL" (None: it is no denial)."""
    value = result.value()
    if isinstance(value, dict):
        error = value.get("error")
        for where, holder in (("", value), ("error.", error if isinstance(error, dict) else {})):
            for key in ("status", "code", "status_code", "statusCode"):
                if holder.get(key) in (403, "403"):
                    return f"has {where}{key} 403"
        said = _words_of(error)
        if said and DENIAL_WORDS.search(said):
            return f"has an error that says {brief(said, 80)!r}"
    text = _text_of(result)
    found = DENIAL_WORDS.search(text) if error_of(result) is not None else OPENS_WITH_DENIAL.match(text)
    if found:
        marked = "is marked is_error and " if result.is_error else ""
        return f"{marked}says {brief(text, 80)!r}"
    return None


def error_of(result: ToolResult) -> str | None:
    """What the error result says (brief), or None when the result is not an error."""
    value = result.value()
    if isinstance(value, dict) and value.get("error") not in (None, False):
        return brief(_words_of(value.get("error")) or "error")
    text = _text_of(result)
    if result.is_error:
        return brief(text) or "is_error"
    if ERROR_START.match(text):
        return brief(text)
    return None


def receipt_value(result: ToolResult) -> dict[str, Any]:
    """What the receipt holds: the JSON object returned, a JSON value wrapped, else the text."""
    value = result.value()
    if isinstance(value, dict):
        return value
    if value is not None or result.text.strip() == "null":
        return {"result": value}
    return {"text": result.text}


def _text_of(result: ToolResult) -> str:
    """The result's text; for a JSON object that only wraps a text (``{"output": "…"}``), that text."""
    value = result.value()
    if isinstance(value, dict) and len(value) == 1:
        (key, inner), = value.items()
        if key in WRAPPERS and isinstance(inner, str):
            return inner
    return result.text


def _words_of(error: Any) -> str:
    """The words of an ``error`` field: itself when text, its message/type/code when an object."""
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        parts = [error.get(k) for k in ("message", "type", "code", "status")]
        return " ".join(str(p) for p in parts if isinstance(p, (str, int)) and not isinstance(p, bool))
    return ""
