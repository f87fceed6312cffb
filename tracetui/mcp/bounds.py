"""Keeping every answer small enough for an assistant's context: pages of items and strings cut to fit.

A trace is untrusted and may be huge (a tool result of megabytes, a million runs). Each tool's answer is
JSON text of at most :data:`MAX_BYTES`: lists are handed out a page at a time (``next_page`` is the cursor
of the next one, ``null`` at the end), and an item too big on its own has its longest strings cut, saying
so in the text, rather than being dropped.
"""
from __future__ import annotations

from typing import Any

from tracetui.trace.safe_text import printable_json, redacted_prefix

#: the most JSON text one tool call returns
MAX_BYTES = 64 * 1024
#: the most items one page holds, whatever their size
MAX_PAGE = 200
#: the most characters of a tool error (it echoes what the caller gave, which may be a megabyte)
MAX_ERROR = 2000
#: the most characters of a caller's argument repeated in an answer or an error
MAX_ECHO = 120


def as_text(value: Any) -> str:
    """The JSON an assistant reads: redacted like a trace line, control characters as JSON escapes."""
    return printable_json(value, indent=False)  # compact: an assistant pays for every space


def echoed(value: Any) -> Any:
    """A caller's argument as an answer repeats it: a string cut to :data:`MAX_ECHO` characters."""
    return cut_strings(value, MAX_ECHO) if isinstance(value, str) else value


def error_text(text: str) -> str:
    """A tool error's words, cut to :data:`MAX_ERROR` characters."""
    return text if len(text) <= MAX_ERROR else redacted_prefix(text, MAX_ERROR) + "… [cut by tracetui mcp]"


def size(value: Any) -> int:
    return len(as_text(value).encode())


def cut_strings(value: Any, longest: int) -> Any:
    """``value`` with every string longer than ``longest`` characters cut, saying how long it was."""
    if isinstance(value, str):
        if len(value) <= longest:
            return value
        return redacted_prefix(value, longest) + f"… [cut by tracetui mcp: {len(value):,} characters in all]"
    if isinstance(value, dict):
        return {k: cut_strings(v, longest) for k, v in value.items()}
    if isinstance(value, list):
        return [cut_strings(v, longest) for v in value]
    return value


def fitted(value: Any, budget: int = MAX_BYTES) -> Any:
    """``value`` as it is when it fits in ``budget`` bytes of JSON, else with ever shorter strings, then as
    a note saying what was too big (deeply nested, or a list with too many items)."""
    if size(value) <= budget:
        return value
    for longest in (4096, 1024, 256, 64):
        shorter = cut_strings(value, longest)
        if size(shorter) <= budget:
            return shorter
    return {"cut": f"too big to show within {budget:,} bytes of JSON even with its strings cut"}


def cursor(text: str | None) -> int:
    """The item number a ``next_page`` cursor stands for (0 for none)."""
    if text in (None, ""):
        return 0
    if isinstance(text, str) and text.isascii() and text.isdigit() and len(text) < 19:
        return int(text)
    raise ValueError(f"page {echoed(text)!r} is not a cursor this server gave: pass the next_page of an earlier "
                     f"answer")


class Page:
    """One page of a list offered an item at a time (verdicts arrive from a scan): the items from number
    ``start`` on, as many as ``limit`` and ``budget`` bytes of JSON allow, the first always (cut to fit),
    and the cursor of the next page. Items past the page are only counted: memory stays flat."""

    def __init__(self, start: int, limit: int, budget: int):
        self.start, self.limit, self.budget = start, max(1, min(limit, MAX_PAGE)), budget
        self.items: list[Any] = []
        self.seen = 0
        self.next: int | None = None
        self._used = 2

    def offer(self, item: Any) -> None:
        number, self.seen = self.seen, self.seen + 1
        if number < self.start or self.next is not None:
            return
        if len(self.items) >= self.limit:
            self.next = number
            return
        if not self.items:
            item = fitted(item, self.budget)
        cost = size(item) + 2
        if self.items and self._used + cost > self.budget:
            self.next = number
            return
        self.items.append(item)
        self._used += cost

    @property
    def next_page(self) -> str | None:
        return None if self.next is None else str(self.next)
