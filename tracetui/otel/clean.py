"""Imported records redacted as the trace writer would, each long string value once.

An imported run's events carry their span's attributes (the model's messages, tool results: most of an
OTLP file's bytes), the same strings in every event of a span. Encoding each record and redacting the
line (the writer's way) redacted every message again per event, and through a layer of escapes (a JSON
text held in a string is all ``\\"``), which cost most of an import's time. Here a record is walked once:
objects under credential keys (and HAR-style headers, edits of credential fields) become the marker as
the writer's structural pass makes them; each ``"key": "text"`` member is redacted as a line of its own,
remembered (no match crosses an unescaped quote but from a key to its value: :mod:`tracetui.trace.writer`
relies on the same); a long string (a message) is redacted on its own, once per import: one holding a JSON
text as that text (its keys seen as keys, no escapes), any other as the writer redacts a JSON string.
Where that would lose what the writer's whole line sees, the writer's way is kept: a key is redacted too
(a secret may be one); a long value under a key holding a gitleaks rule's keyword (``"heroku": "<key> …"``)
and a list holding one before another string (``["algolia", "<key>"]``) are redacted with that context; a
JSON text naming a credential key is redacted as the writer does (it may not parse: the writer's structural
pass reads it string by string, and keeps its spacing).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from tracetui.trace.redact import TEXT_MARKER, _triggered, is_credential_key, redact_line, redact_text
from tracetui.trace.secret_shapes import CREDENTIAL_WORD, may_name_credential

#: strings at least this long are redacted on their own (shorter ones ride in the skeleton)
LONG = 200
#: long strings remembered at once (an import's spans repeat theirs across their events)
MEMO_ENTRIES = 4096
#: and at most this many characters of them
MEMO_CHARS = 32 * 1024 * 1024


class Cleaner:
    """Redacts records of one import; strings are remembered (by value) across its records."""

    def __init__(self) -> None:
        self._memo: dict[str, str] = {}
        self._memo_chars = 0
        self._pairs: dict[tuple[str, str], str] = {}
        self._pairs_chars = 0

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` as the writer would write it, read back: redacted plain JSON."""
        return self._value(record)

    def _value(self, value: Any) -> Any:
        kind = type(value)
        if kind is dict:
            if "logprob" in value:  # a logprobs entry: its "token" is the model's (the writer's rule, whole)
                return orjson.loads(redact_line(orjson.dumps(value)))
            out = {}
            for key, item in value.items():
                shown = _key(key)  # (a secret may be a key: the writer's line redacts it there too)
                if type(item) is str:
                    out[shown] = self._member(key, item)
                elif isinstance(item, (dict, list, tuple)):
                    out[shown] = TEXT_MARKER if _credential(key) else self._value(item)
                else:
                    out[shown] = item
            name, path = value.get("name"), value.get("path")
            if isinstance(name, str) and isinstance(out.get("value"), str) and _credential(name):
                out["value"] = TEXT_MARKER  # a HAR-style header: {"name": "X-Api-Token", "value": "…"}
            if (isinstance(path, str) and isinstance(out.get("value"), (str, dict, list))
                    and _credential(path.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))):
                out["value"] = TEXT_MARKER  # an edit of a credential field
            return out
        if kind is list or kind is tuple:
            if value and all(_is_pair(v) for v in value):  # a header list: [["X-Auth-Token", "…"], …]
                return [[v[0], TEXT_MARKER] if _credential(v[0]) else self._value(v) for v in value]
            if any(type(v) is str and _keyword(v) for v in value[:-1]):  # ["algolia", "<key>"]: read together
                return orjson.loads(redact_line(orjson.dumps(value)))
            return [self.text(v) if type(v) is str else self._value(v) for v in value]
        return orjson.loads(orjson.dumps(value)) if kind not in _SCALARS else value

    def _member(self, key: str, item: str) -> str:
        """A ``"key": "text"`` member redacted as a line of its own (remembered): per the writer
        (:mod:`tracetui.trace.writer`), no match crosses an unescaped quote but from a key to its value."""
        if len(item) >= LONG:
            if _credential(key):
                return TEXT_MARKER
            if not _keyword(key):  # (else a rule may read the key with its value: redacted together)
                return self.text(item)
        done = self._pairs.get((key, item))
        if done is None:
            done = next(iter(orjson.loads(redact_line(orjson.dumps({key: item}))).values()))
            if len(self._pairs) >= MEMO_ENTRIES or self._pairs_chars > MEMO_CHARS:
                self._pairs.clear()
                self._pairs_chars = 0
            self._pairs[(key, item)] = done
            self._pairs_chars += len(item)
        return done

    def text(self, value: str) -> str:
        done = self._memo.get(value)
        if done is None:
            done = _redacted(value)
            if len(self._memo) >= MEMO_ENTRIES or self._memo_chars > MEMO_CHARS:
                self._memo.clear()
                self._memo_chars = 0
            self._memo[value] = done
            self._memo_chars += len(value)
        return done


def _redacted(value: str) -> str:
    if value.lstrip(" \t\r\n")[:1] in ("{", "["):
        try:
            raw = value.encode()
        except UnicodeEncodeError:  # half a surrogate pair: redacted as a JSON string
            return redact_text(value)
        low = raw.lower()
        if b"\\u00" in low or (may_name_credential(low) and CREDENTIAL_WORD.search(low.replace(b"\\", b""))):
            return redact_text(value)  # a credential key in it: the writer's structural pass (see the docstring)
        out = redact_line(raw)
        return value if out is raw else out.decode("utf-8", "replace")
    return redact_text(value)


_SCALARS = frozenset({str, int, float, bool, type(None)})


@lru_cache(maxsize=4096)
def _credential(key: str) -> bool:
    return is_credential_key(key)


def _key(key: str) -> str:
    return _short_key(key) if len(key) < LONG else redact_text(key)


@lru_cache(maxsize=4096)
def _short_key(key: str) -> str:
    return redact_text(key)


def _keyword(text: str) -> bool:
    """Whether ``text`` holds a gitleaks rule's keyword (a rule may read what follows it as the secret)."""
    return _short_keyword(text) if len(text) < LONG else _holds_keyword(text)


def _holds_keyword(text: str) -> bool:
    return bool(_triggered(text.lower().encode("utf-8", "surrogatepass"))[1])


_short_keyword = lru_cache(maxsize=4096)(_holds_keyword)


def _is_pair(value: Any) -> bool:
    return type(value) is list and len(value) == 2 and type(value[0]) is str and type(value[1]) is str
