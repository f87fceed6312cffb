"""Making untrusted trace text safe to put on a terminal: the one path every printed byte takes.

Trace content comes from models and servers. First, every secret the trace file
would redact is redacted here too (``tracetui.trace.redact``), so a file written
by another tool shows no more than one written by tracetui. Then control
characters (ESC, BEL, CR, the C1 range, bidi overrides) are replaced by visible
escapes such as ``\\x1b`` so that no escape sequence, hyperlink (OSC 8) or
carriage-return overwrite ever reaches the terminal. Rich and Textual markup is a
separate concern: the UI renders strings as ``rich.text.Text`` objects (or with
``markup=False``), never parses them as markup.
"""
from __future__ import annotations

import re
from typing import Any

import orjson

from tracetui.trace.redact import redact_text, redact_value

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: what JSON text from orjson may still hold raw: DEL, the C1 range and bidi controls
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep_newlines: bool = False) -> str:
    """Text bound for a terminal: secrets redacted, every control character a visible escape.

    Tabs become spaces; newlines stay only if asked.
    """
    text = _UNSAFE.sub(_escape, redact_text(text))
    if not keep_newlines:
        text = text.replace("\n", "\\n")
    return text.replace("\t", "    ")


def one_line(text: str, width: int | None = None) -> str:
    text = printable(text)
    if width is not None and len(text) > width:
        return text[: max(0, width - 1)] + "…"
    return text


def printable_json(value: Any, indent: bool = True) -> str:
    """A JSON document bound for a terminal: redacted like a trace line, and still valid JSON.

    Control characters inside strings are JSON escapes (``\\u009b``), which a
    terminal shows as text.
    """
    raw = orjson.dumps(redact_value(value), option=orjson.OPT_INDENT_2 if indent else 0).decode()
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", raw)
