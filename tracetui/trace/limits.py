"""Limits every reader and writer of traces shares, so what one accepts the other can handle.

JSON output (orjson) stops at 254 levels of nesting, so a value nested deeper
could be read but never written back: nothing deeper than :data:`MAX_DEPTH` is
accepted anywhere (recorded exchanges, edits, trace lines that are re-written).
"""
from __future__ import annotations

from typing import Any

#: deepest nesting of arrays and objects accepted, well inside what JSON output can write back
MAX_DEPTH = 200


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels (checked without recursion)."""
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
