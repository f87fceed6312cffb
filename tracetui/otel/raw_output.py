"""What a model call's raw ``output.value`` says that no structured attribute does: a refusal (the openai SDK's
``choices[0].message.refusal``, LangChain's ``additional_kwargs.refusal``), calls LangChain could not parse
(``invalid_tool_calls``), and a finish reason (LangChain's ``response_metadata``, smolagents' response repr).

The value is untrusted and may be large: it is parsed once (not once per reader), walked to a bounded depth,
and read only where a framework puts these fields, never inside a string or a tool call's arguments, so an
answer that talks about ``finish_reason: "length"`` or a tool argument named ``refusal`` is not mistaken for
the model call's own.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

import orjson

MAX_DEPTH = 12
#: keys whose values are a tool call's arguments or a content block's input: what the model wrote, not said about it
_ARGUMENT_KEYS = frozenset({"args", "arguments", "input", "function", "parameters", "tool_input"})
#: where a refusal is the model call's own: on a message, or a refusal content block
_MESSAGE_KEYS = frozenset({"message", "additional_kwargs", "delta"})
_REASON = re.compile(r"[A-Za-z_]{1,40}")
#: a finish reason in a repr (smolagents nests the response's repr under "raw": Choice(finish_reason='stop', …))
_REPR_FINISH = re.compile(r"""\b(?:finish|stop)_reason\s*=\s*["']([A-Za-z_]{1,40})["']""")
_REPR = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\(")


@lru_cache(maxsize=1)
def _parsed(raw: str) -> Any:
    """``raw`` parsed, None when it is not JSON (orjson refuses nesting past 1024 levels). One entry: the
    readers of one span ask in turn (a string's hash is computed once and kept by the string)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _dicts(value: Any, parent: Any = None, depth: int = 0) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(the key it is under, the dict) for each dict in a parsed value, before those inside it; never inside
    a tool call's arguments, and no deeper than :data:`MAX_DEPTH`."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        yield parent, value
        for key, item in value.items():
            if isinstance(item, (dict, list)) and key not in _ARGUMENT_KEYS:
                yield from _dicts(item, key, depth + 1)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                yield from _dicts(item, parent, depth + 1)


def refusal(raw: Any) -> str | None:
    """The first non-empty refusal on a message (a dict with a role, or under ``message``/``additional_kwargs``)
    or in a ``refusal`` content block, else None."""
    if not isinstance(raw, str) or '"refusal"' not in raw:
        return None
    for parent, item in _dicts(_parsed(raw)):
        said = item.get("refusal")
        if isinstance(said, str) and said.strip() and (
                parent in _MESSAGE_KEYS or "role" in item or item.get("type") == "refusal"):
            return said
    return None


def invalid_calls(raw: Any) -> list[dict[str, Any]]:
    """The items of every ``invalid_tool_calls`` list (LangChain's calls it could not parse), outside arguments."""
    if not isinstance(raw, str) or '"invalid_tool_calls"' not in raw:
        return []
    out: list[dict[str, Any]] = []
    for _, item in _dicts(_parsed(raw)):
        listed = item.get("invalid_tool_calls")
        if isinstance(listed, list):
            out.extend(i for i in listed if isinstance(i, dict))
    return out


def finish_reason(raw: Any) -> str | None:
    """A finish reason only in the raw output: a ``finish_reason``/``stop_reason`` key of the parsed value,
    else one in a response's repr (under ``raw``, or the whole value when it is a repr, not JSON)."""
    if not isinstance(raw, str) or "_reason" not in raw:
        return None
    parsed = _parsed(raw)
    if parsed is None:
        return _in_repr(raw)
    reprs = []
    for _, item in _dicts(parsed):
        for key in ("finish_reason", "stop_reason"):
            said = item.get(key)
            if isinstance(said, str) and _REASON.fullmatch(said):
                return said
        if isinstance(item.get("raw"), str):
            reprs.append(item["raw"])
    return next((found for found in map(_in_repr, reprs) if found), None)


def _in_repr(text: str) -> str | None:
    """The first ``finish_reason='…'`` of a Python repr (``ChatCompletion(… Choice(finish_reason='stop' …``):
    its fields come before the message's content. Plain text (an answer) is not read."""
    if not _REPR.match(text.lstrip()):
        return None
    found = _REPR_FINISH.search(text)
    return found.group(1) if found else None
