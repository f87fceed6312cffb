"""Limits every reader and writer of traces shares, so what one accepts the other can handle.

JSON output (orjson) stops at 254 levels of nesting, so a value nested deeper
could be read but never written back: nothing deeper than :data:`MAX_DEPTH` is
accepted anywhere (trace lines as they are read, recorded exchanges, edits), and
what is read can always be written again (``w``, ``replay -o``).

A line longer than :data:`MAX_LINE_BYTES` is a problem line, found while reading:
no reader holds more than that of one line in memory.

Readers look these up on this module at call time (``limits.MAX_LINE_BYTES``), so
a test that lowers one lowers it everywhere.
"""
from __future__ import annotations

from typing import Any

#: deepest nesting of arrays and objects accepted, well inside what JSON output can write back
MAX_DEPTH = 200
#: longest trace line read, in bytes (without its line end)
MAX_LINE_BYTES = 16 * 1024 * 1024


def too_deep(value: Any, limit: int | None = None) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels (checked without recursion)."""
    limit = MAX_DEPTH if limit is None else limit
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def may_be_too_deep(raw: bytes) -> bool:
    """A cheap bound: a JSON text with at most MAX_DEPTH opening brackets cannot nest deeper (nor
    one of at most twice that many bytes: every bracket that opens must close)."""
    return len(raw) > 2 * MAX_DEPTH and raw.count(b"[") + raw.count(b"{") > MAX_DEPTH


def too_long(length: int) -> str | None:
    """The problem with a line of ``length`` bytes, or None when it is within the limit."""
    if length > MAX_LINE_BYTES:
        return f"line is {length} bytes, over the {MAX_LINE_BYTES}-byte limit"
    return None
