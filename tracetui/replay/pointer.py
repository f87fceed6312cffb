"""JSON Pointers (RFC 6901) into a run's editable document, with errors fit for people.

The ``jsonpointer`` package was considered; its errors quote the whole document,
which is unusable in an editor's one-line message, and edits here need type rules
of their own, so the few lines of walking live here.
"""
from __future__ import annotations

import difflib
from typing import Any

from tracetui.trace.safe_text import cut_text


class EditError(ValueError):
    """An edit that cannot be applied; the message says why, in words."""


def parse_pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise EditError(f"a path starts with '/': {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def list_index(part: str) -> int | None:
    """A path segment as a list index: ASCII digits only (no ``²`` or ``٣``), at most nine of them."""
    if part.isascii() and part.isdigit() and len(part) <= 9:
        return int(part)
    return None


def format_pointer(parts: list[str | int]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def no_field(where: str, part: str, keys: Any) -> str:
    """Words for a field that is not there, with the nearest existing name when one is close (a typo)."""
    names = [k for k in keys if isinstance(k, str)]
    close = difflib.get_close_matches(part, names, n=1, cutoff=0.75) if len(part) <= 200 else []
    hint = f" (did you mean {_short(close[0])}?)" if close else ""
    return f"{where}: no field {_short(part)} here{hint}"


def _step(node: Any, part: str, where: str) -> Any:
    if isinstance(node, dict):
        if part not in node:
            raise EditError(no_field(where, part, node))
        return node[part]
    if isinstance(node, list):
        index = list_index(part)
        if index is None or index >= len(node):
            raise EditError(f"{where}: no item {_short(part)} (the list has {len(node)})")
        return node[index]
    raise EditError(f"{where}: a {type(node).__name__} has no field {_short(part)}")


def resolve(doc: Any, path: str) -> Any:
    node, parts = doc, parse_pointer(path)
    for i, part in enumerate(parts):
        node = _step(node, part, format_pointer(parts[:i]) or "/")
    return node


def exists(doc: Any, path: str) -> bool:
    try:
        resolve(doc, path)
        return True
    except EditError:
        return False


def assign(doc: Any, path: str, value: Any) -> None:
    """Set ``path`` in place. The parent must exist; a new key may be added to an object."""
    parts = parse_pointer(path)
    if not parts:
        raise EditError("the whole document cannot be replaced; pick a field")
    parent = resolve(doc, format_pointer(parts[:-1]))
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        index = list_index(last)
        if index is None or index >= len(parent):
            raise EditError(f"{_short(path)}: no item {_short(last)} (the list has {len(parent)})")
        parent[index] = value
    else:
        raise EditError(f"{path}: a {type(parent).__name__} has no fields")


def _short(text: str, limit: int = 40) -> str:
    """A path or segment in a message, quoted and cut short (a path may be 5,000 digits)."""
    return repr(cut_text(text, limit))
