"""Making untrusted trace text safe to put on a terminal.

Trace content comes from models and servers. Control characters (ESC, BEL, CR,
the C1 range, bidi overrides) are replaced by visible escapes such as ``\\x1b`` so
that no escape sequence, hyperlink (OSC 8) or carriage-return overwrite ever
reaches the terminal. Rich markup is a separate concern: the UI renders strings as
``rich.text.Text`` objects, never parses them as markup.
"""
from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep_newlines: bool = False) -> str:
    """Replace every control character with a visible escape (tabs stay; newlines if asked)."""
    text = _UNSAFE.sub(_escape, text)
    if not keep_newlines:
        text = text.replace("\n", "\\n")
    return text.replace("\t", "    ")


def one_line(text: str, width: int | None = None) -> str:
    text = printable(text)
    if width is not None and len(text) > width:
        return text[: max(0, width - 1)] + "…"
    return text
