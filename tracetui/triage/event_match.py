"""Whether a record holds a search text as the explorer shows it: the rule :mod:`.event_search` confirms by.

A text, case aside (``casefold``), is held by a record when it is part of one key or one value of the
record *as redacted* (:func:`~tracetui.trace.redact.redact_value`); numbers, booleans and null are read
as their JSON text. :class:`Needle` also gives the byte forms a line must hold to be worth decoding.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import orjson

from tracetui.trace.reader import RunData
from tracetui.trace.redact import redact_value

#: characters that every JSON writer writes as themselves (a quote, a backslash, a slash may be escaped)
_PLAIN = frozenset(chr(c) for c in range(0x20, 0x7F)) - {'"', "\\", "/"}


@dataclass(frozen=True)
class Needle:
    """A search text, ready to search with: folded for confirming, byte forms for the prefilter."""

    text: str
    folded: str
    forms: tuple[bytes, ...]  # lowered; a line holding none of them cannot hold the text

    @classmethod
    def of(cls, text: str) -> "Needle":
        if not text:
            raise ValueError("an empty search text finds everything")
        return cls(text, text.casefold(), _forms(text))

    def may_be_in(self, low: bytes) -> bool:
        """Whether lowered bytes may hold the text (the prefilter)."""
        return any(form in low for form in self.forms)


def _forms(text: str) -> tuple[bytes, ...]:
    pieces, piece = [], []
    for ch in text:
        if ch in _PLAIN:
            piece.append(ch)
        elif piece:
            pieces.append("".join(piece))
            piece = []
    if piece:
        pieces.append("".join(piece))
    if pieces:
        return (max(pieces, key=len).encode().lower(),)
    forms: dict[bytes, None] = {}
    for variant in dict.fromkeys((text, text.lower(), text.upper(), text.casefold())):
        for encoded in _encodings(variant):
            forms[encoded.lower()] = None
    return tuple(forms)


def _encodings(text: str) -> Iterator[bytes]:
    """The ways a JSON writer may write ``text`` inside a string (without the quotes)."""
    try:
        yield orjson.dumps(text)[1:-1]
    except orjson.JSONEncodeError:  # a lone surrogate: no UTF-8 form
        pass
    for ascii_only in (True, False):
        escaped = json.dumps(text, ensure_ascii=ascii_only)[1:-1]
        for form in (escaped, escaped.replace("/", "\\/")):
            try:
                yield form.encode()
            except UnicodeEncodeError:
                pass


def holds(value: Any, folded: str) -> bool:
    """Whether one key or value inside a decoded JSON ``value`` holds the folded text."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if folded in item.casefold():
                return True
        elif isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(key, str) and folded in key.casefold():
                    return True
                stack.append(inner)
        elif isinstance(item, list):
            stack.extend(item)
        elif item is None or isinstance(item, (bool, int, float)):
            if folded in orjson.dumps(item).decode():
                return True
    return False


def record_matches(record: Any, needle: Needle) -> bool:
    """Whether a decoded record holds the text as the explorer shows it (redacted: see the module).

    Redacting a whole record costs a few regex passes over all of its text (a model response echoes
    kilobytes), so each place that holds the text is redacted with what its redaction depends on:
    the keys above it and the scalars beside it at every level up to the record (an edit's ``path``, a
    header's ``name``, of any length). The string at the place is redacted whole, never a window of it:
    a secret's redaction may depend on text far from the match (a private key block's header, a
    quoted value after ``password=``, a rule's keyword anywhere in the string), and a window that left
    that out would make the search an oracle for what the explorer shows as ``<redacted>``."""
    folded = needle.folded
    for path in _places(record, folded):
        try:
            shown = redact_value(_context(record, path))
        except TypeError:  # not JSON (an in-memory record of odd values): shown as repr, searched as it is
            return True
        if holds(shown, folded):
            return True
    return False


def _places(value: Any, folded: str) -> Iterator[list[Any]]:
    """The path (keys and indices) to each key or value inside ``value`` that holds the text (a key: the
    path to its value)."""
    stack: list[tuple[Any, list[Any]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if folded in item.casefold():
                yield path
        elif isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(key, str) and folded in key.casefold():
                    yield [*path, key]
                else:
                    stack.append((inner, [*path, key]))
        elif isinstance(item, list):
            stack.extend((inner, [*path, n]) for n, inner in enumerate(item))
        elif item is None or isinstance(item, (bool, int, float)):
            if folded in orjson.dumps(item).decode():
                yield path


def _context(value: Any, path: list[Any]) -> Any:
    """``value`` cut down to the place at ``path`` and what its redaction depends on (see record_matches):
    the containers on the way, and the scalars beside each (objects and lists beside it are left out:
    leaving a pair out of a header list can only make it redact more)."""
    if not path:
        return value
    step, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = {k: v for k, v in value.items() if k != step and _scalar(v)}
        out[step] = _context(value[step], rest)
        return out
    return [_context(v, rest) if n == step else v for n, v in enumerate(value) if n == step or _scalar(v)]


def _scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def matching_events(events: Sequence[dict[str, Any]], needle: Needle) -> list[int]:
    """The positions in ``events`` of those that hold the text (``n``/``N`` move between them)."""
    return [i for i, event in enumerate(events) if record_matches(event, needle)]


def run_matches(data: RunData, needle: Needle) -> bool:
    """Whether any record of a parsed run holds the text: its run line, an event, its summary."""
    records = [data.run, *data.events, data.summary]
    return any(record is not None and record_matches(record, needle) for record in records)
